// Lint: run every enabled rule over the registry and collect diagnostics in a stable order.
import { formatMessage, severityFor, type AnyRule, type LintCapability, type LintRegistry, type Report, type ResolvedRuleSetting } from './rule.js';
import { parseEvalsFiles, type ParsedEvals } from './evals/file.js';
import { wellTypedFrontmatter } from './frontmatter.js';
import { BrokenFacts, type Fact } from './facts.js';
import { toolOwnersOf, usableToolsets, type ParsedToolsets } from './toolsets.js';
import type { CapabilityDocument, Diagnostic, RegistryInput } from './types.js';
import { NO_MEMO, type Derived } from './derived.js';

export function createLintRegistry(
  documents: CapabilityDocument[],
  toolsetsSource: ParsedToolsets,
  input: Pick<RegistryInput, 'allPaths' | 'files' | 'foldersWithoutProtocol'>,
  /** `parseEvalsFiles(input.files)`, when the caller parsed them already (while the protocols were parsing). */
  evals: ParsedEvals[] = parseEvalsFiles(input.files),
  /** Where per-document facts are kept between compiles (`--watch`); nothing is kept by default. */
  derived: Derived = NO_MEMO,
): LintRegistry {
  const sources = new Map(input.files.map((file) => [file.path, file.content]));
  // File order; under --watch, kept while the files are the same ones in the same order.
  const order = derived.across(
    'lint-capability-order',
    documents.map((document) => document.file),
    () => documents.map((_, index) => index).sort((a, b) => compareFiles(documents[a] as CapabilityDocument, documents[b] as CapabilityDocument)),
  );
  const capabilities: LintCapability[] = order.map((index) => {
    const document = documents[index] as CapabilityDocument;
    const source = sources.get(document.file);
    return derived.of(document, 'lint-capability', source, () => {
      const fm = wellTypedFrontmatter(document.frontmatter.data);
      return { document, fm, id: fm.id ?? document.folder, source };
    });
  });
  const byId = new Map<string, LintCapability>();
  for (const capability of capabilities) if (!byId.has(capability.id)) byId.set(capability.id, capability);
  // The same objects while the toolsets files are unchanged: rules use them as a fact's context.
  const { toolsets, toolOwners } = derived.of(toolsetsSource, 'usable-toolsets', undefined, () => {
    const usable = usableToolsets(toolsetsSource.data);
    return { toolsets: usable, toolOwners: toolOwnersOf(usable) };
  });
  return {
    capabilities,
    byId,
    toolsets,
    toolsetsFile: toolsetsSource.file,
    toolsetRanges: toolsetsSource.ranges,
    toolOwners,
    allPaths: new Set(input.allPaths),
    toolsetsSource,
    refusedFiles: input.files.filter((file) => file.problem !== undefined),
    foldersWithoutProtocol: input.foldersWithoutProtocol,
    evals,
    derived,
  };
}

const compareFiles = (a: CapabilityDocument, b: CapabilityDocument): number => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0);

export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  return (
    (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
    a.line - b.line ||
    a.column - b.column ||
    (a.ruleId < b.ruleId ? -1 : a.ruleId > b.ruleId ? 1 : 0) ||
    (a.message < b.message ? -1 : a.message > b.message ? 1 : 0)
  );
}

export function runRules(registry: LintRegistry, rules: readonly AnyRule[], settings: ReadonlyMap<string, ResolvedRuleSetting>): Diagnostic[] {
  const found: { diagnostic: Diagnostic; dependsOn?: Fact[] }[] = [];
  const broken = new BrokenFacts();
  for (const rule of rules) {
    const setting: ResolvedRuleSetting = settings.get(rule.meta.id) ?? { level: rule.meta.defaultLevel, options: rule.meta.defaultOptions };
    if (setting.level === 'off') continue;
    const level = setting.level;
    const report = (entry: Report): void => {
      const template = rule.meta.messages[entry.messageId];
      if (template === undefined) throw new Error(`rule ${rule.meta.id} reported unknown messageId "${entry.messageId}"`);
      const diagnostic: Diagnostic = {
        file: entry.file ?? entry.capability?.document.file ?? registry.toolsetsFile,
        ...entry.range,
        severity: severityFor(level, entry.severity),
        ruleId: rule.meta.id,
        messageId: entry.messageId,
        message: formatMessage(template, entry.data),
      };
      if (entry.capability) diagnostic.capabilityId = entry.capability.id;
      if (entry.related) {
        diagnostic.related = {
          file: entry.related.file,
          line: entry.related.range.line,
          column: entry.related.range.column,
          message: entry.related.message,
        };
      }
      for (const fact of entry.marks ?? []) broken.mark(fact);
      found.push({ diagnostic, dependsOn: entry.dependsOn });
    };
    rule.check({ registry, options: setting.options, report });
  }
  // Marks count even from a dropped diagnostic: the fact is broken all the same, and the diagnostic
  // that dropped it names the cause.
  return found
    .filter((entry) => !(entry.dependsOn ?? []).some((fact) => broken.has(fact)))
    .map((entry) => entry.diagnostic)
    .sort(compareDiagnostics);
}

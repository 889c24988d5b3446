// Lint: run every enabled rule over the registry and collect diagnostics in a stable order.
import { formatMessage, severityFor, type AnyRule, type LintCapability, type LintRegistry, type Report, type ResolvedRuleSetting } from './rule.js';
import { parseEvalsFiles, type ParsedEvals } from './evals/file.js';
import { wellTypedFrontmatter } from './frontmatter.js';
import { BrokenFacts, type Fact } from './facts.js';
import { isToolsetsPath } from './layout.js';
import { toolOwnersOf, toolsetsPaths, usableToolsets, type ParsedToolsets } from './toolsets.js';
import type { CapabilityDocument, Diagnostic, RegistryInput, SourceFile } from './types.js';
import { NO_MEMO, type Derived } from './derived.js';
import { byCodeUnits, byKey } from './order.js';

export function createLintRegistry(
  documents: CapabilityDocument[],
  toolsetsSource: ParsedToolsets,
  input: Pick<RegistryInput, 'allPaths' | 'files' | 'foldersWithoutProtocol'>,
  /** `parseEvalsFiles(input.files)`, when the caller parsed them already (while the protocols were parsing). */
  evals: ParsedEvals[] = parseEvalsFiles(input.files),
  /** Where per-document facts are kept between compiles (`--watch`); nothing is kept by default. */
  derived: Derived = NO_MEMO,
): LintRegistry {
  const { capabilities, byId } = derived.keeps ? keptCapabilities(derived, documents, input.files) : capabilitiesOf(derived, documents, sourcesOf(input.files));
  // The same objects while the toolsets files are unchanged: rules use them as a fact's context.
  const { toolsets, toolOwners } = derived.of(toolsetsSource, 'usable-toolsets', undefined, () => {
    const usable = usableToolsets(toolsetsSource.data);
    return { toolsets: usable, toolOwners: toolOwnersOf(usable) };
  });
  const refusedFiles = input.files.filter((file) => file.problem !== undefined);
  return {
    capabilities,
    byId,
    toolsets,
    toolsetsFile: toolsetsSource.file,
    toolsetRanges: toolsetsSource.ranges,
    toolOwners,
    allPaths: derived.across('lint-all-paths', input.allPaths, () => new Set(input.allPaths)),
    toolsetsSource,
    refusedFiles,
    toolsetsUnread:
      toolsetsSource.problems.length > 0 || refusedFiles.some((file) => isToolsetsPath(file.path)) || toolsetsPaths(input.allPaths).overLimit.length > 0,
    foldersWithoutProtocol: input.foldersWithoutProtocol,
    evals,
    derived,
  };
}

/** A document as the rules see it (kept under --watch while the document and its text are the same). */
function lintCapability(derived: Derived, document: CapabilityDocument, source: string | undefined): LintCapability {
  return derived.of(document, 'lint-capability', source, () => {
    const fm = wellTypedFrontmatter(document.frontmatter.data);
    return { document, fm, id: fm.id ?? document.folder, source };
  });
}

interface Capabilities {
  /** In file order. */
  capabilities: LintCapability[];
  /** The first capability of each id, in file order. */
  byId: Map<string, LintCapability>;
}

/** The capabilities of `documents`, made from nothing. */
function capabilitiesOf(
  derived: Derived,
  documents: readonly CapabilityDocument[],
  sources: ReadonlyMap<string, string | undefined>,
): Capabilities & { order: number[] } {
  const order = documents.map((_, index) => index).sort((a, b) => compareFiles(documents[a] as CapabilityDocument, documents[b] as CapabilityDocument));
  const capabilities = order.map((index) => {
    const document = documents[index] as CapabilityDocument;
    return lintCapability(derived, document, sources.get(document.file));
  });
  return { capabilities, byId: firstById(capabilities), order };
}

const sourcesOf = (files: readonly SourceFile[]): Map<string, string | undefined> => new Map(files.map((file) => [file.path, file.content]));

function firstById(capabilities: readonly LintCapability[]): Map<string, LintCapability> {
  const byId = new Map<string, LintCapability>();
  for (const capability of capabilities) if (!byId.has(capability.id)) byId.set(capability.id, capability);
  return byId;
}

/** What the last compile of a session was given and made, place by place. */
interface KeptCapabilities extends Capabilities {
  files: SourceFile[];
  documents: CapabilityDocument[];
  /** The text of each file, by path. */
  sources: Map<string, string | undefined>;
  /** The place in `capabilities` of each of `documents`. */
  placeOf: Int32Array;
  /** The index in `documents` of each protocol file. */
  documentAt: Map<string, number>;
}

/**
 * The capabilities under a session (`derived.keeps`): while the files and the documents are the
 * same paths at the same places as last time (an edit, not a file added or removed), only the
 * places whose file or document is a new object are looked at, so a compile after one edit costs
 * what that edit changed instead of three passes over every file (~40 ms at 10,000). `byId` is the
 * same Map from one compile to the next, updated in place.
 */
function keptCapabilities(derived: Derived, documents: readonly CapabilityDocument[], files: readonly SourceFile[]): Capabilities {
  const holder = derived.state('lint-capabilities', (): { last?: KeptCapabilities } => ({}));
  const last = holder.last;
  const changed = last === undefined ? undefined : changedPlaces(last, documents, files);
  if (last === undefined || changed === undefined) {
    const sources = sourcesOf(files);
    const made = capabilitiesOf(derived, documents, sources);
    const placeOf = new Int32Array(documents.length);
    made.order.forEach((index, place) => (placeOf[index] = place));
    const documentAt = new Map(documents.map((document, index) => [document.file, index]));
    // Two files (or documents) with one path cannot be told apart by place: made from nothing every time.
    const unique = sources.size === files.length && documentAt.size === documents.length;
    holder.last = !unique
      ? undefined
      : {
          capabilities: made.capabilities,
          byId: made.byId,
          files: [...files],
          documents: [...documents],
          sources,
          placeOf,
          documentAt,
        };
    return { capabilities: [...made.capabilities], byId: made.byId };
  }
  let idChanged = false;
  for (const index of changed) {
    const document = documents[index] as CapabilityDocument;
    const place = last.placeOf[index] as number;
    const before = last.capabilities[place] as LintCapability;
    const after = lintCapability(derived, document, last.sources.get(document.file));
    last.documents[index] = document;
    last.capabilities[place] = after;
    if (after.id !== before.id) idChanged = true;
    else if (last.byId.get(after.id) === before) last.byId.set(after.id, after);
  }
  if (idChanged) {
    last.byId.clear();
    for (const [id, capability] of firstById(last.capabilities)) last.byId.set(id, capability);
  }
  return { capabilities: [...last.capabilities], byId: last.byId };
}

/**
 * The indexes of the documents to look at again, with `last.files` and `last.sources` brought up
 * to date; undefined when a file or a document is not where it was (added, removed or moved).
 */
function changedPlaces(last: KeptCapabilities, documents: readonly CapabilityDocument[], files: readonly SourceFile[]): Set<number> | undefined {
  if (last.files.length !== files.length || last.documents.length !== documents.length) return undefined;
  const changed = new Set<number>();
  for (let index = 0; index < documents.length; index += 1) {
    const before = last.documents[index] as CapabilityDocument;
    const after = documents[index] as CapabilityDocument;
    if (before === after) continue;
    if (before.file !== after.file) return undefined;
    changed.add(index);
  }
  for (let index = 0; index < files.length; index += 1) {
    const before = last.files[index] as SourceFile;
    const after = files[index] as SourceFile;
    if (before === after) continue;
    if (before.path !== after.path) return undefined;
    last.files[index] = after;
    last.sources.set(after.path, after.content);
    const document = last.documentAt.get(after.path);
    if (document !== undefined) changed.add(document);
  }
  return changed;
}

const compareFiles = byKey((document: CapabilityDocument) => document.file);

export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  return byCodeUnits(a.file, b.file) || a.line - b.line || a.column - b.column || byCodeUnits(a.ruleId, b.ruleId) || byCodeUnits(a.message, b.message);
}

/**
 * Run the rules that are on, in order; their diagnostics sorted. `ruleTimes`, when given, gets the
 * milliseconds each rule's check took, added to what it holds already (`CAPREG_TIMING`: cli/timing.ts).
 */
export function runRules(
  registry: LintRegistry,
  rules: readonly AnyRule[],
  settings: ReadonlyMap<string, ResolvedRuleSetting>,
  ruleTimes?: Map<string, number>,
): Diagnostic[] {
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
    const started = ruleTimes ? performance.now() : 0;
    rule.check({ registry, options: setting.options, report });
    if (ruleTimes) ruleTimes.set(rule.meta.id, (ruleTimes.get(rule.meta.id) ?? 0) + performance.now() - started);
  }
  // Marks count even from a dropped diagnostic: the fact is broken all the same, and the diagnostic
  // that dropped it names the cause.
  return found
    .filter((entry) => !(entry.dependsOn ?? []).some((fact) => broken.has(fact)))
    .map((entry) => entry.diagnostic)
    .sort(compareDiagnostics);
}

// Compile one capability held in memory against an existing catalog (a manifest's capabilities and
// toolsets) instead of a whole registry on disk. The server uses this to check capabilities that
// users compose at run time: the same rules run, and only the new capability's problems come back.
import { capabilityLink } from './contract.js';
import { compareDiagnostics, createLintRegistry, runRules } from './lint.js';
import { FILE_START } from './positions.js';
import type { AnyRule, ResolvedRuleSetting } from './rule.js';
import { rules as allRules } from './rules/index.js';
import type { CapabilityDocument, CapabilityFrontmatter, Diagnostic, ManifestCapability, TextBlock, Toolsets } from './types.js';
import type { ParsedToolsets } from './toolsets.js';

/** Where the messages of a capability compiled against a manifest say its toolsets are defined. */
const SERVED_TOOLSETS = 'the registry';

/**
 * A catalog capability as the rules see it: frontmatter facts and, instead of a body (its protocol
 * is not re-parsed), the fingerprints of its paragraphs that the manifest carries.
 */
function catalogStub(capability: CatalogCapability): CapabilityDocument {
  const { id, name, description, whenToUse, requiredToolsets, optionalToolsets, protocolVersion, protocolUpdated } = capability;
  return {
    file: `capabilities/${id}/PROTOCOL.md`,
    folder: id,
    frontmatter: {
      present: true,
      data: {
        id,
        name,
        description,
        whenToUse,
        requiredToolsets,
        optionalToolsets,
        protocol_version: protocolVersion,
        protocol_updated: protocolUpdated,
        ...(capability.states ? { states: capability.states } : {}),
      },
      ranges: {},
      range: FILE_START,
      problems: [],
    },
    body: '',
    bodyStartLine: 1,
    blocks: (capability.paragraphs ?? []).map(fingerprintBlock),
    links: capability.references.map((target) => ({ kind: 'link' as const, url: capabilityLink(target), text: target, range: FILE_START })),
    code: [],
    toolsTables: [],
    bodyProblems: [],
    bodyTokens: 0,
    contentHash: capability.digest,
  };
}

function fingerprintBlock([fingerprint, line]: readonly [string, number]): TextBlock {
  return { kind: 'paragraph', text: '', fingerprint, section: '', range: { line, column: 1, endLine: line, endColumn: 1 } };
}

/** A manifest capability without its protocol, which the rules never read from a stand-in. */
export type CatalogCapability = Omit<ManifestCapability, 'protocol'>;

export interface CatalogContext {
  capabilities: readonly CatalogCapability[];
  toolsets: Toolsets;
}

/**
 * Lint `document` as if it were one more capability of the registry that produced `catalog`.
 * Rules that read only the document (`meta.reads: 'document'`) see it alone; the others also see
 * the catalog's stand-ins. `git` rules are the caller's to leave out through `rules` (they read
 * what only a registry in Git has); diagnostics are returned for `document.file` only.
 */
export function lintAgainstCatalog(
  document: CapabilityDocument,
  catalog: CatalogContext,
  options: {
    rules?: readonly AnyRule[];
    settings?: ReadonlyMap<string, ResolvedRuleSetting>;
    /** Frontmatter facts the document does not state itself (e.g. toolsets derived from its links). */
    derived?: Partial<CapabilityFrontmatter>;
  } = {},
): Diagnostic[] {
  const rules = options.rules ?? allRules;
  const settings = options.settings ?? new Map<string, ResolvedRuleSetting>();
  const documentRules = rules.filter((rule) => rule.meta.reads === 'document');
  const catalogRules = rules.filter((rule) => rule.meta.reads !== 'document');
  const toolsetsSource: ParsedToolsets = {
    // What messages call the toolsets: a user composing on the server sees the manifest's, not a file.
    file: SERVED_TOOLSETS,
    present: true,
    data: JSON.parse(JSON.stringify(catalog.toolsets)) as unknown,
    ranges: {},
    problems: [],
  };
  const lint = (documents: CapabilityDocument[], ruleSet: readonly AnyRule[]): Diagnostic[] => {
    if (ruleSet.length === 0) return [];
    const registry = createLintRegistry(documents, toolsetsSource, {
      allPaths: documents.map((each) => each.file),
      files: [],
      foldersWithoutProtocol: [],
    });
    const own = registry.capabilities.find((capability) => capability.document === document);
    if (own && options.derived) Object.assign(own.fm, options.derived);
    return runRules(registry, ruleSet, settings).filter((d) => d.file === document.file);
  };
  const stubs = catalogRules.length === 0 ? [] : catalog.capabilities.filter((capability) => capability.id !== document.folder).map(catalogStub);
  return [...lint([document], documentRules), ...lint([...stubs, document], catalogRules)].sort(compareDiagnostics);
}

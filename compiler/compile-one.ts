// Compile one capability held in memory against an existing catalog (a manifest's capabilities and
// toolsets) instead of a whole registry on disk. The server uses this to check capabilities that
// users compose at run time: the same rules run, and only the new capability's problems come back.
import { createLintRegistry, runRules } from './lint.js';
import { FILE_START } from './positions.js';
import type { AnyRule, ResolvedRuleSetting } from './rule.js';
import { rules as allRules } from './rules/index.js';
import type { CapabilityDocument, CapabilityFrontmatter, Diagnostic, ManifestCapability, Toolsets } from './types.js';
import type { ParsedToolsets } from './toolsets.js';

/** A catalog capability as the rules see it: frontmatter facts, no body (its protocol is not re-parsed). */
function catalogStub(capability: ManifestCapability): CapabilityDocument {
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
    blocks: [],
    links: capability.references.map((target) => ({ kind: 'link' as const, url: `capability:${target}`, text: target, range: FILE_START })),
    code: [],
    toolsTables: [],
    bodyProblems: [],
    bodyTokens: 0,
    contentHash: capability.digest,
  };
}

export interface CatalogContext {
  capabilities: readonly ManifestCapability[];
  toolsets: Toolsets;
}

/**
 * Lint `document` as if it were one more capability of the registry that produced `catalog`.
 * Rules that only make sense for files in Git (`id-matches-folder`, `registry-files`,
 * `toolsets-schema`, the schema of platform frontmatter) are the caller's to leave out through
 * `rules`; diagnostics are returned for `document.file` only.
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
  const stubs = catalog.capabilities.filter((capability) => capability.id !== document.folder).map(catalogStub);
  const toolsetsSource: ParsedToolsets = {
    file: 'capabilities/toolsets.yaml',
    present: true,
    data: JSON.parse(JSON.stringify(catalog.toolsets)) as unknown,
    ranges: {},
    problems: [],
  };
  const registry = createLintRegistry([...stubs, document], toolsetsSource, {
    allPaths: [document.file, ...stubs.map((stub) => stub.file)],
    files: [],
    foldersWithoutProtocol: [],
  });
  const own = registry.capabilities.find((capability) => capability.document === document);
  if (own && options.derived) Object.assign(own.fm, options.derived);
  return runRules(registry, options.rules ?? allRules, options.settings ?? new Map()).filter((d) => d.file === document.file);
}

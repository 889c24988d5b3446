// Routing evals (SPEC §9), pure: every request of every usable evals.yaml goes through the ranker
// find_capabilities uses (compiler/search/ranker.ts), over the whole catalog, indexed from the same
// text the server indexes (catalog fields, and the served protocol's headings, tools table and tool
// descriptions). The CLI (`capreg eval`) and the gate (`capreg check`) both call this.
import { renderProtocol } from '../render.js';
import type { LintCapability, LintRegistry } from '../rule.js';
import { byKey } from '../order.js';
import { analyzeCapability, type AnalyzedCapability, type SearchSource } from '../search/fields.js';
import { CapabilityIndex, protocolSearchText } from '../search/ranker.js';
import type { Toolsets } from '../types.js';
import { usableEvals, type CapabilityEvals, type EvalKind } from './file.js';

/** What search indexes for a capability, as the server builds it from the manifest; undefined when its catalog fields are missing. */
export function searchSourceOf(capability: LintCapability, toolsets: Toolsets): SearchSource | undefined {
  const { fm, document } = capability;
  if (fm.name === undefined || fm.description === undefined || fm.whenToUse === undefined) return undefined;
  const own = [...(fm.requiredToolsets ?? []), ...(fm.optionalToolsets ?? [])];
  const toolDescription = (tool: string): string | undefined => own.map((id) => toolsets[id]?.tools[tool]?.description).find((text) => text !== undefined);
  const protocol = renderProtocol(document, fm.protocol_version ?? '', fm.protocol_updated ?? '');
  return {
    id: capability.id,
    name: fm.name,
    description: fm.description,
    whenToUse: fm.whenToUse,
    lifecyclePhase: fm.lifecyclePhase,
    tags: fm.tags,
    protocolText: protocolSearchText(protocol, toolDescription),
  };
}

/** The ranker over every capability of a registry whose catalog fields are known. */
export function registryIndex(registry: LintRegistry): CapabilityIndex {
  return CapabilityIndex.of(registryAnalysis(registry));
}

/**
 * What {@link registryIndex} indexes: every capability whose catalog fields are known, analyzed, in
 * registry order. `analyze` turns a source into its analysis: the gate passes one that remembers, so
 * that a capability that reads the same in both trees is analyzed once (analyzeCapability is pure).
 */
export function registryAnalysis(registry: LintRegistry, analyze: (source: SearchSource) => AnalyzedCapability = analyzeCapability): AnalyzedCapability[] {
  // The ranker tells capabilities apart by id. A second folder with an id already taken is an error
  // of id-matches-folder, and of the gate at a base ref (where lint does not run) or with that rule
  // off; it is not ranked, so that the first in path order answers as it would alone.
  const ids = new Set<string>();
  return registry.capabilities.flatMap((capability) => {
    const source = ids.has(capability.id) ? undefined : searchSourceOf(capability, registry.toolsets);
    if (source === undefined) return [];
    ids.add(capability.id);
    return [analyze(source)];
  });
}

export interface RequestResult {
  capabilityId: string;
  /** The evals file and the request's position in it. */
  file: string;
  line: number;
  column: number;
  kind: EvalKind;
  request: string;
  top: number;
  /** 1-based rank of the capability among all hits; null when the request does not find it. */
  rank: number | null;
  /** The first hits (at most `top`, at least 3), best first. */
  ranking: string[];
  passed: boolean;
}

export interface EvalScores {
  /** shouldMatch requests, and shouldNotMatch requests. */
  shouldMatch: number;
  shouldNotMatch: number;
  /** Share of shouldMatch requests answered first, and within the first three (0 when there are none). */
  recallAt1: number;
  recallAt3: number;
  /** Mean reciprocal rank of shouldMatch requests (a request that misses counts 0). */
  mrr: number;
  failed: number;
}

export interface CapabilityEvalResult extends EvalScores {
  id: string;
  file: string;
}

export interface EvalReport {
  /** Every request, by capability id then file order. */
  requests: RequestResult[];
  capabilities: CapabilityEvalResult[];
  total: EvalScores;
}

/**
 * The usable evals of a registry with the capability each belongs to (the one whose PROTOCOL.md is
 * in the same folder), by capability id.
 */
export function registryEvals(registry: LintRegistry): { owner: LintCapability; evals: CapabilityEvals }[] {
  // A map, not a search per file: at 10,000 capabilities that search was 10^8 comparisons.
  const byFolder = new Map<string, LintCapability>();
  for (const capability of registry.capabilities) if (!byFolder.has(capability.document.folder)) byFolder.set(capability.document.folder, capability);
  return registry.evals
    .flatMap((parsed) => {
      const evals = usableEvals(parsed);
      const owner = evals === undefined ? undefined : byFolder.get(evals.folder);
      return evals === undefined || owner === undefined ? [] : [{ owner, evals }];
    })
    .sort(byKey((entry) => entry.owner.id));
}

/** Run `evals` (of `registry`, or another tree's) against `index`. */
export function runRequests(index: CapabilityIndex, suites: readonly { owner: LintCapability; evals: CapabilityEvals }[]): RequestResult[] {
  const results: RequestResult[] = [];
  for (const { owner, evals } of suites) {
    for (const { kind, request, range } of evals.requests) {
      const hits = index.search({ query: request, limit: Math.max(index.size, 1) });
      const at = hits.findIndex((hit) => hit.id === owner.id);
      const rank = at === -1 ? null : at + 1;
      const passed = kind === 'shouldMatch' ? rank !== null && rank <= evals.top : rank !== 1;
      results.push({
        capabilityId: owner.id,
        file: evals.file,
        line: range.line,
        column: range.column,
        kind,
        request,
        top: evals.top,
        rank,
        ranking: hits.slice(0, Math.max(evals.top, 3)).map((hit) => hit.id),
        passed,
      });
    }
  }
  return results;
}

function scoresOf(results: readonly RequestResult[]): EvalScores {
  const matching = results.filter((result) => result.kind === 'shouldMatch');
  const share = (count: number): number => (matching.length === 0 ? 0 : count / matching.length);
  return {
    shouldMatch: matching.length,
    shouldNotMatch: results.length - matching.length,
    recallAt1: share(matching.filter((result) => result.rank === 1).length),
    recallAt3: share(matching.filter((result) => result.rank !== null && result.rank <= 3).length),
    mrr: share(matching.reduce((sum, result) => sum + (result.rank === null ? 0 : 1 / result.rank), 0)),
    failed: results.filter((result) => !result.passed).length,
  };
}

/** Every evals.yaml of the registry, run over the whole catalog. */
export function runEvals(registry: LintRegistry): EvalReport {
  const suites = registryEvals(registry);
  const requests = runRequests(registryIndex(registry), suites);
  const capabilities = suites.map(({ owner, evals }) => ({
    id: owner.id,
    file: evals.file,
    ...scoresOf(requests.filter((result) => result.file === evals.file)),
  }));
  return { requests, capabilities, total: scoresOf(requests) };
}

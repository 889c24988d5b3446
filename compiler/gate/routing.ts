// Routing in the version gate: when a change touches what search ranks on (a name, description,
// trigger or tag, or a capability added or removed), every evals request runs through the
// find_capabilities ranker over the base tree and over the new one (compiler/evals/run.ts), and a
// request whose first answer moved is listed. A `shouldMatch` request that went first to its own
// capability and no longer does fails the gate (`routing-moved`). Pure: two lint registries in.
import { canonicalJson, sha256Hex } from '../canonical.js';
import type { EvalKind } from '../evals/file.js';
import { registryAnalysis, registryEvals } from '../evals/run.js';
import { analyzeCapability, type AnalyzedCapability, type SearchSource } from '../search/fields.js';
import { formatMessage, type LintRegistry } from '../rule.js';
import { FILE_START } from '../positions.js';
import type { Diagnostic } from '../types.js';
import { GATE_MESSAGES, GATE_RULES } from './compare.js';
import { firstAnswers } from './routing-answers.js';

/**
 * At most this many requests are compared: each costs a search on each tree, about 1.5 ms over
 * 1,000 capabilities on a loaded machine (docs/gate.md#routing), so 20,000 is about a minute.
 */
export const MAX_ROUTING_REQUESTS = 20_000;

/**
 * `compared`: the evals ran on both sides; skipped: `unchanged` (nothing search ranks on changed),
 * `lint-errors` (the new tree's catalog is unknown), `too-many-requests` (over {@link MAX_ROUTING_REQUESTS}: a warning).
 */
export type RoutingStatus = 'compared' | 'unchanged' | 'lint-errors' | 'too-many-requests';

export interface MovedRequest {
  /** The capability whose evals hold the request. */
  capabilityId: string;
  kind: EvalKind;
  request: string;
  /** The evals file and the request's position (in the new tree; in the base one for a request since removed). */
  file: string;
  line: number;
  column: number;
  /** The first answer at the base ref and now; null when the request found nothing. */
  before: string | null;
  after: string | null;
  /** A shouldMatch request that went to its own capability and now goes elsewhere: the gate fails. */
  lost: boolean;
}

export interface RoutingSummary {
  status: RoutingStatus;
  /** Requests run on each side (0 when skipped; the number found when there were too many). */
  requests: number;
  /** Every request whose first answer moved, in evals order (capability id, then file order). */
  moved: MovedRequest[];
}

export interface RoutingResult extends RoutingSummary {
  diagnostics: Diagnostic[];
}

/** What the ranker reads that an author edits to route: by capability id. */
function routingFields(registry: LintRegistry): string {
  const fields = registry.capabilities.map(({ id, fm }) => [id, fm.name, fm.description, fm.whenToUse, fm.tags]);
  return canonicalJson(fields.sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1)));
}

/** Whether any name, description, trigger or tag differs, or a capability came or went. */
export function routingChanged(base: LintRegistry, head: LintRegistry): boolean {
  return routingFields(base) !== routingFields(head);
}

/** The evals of one capability, as compared: its owner in either tree and its requests. */
type Suite = ReturnType<typeof registryEvals>[number];

/**
 * What routing compares, worked out before any search: either the result already (nothing search
 * ranks on changed, or too many requests), or the requests and each tree's analyzed catalog.
 * `queries` are the distinct request texts; each tree answers each once ({@link firstAnswers}).
 */
export type RoutingPlan = { result: RoutingResult } | { suites: Suite[]; queries: string[]; base: AnalyzedCapability[]; head: AnalyzedCapability[] };

/**
 * Plan the comparison of the evals of both trees (a request is keyed by capability, kind and text;
 * the new tree's position wins) over both catalogs.
 */
export function planRouting(base: LintRegistry, head: LintRegistry, options: { maxRequests?: number } = {}): RoutingPlan {
  if (!routingChanged(base, head)) return { result: { status: 'unchanged', requests: 0, moved: [], diagnostics: [] } };
  const key = (id: string, kind: EvalKind, request: string): string => `${id}\0${kind}\0${request}`;
  const headSuites = registryEvals(head);
  const known = new Set(headSuites.flatMap(({ owner, evals }) => evals.requests.map((each) => key(owner.id, each.kind, each.request))));
  const baseOnly = registryEvals(base)
    .map(({ owner, evals }) => ({ owner, evals: { ...evals, requests: evals.requests.filter((each) => !known.has(key(owner.id, each.kind, each.request))) } }))
    .filter(({ evals }) => evals.requests.length > 0);
  const suites = [...headSuites, ...baseOnly];
  const total = suites.reduce((sum, { evals }) => sum + evals.requests.length, 0);
  const limit = options.maxRequests ?? MAX_ROUTING_REQUESTS;
  if (total > limit) {
    // Not compared, and said so: a warning (like a removal), which `--max-warnings 0` makes fail.
    const message = formatMessage(GATE_MESSAGES.routingTooMany, { count: total, limit });
    const file = suites[0]?.evals.file ?? 'capabilities';
    return {
      result: {
        status: 'too-many-requests',
        requests: total,
        moved: [],
        diagnostics: [{ file, ...FILE_START, severity: 'warning', ruleId: GATE_RULES.routingMoved, message }],
      },
    };
  }
  // A capability that reads the same to search in both trees (most of them) is analyzed once.
  const analyzed = new Map<string, AnalyzedCapability>();
  const analyze = (source: SearchSource): AnalyzedCapability => {
    // A digest: V8 hashes a string over 16 KiB by its length alone, so a map keyed by the sources
    // themselves (a description or protocol text that long, padded to one length) compared each
    // with all the others.
    const sourceKey = sha256Hex(canonicalJson(source));
    let analysis = analyzed.get(sourceKey);
    if (analysis === undefined) {
      analysis = analyzeCapability(source);
      analyzed.set(sourceKey, analysis);
    }
    return analysis;
  };
  const queries = [...new Set(suites.flatMap(({ evals }) => evals.requests.map(({ request }) => request)))];
  return { suites, queries, base: registryAnalysis(base, analyze), head: registryAnalysis(head, analyze) };
}

/** Judge a planned comparison from each tree's first answers, `queries[i]` answered by `before[i]` and `after[i]`. */
export function judgeRouting(
  plan: Exclude<RoutingPlan, { result: RoutingResult }>,
  before: readonly (string | null)[],
  after: readonly (string | null)[],
  against: string,
): RoutingResult {
  const answer = new Map(plan.queries.map((query, index) => [query, [before[index] ?? null, after[index] ?? null] as const]));
  let requests = 0;
  const moved: MovedRequest[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const { owner, evals } of plan.suites) {
    for (const { kind, request, range } of evals.requests) {
      requests += 1;
      const [was, now] = answer.get(request) ?? [null, null];
      if (was === now) continue;
      const lost = kind === 'shouldMatch' && was === owner.id;
      moved.push({ capabilityId: owner.id, kind, request, file: evals.file, line: range.line, column: range.column, before: was, after: now, lost });
      if (!lost) continue;
      diagnostics.push({
        file: evals.file,
        ...range,
        severity: 'error',
        ruleId: GATE_RULES.routingMoved,
        message: formatMessage(GATE_MESSAGES.routingMoved, { request, id: owner.id, against, now: now === null ? 'nothing' : `\`${now}\`` }),
        capabilityId: owner.id,
      });
    }
  }
  return { status: 'compared', requests, moved, diagnostics };
}

/**
 * Run the evals of both trees over both catalogs and compare each request's first answer, in this
 * thread (the CLI answers the base tree's side in a worker thread: cli/routing-threads.ts).
 */
export function compareRouting(base: LintRegistry, head: LintRegistry, against: string, options: { maxRequests?: number } = {}): RoutingResult {
  const plan = planRouting(base, head, options);
  if ('result' in plan) return plan.result;
  return judgeRouting(plan, firstAnswers(plan.base, plan.queries), firstAnswers(plan.head, plan.queries), against);
}

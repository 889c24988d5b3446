// The searching half of the gate's routing (compiler/gate/routing.ts): one tree's catalog, indexed,
// answers each request text with its first hit. Apart so that a worker thread (cli/routing-worker.ts)
// loads the ranker and nothing else.
import type { AnalyzedCapability } from '../search/fields.js';
import { CapabilityIndex } from '../search/ranker.js';

/**
 * The first answer of `catalog` to each query (null when it finds nothing). Only the first answer
 * is compared, so the search asks for one hit (a third less work than the full ranking `capreg
 * eval` needs to find a capability's rank).
 */
export function firstAnswers(catalog: readonly AnalyzedCapability[], queries: readonly string[]): (string | null)[] {
  const index = CapabilityIndex.of(catalog);
  return queries.map((query) => index.search({ query, limit: 1 })[0]?.id ?? null);
}

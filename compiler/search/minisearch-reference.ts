// The ranking as MiniSearch computes it: an index built over exactly the capabilities given, searched
// with the same query plan (query.ts) and options. ranker.ts runs the same BM25 over typed arrays
// for speed; this is what it must agree with (test/search-reference.test.ts), and the baseline
// bench/find-capabilities.mjs measures it against. Not used to serve.
import MiniSearch, { type SearchResult } from 'minisearch';
import { byKey } from '../order.js';
import { BOOST, SEARCH_FIELDS, splitTerms, type AnalyzedCapability, type SearchField } from './fields.js';
import { planQuery } from './query.js';

export interface ReferenceHit {
  id: string;
  /** MiniSearch's score, unrounded. */
  score: number;
  fields: SearchField[];
}

export class MiniSearchReference {
  readonly #search: MiniSearch<AnalyzedCapability>;
  readonly #frequency = new Map<string, number>();
  readonly #count: number;

  constructor(capabilities: readonly AnalyzedCapability[]) {
    const byId = [...capabilities].sort(byKey((capability) => capability.id));
    this.#count = byId.length;
    for (const capability of byId) {
      const terms = new Set(SEARCH_FIELDS.flatMap((field) => splitTerms(capability.fields[field])));
      for (const term of terms) this.#frequency.set(term, (this.#frequency.get(term) ?? 0) + 1);
    }
    this.#search = new MiniSearch<AnalyzedCapability>({
      fields: [...SEARCH_FIELDS],
      extractField: (document, field) => (field === 'id' ? document.id : document.fields[field as SearchField]),
      tokenize: splitTerms,
      processTerm: (term) => term,
    });
    this.#search.addAll(byId);
  }

  /** Every capability that matches `query`, best first (MiniSearch's order), with its raw score. */
  search(query: string): ReferenceHit[] {
    const plan = planQuery(query, (term) => this.#frequency.get(term) ?? 0, this.#count);
    if (plan.length === 0) return [];
    const planned = new Map(plan.map((term) => [term.term, term]));
    const results = this.#search.search(plan.map((term) => term.term).join(' '), {
      tokenize: splitTerms,
      processTerm: (term) => term,
      boost: { ...BOOST },
      boostTerm: (term) => planned.get(term)?.boost ?? 1,
      fuzzy: (term) => planned.get(term)?.fuzzy ?? false,
      combineWith: 'OR',
    });
    return results.map((result: SearchResult) => ({
      id: result.id as string,
      score: result.score,
      fields: SEARCH_FIELDS.filter((field) => Object.values(result.match).some((fields) => fields.includes(field))),
    }));
  }
}

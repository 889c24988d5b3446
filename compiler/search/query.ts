// From a request's words to the terms that are scored, with their weights: one plan, used by the
// ranker (ranker.ts) and by the MiniSearch reference it is checked against (minisearch-reference.ts).
//
// The caller's words go through analyze(); words the bilingual bridge knows add the other
// language's words (and synonyms) at a lower weight, when some visible capability has them; Latin
// words of four letters or more that no visible capability has match with a typo or two; terms in
// more than half the visible capabilities are dropped when rarer ones remain (their IDF is near 0).
// Every statistic is the caller's: `frequency` counts only capabilities the caller can see. Pure.
import { analyze, isHan } from './analyze.js';
import { bridgeTerms } from './bridge.js';

/** Weight of a term the bilingual bridge added, relative to the caller's own words. */
export const BRIDGE_WEIGHT = 0.4;
/** MiniSearch's weight of a fuzzy match at distance 0; a match at distance d weighs FUZZY_WEIGHT · n / (n + d). */
export const FUZZY_WEIGHT = 0.45;

export interface PlannedTerm {
  term: string;
  /** 1, or BRIDGE_WEIGHT for a term the bridge added. */
  boost: number;
  /** Edits a typo may be off by, or false: matched exactly. */
  fuzzy: number | false;
}

/**
 * Edits a Latin query term may be off by: stems are short ("automation" is "autom"), so the distance
 * is absolute, by the stem's length. Han terms and terms with digits are matched exactly.
 */
function fuzzyEdits(term: string): number | false {
  // Numbers and identifiers with digits are not mistyped words: "team12" is not "team21".
  if (term.length < 4 || !/^\p{L}+$/u.test(term) || isHan(term)) return false;
  return term.length < 5 ? 1 : 2;
}

/**
 * The terms to score for `query` over `documentCount` visible capabilities, of which
 * `countCapabilities(term)` have the term in some field. Empty when nothing can match.
 */
export function planQuery(query: string, countCapabilities: (term: string) => number, documentCount: number): PlannedTerm[] {
  const counted = new Map<string, number>();
  const frequency = (term: string): number => {
    let count = counted.get(term);
    if (count === undefined) counted.set(term, (count = countCapabilities(term)));
    return count;
  };
  const own = [...new Set(analyze(query))];
  // A bridged term no capability has cannot match; only the caller's own words may be typos.
  const bridged = bridgeTerms(query, own).filter((term) => frequency(term) > 0);
  const terms = informative([...own, ...bridged], frequency, documentCount);
  const bridgedSet = new Set(bridged);
  return terms.map((term) => ({
    term,
    boost: bridgedSet.has(term) ? BRIDGE_WEIGHT : 1,
    fuzzy: !bridgedSet.has(term) && frequency(term) === 0 ? fuzzyEdits(term) : false,
  }));
}

/**
 * Terms in more than half of the capabilities add almost nothing to BM25 (their IDF is near 0)
 * but make every one of them a candidate to score; they are left out when a rarer term that some
 * capability has remains. A term no capability has (a typo, or a word of no capability) does not
 * count: it may match nothing at all, and must not crowd the known words out of the query.
 */
function informative(terms: string[], frequency: (term: string) => number, documentCount: number): string[] {
  const common = documentCount / 2;
  const rare = terms.filter((term) => frequency(term) <= common);
  return rare.some((term) => frequency(term) > 0) ? rare : terms;
}

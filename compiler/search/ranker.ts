// The capability ranker behind `find_capabilities` (SPEC §9), pure and free of the MCP SDK so the
// server and the CLI (routing evals) rank with the same code:
//
//   const analyzed = sources.map(analyzeCapability);      // once per capability per manifest load
//   const index = new CapabilityIndex(analyzed);            // over exactly what one caller may see
//   index.search({ query: 'weekly report', limit: 10 });    // → [{ id, score, matched }], best first
//
// Ranking is BM25 (MiniSearch) over five fields, weighted whenToUse = name = tags (3) > description
// (2) > protocol (1: the protocol's headings, its tools table and those tools' toolset descriptions).
// Text goes through analyze(): NFKC, case fold, English stop words and Porter stems, Chinese words
// and character bigrams. Query words the bilingual bridge knows add the other language's words
// (and synonyms) at a lower weight; Latin query words of four letters or more that no capability has match with a typo or two;
// terms in more than half the capabilities are dropped when rarer ones remain (near-zero IDF).
// `lifecyclePhase` and `tags` narrow (a capability must have the phase and every tag); without a
// query the narrowed set comes back in id order. Best first, ties by id.
//
// Every statistic (document count, field lengths, the vocabulary fuzzy terms expand into) comes
// from the documents given to the index, so an index built over one caller's visible capabilities
// answers exactly as if no other capability existed.
import MiniSearch, { type SearchResult } from 'minisearch';
import { analyze, isHan } from './analyze.js';
import { bridgeTerms } from './bridge.js';

/** What describes a capability to search: its catalog facts and the text of its protocol that names what it does. */
export interface SearchSource {
  id: string;
  name: string;
  description: string;
  whenToUse: readonly string[];
  lifecyclePhase?: string | undefined;
  tags?: readonly string[] | undefined;
  /** Headings, tools table and tool descriptions (see protocolSearchText); '' when there is none. */
  protocolText: string;
}

/** The catalog fields a query can match, named as the entry names them (`protocol`: the protocol text). */
export const SEARCH_FIELDS = ['whenToUse', 'name', 'tags', 'description', 'protocol'] as const;
export type SearchField = (typeof SEARCH_FIELDS)[number];

/** Which fields matched: a query match in a search field, or a filter that applied. */
export type MatchedField = SearchField | 'lifecyclePhase';

const BOOST: Readonly<Record<SearchField, number>> = { whenToUse: 3, name: 3, tags: 3, description: 2, protocol: 1 };
/** Weight of a term the bilingual bridge added, relative to the caller's own words. */
const BRIDGE_WEIGHT = 0.4;
/**
 * Edits a Latin query term may be off by: stems are short ("automation" is "autom"), so the distance
 * is absolute, by the stem's length. Han terms and terms with digits are matched exactly.
 */
function fuzzyEdits(term: string): number | false {
  // Numbers and identifiers with digits are not mistyped words: "team12" is not "team21".
  if (term.length < 4 || !/^\p{L}+$/u.test(term) || isHan(term)) return false;
  return term.length < 5 ? 1 : 2;
}
const SCORE_DIGITS = 6;

/** A capability after analysis: each field as its terms joined by spaces (terms never hold a space). */
export interface AnalyzedCapability {
  id: string;
  lifecyclePhase: string | undefined;
  tags: readonly string[];
  fields: Readonly<Record<SearchField, string>>;
}

export interface SearchRequest {
  query?: string | undefined;
  lifecyclePhase?: string | undefined;
  tags?: readonly string[] | undefined;
  limit: number;
}

export interface SearchHit {
  id: string;
  /** BM25 score rounded to six decimals; 0 when no query was given. */
  score: number;
  matched: MatchedField[];
}

export function analyzeCapability(source: SearchSource): AnalyzedCapability {
  const terms = (text: string): string => analyze(text).join(' ');
  return Object.freeze({
    id: source.id,
    lifecyclePhase: source.lifecyclePhase,
    tags: Object.freeze([...(source.tags ?? [])]),
    fields: Object.freeze({
      whenToUse: terms(source.whenToUse.join('\n')),
      name: terms(source.name),
      tags: terms((source.tags ?? []).join('\n')),
      description: terms(source.description),
      protocol: terms(source.protocolText),
    }),
  });
}

const splitTerms = (text: string): string[] => (text === '' ? [] : text.split(' '));

export class CapabilityIndex {
  readonly #search: MiniSearch<AnalyzedCapability>;
  /** In id order: the answer when only filters are given. */
  readonly #byId: readonly AnalyzedCapability[];
  readonly #docs = new Map<string, AnalyzedCapability>();
  /** In how many capabilities each term occurs (any field). */
  readonly #documentFrequency = new Map<string, number>();

  constructor(capabilities: readonly AnalyzedCapability[]) {
    this.#byId = [...capabilities].sort((a, b) => compareIds(a.id, b.id));
    for (const capability of this.#byId) {
      this.#docs.set(capability.id, capability);
      const terms = new Set<string>();
      for (const field of SEARCH_FIELDS) for (const term of splitTerms(capability.fields[field])) terms.add(term);
      for (const term of terms) this.#documentFrequency.set(term, (this.#documentFrequency.get(term) ?? 0) + 1);
    }
    this.#search = new MiniSearch<AnalyzedCapability>({
      fields: [...SEARCH_FIELDS],
      extractField: (document, field) => (field === 'id' ? document.id : document.fields[field as SearchField]),
      tokenize: splitTerms,
      processTerm: (term) => term,
    });
    // In id order, so internal ids (and any order MiniSearch keeps) do not depend on the caller's catalog order.
    this.#search.addAll(this.#byId);
  }

  get size(): number {
    return this.#byId.length;
  }

  search(request: SearchRequest): SearchHit[] {
    const { lifecyclePhase } = request;
    const tags = request.tags ?? [];
    const passes = (capability: AnalyzedCapability): boolean =>
      (lifecyclePhase === undefined || capability.lifecyclePhase === lifecyclePhase) && tags.every((tag) => capability.tags.includes(tag));
    const filterFields: MatchedField[] = [...(lifecyclePhase !== undefined ? ['lifecyclePhase' as const] : []), ...(tags.length > 0 ? ['tags' as const] : [])];

    if (request.query === undefined) {
      return this.#byId
        .filter(passes)
        .slice(0, request.limit)
        .map((capability) => ({ id: capability.id, score: 0, matched: [...filterFields] }));
    }
    const own = [...new Set(analyze(request.query))];
    // A bridged term no capability has cannot match; only the caller's own words may be typos.
    const bridged = bridgeTerms(request.query, own).filter((term) => this.#documentFrequency.has(term));
    const terms = this.#informative([...own, ...bridged]);
    if (terms.length === 0) return [];
    const bridgedSet = new Set(bridged);
    const typos = new Set(own.filter((term) => !this.#documentFrequency.has(term)));
    const results = this.#search.search(terms.join(' '), {
      tokenize: splitTerms,
      processTerm: (term) => term,
      boost: { ...BOOST },
      boostTerm: (term) => (bridgedSet.has(term) ? BRIDGE_WEIGHT : 1),
      fuzzy: (term) => (typos.has(term) ? fuzzyEdits(term) : false),
      combineWith: 'OR',
      ...(filterFields.length > 0
        ? {
            filter: (result: SearchResult) => {
              const capability = this.#docs.get(result.id as string);
              return capability !== undefined && passes(capability);
            },
          }
        : {}),
    });
    return topHits(results, request.limit).map((result) => hit(result, filterFields));
  }

  /**
   * Terms in more than half of the capabilities add almost nothing to BM25 (their IDF is near 0)
   * but make every one of them a candidate to score; they are left out when a rarer term that some
   * capability has remains. A term no capability has (a typo, or a word of no capability) does not
   * count: it may match nothing at all, and must not crowd the known words out of the query.
   */
  #informative(terms: string[]): string[] {
    const common = this.#byId.length / 2;
    const frequency = (term: string): number => this.#documentFrequency.get(term) ?? 0;
    const rare = terms.filter((term) => frequency(term) <= common);
    return rare.some((term) => frequency(term) > 0) ? rare : terms;
  }
}

const roundScore = (score: number): number => Number(score.toFixed(SCORE_DIGITS));

/**
 * The best `limit` results by rounded score, ties by id, so only those are mapped to hits (a common
 * query has thousands of results at 10,000 capabilities). MiniSearch answers by raw score, highest
 * first, and rounding keeps that order, so every result that can tie the last one kept is in the
 * prefix whose rounded score is at least the last one's.
 */
function topHits(results: readonly SearchResult[], limit: number): { result: SearchResult; score: number }[] {
  const ranked: { result: SearchResult; score: number }[] = [];
  for (const result of results) {
    const score = roundScore(result.score);
    const last = ranked[limit - 1];
    if (last !== undefined && score < last.score) break;
    ranked.push({ result, score });
  }
  return ranked.sort((a, b) => b.score - a.score || compareIds(a.result.id as string, b.result.id as string)).slice(0, limit);
}

const MATCH_ORDER: readonly MatchedField[] = [...SEARCH_FIELDS, 'lifecyclePhase'];

function hit({ result, score }: { result: SearchResult; score: number }, filterFields: readonly MatchedField[]): SearchHit {
  const matched = new Set<MatchedField>(filterFields);
  for (const fields of Object.values(result.match)) for (const field of fields) matched.add(field as SearchField);
  return { id: result.id as string, score, matched: MATCH_ORDER.filter((field) => matched.has(field)) };
}

/** Code-unit order, as the manifest sorts ids: independent of locale. */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A line that starts a Markdown table row. */
const TABLE_ROW = /^\s*\|(.*)\|\s*$/;
const HEADING = /^#{1,6}\s+(.+?)\s*#*\s*$/;
const DELIMITER_ROW = /^[\s|:-]+$/;

/**
 * The protocol text search indexes besides the catalog fields: its headings, the rows of its tools
 * table (a table whose first header cell is "Tool" or "Tools") and the toolset descriptions of the
 * tools that table names. From the served Markdown, so the server needs no parse tree.
 */
export function protocolSearchText(protocol: string, toolDescriptions: (tool: string) => string | undefined): string {
  const parts: string[] = [];
  let inToolsTable = false;
  let header = true;
  let fence = false;
  for (const line of protocol.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    if (fence) continue;
    const heading = HEADING.exec(line);
    if (heading?.[1] !== undefined) {
      parts.push(heading[1]);
      inToolsTable = false;
      continue;
    }
    const row = TABLE_ROW.exec(line);
    if (row?.[1] === undefined) {
      inToolsTable = false;
      header = true;
      continue;
    }
    const cells = row[1].split('|').map((cell) => cell.trim());
    if (header) {
      inToolsTable = /^tools?$/i.test(cells[0] ?? '');
      header = false;
      continue;
    }
    if (!inToolsTable || DELIMITER_ROW.test(row[1])) continue;
    parts.push(cells.join(' '));
    const tool = (cells[0] ?? '').replaceAll('`', '');
    const description = toolDescriptions(tool);
    if (description !== undefined) parts.push(description);
  }
  return parts.join('\n');
}

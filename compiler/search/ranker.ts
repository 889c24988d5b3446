// The capability ranker behind `find_capabilities` (SPEC §9), pure and free of the MCP SDK so the
// server and the CLI (routing evals) rank with the same code:
//
//   const segment = Segment.of(sources.map(analyzeCapability));  // once per manifest load (postings.ts)
//   const index = CapabilityIndex.view([{ segment, visible }]);     // what one caller may see
//   index.search({ query: 'weekly report', limit: 10 });            // → [{ id, score, matched }], best first
//
// Ranking is MiniSearch's BM25 (k 1.2, b 0.7, d 0.5; each document's score times the number of query
// terms it matched) over five fields weighted whenToUse = name = tags (3) > description (2) > protocol
// (1: the protocol's headings, its tools table and those tools' toolset descriptions), with the
// query planned by query.ts (analysis, bridge, typos). MiniSearch's own search builds an object per
// matching document and sorts them all, which at 10,000 capabilities costs milliseconds per query;
// this loop runs the same formula over the segment's typed arrays and keeps only the best `limit`.
// Scores equal MiniSearch's (test/search-reference.test.ts checks them against
// minisearch-reference.ts on random registries, queries and visible sets).
//
// Visibility: a view counts only the capabilities its caller can see. Every statistic — document
// count, average field lengths, each term's document frequency per field, the vocabulary typos
// expand into — is taken over the visible ones, so a view answers exactly as an index built over
// those capabilities alone. `lifecyclePhase` and `tags` narrow (a capability must have the phase
// and every tag); without a query the narrowed set comes back in id order. Best first, ties by id.
import { LRUCache } from 'lru-cache';
import { byCodeUnits } from '../order.js';
import { BOOST, SEARCH_FIELDS, type AnalyzedCapability, type MatchedField } from './fields.js';
import { FIELD_COUNT, Segment } from './postings.js';
import { FUZZY_WEIGHT, planQuery, type PlannedTerm } from './query.js';

const SCORE_DIGITS = 6;
/** Document frequencies a masked view keeps (emptied when full): ~50 bytes each. */
const MAX_KEPT_FREQUENCIES = 4096;
const FIELD_BOOSTS = SEARCH_FIELDS.map((field) => BOOST[field]);
// MiniSearch's BM25 parameters.
const K = 1.2;
const B = 0.7;
const D = 0.5;

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

/** One segment as a caller sees it: `visible` lists the ids that count (all of them when absent). */
export interface ViewPart {
  segment: Segment;
  visible?: Iterable<string> | undefined;
}

interface Part {
  segment: Segment;
  /** 1 for a visible document; null when all are. */
  mask: Uint8Array | null;
  scratch: Scratch;
}

/** Per-query working memory of one segment, reused across queries (search is synchronous). */
class Scratch {
  readonly total: Float64Array;
  readonly term: Float64Array;
  readonly quality: Int32Array;
  /** Fields the query matched in each document, and the current term's, as bits in SEARCH_FIELDS order. */
  readonly fields: Int32Array;
  readonly termFields: Int32Array;
  /** termStamp[d] === termEpoch: d matched the current query term; queryStamp[d] === queryEpoch: d matched the query. */
  readonly termStamp: Int32Array;
  readonly queryStamp: Int32Array;
  termEpoch = 0;
  queryEpoch = 0;
  termTouched: number[] = [];
  /** The documents the query matched: touched[0 .. touchedCount), in the order first matched. */
  readonly touched: Int32Array;
  touchedCount = 0;

  constructor(size: number) {
    this.total = new Float64Array(size);
    this.term = new Float64Array(size);
    this.quality = new Int32Array(size);
    this.fields = new Int32Array(size);
    this.termFields = new Int32Array(size);
    this.termStamp = new Int32Array(size);
    this.queryStamp = new Int32Array(size);
    this.touched = new Int32Array(size);
  }

  startQuery(): void {
    if (this.queryEpoch >= 0x7fffffff) {
      this.queryStamp.fill(0);
      this.queryEpoch = 0;
    }
    this.queryEpoch += 1;
    this.touchedCount = 0;
  }

  startTerm(): void {
    if (this.termEpoch >= 0x7fffffff) {
      this.termStamp.fill(0);
      this.termEpoch = 0;
    }
    this.termEpoch += 1;
    this.termTouched = [];
  }
}

const scratches = new WeakMap<Segment, Scratch>();

/** The scored documents of one query (score, and where: document × parts + part), reused by every query. */
const candidates = {
  raw: new Float64Array(1024),
  at: new Int32Array(1024),
  reserve(size: number): void {
    if (size <= this.raw.length) return;
    const length = Math.max(size, this.raw.length * 2);
    const raw = new Float64Array(length);
    raw.set(this.raw);
    const at = new Int32Array(length);
    at.set(this.at);
    this.raw = raw;
    this.at = at;
  },
};

function scratchOf(segment: Segment): Scratch {
  let scratch = scratches.get(segment);
  if (scratch === undefined) scratches.set(segment, (scratch = new Scratch(segment.size)));
  return scratch;
}

/** One query term's contribution to each visible document that has it, per part of the view. */
interface TermScores {
  readonly parts: readonly { readonly docs: Int32Array; readonly scores: Float64Array; readonly fields: Uint8Array }[];
  /** Documents in all parts. */
  readonly size: number;
}

/** Documents' scores a TermScoreCache holds by default, in all: ~13 bytes each (~13 MiB). */
export const DEFAULT_TERM_SCORES = 1 << 20;

/**
 * Term scores kept across queries: a term's contribution to each document depends only on the view
 * and the term (and its weight), and requests share their words even when no two are the same. One
 * cache may serve many views (each names itself with a key); least recently used first out, bounded
 * by the number of document scores held.
 */
export class TermScoreCache {
  readonly #entries: LRUCache<string, TermScores>;

  constructor(maxDocuments: number = DEFAULT_TERM_SCORES) {
    this.#entries = new LRUCache<string, TermScores>({ maxSize: maxDocuments, sizeCalculation: (scores) => Math.max(1, scores.size) });
  }

  get(key: string): TermScores | undefined {
    return this.#entries.get(key);
  }

  set(key: string, scores: TermScores): void {
    this.#entries.set(key, scores);
  }

  /** Document scores held now. */
  get size(): number {
    return this.#entries.calculatedSize;
  }
}

/** Where a view keeps its term scores: a cache, and the key that names the view in it (its visible set). */
export interface ViewCache {
  cache: TermScoreCache;
  key: string;
}

/** A document of a view: which part, and its number there. */
interface Located {
  part: Part;
  doc: number;
  capability: AnalyzedCapability;
}

export class CapabilityIndex {
  readonly #parts: readonly Part[];
  readonly #count: number;
  /** Average distinct terms per field over the visible documents, accumulated in id order as MiniSearch does. */
  readonly #averageLength = new Float64Array(FIELD_COUNT);
  #byId: readonly Located[] | undefined;
  readonly #cache: ViewCache | undefined;
  readonly #frequencies = new Map<string, number>();

  /** An index over exactly these capabilities (with its own term-score cache). */
  static of(capabilities: readonly AnalyzedCapability[]): CapabilityIndex {
    return new CapabilityIndex([{ segment: Segment.of(capabilities) }], { cache: new TermScoreCache(), key: '' });
  }

  /**
   * The capabilities of `parts` a caller sees, as if no other existed. Ids must be distinct across
   * parts. With `cache`, term scores are kept there under `cache.key`, which must name exactly this
   * visible set (the same key for another set would mix their statistics).
   */
  static view(parts: readonly ViewPart[], cache?: ViewCache): CapabilityIndex {
    return new CapabilityIndex(parts, cache);
  }

  private constructor(parts: readonly ViewPart[], cache?: ViewCache) {
    this.#cache = cache;
    this.#parts = parts.map(({ segment, visible }) => {
      let mask: Uint8Array | null = null;
      if (visible !== undefined) {
        mask = new Uint8Array(segment.size);
        let shown = 0;
        for (const id of visible) {
          const doc = segment.documentNumber(id);
          if (doc !== undefined && mask[doc] === 0) {
            mask[doc] = 1;
            shown += 1;
          }
        }
        // Everything visible: no mask to consult (the common case of a caller who sees the catalog).
        if (shown === segment.size) mask = null;
      }
      return { segment, mask, scratch: scratchOf(segment) };
    });
    const located = this.#located();
    const ids = new Set<string>();
    for (const { capability } of located) {
      if (ids.has(capability.id)) throw new Error(`CapabilityIndex: capability ${capability.id} is in two parts of one view`);
      ids.add(capability.id);
    }
    this.#count = located.length;
    located.forEach(({ part, doc }, count) => {
      for (let f = 0; f < FIELD_COUNT; f += 1) {
        const length = part.segment.fieldLength[doc * FIELD_COUNT + f] as number;
        this.#averageLength[f] = ((this.#averageLength[f] as number) * count + length) / (count + 1);
      }
    });
  }

  get size(): number {
    return this.#count;
  }

  search(request: SearchRequest): SearchHit[] {
    const { lifecyclePhase } = request;
    const tags = request.tags ?? [];
    const filtered = lifecyclePhase !== undefined || tags.length > 0;
    const passes = (capability: AnalyzedCapability): boolean =>
      (lifecyclePhase === undefined || capability.lifecyclePhase === lifecyclePhase) && tags.every((tag) => capability.tags.includes(tag));
    const filterFields: MatchedField[] = [...(lifecyclePhase !== undefined ? ['lifecyclePhase' as const] : []), ...(tags.length > 0 ? ['tags' as const] : [])];

    if (request.query === undefined) {
      const hits: SearchHit[] = [];
      for (const { capability } of this.#located()) {
        if (hits.length >= request.limit) break;
        if (passes(capability)) hits.push({ id: capability.id, score: 0, matched: [...filterFields] });
      }
      return hits;
    }
    const plan = planQuery(request.query, (term) => this.#documentFrequency(term), this.#count);
    if (plan.length === 0) return [];
    for (const part of this.#parts) part.scratch.startQuery();
    for (const planned of plan) this.#addTerm(planned);
    return this.#best(request.limit, filtered ? passes : undefined, filterFields);
  }

  /** Visible capabilities that have `term` in any field (kept per view for masked views: counting scans the term's postings). */
  #documentFrequency(term: string): number {
    const known = this.#frequencies.get(term);
    if (known !== undefined) return known;
    const count = this.#countDocuments(term);
    if (this.#parts.some((part) => part.mask !== null)) {
      if (this.#frequencies.size >= MAX_KEPT_FREQUENCIES) this.#frequencies.clear();
      this.#frequencies.set(term, count);
    }
    return count;
  }

  #countDocuments(term: string): number {
    let count = 0;
    for (const { segment, mask } of this.#parts) {
      const t = segment.term(term);
      if (t === undefined) continue;
      const start = segment.anyStart[t] as number;
      const end = segment.anyStart[t + 1] as number;
      if (mask === null) count += end - start;
      else for (let i = start; i < end; i += 1) count += mask[segment.anyDocs[i] as number] as number;
    }
    return count;
  }

  /** Visible capabilities that have term number t[p] of each part p in field f. */
  #matching(terms: readonly (number | undefined)[], f: number): number {
    let count = 0;
    this.#parts.forEach(({ segment, mask }, p) => {
      const t = terms[p];
      if (t === undefined) return;
      const start = segment.fieldStart[t * FIELD_COUNT + f] as number;
      const end = segment.fieldStart[t * FIELD_COUNT + f + 1] as number;
      if (mask === null) count += end - start;
      else for (let i = start; i < end; i += 1) count += mask[segment.postingDocs[i] as number] as number;
    });
    return count;
  }

  /** Add one query term's scores into the query's totals, as MiniSearch's OR combinator does. */
  #addTerm(planned: PlannedTerm): void {
    const scores = this.#termScores(planned);
    scores.parts.forEach(({ docs, scores: values, fields }, p) => {
      const scratch = (this.#parts[p] as Part).scratch;
      const { total, quality, fields: queryFields, queryStamp, touched } = scratch;
      const epoch = scratch.queryEpoch;
      let touchedCount = scratch.touchedCount;
      for (let i = 0; i < docs.length; i += 1) {
        const doc = docs[i] as number;
        if (queryStamp[doc] !== epoch) {
          queryStamp[doc] = epoch;
          total[doc] = values[i] as number;
          quality[doc] = 1;
          queryFields[doc] = fields[i] as number;
          touched[touchedCount++] = doc;
        } else {
          total[doc] = (total[doc] as number) + (values[i] as number);
          quality[doc] = (quality[doc] as number) + 1;
          queryFields[doc] = (queryFields[doc] as number) | (fields[i] as number);
        }
      }
      scratch.touchedCount = touchedCount;
    });
  }

  /** One query term's scores, from the cache when the view has one and the term is matched exactly. */
  #termScores(planned: PlannedTerm): TermScores {
    // A typo's scores are not kept here (its vocabulary terms are, by the segment: Segment.nearTerms).
    const key = this.#cache !== undefined && planned.fuzzy === false ? `${this.#cache.key}\u0000${planned.boost}\u0000${planned.term}` : undefined;
    if (key !== undefined) {
      const cached = this.#cache?.cache.get(key);
      if (cached !== undefined) return cached;
    }
    const scores = this.#scoreTerm(planned);
    // A word no visible capability has (a number, a name) matches nothing: not worth a cache entry.
    if (key !== undefined && scores.size > 0) this.#cache?.cache.set(key, scores);
    return scores;
  }

  /**
   * One query term's scores: its exact matches, then (for a typo) each vocabulary term within its
   * edits, in the order MiniSearch sums them, so that every document's score is the same number.
   */
  #scoreTerm(planned: PlannedTerm): TermScores {
    const derived: { term: string; weight: number }[] = [{ term: planned.term, weight: 1 }];
    if (planned.fuzzy !== false) {
      const seen = new Set<string>([planned.term]);
      for (const { segment } of this.#parts) {
        for (const [term, distance] of segment.nearTerms(planned.term, planned.fuzzy)) {
          if (distance === 0 || seen.has(term)) continue;
          seen.add(term);
          derived.push({ term, weight: (FUZZY_WEIGHT * term.length) / (term.length + distance) });
        }
      }
    }
    for (const part of this.#parts) part.scratch.startTerm();
    for (const { term, weight } of derived) {
      const numbers = this.#parts.map(({ segment }) => segment.term(term));
      for (let f = 0; f < FIELD_COUNT; f += 1) {
        const matching = this.#matching(numbers, f);
        if (matching === 0) continue;
        const inverse = Math.log(1 + (this.#count - matching + 0.5) / (matching + 0.5));
        const average = this.#averageLength[f] as number;
        const factor = weight * planned.boost * (FIELD_BOOSTS[f] as number);
        for (let p = 0; p < this.#parts.length; p += 1) {
          const t = numbers[p];
          if (t !== undefined) addPostings(this.#parts[p] as Part, t, f, inverse, average, factor);
        }
      }
    }
    let size = 0;
    const parts = this.#parts.map(({ scratch }) => {
      const docs = Int32Array.from(scratch.termTouched);
      const scores = new Float64Array(docs.length);
      const fields = new Uint8Array(docs.length);
      for (let i = 0; i < docs.length; i += 1) {
        scores[i] = scratch.term[docs[i] as number] as number;
        fields[i] = scratch.termFields[docs[i] as number] as number;
      }
      size += docs.length;
      return { docs, scores, fields };
    });
    return { parts, size };
  }

  /** The best `limit` documents that pass the filters: by score rounded to six decimals, ties by id. */
  #best(limit: number, passes: ((capability: AnalyzedCapability) => boolean) | undefined, filterFields: readonly MatchedField[]): SearchHit[] {
    // Every matched document's final score (MiniSearch's: the sum times the number of query terms
    // matched), in flat reused arrays: thousands of documents match a common word at 10,000 capabilities.
    const partCount = this.#parts.length;
    let count = 0;
    for (let p = 0; p < partCount; p += 1) {
      const { scratch, segment } = this.#parts[p] as Part;
      const { touched, touchedCount, total, quality } = scratch;
      candidates.reserve(count + touchedCount);
      for (let i = 0; i < touchedCount; i += 1) {
        const doc = touched[i] as number;
        if (passes !== undefined && !passes(segment.documents[doc] as AnalyzedCapability)) continue;
        candidates.raw[count] = (total[doc] as number) * (quality[doc] as number);
        candidates.at[count] = doc * partCount + p;
        count += 1;
      }
    }
    // Rounding keeps order, so the limit-th best rounded score is the limit-th best raw one rounded;
    // only documents within rounding of it can still tie with it. Fewer than `limit` score above it.
    const floor = count > limit ? roundScore(kthLargest(candidates.raw, count, limit)) : -Infinity;
    const nearest = floor - 10 ** -SCORE_DIGITS;
    const above: { at: number; score: number }[] = [];
    const tied: { at: number; score: number }[] = [];
    for (let i = 0; i < count; i += 1) {
      const raw = candidates.raw[i] as number;
      if (raw < nearest) continue;
      const score = roundScore(raw);
      if (score > floor) above.push({ at: candidates.at[i] as number, score });
      else if (score === floor) tied.push({ at: candidates.at[i] as number, score });
    }
    const located = (at: number): { part: Part; doc: number } => ({ part: this.#parts[at % partCount] as Part, doc: Math.floor(at / partCount) });
    const idOf = (at: number): string => {
      const { part, doc } = located(at);
      return (part.segment.documents[doc] as AnalyzedCapability).id;
    };
    // Within a part, document numbers are in id order: a view of one part breaks ties by number.
    const byId = (a: { at: number }, b: { at: number }): number => (partCount === 1 ? a.at - b.at : byCodeUnits(idOf(a.at), idOf(b.at)));
    above.sort((a, b) => b.score - a.score || byId(a, b));
    tied.sort(byId);
    return [...above, ...tied].slice(0, limit).map(({ at, score }) => {
      const { part, doc } = located(at);
      const mask = part.scratch.fields[doc] as number;
      const matched = new Set<MatchedField>(filterFields);
      SEARCH_FIELDS.forEach((field, f) => {
        if ((mask & (1 << f)) !== 0) matched.add(field);
      });
      return { id: idOf(at), score, matched: MATCH_ORDER.filter((field) => matched.has(field)) };
    });
  }

  /** The visible documents, in id order. */
  #located(): readonly Located[] {
    if (this.#byId !== undefined) return this.#byId;
    const located: Located[] = [];
    for (const part of this.#parts) {
      part.segment.documents.forEach((capability, doc) => {
        if (part.mask === null || part.mask[doc] === 1) located.push({ part, doc, capability });
      });
    }
    if (this.#parts.length > 1) located.sort((a, b) => byCodeUnits(a.capability.id, b.capability.id));
    this.#byId = located;
    return located;
  }
}

/** Score one posting list (term t, field f) of a part into the current term's scratch. */
function addPostings(part: Part, t: number, f: number, inverse: number, average: number, factor: number): void {
  const { segment, mask, scratch } = part;
  const { postingDocs, postingFreqs, fieldLength } = segment;
  const { term, termFields, termStamp, termTouched } = scratch;
  const epoch = scratch.termEpoch;
  const bit = 1 << f;
  const end = segment.fieldStart[t * FIELD_COUNT + f + 1] as number;
  for (let i = segment.fieldStart[t * FIELD_COUNT + f] as number; i < end; i += 1) {
    const doc = postingDocs[i] as number;
    if (mask !== null && mask[doc] === 0) continue;
    const frequency = postingFreqs[i] as number;
    const length = fieldLength[doc * FIELD_COUNT + f] as number;
    // MiniSearch's calcBM25Score and weighting, operation for operation.
    const raw = inverse * (D + (frequency * (K + 1)) / (frequency + K * (1 - B + (B * length) / average)));
    const weighted = factor * raw;
    if (termStamp[doc] !== epoch) {
      termStamp[doc] = epoch;
      term[doc] = weighted;
      termFields[doc] = bit;
      termTouched.push(doc);
    } else {
      term[doc] = (term[doc] as number) + weighted;
      termFields[doc] = (termFields[doc] as number) | bit;
    }
  }
}

/** The k-th largest of the first `count` values (k ≤ count), with a min-heap of the k largest seen. */
function kthLargest(values: Float64Array, count: number, k: number): number {
  const heap = new Float64Array(k);
  let size = 0;
  for (let v = 0; v < count; v += 1) {
    const raw = values[v] as number;
    if (size < k) {
      let i = size++;
      heap[i] = raw;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if ((heap[parent] as number) <= (heap[i] as number)) break;
        const swap = heap[parent] as number;
        heap[parent] = heap[i] as number;
        heap[i] = swap;
        i = parent;
      }
    } else if (raw > (heap[0] as number)) {
      heap[0] = raw;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < k && (heap[left] as number) < (heap[smallest] as number)) smallest = left;
        if (right < k && (heap[right] as number) < (heap[smallest] as number)) smallest = right;
        if (smallest === i) break;
        const swap = heap[smallest] as number;
        heap[smallest] = heap[i] as number;
        heap[i] = swap;
        i = smallest;
      }
    }
  }
  return heap[0] as number;
}

const roundScore = (score: number): number => Number(score.toFixed(SCORE_DIGITS));

const MATCH_ORDER: readonly MatchedField[] = [...SEARCH_FIELDS, 'lifecyclePhase'];

/** A line that starts a Markdown table row. */
const TABLE_ROW = /^\s*\|(.*)\|\s*$/;
/** What `.` does not match: ECMAScript's line terminators (`\s` matches them). */
const LINE_TERMINATOR = /[\n\r\u2028\u2029]/;
const SPACE = /\s/;

/**
 * The text of an ATX heading line, exactly what `/^#{1,6}\s+(.+?)\s*#*\s*$/` captures, found in
 * linear time. That expression backtracks over every split of a run of spaces inside the heading at
 * every position of its lazy group (cubic): a served heading of 4,000 spaces between two letters
 * took 7 s, 20,000 about 15 minutes, all of it holding the server's event loop in prepare().
 */
export function headingText(line: string): string | undefined {
  const isSpace = (at: number): boolean => SPACE.test(line.charAt(at));
  let hashes = 0;
  while (line.charCodeAt(hashes) === 0x23) hashes += 1;
  if (hashes === 0 || hashes > 6 || !isSpace(hashes)) return undefined;
  let spaces = hashes;
  while (spaces < line.length && isSpace(spaces)) spaces += 1;
  // Where the longest ending of the form \s*#*\s* starts: the capture ends there, or after one character.
  let tail = line.length;
  while (tail > 0 && isSpace(tail - 1)) tail -= 1;
  while (tail > 0 && line.charCodeAt(tail - 1) === 0x23) tail -= 1;
  while (tail > 0 && isSpace(tail - 1)) tail -= 1;
  // \s+ takes every space it can and gives them back one at a time: the capture starts at `start`.
  for (let start = spaces; start > hashes; start -= 1) {
    if (start >= line.length) continue;
    const end = Math.max(start + 1, tail);
    const text = line.slice(start, end);
    if (!LINE_TERMINATOR.test(text)) return text;
    // Every earlier start ends at `tail` too and holds this text, line terminator included.
    if (end > start + 1) return undefined;
  }
  return undefined;
}
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
    const heading = headingText(line);
    if (heading !== undefined) {
      parts.push(heading);
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

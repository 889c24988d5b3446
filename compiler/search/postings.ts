// The search index's data: one immutable segment of analyzed capabilities, laid out for the query
// loop (compiler/search/ranker.ts). For every term and field, the capabilities that have the term in
// that field (in id order) and how often; for every term, the capabilities that have it in any field
// (its document frequency); for every capability, the number of distinct terms in each field (BM25's
// field length). All in typed arrays: a query walks contiguous memory and allocates nothing per
// posting. The vocabulary is also a MiniSearch SearchableMap (a radix tree), for typo-tolerant
// lookups. Visibility is not here: a segment is shared by every caller, and each caller's view says
// which of its capabilities count (ranker.ts). Pure.
import SearchableMap from 'minisearch/SearchableMap';
import { byKey } from '../order.js';
import { SEARCH_FIELDS, splitTerms, type AnalyzedCapability } from './fields.js';

export const FIELD_COUNT = SEARCH_FIELDS.length;

/** Documents (or, ×16, vocabulary terms) between two yields of Segment.build. */
const BUILD_STEP = 64;

/**
 * Typo lookups a segment keeps (a term and its edits → the vocabulary's terms within them), and the
 * longest term kept: requests repeat their words (the gate's routing looked up 3 distinct typos
 * 6,000 times for 4,000 eval requests), and a lookup walks the radix tree.
 */
const MAX_KEPT_TYPOS = 1024;
const MAX_KEPT_TYPO_LENGTH = 64;

/** A vocabulary term within a typo's edits, and how many edits away. */
export type NearTerm = readonly [term: string, distance: number];

interface SegmentData {
  documents: readonly AnalyzedCapability[];
  documentNumbers: ReadonlyMap<string, number>;
  terms: ReadonlyMap<string, number>;
  vocabulary: SearchableMap<number>;
  fieldStart: Int32Array;
  postingDocs: Int32Array;
  postingFreqs: Int32Array;
  anyStart: Int32Array;
  anyDocs: Int32Array;
  fieldLength: Int32Array;
}

export class Segment {
  /** The capabilities, in id order; a capability's position here is its document number. */
  readonly documents: readonly AnalyzedCapability[];
  /** Term → term number. */
  readonly #terms: ReadonlyMap<string, number>;
  /** Capability id → document number. */
  readonly #documentNumbers: ReadonlyMap<string, number>;
  /** The vocabulary as a radix tree (value: term number), for typo lookups (nearTerms). */
  readonly #vocabulary: SearchableMap<number>;
  /** Postings of term t in field f: postingDocs/postingFreqs[fieldStart[t * F + f] .. fieldStart[t * F + f + 1]). */
  readonly fieldStart: Int32Array;
  readonly postingDocs: Int32Array;
  readonly postingFreqs: Int32Array;
  /** Capabilities that have term t in any field: anyDocs[anyStart[t] .. anyStart[t + 1]), in id order. */
  readonly anyStart: Int32Array;
  readonly anyDocs: Int32Array;
  /** Distinct terms of document d in field f, at d * F + f. */
  readonly fieldLength: Int32Array;
  /**
   * Typo lookups (nearTerms), by edits and term: up to MAX_KEPT_TYPOS, emptied when full. Made on
   * the first typo: a server holds a segment per owner's user capabilities, most never asked one.
   */
  #typos: Map<string, readonly NearTerm[]> | undefined;

  /** A segment over `capabilities`, built in one step. */
  static of(capabilities: readonly AnalyzedCapability[]): Segment {
    const steps = Segment.build(capabilities);
    for (;;) {
      const step = steps.next();
      if (step.done === true) return step.value;
    }
  }

  /**
   * A segment over `capabilities`, built in steps: the generator yields every BUILD_STEP documents
   * (or terms), so a server can build one between requests; its return value is the segment.
   */
  static *build(capabilities: readonly AnalyzedCapability[]): Generator<void, Segment, void> {
    const documents = Object.freeze([...capabilities].sort(byKey((capability) => capability.id)));
    const documentNumbers = new Map<string, number>();
    documents.forEach((capability, doc) => {
      if (documentNumbers.has(capability.id)) throw new Error(`Segment: duplicate capability id ${capability.id}`);
      documentNumbers.set(capability.id, doc);
    });
    const F = FIELD_COUNT;
    const terms = new Map<string, number>();
    const fieldLength = new Int32Array(documents.length * F);
    // First pass: term frequencies per document and field, postings counted per (term, field).
    const perDocument: Map<number, number>[][] = [];
    const fieldCounts: number[] = [];
    const anyCounts: number[] = [];
    for (let doc = 0; doc < documents.length; doc += 1) {
      if (doc % BUILD_STEP === BUILD_STEP - 1) yield;
      const capability = documents[doc] as AnalyzedCapability;
      const fields: Map<number, number>[] = [];
      const seen = new Set<number>();
      SEARCH_FIELDS.forEach((field, f) => {
        const frequencies = new Map<number, number>();
        for (const term of splitTerms(capability.fields[field])) {
          let t = terms.get(term);
          if (t === undefined) {
            t = terms.size;
            terms.set(term, t);
            for (let i = 0; i < F; i += 1) fieldCounts.push(0);
            anyCounts.push(0);
          }
          frequencies.set(t, (frequencies.get(t) ?? 0) + 1);
        }
        fieldLength[doc * F + f] = frequencies.size;
        for (const t of frequencies.keys()) {
          fieldCounts[t * F + f] = (fieldCounts[t * F + f] ?? 0) + 1;
          if (!seen.has(t)) {
            seen.add(t);
            anyCounts[t] = (anyCounts[t] ?? 0) + 1;
          }
        }
        fields.push(frequencies);
      });
      perDocument.push(fields);
    }
    // Second pass: offsets, then fill in document order so every posting list is in id order.
    const fieldStart = prefixSums(fieldCounts);
    const anyStart = prefixSums(anyCounts);
    const postingDocs = new Int32Array(fieldStart[fieldCounts.length] ?? 0);
    const postingFreqs = new Int32Array(postingDocs.length);
    const anyDocs = new Int32Array(anyStart[anyCounts.length] ?? 0);
    const fieldNext = fieldStart.slice(0, fieldCounts.length);
    const anyNext = anyStart.slice(0, anyCounts.length);
    for (let doc = 0; doc < perDocument.length; doc += 1) {
      if (doc % BUILD_STEP === BUILD_STEP - 1) yield;
      const seen = new Set<number>();
      (perDocument[doc] as Map<number, number>[]).forEach((frequencies, f) => {
        for (const [t, frequency] of frequencies) {
          const at = fieldNext[t * F + f] as number;
          fieldNext[t * F + f] = at + 1;
          postingDocs[at] = doc;
          postingFreqs[at] = frequency;
          if (!seen.has(t)) {
            seen.add(t);
            const anyAt = anyNext[t] as number;
            anyNext[t] = anyAt + 1;
            anyDocs[anyAt] = doc;
          }
        }
      });
    }
    const vocabulary = new SearchableMap<number>();
    let added = 0;
    for (const [term, t] of terms) {
      if (added++ % (BUILD_STEP * 16) === BUILD_STEP * 16 - 1) yield;
      vocabulary.set(term, t);
    }
    return new Segment({ documents, documentNumbers, terms, vocabulary, fieldStart, postingDocs, postingFreqs, anyStart, anyDocs, fieldLength });
  }

  private constructor(data: SegmentData) {
    this.documents = data.documents;
    this.#documentNumbers = data.documentNumbers;
    this.#terms = data.terms;
    this.#vocabulary = data.vocabulary;
    this.fieldStart = data.fieldStart;
    this.postingDocs = data.postingDocs;
    this.postingFreqs = data.postingFreqs;
    this.anyStart = data.anyStart;
    this.anyDocs = data.anyDocs;
    this.fieldLength = data.fieldLength;
  }

  get size(): number {
    return this.documents.length;
  }

  /** The capability's document number, or undefined when the segment does not hold it. */
  documentNumber(id: string): number | undefined {
    return this.#documentNumbers.get(id);
  }

  /** The term's number, or undefined when no capability of the segment has it. */
  term(term: string): number | undefined {
    return this.#terms.get(term);
  }

  /**
   * The vocabulary's terms within `edits` of `term` (the term itself included, at 0), in the order
   * of MiniSearch's fuzzy lookup, which ranker.ts sums scores in.
   */
  nearTerms(term: string, edits: number): readonly NearTerm[] {
    if (term.length > MAX_KEPT_TYPO_LENGTH) return this.#lookUpNear(term, edits);
    const key = `${edits}\0${term}`;
    this.#typos ??= new Map();
    let near = this.#typos.get(key);
    if (near === undefined) {
      near = this.#lookUpNear(term, edits);
      if (this.#typos.size >= MAX_KEPT_TYPOS) this.#typos.clear();
      this.#typos.set(key, near);
    }
    return near;
  }

  #lookUpNear(term: string, edits: number): NearTerm[] {
    return Array.from(this.#vocabulary.fuzzyGet(term, edits), ([near, [, distance]]): NearTerm => [near, distance]);
  }
}

function prefixSums(counts: readonly number[]): Int32Array {
  const sums = new Int32Array(counts.length + 1);
  for (let i = 0; i < counts.length; i += 1) sums[i + 1] = (sums[i] as number) + (counts[i] as number);
  return sums;
}

// The search index's data: one immutable segment of analyzed capabilities, laid out for the query
// loop (compiler/search/ranker.ts). For every term and field, the capabilities that have the term in
// that field (in id order) and how often; for every term, the capabilities that have it in any field
// (its document frequency); for every capability, the number of distinct terms in each field (BM25's
// field length). All in typed arrays: a query walks contiguous memory and allocates nothing per
// posting. The vocabulary is also a MiniSearch SearchableMap (a radix tree), for typo-tolerant
// lookups. Visibility is not here: a segment is shared by every caller, and each caller's view says
// which of its capabilities count (ranker.ts). Pure.
import SearchableMap from 'minisearch/SearchableMap';
import { compareIds, SEARCH_FIELDS, type AnalyzedCapability } from './fields.js';

export const FIELD_COUNT = SEARCH_FIELDS.length;

const splitTerms = (text: string): string[] => (text === '' ? [] : text.split(' '));

export class Segment {
  /** The capabilities, in id order; a capability's position here is its document number. */
  readonly documents: readonly AnalyzedCapability[];
  /** Term → term number. */
  readonly #terms = new Map<string, number>();
  /** Capability id → document number. */
  readonly #documentNumbers = new Map<string, number>();
  /** The vocabulary as a radix tree (value: term number), for fuzzy lookups. */
  readonly vocabulary: SearchableMap<number>;
  /** Postings of term t in field f: postingDocs/postingFreqs[fieldStart[t * F + f] .. fieldStart[t * F + f + 1]). */
  readonly fieldStart: Int32Array;
  readonly postingDocs: Int32Array;
  readonly postingFreqs: Int32Array;
  /** Capabilities that have term t in any field: anyDocs[anyStart[t] .. anyStart[t + 1]), in id order. */
  readonly anyStart: Int32Array;
  readonly anyDocs: Int32Array;
  /** Distinct terms of document d in field f, at d * F + f. */
  readonly fieldLength: Int32Array;

  constructor(capabilities: readonly AnalyzedCapability[]) {
    this.documents = Object.freeze([...capabilities].sort((a, b) => compareIds(a.id, b.id)));
    this.documents.forEach((capability, doc) => {
      if (this.#documentNumbers.has(capability.id)) throw new Error(`Segment: duplicate capability id ${capability.id}`);
      this.#documentNumbers.set(capability.id, doc);
    });
    const F = FIELD_COUNT;
    this.fieldLength = new Int32Array(this.documents.length * F);
    // First pass: term frequencies per document and field, postings counted per (term, field).
    const perDocument: Map<number, number>[][] = [];
    const fieldCounts: number[] = [];
    const anyCounts: number[] = [];
    this.documents.forEach((capability, doc) => {
      const fields: Map<number, number>[] = [];
      const seen = new Set<number>();
      SEARCH_FIELDS.forEach((field, f) => {
        const frequencies = new Map<number, number>();
        for (const term of splitTerms(capability.fields[field])) {
          let t = this.#terms.get(term);
          if (t === undefined) {
            t = this.#terms.size;
            this.#terms.set(term, t);
            for (let i = 0; i < F; i += 1) fieldCounts.push(0);
            anyCounts.push(0);
          }
          frequencies.set(t, (frequencies.get(t) ?? 0) + 1);
        }
        this.fieldLength[doc * F + f] = frequencies.size;
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
    });
    // Second pass: offsets, then fill in document order so every posting list is in id order.
    this.fieldStart = prefixSums(fieldCounts);
    this.anyStart = prefixSums(anyCounts);
    this.postingDocs = new Int32Array(this.fieldStart[fieldCounts.length] ?? 0);
    this.postingFreqs = new Int32Array(this.postingDocs.length);
    this.anyDocs = new Int32Array(this.anyStart[anyCounts.length] ?? 0);
    const fieldNext = this.fieldStart.slice(0, fieldCounts.length);
    const anyNext = this.anyStart.slice(0, anyCounts.length);
    perDocument.forEach((fields, doc) => {
      const seen = new Set<number>();
      fields.forEach((frequencies, f) => {
        for (const [t, frequency] of frequencies) {
          const at = fieldNext[t * F + f] as number;
          fieldNext[t * F + f] = at + 1;
          this.postingDocs[at] = doc;
          this.postingFreqs[at] = frequency;
          if (!seen.has(t)) {
            seen.add(t);
            const anyAt = anyNext[t] as number;
            anyNext[t] = anyAt + 1;
            this.anyDocs[anyAt] = doc;
          }
        }
      });
    });
    this.vocabulary = new SearchableMap<number>();
    for (const [term, t] of this.#terms) this.vocabulary.set(term, t);
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
}

function prefixSums(counts: readonly number[]): Int32Array {
  const sums = new Int32Array(counts.length + 1);
  for (let i = 0; i < counts.length; i += 1) sums[i + 1] = (sums[i] as number) + (counts[i] as number);
  return sums;
}

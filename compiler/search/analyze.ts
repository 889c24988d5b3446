// Text analysis shared by the index and the query, so both sides make the same terms:
// NFKC normalization and case folding, then English words without stop words, Porter-stemmed, and
// Chinese runs as the words Intl.Segmenter finds plus their character bigrams (a word the segmenter
// cuts differently on the two sides still meets through its bigrams). Pure.
import { porterStem } from './porter.js';

// A small, conventional list: words that say nothing about which capability is meant.
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about an and any are as at be been but by can could do does for from had has have how i if in into is it its ' +
    'me my of on or our please should so some that the their them then there these this those to us was we what when ' +
    'where which who why will with would you your'
  ).split(' '),
);

const HAN = /\p{Script=Han}/u;
// A Han run, or a run of other letters, marks and digits (apostrophes inside a word are dropped).
const WORDS = /\p{Script=Han}+|(?:(?!\p{Script=Han})[\p{L}\p{M}\p{N}])+/gu;

let segmenter: Intl.Segmenter | undefined;

// Stems of the words seen, since a registry and its requests repeat a small vocabulary: at 10,000
// capabilities the stemmer was a quarter of the analysis. Emptied when it holds MAX_STEMS words.
// Only words of at most MAX_REMEMBERED_WORD characters are kept: a vocabulary's words are short, and
// remembering every word let a caller's distinct 500-character queries keep ~100 MB (65,536 of them).
const MAX_STEMS = 65_536;
export const MAX_REMEMBERED_WORD = 40;
const stems = new Map<string, string>();

function stem(word: string): string {
  if (word.length > MAX_REMEMBERED_WORD) return porterStem(word);
  let stemmed = stems.get(word);
  if (stemmed === undefined) {
    if (stems.size >= MAX_STEMS) stems.clear();
    stemmed = porterStem(word);
    stems.set(word, stemmed);
  }
  return stemmed;
}

/** Characters the stem memo holds now, its words and their stems (for tests). */
export function rememberedStemChars(): number {
  let chars = 0;
  for (const [word, stemmed] of stems) chars += word.length + stemmed.length;
  return chars;
}

/** NFKC and a locale-independent case fold: what "the same text" means to search. */
export function normalizeText(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

export function isHan(term: string): boolean {
  return HAN.test(term);
}

/**
 * The longest piece of a Han run given to the segmenter at once. ICU's dictionary segmentation
 * slows down sharply on longer runs (64,500 characters: 0.5 s; 66,000: 38 s), so a longer run is
 * segmented in pieces of this length; no phrase of real text comes near it.
 */
export const MAX_SEGMENTED_RUN = 1_024;

/** The terms of a run of Han characters: the segmenter's words, then the character bigrams not already a word. */
function hanTerms(run: string, into: string[]): void {
  segmenter ??= new Intl.Segmenter('zh', { granularity: 'word' });
  const words = new Set<string>();
  // Han characters outside the BMP are surrogate pairs: a piece never ends inside one.
  for (let start = 0; start < run.length;) {
    let end = Math.min(run.length, start + MAX_SEGMENTED_RUN);
    if (end < run.length && (run.charCodeAt(end) & 0xfc00) === 0xdc00) end += 1;
    for (const segment of segmenter.segment(run.slice(start, end))) {
      if (segment.isWordLike !== true) continue;
      words.add(segment.segment);
      into.push(segment.segment);
    }
    start = end;
  }
  const chars = [...run];
  for (let i = 0; i + 1 < chars.length; i += 1) {
    const bigram = `${chars[i] ?? ''}${chars[i + 1] ?? ''}`;
    if (!words.has(bigram)) into.push(bigram);
  }
}

// ASCII text (most of an English registry) has no Han and nothing for NFKC to change: its words are
// the runs of ASCII letters and digits, found without the Unicode-aware pattern's per-character lookahead.
const ASCII = /^[^\u0080-\uffff]*$/;
const ASCII_WORDS = /[a-z0-9]+/g;

/** The search terms of `text`, in order, repeated as often as they occur. */
export function analyze(text: string): string[] {
  const terms: string[] = [];
  const plain = text.replaceAll("'", '');
  if (ASCII.test(plain)) {
    for (const match of plain.toLowerCase().matchAll(ASCII_WORDS)) {
      const word = match[0];
      if (!STOP_WORDS.has(word)) terms.push(stem(word));
    }
    return terms;
  }
  for (const match of normalizeText(plain).matchAll(WORDS)) {
    const word = match[0];
    if (isHan(word)) hanTerms(word, terms);
    else if (!STOP_WORDS.has(word)) terms.push(stem(word));
  }
  return terms;
}

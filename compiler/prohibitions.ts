// Prohibitions: the markers that make a sentence an explicit "do not" for the agent (English and
// Chinese), and a sentence splitter. Shared by `negative-rules` (the body forbids something) and
// `retired-tools` (a retired tool is named in a sentence that forbids it).
import { escapeRegExp, trieAlternation, WORD_CHAR, WORD_END, WORD_START } from './literal-trie.js';

/**
 * Default markers. Chosen for precision: each one, in a protocol written for an agent, almost always
 * forbids something. Weak or ambiguous words are left out on purpose: "avoid" and "should not" are
 * advice, "does not" describes, "不能" also means "is unable to", "别" is also "other" (别人).
 * "勿" alone covers 请勿 and 切勿; 切勿 is listed anyway because authors look for it.
 */
export const DEFAULT_PROHIBITION_MARKERS: readonly string[] = [
  'do not',
  "don't",
  'never',
  'must not',
  "mustn't",
  'may not',
  'shall not',
  'cannot be used',
  'not allowed',
  'not permitted',
  'forbidden',
  'prohibited',
  '不要',
  '禁止',
  '不得',
  '切勿',
  '绝不',
  '勿',
  '不可',
  '严禁',
  '不准',
  '不许',
  '不允许',
];

/** JSON Schema of a rule's `markers` option: a non-empty list of distinct, non-blank strings. */
export const MARKERS_OPTION_SCHEMA = {
  type: 'array',
  minItems: 1,
  // The markers make one regular expression: bounded, so that a config cannot make one V8 refuses.
  maxItems: 256,
  uniqueItems: true,
  items: { type: 'string', minLength: 1, maxLength: 64, pattern: '\\S' },
} as const;

export interface MarkersOptions {
  markers: string[];
}

export interface ProhibitionMatcher {
  /** The first marker found in `text` (as written there), or undefined. */
  find(text: string): string | undefined;
  test(text: string): boolean;
}

/**
 * A character as the markers' trie keys it: one spelling for all the characters the expression
 * (flags `iu`) takes as the same one (`S`, `s` and `ſ` are one key), so that markers differing only
 * in case share their branch. A spelling is used only when the expression matches it for `char`.
 */
const foldKeys = new Map<string, string>();

function foldKey(char: string): string {
  const known = foldKeys.get(char);
  if (known !== undefined) return known;
  let key = char;
  for (const candidate of [char.toLowerCase(), char.toUpperCase(), char.toUpperCase().toLowerCase(), char.toLowerCase().toUpperCase()]) {
    if ([...candidate].length !== 1 || candidate.codePointAt(0)! >= key.codePointAt(0)!) continue;
    if (new RegExp(`^${escapeRegExp(candidate)}$`, 'iu').test(char)) key = candidate;
  }
  if (foldKeys.size > 4096) foldKeys.clear();
  foldKeys.set(char, key);
  return key;
}

/**
 * One marker as the pieces of a regular expression: case-insensitive (flag set by the caller), any
 * run of whitespace between words (sentences wrap across lines), straight or curly apostrophes, and
 * word boundaries only on ends that are ASCII word characters ("never" is not found in "whenever";
 * "禁止" is found in "严格禁止").
 */
function markerPieces(marker: string): string[] {
  const trimmed = marker.trim();
  const pieces: string[] = [];
  if (WORD_CHAR.test(trimmed.charAt(0))) pieces.push(WORD_START);
  trimmed.split(/\s+/).forEach((word, index) => {
    if (index > 0) pieces.push('\\s+');
    for (const char of word) pieces.push(/['’]/.test(char) ? "['’]" : escapeRegExp(foldKey(char)));
  });
  pieces.push(WORD_CHAR.test(trimmed.charAt(trimmed.length - 1)) ? WORD_END : '');
  return pieces;
}

/**
 * The markers as one expression: a trie of their pieces (compiler/literal-trie.ts), so that 256
 * markers of 64 characters with a long common beginning ("a a a … b1", "a a a … b2", a config a
 * pull request can set) cost one marker's length per position, not all of theirs together (which
 * took minutes on a protocol of 100 KB). `find` still gives the longest marker at a position.
 */
function markersSource(markers: readonly string[]): string {
  return trieAlternation(markers.map(markerPieces));
}

const matcherCache = new Map<string, ProhibitionMatcher>();

/** A matcher for a marker list, compiled once per distinct list (one regular expression). */
export function prohibitionMatcher(markers: readonly string[]): ProhibitionMatcher {
  const key = markers.join('\u0000');
  const cached = matcherCache.get(key);
  if (cached) return cached;
  const usable = markers.filter((marker) => marker.trim() !== '');
  const pattern = usable.length > 0 ? new RegExp(markersSource(usable), 'iu') : undefined;
  const matcher: ProhibitionMatcher = {
    find: (text) => (pattern ? pattern.exec(text)?.[0] : undefined),
    test: (text) => (pattern ? pattern.test(text) : false),
  };
  if (matcherCache.size > 64) matcherCache.clear();
  matcherCache.set(key, matcher);
  return matcher;
}

export interface Sentence {
  text: string;
  /** Offset of the sentence in the text it was split from. */
  start: number;
  end: number;
}

// A sentence ends at . ! ? followed by whitespace or the end of the text (so "1.5", "file.md" and
// ".skip" do not end one), or right after a Chinese 。！？； (no space follows them).
const SENTENCE_END = /[.!?]+(?=\s|$)|[。！？；]+/gu;
// Abbreviations whose period does not end a sentence: "Never call, e.g. `x_*`" is one sentence.
const ABBREVIATION = /(?:^|[\s(])(?:e\.g|i\.e|etc|vs|cf)$/i;

/** Split a block's plain text into sentences (trimmed, non-empty), keeping their offsets. */
export function splitSentences(text: string): Sentence[] {
  const sentences: Sentence[] = [];
  let start = 0;
  const push = (from: number, to: number): void => {
    const raw = text.slice(from, to);
    const lead = raw.length - raw.trimStart().length;
    const trimmed = raw.trim();
    if (trimmed !== '') sentences.push({ text: trimmed, start: from + lead, end: from + lead + trimmed.length });
  };
  for (const match of text.matchAll(SENTENCE_END)) {
    const end = match.index + match[0].length;
    if (match[0] === '.' && ABBREVIATION.test(text.slice(start, match.index))) continue;
    push(start, end);
    start = end;
  }
  push(start, text.length);
  return sentences;
}

/** Whether a sentence forbids something, by the given markers. */
export function isProhibition(sentence: string, markers: readonly string[] = DEFAULT_PROHIBITION_MARKERS): boolean {
  return prohibitionMatcher(markers).test(sentence);
}

/** A few markers to quote in a message: the first English ones and the first Chinese ones. */
export function exampleMarkers(markers: readonly string[], count = 5): string {
  const ascii = markers.filter((marker) => /^[\x20-\x7e’]+$/.test(marker));
  const other = markers.filter((marker) => !ascii.includes(marker));
  const otherCount = Math.min(other.length, Math.max(2, count - ascii.length));
  const picked = [...ascii.slice(0, count - otherCount), ...other.slice(0, otherCount)];
  return picked.map((marker) => `"${marker}"`).join(', ');
}

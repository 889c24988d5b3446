// Mentions: where a name (a tool, a state, a retired-tool glob) occurs in a protocol body, as exact
// file ranges, so that diagnostics point at the token itself.
//
// Boundaries: a name is found only where the characters on either side are not ASCII word
// characters [A-Za-z0-9_]. `_` is a word character, so `work_log_record` is not found inside
// `work_log_records` or `my_work_log_record`; `.` and `-` are not, so it is found in
// "`work_log_record`." and "work_log_record-based". Non-ASCII letters are not word characters either,
// so names are found inside Chinese text ("调用work_log_record工具").
//
// Nothing is skipped: fenced code, inline code, tables and HTML comments are all part of the body
// that is served to the agent, and a tool named in an example is a tool named to the agent.
// Matching is case-sensitive: tool and state names are identifiers.
import { escapeRegExp, trieAlternation, WORD_CHAR, WORD_END, WORD_START } from './literal-trie.js';
import { LineIndex } from './positions.js';
import type { CapabilityDocument, Range } from './types.js';

/** A name as a regular expression source, with word boundaries on ends that are word characters. */
export function namePatternSource(name: string): string {
  return namePieces(name).join('');
}

/**
 * One regular expression (global, case-sensitive) for a set of names, the longest match winning: a
 * trie of their characters (compiler/literal-trie.ts), since an author chooses the names (up to
 * 1,024 states of 128 characters: as one branch each, 256 states sharing 120 characters took
 * 1.3 s per 800 KB of entries).
 */
export function namesPattern(names: Iterable<string>): RegExp | undefined {
  const sequences = [...new Set(names)].filter((name) => name !== '').map(namePieces);
  return sequences.length > 0 ? new RegExp(trieAlternation(sequences), 'gu') : undefined;
}

/** A name as pieces for a trie: its characters, with word boundaries on ends that are word characters. */
function namePieces(name: string): string[] {
  const pieces = [...name].map(escapeRegExp);
  if (WORD_CHAR.test(name.charAt(0))) pieces.unshift(WORD_START);
  pieces.push(WORD_CHAR.test(name.charAt(name.length - 1)) ? WORD_END : '');
  return pieces;
}

/** The schema's `maxLength` of a `retiredTools` entry: each entry is a regular expression of its own. */
export const MAX_RETIRED_ENTRY = 128;

/** A well-formed `retiredTools` entry (the schema's pattern and length); rules skip others, which frontmatter-schema reports. */
export function isRetiredEntry(entry: string): boolean {
  return entry.length <= MAX_RETIRED_ENTRY && /^[A-Za-z0-9_.-]+\*?$/.test(entry);
}

/** Whether a `retiredTools` entry is a `prefix*` glob. */
export function isGlob(entry: string): boolean {
  return entry.endsWith('*');
}

/**
 * A `retiredTools` entry as a global regular expression over text. A name matches itself; a glob
 * `work_log_schedule_*` matches itself (also written `work_log_schedule_\*` in Markdown source) and
 * any tool name that extends the prefix (`work_log_schedule_create`).
 */
export function retiredEntryPattern(entry: string, flags = 'gu'): RegExp {
  if (!isGlob(entry)) return new RegExp(namePatternSource(entry), flags);
  const prefix = entry.slice(0, -1);
  const before = WORD_CHAR.test(prefix.charAt(0)) ? WORD_START : '';
  return new RegExp(`${before}${escapeRegExp(prefix)}(?:\\\\?\\*|[A-Za-z0-9_]+(?:[.-][A-Za-z0-9_]+)*(?![A-Za-z0-9_]))`, flags);
}

/** Whether a tool name is covered by a `retiredTools` entry (the name itself, or a glob's prefix). */
export function matchesRetiredEntry(tool: string, entry: string): boolean {
  return isGlob(entry) ? tool.startsWith(entry.slice(0, -1)) && tool.length >= entry.length : tool === entry;
}

const bodies = new WeakMap<CapabilityDocument, LineIndex>();

/** The body of a document with its offset <-> file position mapping, built once per document. */
export function bodyText(document: CapabilityDocument): LineIndex {
  let body = bodies.get(document);
  if (!body) {
    body = new LineIndex(document.body, document.bodyStartLine);
    bodies.set(document, body);
  }
  return body;
}

export interface Mention {
  /** The text that matched (a tool name, a glob, a state). */
  name: string;
  /** Offset in `document.body`. */
  offset: number;
  range: Range;
}

// A word token, possibly compound (`a.b-c`): tool names may contain `.` and `-`.
const TOKEN = /[A-Za-z0-9_]+(?:[.-][A-Za-z0-9_]+)*/g;

/** Whether a UTF-16 code unit is an ASCII word character, [A-Za-z0-9_]. */
export function isWordCode(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 95;
}

/** `-` and `.`, which join word runs into one compound token. */
function isJoinCode(code: number): boolean {
  return code === 45 || code === 46;
}

/**
 * Calls `visit(start, end)` for each maximal run of characters that `inRun` accepts and that holds
 * `marker` (a single character that `inRun` accepts), in order: the matches of a global `[…]+`
 * over those characters that contain `marker`. indexOf jumps from one `marker` to the next, so
 * the prose between them costs one search, where a regular expression stops at every word: `_`
 * and `-` are rare in prose, and most words hold neither.
 */
export function runsHolding(text: string, marker: string, inRun: (code: number) => boolean, visit: (start: number, end: number) => void): void {
  let from = 0;
  for (let at = text.indexOf(marker); at !== -1; at = text.indexOf(marker, from)) {
    let start = at;
    // The run before `from` ended at a character outside it: no run crosses `from`.
    while (start > from && inRun(text.charCodeAt(start - 1))) start -= 1;
    let end = at + 1;
    while (end < text.length && inRun(text.charCodeAt(end))) end += 1;
    visit(start, end);
    from = end;
  }
}

/**
 * The word token (a match of TOKEN) that holds offset `at`, a word character: [start, end). A
 * `.` or `-` joins the word runs on either side of it, and only those, so a token's ends follow
 * from the characters next to them, wherever a scan from the start of the text would begin it.
 */
function tokenAround(text: string, at: number): [start: number, end: number] {
  let start = at;
  for (;;) {
    while (start > 0 && isWordCode(text.charCodeAt(start - 1))) start -= 1;
    if (!isJoinCode(text.charCodeAt(start - 1)) || !isWordCode(text.charCodeAt(start - 2))) break;
    start -= 2;
  }
  let end = at + 1;
  for (;;) {
    while (end < text.length && isWordCode(text.charCodeAt(end))) end += 1;
    if (!isJoinCode(text.charCodeAt(end)) || !isWordCode(text.charCodeAt(end + 1))) break;
    end += 2;
  }
  return [start, end];
}

/**
 * Calls `visit(token, start)` for each word token (TOKEN) of `text`, in order; with a `marker`,
 * only for the tokens that hold it (found as in {@link runsHolding}).
 */
export function wordTokens(text: string, marker: string | undefined, visit: (token: string, start: number) => void): void {
  if (marker === undefined) {
    const pattern = new RegExp(TOKEN.source, 'g');
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) visit(match[0], match.index);
    return;
  }
  const inWord = isWordCode(marker.charCodeAt(0));
  for (let at = text.indexOf(marker); at !== -1;) {
    // A `.` or `-` is inside a token only between two word characters.
    if (inWord || (isWordCode(text.charCodeAt(at - 1)) && isWordCode(text.charCodeAt(at + 1)))) {
      const [start, end] = tokenAround(text, inWord ? at : at - 1);
      visit(text.slice(start, end), start);
      at = text.indexOf(marker, end);
    } else {
      at = text.indexOf(marker, at + 1);
    }
  }
}

/** A set of names to look for in word tokens, with what a linear scan of compound tokens needs. */
export class NameIndex {
  private readonly names: Set<string>;
  /** Every name's parts that end before one of its `.` or `-` (`a`, `a.b` for `a.b-c`). */
  private readonly compoundPrefixes = new Set<string>();
  /** Length of the shortest name: shorter simple tokens are skipped without a lookup. */
  readonly minLength: number;
  /**
   * A character every name holds (`_`, `-` or `.`, in that order), if one does: a token without
   * it holds no name, and is not looked at (tool names are snake_case).
   */
  readonly marker: string | undefined;

  constructor(names: Iterable<string>) {
    this.names = new Set([...names].filter((name) => name !== ''));
    let shortest = Infinity;
    for (const name of this.names) {
      shortest = Math.min(shortest, name.length);
      for (const separator of name.matchAll(/[.-]/g)) this.compoundPrefixes.add(name.slice(0, separator.index));
    }
    this.minLength = shortest;
    const all = [...this.names];
    this.marker = ['_', '-', '.'].find((marker) => all.every((name) => name.includes(marker)));
  }

  has(candidate: string): boolean {
    return this.names.has(candidate);
  }

  /** Whether some name continues `candidate` with a `.` or `-` and more. */
  continues(candidate: string): boolean {
    return this.compoundPrefixes.has(candidate);
  }
}

/**
 * Every mention of a name in the body, in order. The body is split into word tokens once and each
 * token is looked up in `names` (a Set), so the cost does not grow with the number of names. A
 * compound token (`a.b-c`) yields its longest names, left to right: from each part, the scan
 * extends only while the text so far begins some name, so the work per part is bounded by the
 * longest name, never by the token (trying every range of parts of `ab-ab-…` was cubic).
 * Callers that want only some names (e.g. foreign tools) say so in `accept`: a range is computed
 * only for the mentions returned.
 */
export function findNames(document: CapabilityDocument, names: NameIndex, accept: (name: string) => boolean = () => true): Mention[] {
  const body = bodyText(document);
  const mentions: Mention[] = [];
  const add = (name: string, offset: number): void => {
    mentions.push({ name, offset, range: body.range(offset, offset + name.length) });
  };
  const isName = (candidate: string): boolean => names.has(candidate) && accept(candidate);
  wordTokens(body.text, names.marker, (token, index) => {
    if (!token.includes('.') && !token.includes('-')) {
      if (token.length >= names.minLength && isName(token)) add(token, index);
      return;
    }
    // Segment boundaries of the compound token: [start, end) of each [A-Za-z0-9_]+ run.
    const segments = [...token.matchAll(/[A-Za-z0-9_]+/g)].map((s) => [s.index, s.index + s[0].length] as const);
    let i = 0;
    while (i < segments.length) {
      let matched = -1;
      for (let j = i; j < segments.length; j += 1) {
        const candidate = token.slice(segments[i]![0], segments[j]![1]);
        if (isName(candidate)) matched = j;
        if (!names.continues(candidate)) break;
      }
      if (matched >= 0) add(token.slice(segments[i]![0], segments[matched]![1]), index + segments[i]![0]);
      i = matched >= 0 ? matched + 1 : i + 1;
    }
  });
  return mentions;
}

/**
 * Matches of a global regular expression in the body (or in the part of it inside `within`, a file
 * range), in order.
 */
export function findPattern(document: CapabilityDocument, pattern: RegExp, within?: Range): Mention[] {
  const body = bodyText(document);
  let start = 0;
  let end = body.text.length;
  if (within) {
    const offsets = body.offsets(within);
    if (!offsets) return [];
    ({ start, end } = offsets);
  }
  const global = pattern.global ? pattern : new RegExp(pattern.source, `${pattern.flags}g`);
  global.lastIndex = start;
  const mentions: Mention[] = [];
  for (;;) {
    const match = global.exec(body.text);
    if (!match || match.index >= end) break;
    if (match[0] === '') {
      global.lastIndex += 1;
      continue;
    }
    if (match.index + match[0].length <= end) {
      mentions.push({ name: match[0], offset: match.index, range: body.range(match.index, match.index + match[0].length) });
    }
  }
  return mentions;
}

/** The first occurrence of `name` (on word boundaries) inside a file range of the body. */
export function findNameIn(document: CapabilityDocument, name: string, within: Range): Mention | undefined {
  return findPattern(document, new RegExp(namePatternSource(name), 'gu'), within)[0];
}

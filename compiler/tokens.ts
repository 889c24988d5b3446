// Token counts with a real BPE tokenizer (gpt-tokenizer, o200k_base). Text that looks like a special
// token (`<|endoftext|>`) is counted as the plain text it is: authors may write anything, and the
// tokenizer would otherwise throw.
//
// The tokenizer is loaded by loadTokenizer() or the first count, not when this module is: its BPE
// tables take ~0.3 s to load, and a build that imports the compiler before it starts parsing would
// otherwise make the parse workers wait for them (a build loads them with its first count, once the
// parse workers are gone: cli/parse-workers.ts; the server and its user-compile workers at start,
// so that no request or save pays for them). Its CommonJS build is loaded,
// synchronously: counting stays synchronous.
//
// Its ranks come from RANKS_FILE when that holds the installed package's version: the same list,
// read as JSON, leaves ~16–20 MiB less resident memory than compiling the package's 2.2 MB
// JavaScript table. `npm run build:ts` writes it (scripts/tokenizer-ranks.mjs); without it (the
// TypeScript sources, or another version installed since) the package's own table is used.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

type Tokenizer = Pick<typeof import('gpt-tokenizer'), 'countTokens'>;
let tokenizer: Tokenizer | undefined;
const require = createRequire(import.meta.url);

/** The ranks as scripts/tokenizer-ranks.mjs writes them, next to the compiled module. */
export const RANKS_FILE = new URL('./o200k-ranks.json', import.meta.url);

/** Where the loaded tokenizer's ranks came from: undefined until it is loaded. */
export let tokenizerRanks: 'ranks-file' | 'package' | undefined;

/** Load the tokenizer now (the first count would). */
export function loadTokenizer(): Tokenizer {
  if (tokenizer) return tokenizer;
  const fromFile = tokenizerFromRanks(RANKS_FILE);
  tokenizer = fromFile ?? (require('gpt-tokenizer') as Tokenizer);
  tokenizerRanks = fromFile ? 'ranks-file' : 'package';
  return tokenizer;
}

/** A tokenizer over the ranks in `file`, if it is one scripts/tokenizer-ranks.mjs wrote for the installed package's version. */
export function tokenizerFromRanks(file: URL | string): Tokenizer | undefined {
  let saved: unknown;
  try {
    saved = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  const { version } = require('gpt-tokenizer/package.json') as { version: string };
  if (!isSavedRanks(saved) || saved.version !== version) return undefined;
  const { GptEncoding } = require('gpt-tokenizer/GptEncoding') as typeof import('gpt-tokenizer/GptEncoding');
  return GptEncoding.getEncodingApi('o200k_base', () => saved.ranks);
}

function isSavedRanks(value: unknown): value is { version: string; ranks: (string | number[])[] } {
  if (typeof value !== 'object' || value === null) return false;
  const { package: name, encoding, version, ranks } = value as Record<string, unknown>;
  return name === 'gpt-tokenizer' && encoding === 'o200k_base' && typeof version === 'string' && Array.isArray(ranks) && ranks.length > 0;
}

function countBpeTokens(text: string, options: Parameters<Tokenizer['countTokens']>[1]): number {
  return loadTokenizer().countTokens(text, options);
}

const SPECIAL_TOKENS_AS_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * BPE merges a word in time that grows with the square of its length (64 KB of `aaa…` took
 * seconds), and the tokenizer takes a run of whitespace as one word too (320,000 spaces: ~1 min).
 * So a run of non-whitespace, or of whitespace, longer than this is counted in pieces of this
 * length. No word, URL or indentation of real prose comes near it, and text without such a run is
 * counted whole, exactly.
 */
export const MAX_COUNTED_WORD = 256;

/** The whitespace of the tokenizer's pre-splitting, which ends a run of non-whitespace: ASCII spaces and line breaks, NBSP and friends. */
export function isCountedSpace(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13) || code === 0xa0 || code === 0x3000 || (code >= 0x2000 && code <= 0x200a);
}

/**
 * The offsets looked at are STRIDE apart, so a run longer than MAX_COUNTED_WORD (twice STRIDE) holds
 * two neighbouring ones and everything between them: only a run through two neighbours of one kind
 * is read further, and most of a text is never read (a character in ~40 of real prose).
 */
const STRIDE = MAX_COUNTED_WORD / 2;

/** Offsets [start, end) of each run of non-whitespace or of whitespace longer than MAX_COUNTED_WORD, in order. */
export function longRuns(text: string): [number, number][] {
  const runs: [number, number][] = [];
  const length = text.length;
  for (let at = 0; at + STRIDE < length; at += STRIDE) {
    const space = isCountedSpace(text.charCodeAt(at));
    if (isCountedSpace(text.charCodeAt(at + STRIDE)) !== space) continue;
    let end = at + 1;
    while (end <= at + STRIDE && isCountedSpace(text.charCodeAt(end)) === space) end += 1;
    if (end <= at + STRIDE) continue;
    // [at, at + STRIDE] is one run: widen it to the whole run.
    let start = at;
    while (start > 0 && isCountedSpace(text.charCodeAt(start - 1)) === space) start -= 1;
    while (end < length && isCountedSpace(text.charCodeAt(end)) === space) end += 1;
    if (end - start > MAX_COUNTED_WORD) runs.push([start, end]);
    // The next run starts at `end` or later: look there next.
    at = end - STRIDE;
  }
  return runs;
}

export function countTokens(text: string): number {
  const runs = longRuns(text);
  if (runs.length === 0) return countBpeTokens(text, SPECIAL_TOKENS_AS_TEXT);
  let count = 0;
  let from = 0;
  for (const [start, end] of runs) {
    if (start > from) count += countBpeTokens(text.slice(from, start), SPECIAL_TOKENS_AS_TEXT);
    for (let piece = start; piece < end;) {
      let cut = Math.min(end, piece + MAX_COUNTED_WORD);
      // Never cut a surrogate pair in two.
      if (cut < end && (text.charCodeAt(cut) & 0xfc00) === 0xdc00) cut += 1;
      count += countBpeTokens(text.slice(piece, cut), SPECIAL_TOKENS_AS_TEXT);
      piece = cut;
    }
    from = end;
  }
  if (from < text.length) count += countBpeTokens(text.slice(from), SPECIAL_TOKENS_AS_TEXT);
  return count;
}

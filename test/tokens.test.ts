// The tokenizer's ranks as JSON (compiler/tokens.ts, scripts/tokenizer-ranks.mjs): the same counts as
// gpt-tokenizer's own o200k_base table, a file for another version or a damaged one is not used,
// and the compiled compiler reads the file that `npm run build:ts` writes.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { countTokens as packageCount } from 'gpt-tokenizer';
import { afterAll, describe, expect, it } from 'vitest';
import { isCountedSpace, longRuns, MAX_COUNTED_WORD, tokenizerFromRanks } from '../compiler/tokens.js';
import { REPO_ROOT } from './cli/helpers.js';
import { runs } from './support/property.js';

const BUILT = path.join(REPO_ROOT, 'lib', 'compiler', 'o200k-ranks.json');
const AS_TEXT = { disallowedSpecial: new Set<string>() };
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'capreg-ranks-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe('the tokenizer from its ranks file', () => {
  it('counts what the package counts: prose, code, every script, special-token text, bytes that are no UTF-8 token', () => {
    const tokenizer = tokenizerFromRanks(BUILT);
    expect(tokenizer).toBeDefined();
    const samples = [
      '',
      'Never guess a customer id; ask for it.',
      '| `billing_refund` | Refunds the **charge** | `REFUNDED` |',
      'Verificá la política — 返金の手続き — Возврат 💸🧾',
      'Text with <|endoftext|> and <|fim_prefix|> in it.',
      '\u0000\u0001\u007f\u00ad\u200b\ufeff',
    ];
    for (const text of samples) expect(tokenizer!.countTokens(text, AS_TEXT)).toBe(packageCount(text, AS_TEXT));
    for (const folder of fs.readdirSync(path.join(REPO_ROOT, 'capabilities'))) {
      const file = path.join(REPO_ROOT, 'capabilities', folder, 'PROTOCOL.md');
      if (!fs.existsSync(file)) continue;
      const text = fs.readFileSync(file, 'utf8');
      expect(tokenizer!.countTokens(text, AS_TEXT)).toBe(packageCount(text, AS_TEXT));
    }
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 })), (text) => {
        expect(tokenizer!.countTokens(text, AS_TEXT)).toBe(packageCount(text, AS_TEXT));
      }),
      { numRuns: runs(300) },
    );
  });

  it('is not used when it was written for another version, another encoding, or is damaged or missing', () => {
    const saved = JSON.parse(fs.readFileSync(BUILT, 'utf8')) as Record<string, unknown>;
    const write = (name: string, text: string): string => {
      const file = path.join(scratch, name);
      fs.writeFileSync(file, text);
      return file;
    };
    expect(tokenizerFromRanks(write('same.json', JSON.stringify(saved)))).toBeDefined();
    expect(tokenizerFromRanks(write('version.json', JSON.stringify({ ...saved, version: '0.0.1' })))).toBeUndefined();
    expect(tokenizerFromRanks(write('encoding.json', JSON.stringify({ ...saved, encoding: 'cl100k_base' })))).toBeUndefined();
    expect(tokenizerFromRanks(write('empty.json', JSON.stringify({ ...saved, ranks: [] })))).toBeUndefined();
    expect(tokenizerFromRanks(write('truncated.json', fs.readFileSync(BUILT, 'utf8').slice(0, 100_000)))).toBeUndefined();
    expect(tokenizerFromRanks(path.join(scratch, 'missing.json'))).toBeUndefined();
  });

  it('is what the compiled compiler counts with', () => {
    const script = [
      "const tokens = await import('./lib/compiler/tokens.js');",
      "console.log(tokens.tokenizerRanks, tokens.countTokens('Never guess a customer id.'), tokens.tokenizerRanks);",
    ].join('\n');
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(child.stdout.trim()).toBe(`undefined ${packageCount('Never guess a customer id.', AS_TEXT)} ranks-file`);
  });
});

/** Every maximal run of one kind (whitespace or not) longer than MAX_COUNTED_WORD, found by reading every character. */
function longRunsByEveryCharacter(text: string): [number, number][] {
  const found: [number, number][] = [];
  let start = 0;
  for (let i = 1; i <= text.length; i += 1) {
    if (i < text.length && isCountedSpace(text.charCodeAt(i)) === isCountedSpace(text.charCodeAt(start))) continue;
    if (i - start > MAX_COUNTED_WORD) found.push([start, i]);
    start = i;
  }
  return found;
}

describe('the long runs a count cuts into pieces', () => {
  it('are the runs that reading every character finds, whatever their lengths and offsets', () => {
    // Runs of one character each, of lengths around the limit and its half: neighbours of one kind join up.
    const piece = fc.record({
      char: fc.constantFrom('a', ' ', '\t', '\n', '\u00a0', '\u2005', '\u3000', '😀', '|', '\u200b'),
      length: fc.oneof(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 120, max: 140 }),
        fc.integer({ min: 250, max: 270 }),
        fc.integer({ min: 1, max: 700 }),
      ),
    });
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.map(({ char, length }) => char.repeat(length)).join('');
        expect(longRuns(text)).toEqual(longRunsByEveryCharacter(text));
      }),
      { numRuns: runs(2000) },
    );
  });

  it('are found at the edges of a text and of the limit', () => {
    for (const length of [MAX_COUNTED_WORD, MAX_COUNTED_WORD + 1, 2 * MAX_COUNTED_WORD, 2 * MAX_COUNTED_WORD + 1]) {
      for (const text of ['x'.repeat(length), ` ${'x'.repeat(length)}`, `${'x'.repeat(length)} `, ` ${' '.repeat(length)}x`, `y ${'x'.repeat(length)} y`]) {
        expect(longRuns(text)).toEqual(longRunsByEveryCharacter(text));
      }
    }
    expect(longRuns(`${'x'.repeat(MAX_COUNTED_WORD + 1)} ${'y'.repeat(MAX_COUNTED_WORD + 1)}`)).toEqual([
      [0, MAX_COUNTED_WORD + 1],
      [MAX_COUNTED_WORD + 2, 2 * MAX_COUNTED_WORD + 3],
    ]);
  });
});

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
import { tokenizerFromRanks } from '../compiler/tokens.js';
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

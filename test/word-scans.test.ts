// The word scans that jump from one rare character to the next (compiler/mentions.ts) find what the
// regular expressions they stand for find: drawn over an alphabet dense in word characters, `_`, `-`
// and `.`, where every boundary case (a joiner at either end, doubled joiners, a marker alone) is
// common.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findNames, isWordCode, NameIndex, runsHolding, wordTokens } from '../compiler/mentions.js';
import type { CapabilityDocument } from '../compiler/types.js';
import { runs } from './support/property.js';

const text = fc.string({ unit: fc.constantFrom('a', 'b', '1', '_', '-', '.', '`', ' ', '\n', 'é', '中'), maxLength: 60 });

function matchesHolding(source: string, pattern: RegExp, marker: string): [string, number][] {
  return [...source.matchAll(pattern)].filter((match) => match[0].includes(marker)).map((match) => [match[0], match.index]);
}

function collectRuns(source: string, marker: string, inRun: (code: number) => boolean): [string, number][] {
  const found: [string, number][] = [];
  runsHolding(source, marker, inRun, (start, end) => found.push([source.slice(start, end), start]));
  return found;
}

function collectTokens(source: string, marker: string | undefined): [string, number][] {
  const found: [string, number][] = [];
  wordTokens(source, marker, (token, start) => found.push([token, start]));
  return found;
}

const TOKEN = /[A-Za-z0-9_]+(?:[.-][A-Za-z0-9_]+)*/g;

describe('runsHolding', () => {
  it('finds the words of [A-Za-z0-9_]+ with a `_`, and of [A-Za-z0-9_-]+ with a `-` (property)', () => {
    fc.assert(
      fc.property(text, (source) => {
        expect(collectRuns(source, '_', isWordCode)).toEqual(matchesHolding(source, /[A-Za-z0-9_]+/g, '_'));
        expect(collectRuns(source, '-', (code) => code === 45 || isWordCode(code))).toEqual(matchesHolding(source, /[A-Za-z0-9_-]+/g, '-'));
      }),
      { numRuns: runs(2000) },
    );
  });
});

describe('wordTokens', () => {
  it('finds the compound tokens that hold the marker, and every token without one (property)', () => {
    fc.assert(
      fc.property(text, (source) => {
        for (const marker of ['_', '-', '.']) expect(collectTokens(source, marker)).toEqual(matchesHolding(source, TOKEN, marker));
        expect(collectTokens(source, undefined)).toEqual([...source.matchAll(TOKEN)].map((match) => [match[0], match.index]));
      }),
      { numRuns: runs(2000) },
    );
  });

  it('finds a token whose joiners sit on either side of a marker', () => {
    expect(collectTokens('x.a_b-c.d, .e_f. g--h_i', '_')).toEqual([
      ['x.a_b-c.d', 0],
      ['e_f', 12],
      ['h_i', 20],
    ]);
  });
});

describe('findNames', () => {
  const document = (body: string): CapabilityDocument => ({ body, bodyStartLine: 1 }) as CapabilityDocument;
  const name = fc.string({ unit: fc.constantFrom('a', 'b', '_', '-', '.'), minLength: 1, maxLength: 6 });
  // A name no drawn text holds, without the marker: the same index scanned token by token.
  const NEVER = 'ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ';

  // A body of names and text in between, so that names sit inside, at the ends of and across tokens.
  const pieces = fc.array(fc.oneof(fc.nat(4), fc.string({ unit: fc.constantFrom('a', '_', '-', '.', ' ', '`'), maxLength: 4 })), { maxLength: 16 });

  it('finds, scanning from marker to marker, what a scan of every token finds (property)', () => {
    fc.assert(
      fc.property(fc.array(name, { minLength: 1, maxLength: 5 }), pieces, fc.constantFrom('_', '-', '.'), (drawn, parts, marker) => {
        const names = drawn.map((each) => (each.includes(marker) ? each : `${each}${marker}a`));
        const body = parts.map((part) => (typeof part === 'number' ? names[part % names.length] : part)).join('');
        const byMarker = new NameIndex(names);
        const everyToken = new NameIndex([...names, NEVER]);
        expect(byMarker.marker).toBeDefined();
        expect(everyToken.marker).toBeUndefined();
        expect(findNames(document(body), byMarker)).toEqual(findNames(document(body), everyToken));
      }),
      { numRuns: runs(2000) },
    );
  });

  it('looks only at the tokens with the character every name holds', () => {
    expect(new NameIndex(['work_log_record', 'expense_submit']).marker).toBe('_');
    expect(new NameIndex(['get-user', 'a.b-c']).marker).toBe('-');
    expect(new NameIndex(['search', 'work_log_record']).marker).toBeUndefined();
    const found = findNames(document('Call `work_log_record`, then work_log_record.v2 and work_log_records.'), new NameIndex(['work_log_record']));
    expect(found.map(({ name, offset }) => [name, offset])).toEqual([
      ['work_log_record', 6],
      ['work_log_record', 29],
    ]);
  });
});

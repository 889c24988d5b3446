import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bagDistance, didYouMean, editDistance, MAX_SUGGESTED_LENGTH, suggestion } from '../compiler/did-you-mean.js';
import { runs } from './support/property.js';

/** The edit distance with the whole table, as it was before the rolling rows. */
function fullTable(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/** didYouMean as it was before the bag-distance shortcut: the edit distance of every candidate. */
function everyDistance(input: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const lower = input.toLowerCase();
  const allowed = Math.max(1, Math.floor(input.length / 3));
  for (const candidate of candidates) {
    const other = candidate.toLowerCase();
    const distance = editDistance(lower, other);
    const prefix = Math.min(lower.length, other.length) >= 3 && (lower.startsWith(other) || other.startsWith(lower));
    if ((distance <= allowed || prefix) && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

// Few letters (and a Chinese one, a surrogate pair and an upper-case one), so near misses, prefixes and ties are common.
const word = fc.string({ unit: fc.constantFrom('a', 'b', 'c', '_', 'A', '任', '😀'), maxLength: 12 });

describe('did you mean', () => {
  it('counts a swap of neighbouring letters as one edit', () => {
    expect(editDistance('whentouse', 'whentoues')).toBe(1);
    expect(editDistance('wran', 'warn')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('suggests near misses, case-insensitively', () => {
    expect(didYouMean('whenToUes', ['whenToUse', 'name'])).toBe('whenToUse');
    expect(didYouMean('wran', ['off', 'warn', 'error'])).toBe('warn');
    expect(didYouMean('erorr', ['off', 'warn', 'error'])).toBe('error');
    expect(didYouMean('RequiredToolsets', ['requiredToolsets'])).toBe('requiredToolsets');
  });

  it('suggests a name that is a prefix of the input or the other way round', () => {
    expect(didYouMean('warning', ['off', 'warn', 'error'])).toBe('warn');
    expect(didYouMean('input', ['inputSchema', 'outputSchema', 'id'])).toBe('inputSchema');
  });

  it('stays quiet when nothing is close', () => {
    expect(didYouMean('colour', ['whenToUse', 'name', 'tags'])).toBeUndefined();
    expect(didYouMean('x', ['id'])).toBeUndefined();
    expect(suggestion('colour', ['name'])).toBe('');
    expect(suggestion('nmae', ['name'])).toBe('; did you mean "name"?');
  });
});

describe('did you mean, the bag-distance shortcut', () => {
  it('bagDistance is never more than the edit distance', () => {
    fc.assert(
      fc.property(word, word, (a, b) => bagDistance(a, b) <= editDistance(a, b)),
      { numRuns: runs(2000) },
    );
    expect(bagDistance('abc', 'cba')).toBe(0);
    expect(bagDistance('kitten', 'sitting')).toBe(3);
    expect(bagDistance('work_log_record', 'expense_submit')).toBeGreaterThan(5);
  });

  it('gives the answer of computing every edit distance', () => {
    fc.assert(
      fc.property(word, fc.array(word, { maxLength: 30 }), (input, candidates) => didYouMean(input, candidates) === everyDistance(input, candidates)),
      { numRuns: runs(3000) },
    );
  });
});

describe('did you mean, bounded', () => {
  it('keeps three rows of the table and gives the distance of the whole table', () => {
    fc.assert(
      fc.property(word, word, (a, b) => editDistance(a, b) === fullTable(a, b)),
      { numRuns: runs(3000) },
    );
  });

  it('suggests nothing for, and nothing that is, a name over the length limit, in bounded time and memory', () => {
    const long = `abc_${'x'.repeat(30_000)}`;
    const near = `abc_${'x'.repeat(29_999)}y`;
    const start = performance.now();
    // Anagrams pass the bag-distance shortcut: before the limit each cost a 30,000² table (4 GB, then out of memory).
    expect(didYouMean(near, [long, [...long].reverse().join('')])).toBeUndefined();
    // Generous for a busy machine: without the limit this ran out of memory.
    expect(performance.now() - start).toBeLessThan(5_000);
    const atLimit = 'a'.repeat(MAX_SUGGESTED_LENGTH - 1);
    expect(didYouMean(`${atLimit}b`, [`${atLimit}c`])).toBe(`${atLimit}c`);
  });
});

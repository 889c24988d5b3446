// The names of states and the prohibition markers are matched as one trie-shaped expression
// (compiler/literal-trie.ts) instead of one branch per name, which cost the names' length together
// at every position. Property tests against the branch-per-name expressions they replace: the same
// matches, at the same places, the longest name winning.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { namePatternSource, namesPattern } from '../compiler/mentions.js';
import { prohibitionMatcher } from '../compiler/prohibitions.js';
import { runs } from './support/property.js';

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The expression namesPattern built before: one branch per name, longest first. */
function branchPerName(names: string[]): RegExp {
  const sorted = [...new Set(names)].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
  return new RegExp(sorted.map(namePatternSource).join('|'), 'gu');
}

/** The expression of the markers before: one branch per marker, longest first, case-insensitive. */
function branchPerMarker(markers: string[]): RegExp {
  const word = /[A-Za-z0-9_]/;
  const sources = [...markers]
    .sort((a, b) => b.length - a.length)
    .map((marker) => {
      const trimmed = marker.trim();
      const body = trimmed
        .split(/\s+/)
        .map((part) => escape(part).replace(/['’]/g, "['’]"))
        .join('\\s+');
      return `${word.test(trimmed.charAt(0)) ? '(?<![A-Za-z0-9_])' : ''}${body}${word.test(trimmed.charAt(trimmed.length - 1)) ? '(?![A-Za-z0-9_])' : ''}`;
    });
  return new RegExp(sources.join('|'), 'iu');
}

const matches = (pattern: RegExp, text: string): [number, string][] => [...text.matchAll(pattern)].map((match) => [match.index, match[0]]);

describe('namesPattern: a trie of the names', () => {
  // Few characters, so that names share beginnings, nest and touch: word characters, `-`, `.`, an accent, an astral character.
  const char = fc.constantFrom('A', 'a', 'B', '_', '1', '-', '.', ' ', 'é', '😀', '*');
  const name = fc.array(char, { minLength: 1, maxLength: 6 }).map((chars) => chars.join(''));

  it('finds what one branch per name found, at the same places', () => {
    fc.assert(
      fc.property(fc.array(name, { minLength: 1, maxLength: 12 }), fc.array(char, { maxLength: 60 }), (names, text) => {
        const joined = text.join('');
        expect(matches(namesPattern(names)!, joined)).toEqual(matches(branchPerName(names), joined));
      }),
      { numRuns: runs(3000) },
    );
  });

  it('finds the longest of names that begin alike', () => {
    expect(matches(namesPattern(['PAID', 'PAID_LATE', 'PAI'])!, 'PAI PAID PAID_LATE PAID_LATER')).toEqual([
      [0, 'PAI'],
      [4, 'PAID'],
      [9, 'PAID_LATE'],
    ]);
    // Where no word boundary decides it: a name that ends in `-` is a beginning of the longer one.
    expect(matches(namesPattern(['A-', 'A-B-'])!, 'A-B- A-C')).toEqual([
      [0, 'A-B-'],
      [5, 'A-'],
    ]);
  });
});

describe('prohibitionMatcher: a trie of the markers', () => {
  const char = fc.constantFrom('n', 'N', 'o', 't', 's', 'S', 'ſ', 'k', 'K', 'K', "'", '’', ' ', '禁', '止', '-');
  const text = fc.array(char, { maxLength: 40 }).map((chars) => chars.join(''));
  // Words joined by one space: markers that differ only in the spaces inside them are one marker to both.
  const marker = fc
    .array(fc.array(fc.constantFrom('n', 'N', 'o', 't', 's', 'ſ', 'k', 'K', "'", '’', '禁', '止'), { minLength: 1, maxLength: 4 }), {
      minLength: 1,
      maxLength: 3,
    })
    .map((words) => words.map((letters) => letters.join('')).join(' '));

  it('finds what one branch per marker found, case-insensitively', () => {
    fc.assert(
      fc.property(fc.uniqueArray(marker, { minLength: 1, maxLength: 10 }), text, (markers, sample) => {
        const before = branchPerMarker(markers);
        const matcher = prohibitionMatcher(markers);
        expect(matcher.find(sample)).toBe(before.exec(sample)?.[0]);
        expect(matcher.test(sample)).toBe(before.test(sample));
      }),
      { numRuns: runs(3000) },
    );
  });

  it('finds the longest marker where no word boundary decides it', () => {
    const matcher = prohibitionMatcher(['禁', '禁止', '不']);
    expect(matcher.find('严禁止删除')).toBe('禁止');
    expect(matcher.find('严禁删除')).toBe('禁');
  });
});

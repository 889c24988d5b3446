import { describe, expect, it } from 'vitest';
import { prohibitionMatcher } from '../compiler/prohibitions.js';

// The `markers` option of negative-rules and retired-tools comes from capreg.config.yaml, which a
// pull request can edit. With one alternative per marker, every position of a block cost the length
// of all the markers together: 256 markers of 64 characters sharing a long beginning made a 4 KB
// paragraph take seconds and a 900 KB protocol longer than any CI job (over 5 minutes measured).
describe('prohibition markers: time grows with the text, not with the markers together', () => {
  const shared = 'a '.repeat(30);

  it('256 markers with a long common beginning, against a paragraph that almost matches each', () => {
    const markers = Array.from({ length: 256 }, (_, index) => `${shared}b${String.fromCodePoint(0x4e00 + index)}`);
    const matcher = prohibitionMatcher(markers);
    const text = 'a '.repeat(20_000);
    const started = performance.now();
    expect(matcher.test(text)).toBe(false);
    expect(matcher.test(`${text}b丁`)).toBe(true);
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('markers that differ only in case (s, S, ſ) share their branch', () => {
    const markers = Array.from({ length: 256 }, (_, bits) => `${[...'ssssssss'].map((s, i) => ((bits >> i) & 1 ? 'ſ' : s)).join('')} ${'s '.repeat(26)}x`);
    const matcher = prohibitionMatcher(markers);
    const text = `ssssssss ${'s '.repeat(20_000)}`;
    const started = performance.now();
    expect(matcher.test(text)).toBe(false);
    expect(matcher.find(`SSSSSSSS ${'S '.repeat(26)}X`)).toBe(`SSSSSSSS ${'S '.repeat(26)}X`);
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('keeps what a marker matches: case, whitespace runs, apostrophes, word ends, the longest marker', () => {
    const matcher = prohibitionMatcher(['do not', "don't", 'never', '禁止', 'not', 'must not']);
    expect(matcher.find('You MUST\n  NOT go')).toBe('MUST\n  NOT');
    expect(matcher.find('Don’t go')).toBe('Don’t');
    expect(matcher.test('whenever')).toBe(false);
    expect(matcher.test('nevermore')).toBe(false);
    expect(matcher.find('严格禁止删除')).toBe('禁止');
    expect(matcher.find('do nothing')).toBe(undefined);
  });
});

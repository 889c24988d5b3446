import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance, suggestion } from '../compiler/did-you-mean.js';

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

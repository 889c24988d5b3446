// The rendered protocols a server keeps are bounded by their size, not only their count: a protocol
// renders to up to ~9 times its Markdown, and every save of an author adds a revision.
import { describe, expect, it } from 'vitest';
import { RENDERED_CACHE, renderedCache } from '../../server/user-capabilities.js';

describe('the rendered-protocol cache', () => {
  it('keeps at most RENDERED_CACHE.maxChars characters, dropping the least recently used', () => {
    const cache = renderedCache();
    const protocol = 'x'.repeat(125_000); // a 13.6 KB document with a link per paragraph renders to this
    for (let revision = 0; revision < RENDERED_CACHE.max; revision += 1) cache.set(`usr_a\n${revision}`, protocol);
    const kept = [...cache.values()].reduce((sum, value) => sum + value.length, 0);
    expect(kept).toBeLessThanOrEqual(RENDERED_CACHE.maxChars);
    expect(cache.get(`usr_a\n${RENDERED_CACHE.max - 1}`)).toBe(protocol);
    expect(cache.get('usr_a\n0')).toBeUndefined();
  });

  it('keeps at most RENDERED_CACHE.max protocols however small', () => {
    const cache = renderedCache();
    for (let revision = 0; revision < RENDERED_CACHE.max * 2; revision += 1) cache.set(`usr_a\n${revision}`, '');
    expect(cache.size).toBe(RENDERED_CACHE.max);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FirstSeen, keyNumber, seededKeyNumber } from '../compiler/first-seen.js';
import { runs } from './support/property.js';

/** The entries a Map gives: the index of each key's first occurrence among distinct keys, or -1 when new. */
function byMap(keys: readonly string[]): number[] {
  const first = new Map<string, number>();
  return keys.map((key) => {
    const entry = first.get(key);
    if (entry !== undefined) return entry;
    first.set(key, first.size);
    return -1;
  });
}

describe('FirstSeen', () => {
  it('finds what a Map finds, with numbers that collide (the length of the key) and past several table sizes (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 6 }), { maxLength: 3000 }), fc.boolean(), (keys, collide) => {
        const numberOf = collide ? (key: string): number => key.length : keyNumber;
        const seen = new FirstSeen();
        expect(keys.map((key) => seen.firstOrAdd(numberOf(key), key))).toEqual(byMap(keys));
        expect(seen.size).toBe(new Set(keys).size);
        keys.forEach((key) => expect(seen.find(numberOf(key), key)).toBe([...new Set(keys)].indexOf(key)));
        expect(seen.find(numberOf('not a key'), 'not a key')).toBe(-1);
      }),
      { numRuns: runs(60) },
    );
  });

  it('grows past its first table with distinct keys', () => {
    const seen = new FirstSeen();
    const keys = Array.from({ length: 5000 }, (_, i) => `key-${i}`);
    expect(keys.map((key) => seen.firstOrAdd(keyNumber(key), key)).every((entry) => entry === -1)).toBe(true);
    expect(keys.map((key) => seen.firstOrAdd(keyNumber(key), key))).toEqual(keys.map((_, i) => i));
  });
});

describe('FirstSeen sized for more keys than it gets', () => {
  it('finds the same entries as one that grows', () => {
    const keys = Array.from({ length: 3000 }, (_, i) => `k${i % 1700}`);
    const sized = new FirstSeen(100_000);
    const growing = new FirstSeen();
    expect(keys.map((key) => sized.firstOrAdd(keyNumber(key), key))).toEqual(keys.map((key) => growing.firstOrAdd(keyNumber(key), key)));
    expect(sized.size).toBe(1700);
  });
});

describe('keyNumber', () => {
  /** FNV-1a from its published start, as an attacker could compute it ahead of time. */
  const unseeded = (key: string): number => {
    let hash = 0x811c9dc5;
    for (let i = 0; i < key.length; i += 1) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
    return hash | 0;
  };

  /** 400 triggers whose plain FNV-1a numbers all end in the same 11 bits (one slot of a 2,048-slot table). */
  const crafted: string[] = [];
  const target = unseeded('collide') & 2047;
  for (let i = 0; crafted.length < 400; i += 1) if ((unseeded(`trigger ${i}`) & 2047) === target) crafted.push(`trigger ${i}`);

  it('spreads keys written to share their low bits under plain FNV-1a, whatever the seed (property)', () => {
    expect(new Set(crafted.map((key) => unseeded(key) & 2047)).size).toBe(1);
    // 400 keys over 2,048 slots land in ~360 distinct ones; the same slot for all would be 1. Seeding
    // FNV-1a without a finalizer left them in one slot for about one seed in five.
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), (seed) => {
        expect(new Set(crafted.map((key) => seededKeyNumber(key, seed) & 2047)).size).toBeGreaterThan(300);
      }),
      { numRuns: runs(300) },
    );
  });

  it("starts from this process's random seed", () => {
    expect(new Set(crafted.map((key) => keyNumber(key) & 2047)).size).toBeGreaterThan(300);
    expect(keyNumber('a key')).not.toBe(seededKeyNumber('a key', 0)); // one seed in 2^32 is 0
  });
});

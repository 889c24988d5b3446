// KeyOwners (compiler/key-owners.ts): after any sequence of updates, the holders of every key and
// the shared keys are those of an index built from nothing for the latest facts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyOwners } from '../compiler/key-owners.js';
import { runs } from './support/property.js';

interface Fact {
  keys: string[];
}

/** What a fresh index says: holders (fact number, key index) of each key, and the keys held twice or more. */
function fromNothing(facts: readonly Fact[], pool: readonly Fact[]): { holders: Map<string, string[]>; shared: string[] } {
  const holders = new Map<string, string[]>();
  for (const fact of facts) fact.keys.forEach((key, index) => holders.set(key, [...(holders.get(key) ?? []), `${pool.indexOf(fact)}:${index}`]));
  return { holders, shared: [...holders].filter(([, list]) => list.length > 1).map(([key]) => key) };
}

describe('KeyOwners', () => {
  it('matches an index built from nothing after every update', () => {
    const key = fc.constantFrom('a', 'b', 'c', 'd', 'e');
    fc.assert(
      fc.property(
        fc.array(fc.array(key, { maxLength: 4 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.array(fc.nat(), { maxLength: 8 }), { maxLength: 10 }),
        (keyLists, steps) => {
          const pool: Fact[] = keyLists.map((keys) => ({ keys }));
          const owners = new KeyOwners<Fact>((fact) => fact.keys);
          for (const step of steps) {
            const facts = [...new Set(step.map((n) => pool[n % pool.length]!))];
            owners.update(facts);
            const expected = fromNothing(facts, pool);
            expect([...owners.shared].sort()).toEqual(expected.shared.sort());
            for (const each of ['a', 'b', 'c', 'd', 'e']) {
              const held = owners.of(each).map(({ fact, index }) => `${pool.indexOf(fact)}:${index}`);
              expect(held.sort()).toEqual((expected.holders.get(each) ?? []).sort());
            }
          }
        },
      ),
      { numRuns: runs(300) },
    );
  });
});

// test/support/property.ts: `npm test` draws the same property inputs every time; `test:fuzz` new ones.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FUZZ_FACTOR, PROPERTY_SEED, runs } from './support/property.js';

describe('property test inputs', () => {
  it.runIf(PROPERTY_SEED !== undefined)('are the same on every run of the suite', () => {
    expect(fc.readConfigureGlobal().seed).toBe(PROPERTY_SEED);
    expect(fc.sample(fc.string(), 20)).toEqual(fc.sample(fc.string(), 20));
  });

  it.runIf(PROPERTY_SEED === undefined)('are drawn anew under test:fuzz', () => {
    expect(fc.readConfigureGlobal().seed).toBeUndefined();
    expect(fc.sample(fc.string({ minLength: 20 }), 20)).not.toEqual(fc.sample(fc.string({ minLength: 20 }), 20));
  });

  it('scale with CAPREG_FUZZ', () => {
    expect(runs(300)).toBe(300 * FUZZ_FACTOR);
    if (process.env.CAPREG_FUZZ === undefined) expect(FUZZ_FACTOR).toBe(1);
  });
});

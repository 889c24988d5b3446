// Property tests (fast-check) run the same inputs on every `npm test`, so that a failure in CI
// comes from a change, never from the draw. `npm run test:fuzz` draws new inputs (a random seed,
// which fast-check prints with any counterexample) and CAPREG_FUZZ times as many of them.
// A seed it reports is replayed with CAPREG_FUZZ_SEED=<seed> npm run test:fuzz.

/** An environment variable that must be a whole number when set. */
function wholeNumber(name: string, minimum: number): number | undefined {
  const value = process.env[name];
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value) || Number(value) < minimum) throw new Error(`${name} must be a whole number of at least ${minimum}, not ${JSON.stringify(value)}`);
  return Number(value);
}

/** How many times the usual number of runs: 1 for `npm test`. */
export const FUZZ_FACTOR = wholeNumber('CAPREG_FUZZ', 1) ?? 1;

/** The seed of every property: fixed for `npm test`, drawn by fast-check under `test:fuzz` unless CAPREG_FUZZ_SEED gives it. */
export const PROPERTY_SEED: number | undefined =
  wholeNumber('CAPREG_FUZZ_SEED', Number.MIN_SAFE_INTEGER) ?? (process.env.CAPREG_FUZZ !== undefined ? undefined : 20_261_203);

/** numRuns for a property that runs `usual` times under `npm test`. */
export function runs(usual: number): number {
  return usual * FUZZ_FACTOR;
}

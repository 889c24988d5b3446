// Option values shared by the commands (the flags themselves are declared in command-table.ts).
import { FORMATS, formatNames, type Formatter } from '../compiler/formatters/index.js';
import { UsageError } from './context.js';

/** The chosen `--format`, among those the command offers (`gate`: `capreg check`). */
export async function pickFormatter(name: string | undefined, options: { gate: boolean } = { gate: false }): Promise<Formatter> {
  const offered: readonly string[] = formatNames(options);
  const chosen = name ?? 'stylish';
  if (offered.includes(chosen)) return FORMATS[chosen as keyof typeof FORMATS].load();
  throw new UsageError(`unknown --format "${name}"; expected one of ${offered.join(', ')}`);
}

/**
 * The last second of year 9999 (9999-12-31T23:59:59Z). A later Date is written with a six-digit
 * year (`+010000-01-01T…`): no `YYYY-MM-DD` for the protocol_updated that `capreg new` writes (its
 * scaffold then failed lint), nor an RFC 3339 `builtAt`.
 */
const MAX_EPOCH_SECONDS = 253_402_300_799;

/** `SOURCE_DATE_EPOCH` as an ISO time (reproducible builds), or undefined when unset. */
export function builtAtFrom(env: NodeJS.ProcessEnv): string | undefined {
  const epoch = env.SOURCE_DATE_EPOCH;
  if (epoch === undefined || epoch === '') return undefined;
  if (!/^\d+$/.test(epoch)) throw new UsageError(`SOURCE_DATE_EPOCH must be a whole number of seconds, not "${epoch}"`);
  if (Number(epoch) > MAX_EPOCH_SECONDS) {
    throw new UsageError(`SOURCE_DATE_EPOCH ${epoch} is past the last second of year 9999 (${MAX_EPOCH_SECONDS}), the last date written YYYY-MM-DD`);
  }
  return new Date(Number(epoch) * 1000).toISOString();
}

/**
 * A whole-number flag: digits only, from `min` to `max`. `Number()` alone would take `1e3`, `0x10`,
 * ` 5` or `1.0`, and round a number past 2^53 to another one.
 */
export function wholeNumber(flag: string, value: string, min: number, max: number): number {
  const number = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(number >= min && number <= max)) throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, not "${value}"`);
  return number;
}

/** More warnings than any registry within limits.maxFiles could have. */
export const MAX_MAX_WARNINGS = 1_000_000_000;

export function parseMaxWarnings(value: string | undefined): number | undefined {
  return value === undefined ? undefined : wholeNumber('--max-warnings', value, 0, MAX_MAX_WARNINGS);
}

/** Most parse worker threads `--jobs` may ask for. */
export const MAX_JOBS = 256;

/** `--jobs N`: how many parse worker threads at most; undefined (the cores available) when absent. */
export function parseJobs(value: string | undefined): number | undefined {
  return value === undefined ? undefined : wholeNumber('--jobs', value, 1, MAX_JOBS);
}

/** 0 clean, 1 errors or too many warnings. */
export function exitCodeFor(errorCount: number, warningCount: number, maxWarnings: number | undefined): number {
  if (errorCount > 0) return 1;
  if (maxWarnings !== undefined && warningCount > maxWarnings) return 1;
  return 0;
}

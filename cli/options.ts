// Option values shared by the lint, build and check commands (the flags themselves are declared in
// command-table.ts).
import { FORMATS, formatNames, type Formatter } from '../compiler/formatters/index.js';
import { UsageError } from './context.js';

/** The chosen `--format`, among those the command offers (`gate`: `capreg check`). */
export async function pickFormatter(name: string | undefined, options: { gate: boolean } = { gate: false }): Promise<Formatter> {
  const offered: readonly string[] = formatNames(options);
  const chosen = name ?? 'stylish';
  if (offered.includes(chosen)) return FORMATS[chosen as keyof typeof FORMATS].load();
  throw new UsageError(`unknown --format "${name}"; expected one of ${offered.join(', ')}`);
}

/** `SOURCE_DATE_EPOCH` as an ISO time (reproducible builds), or undefined when unset. */
export function builtAtFrom(env: NodeJS.ProcessEnv): string | undefined {
  const epoch = env.SOURCE_DATE_EPOCH;
  if (epoch === undefined || epoch === '') return undefined;
  if (!/^\d+$/.test(epoch)) throw new UsageError(`SOURCE_DATE_EPOCH must be a whole number of seconds, not "${epoch}"`);
  return new Date(Number(epoch) * 1000).toISOString();
}

export function parseMaxWarnings(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new UsageError(`--max-warnings must be a whole number, not "${value}"`);
  return parsed;
}

/** Most parse worker threads `--jobs` may ask for. */
export const MAX_JOBS = 256;

/** `--jobs N`: how many parse worker threads at most; undefined (the cores available) when absent. */
export function parseJobs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > MAX_JOBS) throw new UsageError(`--jobs must be a whole number from 1 to ${MAX_JOBS}, not "${value}"`);
  return parsed;
}

/** 0 clean, 1 errors or too many warnings. */
export function exitCodeFor(errorCount: number, warningCount: number, maxWarnings: number | undefined): number {
  if (errorCount > 0) return 1;
  if (maxWarnings !== undefined && warningCount > maxWarnings) return 1;
  return 0;
}

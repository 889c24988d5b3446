// Argument parsing shared by the commands (node:util parseArgs, strict: unknown flags are usage errors).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Formatter } from '../compiler/formatters/index.js';
import { UsageError } from './context.js';

export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(
  command: string,
  argv: string[],
  options: T,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (error) {
    // main() prefixes every usage error with `capreg <command>: `.
    throw new UsageError((error as Error).message);
  }
}

/**
 * The built-in formatters (the same as compiler/formatters/index.ts), each imported only when
 * chosen: `sarif` describes every rule and so loads the whole compiler, which a rebuild answered
 * from the build cache never needs.
 */
const BUILT_IN_FORMATTERS: Readonly<Record<string, () => Promise<Formatter>>> = {
  stylish: async () => (await import('../compiler/formatters/stylish.js')).formatStylish,
  json: async () => (await import('../compiler/formatters/json.js')).formatJson,
  github: async () => (await import('../compiler/formatters/github.js')).formatGithub,
  sarif: async () => (await import('../compiler/formatters/sarif.js')).formatSarif,
};

export async function pickFormatter(name: string | undefined, extra: Record<string, Formatter> = {}): Promise<Formatter> {
  const chosen = name ?? 'stylish';
  if (Object.hasOwn(extra, chosen)) return extra[chosen]!;
  if (Object.hasOwn(BUILT_IN_FORMATTERS, chosen)) return BUILT_IN_FORMATTERS[chosen]!();
  const names = [...new Set([...Object.keys(BUILT_IN_FORMATTERS), ...Object.keys(extra)])];
  throw new UsageError(`unknown --format "${name}"; expected one of ${names.join(', ')}`);
}

export function parseMaxWarnings(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new UsageError(`--max-warnings must be a whole number, not "${value}"`);
  return parsed;
}

/** 0 clean, 1 errors or too many warnings. */
export function exitCodeFor(errorCount: number, warningCount: number, maxWarnings: number | undefined): number {
  if (errorCount > 0) return 1;
  if (maxWarnings !== undefined && warningCount > maxWarnings) return 1;
  return 0;
}

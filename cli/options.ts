// Argument parsing shared by the commands (node:util parseArgs, strict: unknown flags are usage errors).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { formatterLoaders, type Formatter } from '../compiler/formatters/index.js';
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

export async function pickFormatter(name: string | undefined, extra: Record<string, Formatter> = {}): Promise<Formatter> {
  const chosen = name ?? 'stylish';
  if (Object.hasOwn(extra, chosen)) return extra[chosen]!;
  if (Object.hasOwn(formatterLoaders, chosen)) return formatterLoaders[chosen]!();
  const names = [...new Set([...Object.keys(formatterLoaders), ...Object.keys(extra)])];
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

// CAPREG_TIMING: where a `lint`, `build` or `check` spent its time, as ESLint's TIMING does for its
// rules. Set, the command writes two tables to standard error after its report: its phases in the
// order they ran, and the slowest rules. Standard output (the report, `-f json`) is the same with
// or without it.
//
//   CAPREG_TIMING=1      the phases and the 10 slowest rules (any number up to 10 does the same)
//   CAPREG_TIMING=25     the phases and the 25 slowest rules
//   CAPREG_TIMING=all    the phases and every rule that ran
//   unset, empty or 0    off
//
// Any other value is refused (exit 2): a typo should not pass for "off".
import { UsageError } from './context.js';

export const TIMING_VARIABLE = 'CAPREG_TIMING';

/** Rules listed at least, as ESLint lists. */
export const DEFAULT_RULE_ROWS = 10;

/** Wall time per phase of one command (on its main thread) and per rule. */
export class Timings {
  /** Each phase once, in the order it first ran, with its milliseconds. */
  readonly phases = new Map<string, number>();
  /** Milliseconds per rule id (runRules fills it). */
  readonly rules = new Map<string, number>();
  /** The process's clock when the last phase ended; the first phase ("start") began with the process. */
  private last = 0;

  /** `rows`: how many rules the table lists (Infinity: all). */
  constructor(readonly rows: number) {}

  /** The time since the last phase ended (since the process started, for the first) goes to `phase`. */
  mark(phase: string): void {
    const now = performance.now();
    this.phases.set(phase, (this.phases.get(phase) ?? 0) + now - this.last);
    this.last = now;
  }
}

/** The Timings CAPREG_TIMING asks for, or undefined when it is off. */
export function timingsFromEnv(env: NodeJS.ProcessEnv): Timings | undefined {
  const value = env[TIMING_VARIABLE]?.trim() ?? '';
  if (value === '' || value === '0') return undefined;
  if (value.toLowerCase() === 'all') return new Timings(Number.POSITIVE_INFINITY);
  if (/^[1-9][0-9]{0,5}$/.test(value)) return new Timings(Math.max(DEFAULT_RULE_ROWS, Number(value)));
  throw new UsageError(
    `${TIMING_VARIABLE}=${JSON.stringify(value).slice(1, -1)} is not a setting: give 1 (the 10 slowest rules), a number of rules, or all; unset it or give 0 for none`,
  );
}

/** The two tables, as Markdown (ESLint's layout): phases with their total, then the slowest rules. */
export function formatTimings(timings: Timings): string {
  const phases = [...timings.phases];
  const total = phases.reduce((sum, [, ms]) => sum + ms, 0);
  const rules = [...timings.rules].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const ruleTotal = rules.reduce((sum, [, ms]) => sum + ms, 0);
  const shown = rules.slice(0, timings.rows);
  const sections = [table('Phase', [...phases, ['total', total]], total)];
  if (shown.length > 0) {
    const more = rules.length - shown.length;
    sections.push(table('Rule', shown, ruleTotal) + (more > 0 ? `\n(${more} more rule${more === 1 ? '' : 's'}: ${TIMING_VARIABLE}=all lists every one)` : ''));
  }
  return `${sections.join('\n\n')}\n`;
}

function table(heading: string, rows: readonly (readonly [string, number])[], total: number): string {
  const width = Math.max(heading.length, ...rows.map(([name]) => name.length));
  const lines = [`${heading.padEnd(width)} | Time (ms) | Relative`, `:${'-'.repeat(width - 1)}-|----------:|--------:`];
  for (const [name, ms] of rows) {
    const relative = total > 0 ? `${((100 * ms) / total).toFixed(1)}%` : '-';
    lines.push(`${name.padEnd(width)} | ${ms.toFixed(1).padStart(9)} | ${relative.padStart(8)}`);
  }
  return lines.join('\n');
}

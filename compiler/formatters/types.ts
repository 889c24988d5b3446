import type { GateSummary } from '../gate/report.js';
import type { Diagnostic } from '../types.js';

export interface LintReport {
  diagnostics: Diagnostic[];
  errorCount: number;
  warningCount: number;
}

/** What every formatter takes: a lint report, and from `capreg check` also the gate's summary. */
export interface Report extends LintReport {
  gate?: GateSummary;
}

/** A formatter turns a report into the exact text printed on stdout. */
export type Formatter = (report: Report) => string;

export function countsOf(diagnostics: Diagnostic[]): LintReport {
  const errorCount = diagnostics.filter((d) => d.severity === 'error').length;
  return { diagnostics, errorCount, warningCount: diagnostics.length - errorCount };
}

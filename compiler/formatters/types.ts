import type { Diagnostic } from '../types.js';

export interface LintReport {
  diagnostics: Diagnostic[];
  errorCount: number;
  warningCount: number;
}

/** A formatter turns a report into the exact text printed on stdout. */
export type Formatter = (report: LintReport) => string;

export function countsOf(diagnostics: Diagnostic[]): LintReport {
  const errorCount = diagnostics.filter((d) => d.severity === 'error').length;
  return { diagnostics, errorCount, warningCount: diagnostics.length - errorCount };
}

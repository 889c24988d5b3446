// What `capreg check` reports: the lint report of the new tree plus the gate's diagnostics, and the
// per-capability summary the markdown formatter and `--format json` show.
import type { LintReport } from '../formatters/types.js';
import type { CapabilityChange } from './compare.js';
import type { RoutingSummary } from './routing.js';

export interface GateSummary {
  /** The ref as the user gave it (`origin/main`). */
  against: string;
  /** The commit it resolved to. */
  baseCommit: string;
  /** True when the check exits 0. */
  passed: boolean;
  /** Every capability of either tree, sorted by id. */
  changes: CapabilityChange[];
  /** Diagnostics of linting the new tree (the rest of the report's diagnostics are the gate's). */
  lint: { errorCount: number; warningCount: number };
  /** Routing: the evals run over both trees (`capreg check` always sets it). */
  routing?: RoutingSummary;
}

export interface GateReport extends LintReport {
  gate: GateSummary;
}

// `--format json` for the gate: the lint JSON object of SPEC §3 plus a `gate` field with the
// per-capability summary (unchanged capabilities are only counted).
import { formatJson } from '../formatters/json.js';
import type { LintReport } from '../formatters/types.js';
import type { GateSummary } from './report.js';

export function formatGateJson(report: LintReport & { gate?: GateSummary }): string {
  const lint = JSON.parse(formatJson(report)) as Record<string, unknown>;
  if (!report.gate) return `${JSON.stringify(lint)}\n`;
  const { changes, ...rest } = report.gate;
  const listed = changes.filter((change) => change.kind !== 'unchanged' || change.servedUnchanged);
  const unchanged = changes.filter((change) => change.kind === 'unchanged').length;
  return `${JSON.stringify({ ...lint, gate: { ...rest, unchanged, changes: listed } })}\n`;
}

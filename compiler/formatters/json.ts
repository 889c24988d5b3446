// `--format json`: exactly one JSON object, the shape SPEC §3 fixes; from `capreg check` it also has
// a `gate` field with the per-capability summary (unchanged capabilities are only counted).
import type { GateSummary } from '../gate/report.js';
import type { Formatter } from './types.js';

export const formatJson: Formatter = (report) =>
  `${JSON.stringify({
    diagnostics: report.diagnostics.map((d) => ({
      file: d.file,
      line: d.line,
      column: d.column,
      endLine: d.endLine,
      endColumn: d.endColumn,
      severity: d.severity,
      ruleId: d.ruleId,
      message: d.message,
      ...(d.capabilityId !== undefined ? { capabilityId: d.capabilityId } : {}),
      ...(d.related ? { related: d.related } : {}),
    })),
    errorCount: report.errorCount,
    warningCount: report.warningCount,
    ...(report.gate ? { gate: gateJson(report.gate) } : {}),
  })}\n`;

function gateJson(gate: GateSummary): Record<string, unknown> {
  const { changes, ...rest } = gate;
  const listed = changes.filter((change) => change.kind !== 'unchanged' || change.servedUnchanged);
  const unchanged = changes.filter((change) => change.kind === 'unchanged').length;
  return { ...rest, unchanged, changes: listed };
}

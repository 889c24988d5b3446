// `--format json`: exactly one JSON object, the shape SPEC §3 fixes.
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
  })}\n`;

// `--format stylish` (default): ESLint's layout, grouped by file, aligned columns, a summary line.
// Plain text (no colours): it is read in terminals, CI logs and golden tests alike; names and
// messages show control characters escaped (escape.ts), so one diagnostic is one line.
import { plainText } from './escape.js';
import type { Formatter } from './types.js';

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

export const formatStylish: Formatter = (report) => {
  if (report.diagnostics.length === 0) return '';
  const byFile = new Map<string, typeof report.diagnostics>();
  for (const diagnostic of report.diagnostics) {
    const list = byFile.get(diagnostic.file) ?? [];
    list.push(diagnostic);
    byFile.set(diagnostic.file, list);
  }
  const lines: string[] = [];
  for (const [file, diagnostics] of byFile) {
    lines.push(plainText(file));
    const rows = diagnostics.map((d) => [`${d.line}:${d.column}`, d.severity === 'error' ? 'error' : 'warning', plainText(d.message), d.ruleId]);
    // A reduce, not Math.max(...): a file's diagnostics can outnumber a call's arguments.
    const widths = [0, 1].map((i) => rows.reduce((widest, row) => Math.max(widest, row[i]!.length), 0));
    for (const [index, row] of rows.entries()) {
      lines.push(`  ${row[0]!.padEnd(widths[0]!)}  ${row[1]!.padEnd(widths[1]!)}  ${row[2]}  ${row[3]}`);
      const related = diagnostics[index]?.related;
      if (related) {
        const place = `${plainText(related.file)}:${related.line}:${related.column}`;
        lines.push(`  ${''.padEnd(widths[0]!)}  ${''.padEnd(widths[1]!)}  ↳ ${plainText(related.message)}: ${place}`);
      }
    }
    lines.push('');
  }
  const total = report.errorCount + report.warningCount;
  lines.push(`✖ ${plural(total, 'problem')} (${plural(report.errorCount, 'error')}, ${plural(report.warningCount, 'warning')})`);
  return `${lines.join('\n')}\n`;
};

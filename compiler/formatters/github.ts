// `--format github`: GitHub Actions workflow commands, one annotation per diagnostic.
// Property values and messages are escaped as the runner expects (%, CR, LF, and , : in properties);
// other control characters (ESC, bidi overrides) are shown as escapes, as stylish shows them.
import { plainText } from './escape.js';
import type { Formatter } from './types.js';

function escapeData(text: string): string {
  const shown = text
    .split(/(\r|\n)/)
    .map((part) => (part === '\r' || part === '\n' ? part : plainText(part)))
    .join('');
  return shown.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

export const formatGithub: Formatter = (report) =>
  report.diagnostics
    .map((d) => {
      const command = d.severity === 'error' ? 'error' : 'warning';
      const properties = [
        `file=${escapeProperty(d.file)}`,
        `line=${d.line}`,
        `col=${d.column}`,
        `endLine=${d.endLine}`,
        `endColumn=${d.endColumn}`,
        `title=${escapeProperty(d.ruleId)}`,
      ].join(',');
      return `::${command} ${properties}::${escapeData(d.message)}\n`;
    })
    .join('');

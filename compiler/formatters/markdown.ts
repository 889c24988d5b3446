// `--format markdown` (capreg check only): the gate's summary for a pull-request comment or
// $GITHUB_STEP_SUMMARY. One table row per capability that changed, was added or was removed; then
// every eval request whose first answer moved; then every problem.
import type { CapabilityChange } from '../gate/compare.js';
import type { RoutingSummary } from '../gate/routing.js';
import { markdownCode, markdownMessage, markdownText } from './escape.js';
import type { Formatter } from './types.js';

const MAX_PROBLEMS = 50;

/** A name in a table cell: a code span. */
function code(text: string): string {
  return markdownCode(text, { cell: true });
}

function versionCell(change: CapabilityChange): string {
  const from = change.before?.version ?? '—';
  const to = change.after?.version ?? '—';
  if (change.kind === 'added') return `— → ${to}`;
  if (change.kind === 'removed') return `${from} → —`;
  return `${from} → ${to}`;
}

function requiredCell(change: CapabilityChange): string {
  if (change.kind === 'removed') return 'breaking';
  if (change.kind === 'added' || change.notCompared) return '—';
  return change.required.level;
}

function reasonsCell(change: CapabilityChange): string {
  if (change.kind === 'added') return change.renamedFrom ? `new capability (renamed from ${code(change.renamedFrom)})` : 'new capability';
  if (change.kind === 'removed') return change.renamedTo ? `folder renamed to ${code(change.renamedTo)}` : 'capability removed';
  if (change.notCompared) return 'not compared (see the problems below)';
  if (change.required.reasons.length === 0) return 'version fields only';
  return change.required.reasons.map((reason) => markdownMessage(reason.text, { cell: true })).join('; ');
}

function verdictCell(change: CapabilityChange): string {
  if (change.verdict === 'breaking') return '⚠️ breaking';
  if (change.verdict === 'pass') return '✅ pass';
  const moved = change.move && change.move !== 'invalid' ? ` (got ${change.move === 'none' ? 'no bump' : change.move})` : '';
  return `❌ fail${moved}`;
}

const MAX_MOVED = 100;

function firstCell(id: string | null): string {
  return id === null ? 'nothing' : code(id);
}

/** The routing section: one row per request whose first answer moved, or one sentence. */
function routingLines(routing: RoutingSummary): string[] {
  if (routing.status === 'unchanged') return ['Routing: no name, description, trigger or tag changed, so the evals were not re-run.', ''];
  if (routing.status === 'lint-errors') return ['Routing: not compared, the new tree has lint errors.', ''];
  if (routing.status === 'too-many-requests') return [`Routing: not compared, the evals hold ${routing.requests} requests, over the limit.`, ''];
  if (routing.moved.length === 0) return [`Routing: the first answer of every one of the ${plural(routing.requests, 'eval request')} stayed the same.`, ''];
  const lines = [
    `Routing: ${plural(routing.moved.length, 'eval request')} of ${routing.requests} now go${routing.moved.length === 1 ? 'es' : ''} first to another capability.`,
    '',
    '| Capability | Request | First answer | Verdict |',
    '| --- | --- | --- | --- |',
  ];
  for (const moved of routing.moved.slice(0, MAX_MOVED)) {
    const verdict = moved.lost ? '❌ moved away' : moved.kind === 'shouldMatch' ? 'ℹ️ moved' : 'ℹ️ moved (shouldNotMatch)';
    lines.push(`| ${code(moved.capabilityId)} | ${markdownText(moved.request)} | ${firstCell(moved.before)} → ${firstCell(moved.after)} | ${verdict} |`);
  }
  if (routing.moved.length > MAX_MOVED) lines.push('', `… and ${routing.moved.length - MAX_MOVED} more (\`--format json\` lists them all).`);
  return [...lines, ''];
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

export const formatMarkdown: Formatter = (report) => {
  const lines: string[] = [];
  const gate = report.gate;
  const passed = gate ? gate.passed : report.errorCount === 0;
  lines.push(`### capreg protocol gate: ${passed ? '✅ passed' : '❌ failed'}`, '');
  if (gate) {
    const count = (kind: CapabilityChange['kind']): number => gate.changes.filter((change) => change.kind === kind).length;
    lines.push(
      `Compared with ${markdownCode(gate.against)} (\`${gate.baseCommit.slice(0, 12)}\`): ${count('changed')} changed, ${count('added')} added, ${count('removed')} removed, ${count('unchanged')} unchanged.`,
      '',
    );
    const listed = gate.changes.filter((change) => change.kind !== 'unchanged');
    if (listed.length > 0) {
      lines.push('| Capability | Version | Required | Reasons | Verdict |', '| --- | --- | --- | --- | --- |');
      for (const change of listed) {
        lines.push(`| ${code(change.id)} | ${markdownText(versionCell(change))} | ${requiredCell(change)} | ${reasonsCell(change)} | ${verdictCell(change)} |`);
      }
      lines.push('');
    } else {
      lines.push('No capability changed.', '');
    }
    const cosmetic = gate.changes.filter((change) => change.servedUnchanged).map((change) => markdownCode(change.id));
    if (cosmetic.length > 0) {
      lines.push(`Changed only in line endings or YAML layout, so no bump needed: ${cosmetic.join(', ')}.`, '');
    }
    if (gate.routing) lines.push(...routingLines(gate.routing));
    lines.push(`Lint of the new tree: ${plural(gate.lint.errorCount, 'error')}, ${plural(gate.lint.warningCount, 'warning')}.`, '');
  }
  if (report.diagnostics.length > 0) {
    lines.push('**Problems**', '');
    for (const d of report.diagnostics.slice(0, MAX_PROBLEMS)) {
      lines.push(`- **${d.severity}** ${markdownCode(`${d.file}:${d.line}:${d.column}`)} ${markdownMessage(d.message)} (${markdownCode(d.ruleId)})`);
    }
    if (report.diagnostics.length > MAX_PROBLEMS) lines.push(`- … and ${report.diagnostics.length - MAX_PROBLEMS} more`);
    lines.push('');
  }
  return `${lines.join('\n')}`;
};

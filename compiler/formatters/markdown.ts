// `--format markdown` (capreg check only): the gate's summary for a pull-request comment or
// $GITHUB_STEP_SUMMARY. One table row per capability that changed, was added or was removed; then
// the eval requests whose first answer moved; then the problems; each list within its share of
// what a pull-request comment may hold (LIST_BUDGET).
import type { CapabilityChange } from '../gate/compare.js';
import type { RoutingSummary } from '../gate/routing.js';
import { markdownCode, markdownMessage, markdownText } from './escape.js';
import type { Formatter } from './types.js';

const MAX_PROBLEMS = 50;

/**
 * Characters each list of the summary may take (its capability rows, the ids changed only in
 * layout, the moved requests, the problems); past it the list ends with how many more there are.
 * Together they keep the summary under GitHub's limit for a pull-request comment, 65,536
 * characters (`gh pr comment --body-file`, docs/gate.md), and far under a job summary's 1 MiB:
 * one row per changed capability made a bulk edit of 700 protocols an 82,640-character summary.
 */
const LIST_BUDGET = { changes: 24_000, cosmetic: 4_000, moved: 12_000, problems: 16_000 } as const;

/** The first of `items` that fit in `budget` characters (each with its line break), and how many did not. */
export function fitting(items: readonly string[], budget: number): { shown: string[]; more: number } {
  let used = 0;
  let count = 0;
  while (count < items.length && used + items[count]!.length + 1 <= budget) used += items[count++]!.length + 1;
  return { shown: items.slice(0, count), more: items.length - count };
}

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
  const rows = routing.moved.slice(0, MAX_MOVED).map((moved) => {
    const verdict = moved.lost ? '❌ moved away' : moved.kind === 'shouldMatch' ? 'ℹ️ moved' : 'ℹ️ moved (shouldNotMatch)';
    return `| ${code(moved.capabilityId)} | ${markdownText(moved.request)} | ${firstCell(moved.before)} → ${firstCell(moved.after)} | ${verdict} |`;
  });
  const { shown, more } = fitting(rows, LIST_BUDGET.moved);
  lines.push(...shown);
  const notShown = more + Math.max(0, routing.moved.length - MAX_MOVED);
  if (notShown > 0) lines.push('', `… and ${notShown} more (\`--format json\` lists them all).`);
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
      const rows = listed.map(
        (change) => `| ${code(change.id)} | ${markdownText(versionCell(change))} | ${requiredCell(change)} | ${reasonsCell(change)} | ${verdictCell(change)} |`,
      );
      const { shown, more } = fitting(rows, LIST_BUDGET.changes);
      lines.push(...shown);
      if (more > 0) lines.push('', `… and ${more} more (\`--format json\` lists them all).`);
      lines.push('');
    } else {
      lines.push('No capability changed.', '');
    }
    const cosmetic = gate.changes.filter((change) => change.servedUnchanged).map((change) => markdownCode(change.id));
    if (cosmetic.length > 0) {
      // Budgeted as one line: each id and its comma.
      const { shown, more } = fitting(cosmetic, LIST_BUDGET.cosmetic);
      const rest = more > 0 ? ` and ${more} more` : '';
      lines.push(`Changed only in line endings or YAML layout, so no bump needed: ${shown.join(', ')}${rest}.`, '');
    }
    if (gate.routing) lines.push(...routingLines(gate.routing));
    lines.push(`Lint of the new tree: ${plural(gate.lint.errorCount, 'error')}, ${plural(gate.lint.warningCount, 'warning')}.`, '');
  }
  if (report.diagnostics.length > 0) {
    lines.push('**Problems**', '');
    const items = report.diagnostics
      .slice(0, MAX_PROBLEMS)
      .map((d) => `- **${d.severity}** ${markdownCode(`${d.file}:${d.line}:${d.column}`)} ${markdownMessage(d.message)} (${markdownCode(d.ruleId)})`);
    const { shown } = fitting(items, LIST_BUDGET.problems);
    lines.push(...shown);
    if (report.diagnostics.length > shown.length) lines.push(`- … and ${report.diagnostics.length - shown.length} more`);
    lines.push('');
  }
  return `${lines.join('\n')}`;
};

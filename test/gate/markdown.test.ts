// Golden output of `--format markdown` (and the json summary) for a fixed pair of trees: every kind
// of row (changed pass/fail, added, removed, renamed) and the problems list.
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { countsOf } from '../../compiler/formatters/index.js';
import { formatJson } from '../../compiler/formatters/json.js';
import { formatMarkdown } from '../../compiler/formatters/markdown.js';
import { compareRegistries, type GateReport } from '../../compiler/gate/index.js';
import { compareDiagnostics } from '../../compiler/lint.js';
import { parseCapability } from '../../compiler/parse.js';
import { usableToolsets } from '../../compiler/toolsets.js';
import type { Diagnostic } from '../../compiler/types.js';
import { ARCHIVE, NOTES, REPORTS, REPORTS_FILE, TOOLSETS } from './fixture.js';

function report(): GateReport {
  const base = [
    parseCapability('capabilities/archive/PROTOCOL.md', ARCHIVE),
    parseCapability('capabilities/notes/PROTOCOL.md', NOTES),
    parseCapability(REPORTS_FILE, REPORTS),
    parseCapability('capabilities/legacy/PROTOCOL.md', NOTES.replace(/notes/g, 'legacy').replace('name: Notes', 'name: Legacy').replace('Write down', 'Keep')),
  ];
  const head = [
    parseCapability('capabilities/archive-search/PROTOCOL.md', ARCHIVE.replace('id: archive', 'id: archive-search')),
    parseCapability(
      'capabilities/notes/PROTOCOL.md',
      NOTES.replace('0.3.0', '0.4.0').replace('2026-01-02', '2026-02-01').replace('  - take a note\n', '  - take a note\n  - jot this | down\n'),
    ),
    parseCapability(REPORTS_FILE, REPORTS.replace('[work-logs]', '[work-logs, billing]').replace('1.2.3', '1.2.4').replace('2026-01-10', '2026-02-01')),
    parseCapability(
      'capabilities/meetings/PROTOCOL.md',
      NOTES.replace(/notes/g, 'meetings').replace('name: Notes', 'name: Meetings').replace('0.3.0', '1.0.0').replace('Write down', 'Record'),
    ),
  ];
  // A toolset change: a row of its own for every capability that uses the toolset.
  const toolsets = {
    before: usableToolsets(parseYaml(TOOLSETS)),
    after: usableToolsets(parseYaml(TOOLSETS.replace('calendar_list: { action: read', 'calendar_list: { action: write'))),
  };
  const gate = compareRegistries(base, head, { toolsets });
  const lintWarning: Diagnostic = {
    file: 'capabilities/meetings/PROTOCOL.md',
    line: 14,
    column: 1,
    endLine: 14,
    endColumn: 10,
    severity: 'warning',
    ruleId: 'duplicate-content',
    message: 'paragraph copied from capabilities/notes/PROTOCOL.md',
  };
  const counts = countsOf([...gate.diagnostics, lintWarning].sort(compareDiagnostics));
  return {
    ...counts,
    gate: {
      against: 'origin/main',
      baseCommit: '0123456789abcdef0123456789abcdef01234567',
      passed: false,
      changes: gate.changes,
      lint: { errorCount: 0, warningCount: 1 },
    },
  };
}

describe('markdown summary', () => {
  it('matches the golden file', async () => {
    await expect(formatMarkdown(report())).toMatchFileSnapshot('./golden/summary.md');
  });

  it('says so when nothing changed', () => {
    const unchanged = compareRegistries([parseCapability(REPORTS_FILE, REPORTS)], [parseCapability(REPORTS_FILE, REPORTS)]);
    const text = formatMarkdown({
      ...countsOf([]),
      gate: { against: 'main', baseCommit: 'abcdef1234567890', passed: true, changes: unchanged.changes, lint: { errorCount: 0, warningCount: 0 } },
    });
    expect(text).toBe(
      '### capreg protocol gate: ✅ passed\n\nCompared with `main` (`abcdef123456`): 0 changed, 0 added, 0 removed, 1 unchanged.\n\nNo capability changed.\n\nLint of the new tree: 0 errors, 0 warnings.\n',
    );
  });

  it('fits a pull-request comment (65,536 characters) however many capabilities changed, and says how many rows it left out', () => {
    // A bulk edit: 700 protocols reworded without a bump (`capreg check --format markdown` wrote
    // 82,640 characters), 300 only re-laid-out, and a problem with a long message for each.
    const ids = Array.from({ length: 1000 }, (_, i) => `notes-${String(i).padStart(4, '0')}-${'x'.repeat(40)}`);
    const tree = (reworded: boolean) =>
      ids.map((id, i) => {
        const text = NOTES.replace('id: notes', `id: ${id}`);
        const changed =
          i < 700
            ? text.replace('Write down', reworded ? 'Note down' : 'Write down')
            : text.replace('whenToUse:\n  - take a note', `whenToUse: [${reworded ? 'take a note' : '"take a note"'}]`);
        return parseCapability(`capabilities/${id}/PROTOCOL.md`, changed);
      });
    const gate = compareRegistries(tree(false), tree(true));
    expect(gate.changes.filter((change) => change.kind === 'changed')).toHaveLength(700);
    expect(gate.changes.filter((change) => change.servedUnchanged)).toHaveLength(300);
    const problem = (id: string): Diagnostic => ({
      ...gate.diagnostics[0]!,
      file: `capabilities/${id}/PROTOCOL.md`,
      message: `${'a long message '.repeat(60)}`,
    });
    const diagnostics = ids.map(problem);
    const text = formatMarkdown({
      ...countsOf(diagnostics),
      gate: { against: 'origin/main', baseCommit: '0123456789abcdef', passed: false, changes: gate.changes, lint: { errorCount: 0, warningCount: 0 } },
    });
    expect(text.length).toBeLessThan(65_536);
    const rows = text.split('\n').filter((line) => line.startsWith('| `notes-'));
    const more = Number(/\n… and (\d+) more \(`--format json` lists them all\)\.\n/.exec(text)?.[1]);
    expect(rows.length + more).toBe(700);
    const layout = /so no bump needed: (.*) and (\d+) more\.\n/.exec(text)!;
    expect(layout[1]!.split(', ').length + Number(layout[2])).toBe(300);
    const problems = text.split('\n').filter((line) => line.startsWith('- **'));
    expect(text).toContain(`\n- … and ${1000 - problems.length} more\n`);
    expect(problems.length).toBeGreaterThan(0);
  });

  it('json carries the lint object of SPEC §3 plus the gate summary without the unchanged entries', () => {
    const json = JSON.parse(formatJson(report())) as Record<string, unknown> & { gate: { changes: { id: string }[]; unchanged: number } };
    expect(Object.keys(json)).toEqual(['diagnostics', 'errorCount', 'warningCount', 'gate']);
    expect(json.gate.changes.map((change) => change.id)).toEqual(['archive', 'archive-search', 'legacy', 'meetings', 'notes', 'reports']);
    expect(json.gate.unchanged).toBe(0);
  });
});

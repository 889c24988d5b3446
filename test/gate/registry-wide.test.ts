// capreg check lints the new tree in full: a change can break a capability whose own files did not
// change, through a rule that reads the whole registry (docs/gate.md#what-a-change-can-affect).
// Each scenario changes one file and expects the diagnostic on ANOTHER, unchanged file, so a gate
// that linted only the files a change touched would fail these tests.
import { describe, it } from 'vitest';
import type { Diagnostic } from '../../compiler/types.js';
import { commitAll, createBaseRepository, edit, gateScenarios, git, read, REPORTS_FILE, runCli, setVersion, write } from './fixture.js';

const NOTES_FILE = 'capabilities/notes/PROTOCOL.md';
const ARCHIVE_FILE = 'capabilities/archive/PROTOCOL.md';
const LINK = 'For older notes, load [the archive](capability:archive).';

/** The fixture's base, plus a `capability:` link from notes to archive, committed and tagged `base`. */
function baseWithLink(): string {
  const dir = createBaseRepository();
  edit(dir, NOTES_FILE, 'Do not add anything they did not say.', `Do not add anything they did not say. ${LINK}`);
  commitAll(dir, 'notes links to the archive');
  git(dir, 'tag', '-f', 'base');
  return dir;
}

const plain = gateScenarios();
const linked = gateScenarios(baseWithLink);

interface Output {
  diagnostics: Diagnostic[];
  gate: { passed: boolean; changes: { id: string; kind: string }[] };
}

async function check(dir: string, ...extra: string[]): Promise<{ code: number; json: Output }> {
  const result = await runCli(['check', '--against', 'base', '--format', 'json', ...extra], dir);
  if (result.code === 2) throw new Error(`capreg check failed: ${result.stderr}`);
  return { code: result.code, json: JSON.parse(result.stdout) as Output };
}

/** The kinds of change the gate saw, by capability id (unchanged ones left out). */
function changed(json: Output): Record<string, string> {
  return Object.fromEntries(json.gate.changes.filter((change) => change.kind !== 'unchanged').map((change) => [change.id, change.kind]));
}

describe.concurrent('capreg check: a change caught on a capability it did not touch', () => {
  it('a trigger added to one capability that collides with a trigger of an unchanged one', async ({ expect }) => {
    const dir = plain.scenario();
    // archive comes first in file order, so the collision is reported on reports (unchanged).
    edit(dir, ARCHIVE_FILE, '  - search the archive\n', '  - search the archive\n  - Write the reports\n');
    setVersion(dir, '2.1.0', '2026-02-01', ARCHIVE_FILE);
    commitAll(dir, 'archive gains a trigger that reports already has');
    const { code, json } = await check(dir, '--max-warnings', '0');
    expect(changed(json)).toEqual({ archive: 'changed' });
    const collision = json.diagnostics.find((d) => d.ruleId === 'trigger-collision');
    expect(collision).toMatchObject({ file: REPORTS_FILE, severity: 'warning' });
    expect(collision?.message).toContain('"Write the reports" of capability "archive"');
    expect(code).toBe(1);
    expect(json.gate.passed).toBe(false);
  });

  it('a capability removed that an unchanged capability links to with capability:', async ({ expect }) => {
    const dir = linked.scenario();
    expect(read(dir, NOTES_FILE)).toContain(LINK);
    const before = await check(dir);
    expect(before.json.diagnostics).toEqual([]);
    git(dir, 'rm', '-r', '-q', 'capabilities/archive');
    commitAll(dir, 'archive removed');
    const { code, json } = await check(dir);
    expect(changed(json)).toEqual({ archive: 'removed' });
    expect(json.diagnostics.map((d) => [d.file, d.ruleId, d.severity])).toEqual([
      [ARCHIVE_FILE, 'capability-removed', 'warning'],
      [NOTES_FILE, 'catalog-references', 'error'],
    ]);
    expect(code).toBe(1);
  });

  it('a toolset removed from toolsets.yaml that an unchanged capability uses', async ({ expect }) => {
    const dir = plain.scenario();
    const toolsets = read(dir, 'capabilities/toolsets.yaml');
    write(dir, 'capabilities/toolsets.yaml', toolsets.replace(/calendar:\n(?: {2}.*\n)+/, ''));
    expect(read(dir, 'capabilities/toolsets.yaml')).not.toContain('calendar');
    commitAll(dir, 'calendar toolset removed');
    const { code, json } = await check(dir);
    // reports' PROTOCOL.md is byte for byte the same; lint and the gate both see what it lost.
    expect(git(dir, 'diff', '--name-only', 'base', '--', REPORTS_FILE)).toBe('');
    expect(json.diagnostics.filter((d) => d.ruleId === 'toolset-exists').map((d) => [d.file, d.severity])).toEqual([[REPORTS_FILE, 'error']]);
    expect(json.diagnostics.filter((d) => d.ruleId === 'version-bump').map((d) => [d.file, d.message])).toEqual([
      [REPORTS_FILE, expect.stringContaining('needs major: toolset `calendar` removed')],
    ]);
    expect(code).toBe(1);
  });
});

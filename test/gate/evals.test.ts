// Routing in `capreg check`: the fixture registry in a real Git repository gets evals (one commit,
// tagged `base`); each scenario copies it, commits one change, and runs the check in-process
// (one scenario also through the real executable). The diagnostics asserted are `routing-moved`.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';
import { baseRegistry } from '../../cli/commands/check.js';
import { compileRoot } from '../../cli/compile-root.js';
import { readGitRegistry } from '../../cli/git-registry.js';
import { parseEvalsFile } from '../../compiler/evals/file.js';
import type { RoutingSummary } from '../../compiler/gate/index.js';
import { toolsetsSourceOf } from '../../compiler/toolsets.js';
import type { Diagnostic } from '../../compiler/types.js';
import { commitAll, createBaseRepository, edit, git, REPORTS_FILE, runCli, write, gateScenarios, setVersion } from './fixture.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/capreg.js');
const NOTES_FILE = 'capabilities/notes/PROTOCOL.md';
const ARCHIVE_FILE = 'capabilities/archive/PROTOCOL.md';
const REPORTS_EVALS = 'capabilities/reports/evals.yaml';
// Line 5 holds "write my weekly report" (column 5).
const REPORTS_EVALS_TEXT = `shouldMatch:
  - write my report
  - log my work for today
  - 帮我写报告
  - write my weekly report
shouldNotMatch:
  - take a note
`;
const NOTES_EVALS_TEXT = `shouldMatch:
  - take a note
  - note this down for me
`;
const ARCHIVE_EVALS_TEXT = `shouldMatch:
  - search the archive
  - what is in the archive
`;

const { scenario, baseDir } = gateScenarios(() => {
  const baseDir = createBaseRepository();
  write(baseDir, REPORTS_EVALS, REPORTS_EVALS_TEXT);
  write(baseDir, 'capabilities/notes/evals.yaml', NOTES_EVALS_TEXT);
  write(baseDir, 'capabilities/archive/evals.yaml', ARCHIVE_EVALS_TEXT);
  commitAll(baseDir, 'evals');
  git(baseDir, 'tag', '-f', 'base');
  return baseDir;
});

interface JsonOutput {
  diagnostics: Diagnostic[];
  gate: { passed: boolean; routing: RoutingSummary };
}

async function check(dir: string): Promise<{ code: number; json: JsonOutput; routingDiagnostics: Diagnostic[]; stderr: string }> {
  const result = await runCli(['check', '--against', 'base', '--format', 'json'], dir);
  if (result.code === 2) throw new Error(`capreg check failed: ${result.stderr}`);
  const json = JSON.parse(result.stdout) as JsonOutput;
  return { code: result.code, json, routingDiagnostics: json.diagnostics.filter((d) => d.ruleId === 'routing-moved'), stderr: result.stderr };
}

/** Notes gains the trigger "write my weekly report": the reports request of those words goes to notes. */
function stealWeeklyReport(dir: string): void {
  edit(dir, NOTES_FILE, '  - take a note\n', '  - take a note\n  - write my weekly report\n');
  setVersion(dir, '0.4.0', undefined, NOTES_FILE);
  commitAll(dir, 'notes: a trigger that draws a reports request away');
}

describe.concurrent('capreg check: routing', () => {
  it('the base registry passes its own evals (the scenarios start from routing that works)', async ({ expect }) => {
    const result = await runCli(['eval', '--format', 'json'], baseDir());
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it('a change that touches no name, description, trigger or tag does not re-run the evals, and passes', async ({ expect }) => {
    const dir = scenario();
    edit(dir, REPORTS_FILE, 'add an entry', 'add one entry');
    setVersion(dir, '1.2.4', undefined, REPORTS_FILE);
    commitAll(dir, 'wording');
    const result = await check(dir);
    expect(result.json.gate.routing).toEqual({ status: 'unchanged', requests: 0, moved: [] });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('routing unchanged (no name, description, trigger or tag changed)');
  });

  it('a description change that moves nothing re-runs every request and passes', async ({ expect }) => {
    const dir = scenario();
    edit(dir, ARCHIVE_FILE, 'Answers questions about archived material.', 'Answers questions about old archived material and where it came from.');
    setVersion(dir, '2.1.0', undefined, ARCHIVE_FILE);
    commitAll(dir, 'archive: description');
    const result = await check(dir);
    expect(result.json.gate.routing).toEqual({ status: 'compared', requests: 9, moved: [] });
    expect(result.routingDiagnostics).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('0 of 9 eval requests moved');
  });

  it('a trigger edit that draws a shouldMatch request to another capability fails, at the request, naming it', async ({ expect }) => {
    const dir = scenario();
    stealWeeklyReport(dir);
    const result = await check(dir);
    expect(result.code).toBe(1);
    expect(result.json.gate.passed).toBe(false);
    expect(result.json.gate.routing.status).toBe('compared');
    expect(result.json.gate.routing.moved).toEqual([
      {
        capabilityId: 'reports',
        kind: 'shouldMatch',
        request: 'write my weekly report',
        file: REPORTS_EVALS,
        line: 5,
        column: 5,
        before: 'reports',
        after: 'notes',
        lost: true,
      },
    ]);
    expect(result.routingDiagnostics).toEqual([
      {
        file: REPORTS_EVALS,
        line: 5,
        column: 5,
        endLine: 5,
        endColumn: 27,
        severity: 'error',
        ruleId: 'routing-moved',
        capabilityId: 'reports',
        message:
          'request "write my weekly report" went first to `reports` at base and now goes first to `notes`; make the trigger or description that drew it away more specific, or move the request to the evals of the capability that should answer it',
      },
    ]);
    expect(result.stderr).toContain('1 of 9 eval requests moved, 1 away from their capability');
  });

  it('the markdown summary lists every request whose first answer moved', async ({ expect }) => {
    const dir = scenario();
    stealWeeklyReport(dir);
    const result = await runCli(['check', '--against', 'base', '--format', 'markdown'], dir);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'Routing: 1 eval request of 9 now goes first to another capability.\n\n' +
        '| Capability | Request | First answer | Verdict |\n| --- | --- | --- | --- |\n' +
        '| `reports` | write my weekly report | `reports` → `notes` | ❌ moved away |\n',
    );
    expect(result.stdout).toContain('(`routing-moved`)');
  });

  it('a request moved only in the base evals (since deleted from the file) is still compared', async ({ expect }) => {
    const dir = scenario();
    edit(dir, REPORTS_EVALS, '  - write my weekly report\n', '');
    stealWeeklyReport(dir);
    const result = await check(dir);
    expect(result.code).toBe(1);
    expect(result.json.gate.routing.moved).toEqual([
      expect.objectContaining({ request: 'write my weekly report', before: 'reports', after: 'notes', lost: true }),
    ]);
  });

  it('a capability whose PROTOCOL.md is unchanged but whose tool description changed is ranked with its new text', async ({ expect }) => {
    // The gate analyzes a capability once when it reads the same to search in both trees; reports'
    // file is the same bytes here, but its tools table now carries other words from toolsets.yaml.
    const dir = scenario();
    edit(dir, 'capabilities/toolsets.yaml', 'description: Record an entry.', 'description: Record an entry in the xylophone quokka ledger.');
    write(dir, 'capabilities/notes/evals.yaml', `${NOTES_EVALS_TEXT}shouldNotMatch:\n  - xylophone quokka\n`);
    // Routing runs only when a name, description, trigger or tag changed.
    edit(dir, ARCHIVE_FILE, 'Answers questions about archived material.', 'Answers questions about old archived material and where it came from.');
    setVersion(dir, '2.1.0', undefined, ARCHIVE_FILE);
    commitAll(dir, 'a tool description and the archive description');
    expect(git(dir, 'diff', '--name-only', 'base', '--', REPORTS_FILE)).toBe('');
    const result = await check(dir);
    expect(result.json.gate.routing.status).toBe('compared');
    expect(result.json.gate.routing.moved).toEqual([
      {
        capabilityId: 'notes',
        kind: 'shouldNotMatch',
        request: 'xylophone quokka',
        file: 'capabilities/notes/evals.yaml',
        line: 5,
        column: 5,
        before: null,
        after: 'reports',
        lost: false,
      },
    ]);
    expect(result.code).toBe(0);
  });

  it("parses each distinct evals file once: the base tree takes the new tree's where the bytes are the same", async ({ expect }) => {
    const dir = scenario();
    edit(dir, REPORTS_EVALS, '  - write my weekly report\n', '');
    commitAll(dir, 'one evals file changed');
    const { input: head, result } = await compileRoot(dir, { cache: false });
    const { input: base } = await readGitRegistry(dir, 'base', { maxFileBytes: 1024 * 1024 });
    const documents = result.registry.capabilities.map((capability) => capability.document);
    const registry = baseRegistry(base, documents, toolsetsSourceOf(base.files), head, result.registry);
    const headEvals = new Map(result.registry.evals.map((parsed) => [parsed.file, parsed]));
    expect(registry.evals.map((parsed) => [parsed.file, parsed === headEvals.get(parsed.file)])).toEqual([
      ['capabilities/archive/evals.yaml', true],
      ['capabilities/notes/evals.yaml', true],
      [REPORTS_EVALS, false],
    ]);
    // The changed one is the base's own text.
    expect(registry.evals[2]?.data).toEqual(parseEvalsFile(REPORTS_EVALS, REPORTS_EVALS_TEXT).data);
  });

  it('through the real executable: exit 1 and the moved count on stderr', ({ expect }) => {
    const dir = scenario();
    stealWeeklyReport(dir);
    const result = spawnSync(process.execPath, [BIN, 'check', '--against', 'base'], { cwd: dir, encoding: 'utf8' });
    expect(result.stdout).toContain('routing-moved');
    expect(result.stderr).toMatch(
      /1 changed, 0 added, 0 removed, 2 unchanged; every version bump is right; 1 of 9 eval requests moved, 1 away from their capability\n$/,
    );
    expect(result.status).toBe(1);
  });
});

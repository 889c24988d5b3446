// capreg check end to end: a real Git repository per scenario (a copy of one base repository),
// one commit per scenario, the command run in-process. The diagnostics asserted are the gate's
// own (version-bump, version-date, capability-removed); the fixture lints clean (fixture-sanity).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, it } from 'vitest';
import type { CapabilityChange } from '../../compiler/gate/index.js';
import type { Diagnostic } from '../../compiler/types.js';
import { runBin } from '../cli/helpers.js';
import { ARCHIVE, commitAll, edit, git, initRepository, read, REPORTS_FILE, runCli, tempDir, write, gateScenarios, setVersion } from './fixture.js';

const GATE_RULES = new Set(['version-bump', 'version-date', 'capability-removed']);
const { scenario, baseDir, track } = gateScenarios();

/** The line of `protocol_version` in the fixture capability as it is now. */
function versionLine(root: string): number {
  return (
    read(root, REPORTS_FILE)
      .split('\n')
      .findIndex((line) => line.startsWith('protocol_version:')) + 1
  );
}

interface JsonOutput {
  diagnostics: Diagnostic[];
  errorCount: number;
  warningCount: number;
  gate: { against: string; baseCommit: string; passed: boolean; unchanged: number; changes: CapabilityChange[]; lint: { errorCount: number } };
}

async function check(dir: string, ...extra: string[]): Promise<{ code: number; json: JsonOutput; gateDiagnostics: Diagnostic[]; stderr: string }> {
  const result = await runCli(['check', '--against', 'base', '--format', 'json', ...extra], dir);
  if (result.code === 2) throw new Error(`capreg check failed: ${result.stderr}`);
  const json = JSON.parse(result.stdout) as JsonOutput;
  return { code: result.code, json, gateDiagnostics: json.diagnostics.filter((d) => GATE_RULES.has(d.ruleId)), stderr: result.stderr };
}

function change(json: JsonOutput, id: string): CapabilityChange | undefined {
  return json.gate.changes.find((entry) => entry.id === id);
}

/** A partial clone (`--filter=blob:none`) of `origin`, or a full one, and how many packs it holds: each fetch adds one. */
function partialClone(origin: string, { full = false } = {}): { clone: string; packs: () => number } {
  git(origin, 'config', 'uploadpack.allowFilter', 'true');
  const clone = path.join(tempDir(), 'clone');
  track(path.dirname(clone));
  git(path.dirname(clone), 'clone', '-q', ...(full ? [] : ['--filter=blob:none']), `file://${origin}`, clone);
  // No pack is merged into another while they are counted.
  git(clone, 'config', 'maintenance.auto', 'false');
  return { clone, packs: () => Number(/^packs: (\d+)$/m.exec(git(clone, 'count-objects', '-v'))![1]) };
}

/** `capreg check --against base` in a partial clone of `origin` (or a full one), and the fetches it made. */
function checkInClone(origin: string, options: { full?: boolean } = {}): { result: ReturnType<typeof runBin>; fetches: number } {
  const { clone, packs } = partialClone(origin, options);
  const before = packs();
  const result = runBin(['check', '--against', 'base'], { cwd: clone });
  return { result, fetches: packs() - before };
}

/** Move capabilities/notes to shared/notes, with four references, and link it back. */
function shareNotes(origin: string): void {
  fs.mkdirSync(path.join(origin, 'shared'));
  fs.renameSync(path.join(origin, 'capabilities/notes'), path.join(origin, 'shared/notes'));
  fs.symlinkSync('../shared/notes', path.join(origin, 'capabilities/notes'));
  writeSharedReferences(origin, 'Reference');
}

function writeSharedReferences(origin: string, text: string): void {
  for (const name of ['one', 'two', 'three', 'four']) write(origin, `shared/notes/references/${name}.md`, `${text} ${name}.\n`);
}

const edits = {
  requiredToolsetAdded: (root: string) => edit(root, REPORTS_FILE, '[work-logs]', '[work-logs, billing]'),
  toolRemoved: (root: string) => edit(root, REPORTS_FILE, '| `work_log_list` | list entries |\n', ''),
  stateRemoved: (root: string) => {
    edit(root, REPORTS_FILE, '[PENDING, DONE]', '[PENDING]');
    edit(root, REPORTS_FILE, '- **DONE**: show the report exactly as returned.\n', '');
  },
  triggerRemoved: (root: string) => edit(root, REPORTS_FILE, '  - log my work\n', ''),
  retiredToolAdded: (root: string) => {
    edit(root, REPORTS_FILE, 'states:', 'retiredTools: [work_log_archive]\nstates:');
    edit(root, REPORTS_FILE, 'Never invent entries', 'Never call `work_log_archive`; it no longer exists. Never invent entries');
  },
  triggerAdded: (root: string) => edit(root, REPORTS_FILE, '  - log my work\n', '  - log my work\n  - send my report\n'),
  optionalToolsetAdded: (root: string) => edit(root, REPORTS_FILE, '[calendar]', '[calendar, billing]'),
  stateAdded: (root: string) => {
    edit(root, REPORTS_FILE, '[PENDING, DONE]', '[PENDING, DONE, FAILED]');
    edit(root, REPORTS_FILE, '- **DONE**', '- **FAILED**: tell the user what failed; do not retry more than once.\n- **DONE**');
  },
  toolAdded: (root: string) =>
    edit(
      root,
      REPORTS_FILE,
      '| `work_log_generate` | start a report |\n',
      '| `work_log_generate` | start a report |\n| `calendar_list` | find the days of a week |\n',
    ),
  sectionAdded: (root: string) => write(root, REPORTS_FILE, `${read(root, REPORTS_FILE)}\n## Sources\n\nCite the date of every entry you use.\n`),
  wording: (root: string) => edit(root, REPORTS_FILE, 'add an entry', 'add one entry'),
  /** A wording change of notes, with the patch bump it needs. */
  notesWording: (root: string) => {
    edit(root, 'capabilities/notes/PROTOCOL.md', 'Write down what the user says.', 'Write down what the user says, word for word.');
    setVersion(root, '0.3.1', '2026-02-01', 'capabilities/notes/PROTOCOL.md');
  },
};

const reasonCases: { name: string; apply: (root: string) => void; level: 'major' | 'minor' | 'patch'; reason: string; expected: string }[] = [
  { name: 'requiredToolsets gained', apply: edits.requiredToolsetAdded, level: 'major', reason: 'requiredToolsets gained `billing`', expected: '2.0.0' },
  { name: 'a tool removed from the tools table', apply: edits.toolRemoved, level: 'major', reason: 'tools table lost `work_log_list`', expected: '2.0.0' },
  { name: 'a state removed', apply: edits.stateRemoved, level: 'major', reason: 'states lost `DONE`', expected: '2.0.0' },
  { name: 'a trigger removed', apply: edits.triggerRemoved, level: 'major', reason: 'whenToUse lost `log my work`', expected: '2.0.0' },
  { name: 'a new retiredTools entry', apply: edits.retiredToolAdded, level: 'major', reason: 'retiredTools gained `work_log_archive`', expected: '2.0.0' },
  { name: 'a trigger added', apply: edits.triggerAdded, level: 'minor', reason: 'whenToUse gained `send my report`', expected: '1.3.0' },
  { name: 'an optional toolset added', apply: edits.optionalToolsetAdded, level: 'minor', reason: 'optionalToolsets gained `billing`', expected: '1.3.0' },
  { name: 'a state added', apply: edits.stateAdded, level: 'minor', reason: 'states gained `FAILED`', expected: '1.3.0' },
  { name: 'a tool added to the tools table', apply: edits.toolAdded, level: 'minor', reason: 'tools table gained `calendar_list`', expected: '1.3.0' },
  { name: 'a section added', apply: edits.sectionAdded, level: 'minor', reason: 'section added: `Sources`', expected: '1.3.0' },
  { name: 'wording', apply: edits.wording, level: 'patch', reason: 'protocol wording changed', expected: '1.2.4' },
];

describe.concurrent('capreg check: the bump each change needs', () => {
  for (const testCase of reasonCases) {
    it(`${testCase.name} needs ${testCase.level}; a ${testCase.level} bump passes, a smaller one fails and says why`, async ({ expect }) => {
      const dir = scenario();
      testCase.apply(dir);
      setVersion(dir, testCase.expected);
      commitAll(dir, `${testCase.name} with the right bump`);
      const passing = await check(dir);
      expect(passing.gateDiagnostics).toEqual([]);
      expect(passing.json.gate.lint.errorCount).toBe(0);
      expect(passing.code).toBe(0);
      const entry = change(passing.json, 'reports');
      expect(entry).toMatchObject({ kind: 'changed', verdict: 'pass', move: testCase.level, required: { level: testCase.level } });
      expect(entry?.required.reasons[0]?.text).toBe(testCase.reason);

      if (testCase.level === 'patch') return;
      setVersion(dir, '1.2.4');
      commitAll(dir, `${testCase.name} with a patch bump`);
      const failing = await check(dir);
      const line = versionLine(dir);
      expect(failing.code).toBe(1);
      expect(failing.gateDiagnostics).toEqual([
        expect.objectContaining({
          file: REPORTS_FILE,
          line,
          column: 1,
          endLine: line,
          endColumn: 24,
          severity: 'error',
          ruleId: 'version-bump',
          capabilityId: 'reports',
          message: `needs ${testCase.level}: ${testCase.reason}; got patch 1.2.3 → 1.2.4 (expected ${testCase.expected} or higher)`,
        }),
      ]);
      expect(change(failing.json, 'reports')).toMatchObject({ verdict: 'fail', move: 'patch' });
    });
  }
});

describe.concurrent('capreg check: failures', () => {
  const failureCases: { name: string; apply: (root: string) => void; ruleId: string; message: string }[] = [
    {
      name: 'no bump',
      apply: edits.wording,
      ruleId: 'version-bump',
      message: 'needs patch: protocol wording changed; protocol_version is still 1.2.3 (expected 1.2.4 or higher)',
    },
    {
      name: 'too small a bump for several reasons',
      apply: (root) => {
        edits.triggerAdded(root);
        edits.stateAdded(root);
        setVersion(root, '1.2.4');
      },
      ruleId: 'version-bump',
      message: 'needs minor: whenToUse gained `send my report`; states gained `FAILED`; got patch 1.2.3 → 1.2.4 (expected 1.3.0 or higher)',
    },
    {
      name: 'version went down',
      apply: (root) => setVersion(root, '1.2.2'),
      ruleId: 'version-bump',
      message: 'protocol_version went down from 1.2.3 to 1.2.2; a version only increases (expected 1.2.4 or higher)',
    },
    {
      name: 'version not valid semver',
      apply: (root) => {
        edits.wording(root);
        setVersion(root, 'v1.2.4');
      },
      ruleId: 'version-bump',
      message: 'protocol_version "v1.2.4" is not a valid version: expected MAJOR.MINOR.PATCH, e.g. 1.2.4',
    },
    {
      name: 'protocol_updated unchanged with a new version',
      apply: (root) => {
        edits.wording(root);
        setVersion(root, '1.2.4', '2026-01-10');
      },
      ruleId: 'version-date',
      message: 'protocol_updated is still 2026-01-10 though protocol_version changed 1.2.3 → 1.2.4; set it to the date of this change (YYYY-MM-DD)',
    },
    {
      name: 'protocol_updated moved backwards',
      apply: (root) => {
        edits.wording(root);
        setVersion(root, '1.2.4', '2026-01-09');
      },
      ruleId: 'version-date',
      message: 'protocol_updated moved backwards from 2026-01-10 to 2026-01-09; it is the date of the latest change and only moves forward',
    },
    {
      name: 'protocol_updated not a real date',
      apply: (root) => {
        edits.wording(root);
        setVersion(root, '1.2.4', '2026-02-30');
      },
      ruleId: 'version-date',
      message: 'protocol_updated "2026-02-30" is not a date: expected the date of this change as YYYY-MM-DD',
    },
  ];
  it('a forgotten protocol_updated is its own version-date problem: with the version bumped, or with both version fields left as they were', async ({
    expect,
  }) => {
    const dir = scenario();
    edits.wording(dir);
    commitAll(dir, 'body changed, frontmatter unchanged');
    const both = await check(dir);
    expect(both.code).toBe(1);
    expect(both.gateDiagnostics.map((d) => [d.ruleId, d.line, d.message])).toEqual([
      ['version-bump', 11, 'needs patch: protocol wording changed; protocol_version is still 1.2.3 (expected 1.2.4 or higher)'],
      [
        'version-date',
        11,
        'protocol_updated is still 2026-01-10 though the capability changed (protocol wording changed); set it to the date of this change (YYYY-MM-DD) as you bump protocol_version',
      ],
    ]);
    setVersion(dir, '1.2.4', '2026-01-10');
    commitAll(dir, 'version bumped, date forgotten');
    const dateOnly = await check(dir);
    expect(dateOnly.code).toBe(1);
    expect(dateOnly.gateDiagnostics.map((d) => [d.ruleId, d.message])).toEqual([
      ['version-date', 'protocol_updated is still 2026-01-10 though protocol_version changed 1.2.3 → 1.2.4; set it to the date of this change (YYYY-MM-DD)'],
    ]);
    expect(change(dateOnly.json, 'reports')).toMatchObject({ verdict: 'fail', move: 'patch' });
  });

  for (const testCase of failureCases) {
    it(testCase.name, async ({ expect }) => {
      const dir = scenario();
      testCase.apply(dir);
      commitAll(dir, testCase.name);
      const result = await check(dir);
      expect(result.code).toBe(1);
      expect(result.gateDiagnostics.map((d) => [d.ruleId, d.line, d.message])).toContainEqual([testCase.ruleId, versionLine(dir), testCase.message]);
      expect(result.gateDiagnostics.every((d) => d.ruleId === 'version-bump' || d.ruleId === 'version-date')).toBe(true);
      expect(result.json.gate.passed).toBe(false);
    });
  }

  it('lint errors in the new tree fail the check even when every bump is right', async ({ expect }) => {
    const dir = scenario();
    edit(dir, 'capabilities/notes/PROTOCOL.md', 'id: notes', 'id: memo');
    edit(dir, 'capabilities/notes/PROTOCOL.md', '0.3.0', '0.3.1');
    edit(dir, 'capabilities/notes/PROTOCOL.md', '2026-01-02', '2026-02-01');
    commitAll(dir, 'id no longer matches its folder');
    const result = await check(dir);
    expect(result.gateDiagnostics).toEqual([]);
    expect(result.json.diagnostics).toContainEqual(expect.objectContaining({ ruleId: 'id-matches-folder', severity: 'error' }));
    expect(result.code).toBe(1);
  });

  it('compares the working tree: an uncommitted change counts', async ({ expect }) => {
    const dir = scenario();
    edits.triggerRemoved(dir); // not committed
    const result = await check(dir);
    expect(result.code).toBe(1);
    expect(result.gateDiagnostics.map((d) => d.message)).toEqual([
      'needs major: whenToUse lost `log my work`; protocol_version is still 1.2.3 (expected 2.0.0 or higher)',
      'protocol_updated is still 2026-01-10 though the capability changed (whenToUse lost `log my work`); set it to the date of this change (YYYY-MM-DD) as you bump protocol_version',
    ]);
    expect(git(dir, 'status', '--porcelain', '--', 'capabilities')).toContain('reports/PROTOCOL.md');
  });
});

describe.concurrent('capreg check: what needs no bump, and whole capabilities', () => {
  it('passes an unchanged registry', async ({ expect }) => {
    const dir = scenario();
    const result = await check(dir);
    expect(result.code).toBe(0);
    expect(result.json.gate).toMatchObject({ passed: true, unchanged: 3, changes: [] });
    expect(result.stderr).toContain('0 changed, 0 added, 0 removed, 3 unchanged');
  });

  it('needs no bump for line endings (CRLF) or YAML layout alone', async ({ expect }) => {
    const dir = scenario();
    write(dir, REPORTS_FILE, read(dir, REPORTS_FILE).replace(/\n/g, '\r\n'));
    edit(dir, 'capabilities/notes/PROTOCOL.md', 'requiredToolsets: []', '# nothing needed\nrequiredToolsets:    []');
    commitAll(dir, 'CRLF and YAML layout');
    expect(git(dir, 'show', 'HEAD:capabilities/reports/PROTOCOL.md')).toContain('\r\n');
    const result = await check(dir);
    expect(result.code).toBe(0);
    expect(result.gateDiagnostics).toEqual([]);
    expect(result.json.gate.changes.map((entry) => [entry.id, entry.kind, entry.servedUnchanged])).toEqual([
      ['notes', 'unchanged', true],
      ['reports', 'unchanged', true],
    ]);
  });

  it('passes a version-only bump that moves the date', async ({ expect }) => {
    const dir = scenario();
    setVersion(dir, '1.2.4');
    commitAll(dir, 'republish');
    const result = await check(dir);
    expect(result.code).toBe(0);
    expect(change(result.json, 'reports')).toMatchObject({ kind: 'changed', required: { level: 'none' }, move: 'patch', verdict: 'pass' });
  });

  it('accepts a new capability', async ({ expect }) => {
    const dir = scenario();
    write(dir, 'capabilities/meetings/PROTOCOL.md', ARCHIVE.replace(/archive/gi, 'meetings').replace('2.0.0', '1.0.0'));
    commitAll(dir, 'new capability');
    const result = await check(dir);
    expect(result.code).toBe(0);
    expect(change(result.json, 'meetings')).toMatchObject({ kind: 'added', verdict: 'pass', after: { version: '1.0.0' } });
  });

  it('reports a removed capability as breaking: a warning, which --max-warnings 0 turns into a failure', async ({ expect }) => {
    const dir = scenario();
    fs.rmSync(path.join(dir, 'capabilities/archive'), { recursive: true });
    commitAll(dir, 'remove archive');
    const result = await check(dir);
    expect(result.code).toBe(0);
    expect(result.gateDiagnostics).toEqual([
      expect.objectContaining({
        file: 'capabilities/archive/PROTOCOL.md',
        line: 1,
        severity: 'warning',
        ruleId: 'capability-removed',
        message: 'capability `archive` was removed: agents and user capabilities that load it by id will no longer find it (a breaking change)',
      }),
    ]);
    expect(change(result.json, 'archive')).toMatchObject({ kind: 'removed', verdict: 'breaking', before: { version: '2.0.0' } });
    expect((await check(dir, '--max-warnings', '0')).code).toBe(1);
  });

  it('reports a renamed folder as removed + added, and says it was a rename', async ({ expect }) => {
    const dir = scenario();
    git(dir, 'mv', 'capabilities/archive', 'capabilities/archive-search');
    edit(dir, 'capabilities/archive-search/PROTOCOL.md', 'id: archive', 'id: archive-search');
    commitAll(dir, 'rename archive');
    const result = await check(dir);
    expect(result.code).toBe(0);
    expect(change(result.json, 'archive')).toMatchObject({ kind: 'removed', renamedTo: 'archive-search', verdict: 'breaking' });
    expect(change(result.json, 'archive-search')).toMatchObject({ kind: 'added', renamedFrom: 'archive' });
    expect(result.gateDiagnostics.map((d) => d.message)).toEqual([
      'capability folder `archive` was renamed to `archive-search`: agents and user capabilities that load `archive` by id will no longer find it (a breaking change)',
    ]);
  });
});

describe.concurrent('capreg check: a base file it cannot read fails the check', () => {
  /** Commit what `change` writes as the new base (tag `base` moved), then undo it in the working tree. */
  function rebase(dir: string, file: string, change: (text: string) => string): void {
    const text = read(dir, file);
    write(dir, file, change(text));
    commitAll(dir, 'a base that cannot be read');
    git(dir, 'tag', '-f', 'base');
    write(dir, file, text);
  }
  const padding = `\n${'A paragraph that only makes the file larger. '.repeat(400)}\n`;
  const lowLimit = 'limits:\n  maxFileBytes: 8192\n';
  const registryFiles = (json: JsonOutput): Diagnostic[] => json.diagnostics.filter((d) => d.ruleId === 'registry-files');

  it("a base protocol over the working tree's maxFileBytes: an error, not an added capability that needs no bump", async ({ expect }) => {
    const dir = scenario();
    rebase(dir, REPORTS_FILE, (text) => text + padding);
    edits.wording(dir);
    // Over the lowered limit at the base, under it in the new tree.
    write(dir, 'capreg.config.yaml', lowLimit);
    const result = await check(dir);
    expect(result.code).toBe(1);
    const [refused, ...others] = registryFiles(result.json);
    expect(others).toEqual([]);
    expect(refused).toMatchObject({ file: REPORTS_FILE, line: 1, column: 1, severity: 'error' });
    expect(refused?.message).toMatch(
      /^at base: file is 1\d\.\d KiB, over the 8(\.0)? KiB limit \(limits\.maxFileBytes in capreg\.config\.yaml\).*; the version gate cannot compare this capability$/,
    );
    // Its row says so too: not an added capability that passes.
    expect(change(result.json, 'reports')).toEqual({
      id: 'reports',
      kind: 'changed',
      file: REPORTS_FILE,
      after: { version: '1.2.3', updated: '2026-01-10' },
      required: { level: 'none', reasons: [] },
      verdict: 'fail',
      problems: [refused?.message],
      notCompared: true,
    });
    expect(result.stderr).toContain('1 changed, 0 added, 0 removed, 2 unchanged; 1 failed the version gate');
    const summary = await runCli(['check', '--against', 'base', '--format', 'markdown'], dir);
    expect(summary.stdout).toContain('| `reports` | — → 1.2.3 | — | not compared (see the problems below) | ❌ fail |');
    // Without the lowered limit the same change is the version-bump failure it is.
    fs.rmSync(path.join(dir, 'capreg.config.yaml'));
    const unlimited = await check(dir);
    expect(unlimited.code).toBe(1);
    expect(registryFiles(unlimited.json)).toEqual([]);
    expect(unlimited.gateDiagnostics.map((d) => d.ruleId)).toContain('version-bump');
  });

  it('a base evals file over the limit: an error, since the routing of its requests could not be compared', async ({ expect }) => {
    const dir = scenario();
    const evals = 'capabilities/notes/evals.yaml';
    write(dir, evals, `shouldMatch:\n  - take a note about the meeting\n${'# a comment that only makes the file larger\n'.repeat(300)}`);
    commitAll(dir, 'evals');
    git(dir, 'tag', '-f', 'base');
    fs.rmSync(path.join(dir, evals));
    write(dir, 'capreg.config.yaml', lowLimit);
    const result = await check(dir);
    expect(result.code).toBe(1);
    const [refused, ...others] = registryFiles(result.json);
    expect(others).toEqual([]);
    expect(refused).toMatchObject({ file: evals, line: 1, severity: 'error' });
    expect(refused?.message).toMatch(/^at base: file is .* KiB, over the 8(\.0)? KiB limit .*; the version gate cannot compare the routing of its requests$/);
  });

  it('a base toolsets.yaml over the limit, or that does not parse: an error, since its toolsets could not be compared', async ({ expect }) => {
    const addTool = (root: string): void =>
      edit(root, 'capabilities/toolsets.yaml', '    work_log_list:', '    work_log_export: { action: read, description: Export entries. }\n    work_log_list:');
    const tooLarge = scenario();
    rebase(tooLarge, 'capabilities/toolsets.yaml', (text) => `${text}${'# a comment that only makes the file larger\n'.repeat(300)}`);
    addTool(tooLarge);
    write(tooLarge, 'capreg.config.yaml', lowLimit);
    const large = await check(tooLarge);
    expect(large.code).toBe(1);
    const [overLimit, ...moreLarge] = registryFiles(large.json);
    expect(moreLarge).toEqual([]);
    expect(overLimit).toMatchObject({ file: 'capabilities/toolsets.yaml', line: 1, column: 1, severity: 'error' });
    expect(overLimit?.message).toMatch(/^at base: file is .* KiB, over the 8(\.0)? KiB limit .*; the version gate cannot compare the toolsets$/);

    const broken = scenario();
    rebase(broken, 'capabilities/toolsets.yaml', (text) => `${text}calendar:\n  description: twice\n`);
    addTool(broken);
    const unparsed = await check(broken);
    expect(unparsed.code).toBe(1);
    expect(registryFiles(unparsed.json)).toEqual([
      {
        file: 'capabilities/toolsets.yaml',
        line: 15,
        column: 1,
        endLine: 15,
        endColumn: 9,
        severity: 'error',
        ruleId: 'registry-files',
        message: 'at base: duplicate key "calendar": a key may appear only once in a mapping; the version gate cannot compare the toolsets',
      },
    ]);
    // The new tree's toolsets are fine, so lint reports nothing of its own.
    expect(unparsed.json.gate.lint.errorCount).toBe(0);
  });
});

describe.concurrent('capreg check: capabilities are paired by folder', () => {
  it('a capability that serves an id other than its folder cannot be compared, whatever id-matches-folder says', async ({ expect }) => {
    const dir = scenario();
    write(dir, 'capreg.config.yaml', 'rules:\n  id-matches-folder: off\n');
    // archive moves to z but is still served as `archive`, and its wording changes unbumped.
    git(dir, 'mv', 'capabilities/archive', 'capabilities/z');
    edit(dir, 'capabilities/z/PROTOCOL.md', 'Answer from the archive only.', 'Answer from the archive, or from memory.');
    const result = await check(dir);
    expect(result.code).toBe(1);
    expect(result.json.diagnostics.filter((d) => d.severity === 'error')).toEqual([
      expect.objectContaining({
        file: 'capabilities/z/PROTOCOL.md',
        ruleId: 'version-bump',
        message:
          "serves id `archive` from folder `z`; the version gate pairs capabilities by folder, so it cannot compare this capability (make the id its folder's name)",
      }),
    ]);
    expect(change(result.json, 'z')).toMatchObject({ kind: 'changed', verdict: 'fail', notCompared: true });
    // With the rule on, lint says it once, and the gate does not say it again.
    fs.rmSync(path.join(dir, 'capreg.config.yaml'));
    const linted = await check(dir);
    expect(linted.json.diagnostics.filter((d) => d.file === 'capabilities/z/PROTOCOL.md' && d.severity === 'error').map((d) => d.ruleId)).toEqual([
      'id-matches-folder',
    ]);
  });
});

describe.concurrent('capreg check: two folders of one id at the base', () => {
  // Found by an attack pass: the base's catalog went to the ranker with the id twice, and the check
  // died with "internal error: Segment: duplicate capability id" and a stack trace (exit 2).
  it('is an error of the gate, not a crash of the routing comparison', async ({ expect }) => {
    const dir = scenario();
    fs.cpSync(path.join(dir, 'capabilities/archive'), path.join(dir, 'capabilities/twin'), { recursive: true });
    commitAll(dir, 'a second folder serving archive');
    git(dir, 'tag', '-f', 'base');
    fs.rmSync(path.join(dir, 'capabilities/twin'), { recursive: true });
    const result = await check(dir);
    expect(result.code).toBe(1);
    expect(result.json.diagnostics.filter((d) => d.severity === 'error')).toEqual([
      expect.objectContaining({
        file: 'capabilities/twin/PROTOCOL.md',
        ruleId: 'version-bump',
        message:
          "at base: serves id `archive` from folder `twin`; the version gate pairs capabilities by folder, so it cannot compare this capability (make the id its folder's name)",
      }),
    ]);
  });
});

describe.concurrent('capreg check: a registry root reached through a link', () => {
  // Found by an attack pass: a pull request moved the registry (`git mv reg other`), left a link
  // `reg -> other` and changed a protocol without a bump. Git answers for the folder a link points
  // to, so the base was read at other/, where it has nothing: every protocol "added", the gate passed.
  function movedBehindLink(): string {
    const dir = tempDir();
    track(dir);
    initRepository(dir);
    fs.cpSync(path.join(baseDir(), 'capabilities'), path.join(dir, 'reg/capabilities'), { recursive: true });
    commitAll(dir, 'registry in reg/');
    git(dir, 'tag', 'base');
    git(dir, 'mv', 'reg', 'other');
    fs.symlinkSync('other', path.join(dir, 'reg'));
    edits.triggerRemoved(path.join(dir, 'other'));
    commitAll(dir, 'move the registry, leave a link, drop a trigger');
    return dir;
  }

  it('is refused (exit 2) whether the link is named by --root or was entered with cd', async ({ expect }) => {
    const dir = movedBehindLink();
    for (const [cwd, args, env] of [
      [dir, ['--root', 'reg'], {}],
      // The system gives the working folder with links resolved; the shell's $PWD keeps the link.
      [path.join(dir, 'other'), [], { PWD: path.join(dir, 'reg') }],
    ] as const) {
      const result = await runCli(['check', '--against', 'base', ...args], cwd, env);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`is reached through ${path.join(dir, 'reg')}, a link inside the repository`);
      expect(result.stderr).toContain(`--root ${path.join(dir, 'other')}`);
    }
  });

  it('compares as usual when the folder itself is named, or the repository is reached through a link outside it', async ({ expect }) => {
    const dir = movedBehindLink();
    const outside = tempDir();
    track(outside);
    fs.symlinkSync(dir, path.join(outside, 'checkout'));
    for (const root of [path.join(dir, 'other'), path.join(outside, 'checkout', 'other')]) {
      const result = await runCli(['check', '--against', 'base', '--root', root], dir);
      // The registry moved: at the base, other/ had nothing, so each capability is new there.
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/0 changed, \d+ added, 0 removed/);
    }
  });
});

describe.concurrent('capreg check: a parse cache in the pull request', () => {
  /** Make every cached document of `from`'s bytes claim `to`'s: what a committed, hand-made cache can do. */
  function forgeCache(root: string, from: string, to: string): number {
    const [before, after] = [from, to].map((text) => createHash('sha256').update(text).digest('hex'));
    const folder = path.join(root, '.capreg/cache/documents');
    let forged = 0;
    for (const name of fs.readdirSync(folder)) {
      const data = fs.readFileSync(path.join(folder, name));
      const headerEnd = data.indexOf(10) + 1;
      const body = Buffer.from(
        data
          .subarray(headerEnd + 32)
          .toString('latin1')
          .replaceAll(before!, after!),
        'latin1',
      );
      if (body.equals(data.subarray(headerEnd + 32))) continue;
      forged += 1;
      fs.writeFileSync(path.join(folder, name), Buffer.concat([data.subarray(0, headerEnd), createHash('sha256').update(body).digest(), body]));
    }
    return forged;
  }

  it('a cached document the file does not parse to stops the check (exit 2) instead of hiding the change', async ({ expect }) => {
    const dir = scenario();
    const original = read(dir, REPORTS_FILE);
    // The cache learns the base text, then the file changes (no bump) and the cache is made to claim the new bytes.
    expect((await runCli(['lint'], dir)).code).toBe(0);
    edits.wording(dir);
    expect(forgeCache(dir, original, read(dir, REPORTS_FILE))).toBe(1);
    const forged = await runCli(['check', '--against', 'base'], dir);
    expect(forged.code).toBe(2);
    expect(forged.stderr).toBe(
      `capreg check: the parse cache holds a document for ${REPORTS_FILE} that parsing the file again did not confirm (was .capreg/cache changed or committed?); ` +
        'nothing was checked: delete .capreg/cache, or run with --no-cache\n',
    );
    // Without the cache, the change is the version-bump failure it is; and a cache capreg wrote itself is used as before.
    expect((await check(dir, '--no-cache')).gateDiagnostics.map((d) => d.ruleId)).toContain('version-bump');
    fs.rmSync(path.join(dir, '.capreg'), { recursive: true });
    expect((await runCli(['lint'], dir)).code).toBe(0);
    expect((await check(dir)).gateDiagnostics.map((d) => d.ruleId)).toContain('version-bump');
  });

  // Through the real executable: only a compiled parse worker can be stopped at its budget (from the
  // TypeScript sources, the parse runs inline and to its end).
  it('a cached document whose file is over the parse budget when parsed again stops the check (exit 2), and --no-cache reports it', ({ expect }) => {
    const dir = scenario();
    write(dir, 'capreg.config.yaml', 'limits:\n  maxFileBytes: 8388608\n  maxParseMs: 1500\n');
    const original = read(dir, REPORTS_FILE);
    expect(runBin(['lint'], { cwd: dir }).code).toBe(0);
    // A table of ~3 MiB: remark-gfm needs tens of seconds for it, far past the 1.5 s budget; the cache is made to claim it parsed.
    const row = '| x | y |\n';
    write(dir, REPORTS_FILE, `${original}\n| Tool | Use |\n| --- | --- |\n${row.repeat(Math.ceil((3 * 1024 * 1024) / row.length))}`);
    expect(forgeCache(dir, original, read(dir, REPORTS_FILE))).toBe(1);
    expect(runBin(['check', '--against', 'base'], { cwd: dir })).toEqual({
      code: 2,
      stdout: '',
      stderr:
        `capreg check: ${REPORTS_FILE}: parsing this file took over 1500 ms (limits.maxParseMs in capreg.config.yaml), so it was stopped and not checked; ` +
        'simplify the Markdown (long runs of brackets or table rows, deep nesting) or split the file. ' +
        "It was parsed again to confirm the parse cache's document of it, so nothing was checked: run with --no-cache to have it reported as over the budget\n",
    });
    const uncached = runBin(['check', '--against', 'base', '--no-cache', '--format', 'json'], { cwd: dir });
    expect(uncached.code).toBe(1);
    const diagnostics = (JSON.parse(uncached.stdout) as JsonOutput).diagnostics.map((d) => `${d.file}:${d.line}:${d.column} ${d.ruleId}`);
    expect(diagnostics).toContain(`${REPORTS_FILE}:1:1 registry-files`);
  }, 60_000);

  it('a committed .capreg/ stops the check (exit 2): a build from the commit would trust it', async ({ expect }) => {
    const dir = scenario();
    expect((await runCli(['lint'], dir)).code).toBe(0);
    git(dir, 'add', '-f', '.capreg');
    const result = await runCli(['check', '--against', 'base'], dir);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        "capreg check: .capreg/ (capreg's caches) is committed to Git, and a build from this commit would trust it; remove it with `git rm -r --cached .capreg` and keep .capreg/ in .gitignore\n",
    });
    git(dir, 'rm', '-r', '-q', '--cached', '.capreg');
    expect((await runCli(['check', '--against', 'base'], dir)).code).toBe(0);
  });
});

describe.concurrent('capreg check: output', () => {
  it('appends the markdown summary to --summary FILE and prints github annotations', async ({ expect }) => {
    const dir = scenario();
    edits.requiredToolsetAdded(dir);
    setVersion(dir, '1.2.4');
    commitAll(dir, 'too small');
    const summary = path.join(dir, 'summary.md');
    fs.writeFileSync(summary, '# Earlier step\n\n');
    const result = await runCli(['check', '--against', 'base', '--format', 'github', '--summary', 'summary.md'], dir);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      '::error file=capabilities/reports/PROTOCOL.md,line=11,col=1,endLine=11,endColumn=24,title=version-bump::needs major: requiredToolsets gained `billing`; got patch 1.2.3 → 1.2.4 (expected 2.0.0 or higher)\n',
    );
    const markdown = fs.readFileSync(summary, 'utf8');
    expect(markdown.startsWith('# Earlier step\n\n### capreg protocol gate: ❌ failed\n')).toBe(true);
    expect(markdown).toContain('| `reports` | 1.2.3 → 1.2.4 | major | requiredToolsets gained `billing` | ❌ fail (got patch) |');
  });

  it('never appends the summary through a link inside the registry root that leads out of it', async ({ expect }) => {
    const dir = scenario();
    const outside = tempDir();
    fs.writeFileSync(path.join(outside, 'profile'), 'keep me\n');
    // What a pull request can commit where CI names --summary summary.md.
    fs.symlinkSync(path.join(outside, 'profile'), path.join(dir, 'summary.md'));
    commitAll(dir, 'a link named summary.md');
    const result = await runCli(['check', '--against', 'base', '--summary', 'summary.md'], dir);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: `capreg check: --summary summary.md: summary.md: symbolic link points outside the registry root (to ${path.join(outside, 'profile')}); refused: put the file itself inside the registry\n`,
    });
    expect(fs.readFileSync(path.join(outside, 'profile'), 'utf8')).toBe('keep me\n');
    fs.rmSync(outside, { recursive: true, force: true });
  });

  it('quotes a heading as long as the file cut to 100 characters, in every reason and message', async ({ expect }) => {
    const dir = scenario();
    const heading = Array.from({ length: 30_000 }, (_, index) => `w${index}`).join(' ');
    edit(dir, REPORTS_FILE, '## Rules', `## ${heading}\n\n## Rules`);
    const { code, json, gateDiagnostics } = await check(dir);
    expect(code).toBe(1);
    const quoted = `section added: \`${heading.slice(0, 99)}…\``;
    expect(change(json, 'reports')?.required.reasons.map((reason) => reason.text)).toEqual([quoted, 'protocol wording changed']);
    // Each message repeated the 200 KB heading: the JSON output was over 1 MB, stylish and github over 400 KB.
    expect(gateDiagnostics.map((d) => d.message)).toEqual([
      `needs minor: ${quoted}; protocol_version is still 1.2.3 (expected 1.3.0 or higher)`,
      `protocol_updated is still 2026-01-10 though the capability changed (${quoted}); set it to the date of this change (YYYY-MM-DD) as you bump protocol_version`,
    ]);
    const stylish = await runCli(['check', '--against', 'base'], dir);
    expect(stylish.stdout.length).toBeLessThan(5_000);
  });

  it('prints stylish by default, with the gate diagnostics at the protocol_version line', async ({ expect }) => {
    const dir = scenario();
    edits.wording(dir);
    const result = await runCli(['check', '--against', 'base'], dir);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('capabilities/reports/PROTOCOL.md\n  11:1  error  needs patch: protocol wording changed;');
    expect(result.stdout).toContain('version-bump');
  });
});

describe.concurrent('capreg check: Git problems are exit 2 with a way out', () => {
  it('a ref that does not exist', async ({ expect }) => {
    const result = await runCli(['check', '--against', 'no-such-branch'], scenario());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown Git ref "no-such-branch"');
  });

  it('a mistyped branch, tag or remote branch suggests the closest names in the repository', async ({ expect }) => {
    const dir = scenario();
    git(dir, 'tag', 'release-1.0');
    git(dir, 'branch', 'maintenance');
    git(dir, 'remote', 'add', 'origin', 'https://example.invalid/registry.git');
    git(dir, 'update-ref', 'refs/remotes/origin/main', 'HEAD');
    for (const [typo, names] of [
      ['mian', '"main"'],
      ['bsae', '"base"'],
      ['release-1.1', '"release-1.0"'],
      ['origin/mian', '"origin/main"'],
      ['maintenence', '"maintenance"'],
      ['HAED', '"HEAD"'],
    ] as const) {
      const result = await runCli(['check', '--against', typo], dir);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`unknown Git ref "${typo}": no commit by that name in this repository; did you mean ${names}? Otherwise `);
    }
    const unrelated = await runCli(['check', '--against', 'something-else-entirely'], dir);
    expect(unrelated.code).toBe(2);
    expect(unrelated.stderr).not.toContain('did you mean');
  });

  it('a remote branch that was not fetched says how to fetch it', async ({ expect }) => {
    const dir = scenario();
    git(dir, 'remote', 'add', 'origin', 'https://example.invalid/registry.git');
    const result = await runCli(['check', '--against', 'origin/main'], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('fetch it with `git fetch origin +refs/heads/main:refs/remotes/origin/main`');
  });

  it('an ambiguous ref (a tag named like the remote branch, at the change itself) is refused, naming each ref in full', async ({ expect }) => {
    const dir = scenario();
    git(dir, 'update-ref', 'refs/remotes/origin/main', 'HEAD');
    edits.wording(dir);
    commitAll(dir, 'unbumped wording');
    // Git takes the tag first: the gate compared the change with itself and passed it (exit 0).
    git(dir, 'tag', 'origin/main', 'HEAD');
    const ambiguous = await runCli(['check', '--against', 'origin/main'], dir);
    expect(ambiguous.stderr).toBe(
      'capreg check: --against "origin/main" is ambiguous: more than one ref is named "origin/main" (refs/remotes/origin/main, refs/tags/origin/main), ' +
        'which git resolves to one of them without a word; name the one you mean in full ' +
        '(--against refs/remotes/origin/main or --against refs/tags/origin/main), or delete the others\n',
    );
    expect(ambiguous.code).toBe(2);
    expect((await runCli(['check', '--against', 'origin/main~0'], dir)).code).toBe(2);
    const named = await runCli(['check', '--against', 'refs/remotes/origin/main'], dir);
    expect(named.stderr).toContain('1 failed the version gate');
    expect(named.code).toBe(1);
    // A branch named like the start of the base's commit id, at the change: git takes the branch.
    const short = git(dir, 'rev-parse', '--short=9', 'origin/main^{commit}').trim();
    git(dir, 'branch', short, 'HEAD');
    const prefix = await runCli(['check', '--against', short], dir);
    expect(prefix.stderr).toBe(
      `capreg check: --against "${short}" is ambiguous: "${short}" names refs/heads/${short} and also begins the id of a commit, ` +
        `which git resolves to the ref without a word; name the one you mean in full (--against refs/heads/${short}, or the whole commit id)\n`,
    );
    expect(prefix.code).toBe(2);
  });

  it('a whole commit id is taken as the commit, even beside a ref of that name, as git takes it', async ({ expect }) => {
    // CI passes the base's whole id (github.event.pull_request.base.sha); git resolves a 40-hex name to
    // the object whatever refs are named so, but warns. A tag named like it, at the change, had the
    // gate refuse the run (exit 2) telling the user to pass "the whole commit id" they had passed.
    const dir = scenario();
    const base = git(dir, 'rev-parse', 'base^{commit}').trim();
    edits.wording(dir);
    commitAll(dir, 'unbumped wording');
    git(dir, 'tag', base, 'HEAD');
    const result = await runCli(['check', '--against', base], dir);
    expect(result.stderr).toContain('1 failed the version gate');
    expect(result.code).toBe(1);
  });

  it('a ref named like one in the repository folder (a tag HEAD) is refused as ambiguous without calling it a commit id', async ({ expect }) => {
    const dir = scenario();
    edits.wording(dir);
    commitAll(dir, 'unbumped wording');
    git(dir, 'tag', 'HEAD', 'base');
    const result = await runCli(['check', '--against', 'HEAD'], dir);
    expect(result.stderr).not.toContain('begins the id of a commit');
    expect(result.stderr).toContain('--against "HEAD" is ambiguous: "HEAD" names refs/tags/HEAD and also HEAD of the repository');
    expect(result.code).toBe(2);
  });

  it('a shallow clone without the base commit, and the fetch the message gives makes it work', async ({ expect }) => {
    const origin = scenario();
    git(origin, 'checkout', '-q', '-b', 'feature');
    edits.wording(origin);
    setVersion(origin, '1.2.4');
    commitAll(origin, 'second commit');
    const clone = path.join(tempDir(), 'clone');
    track(path.dirname(clone));
    git(path.dirname(clone), 'clone', '-q', '--depth', '1', '--branch', 'feature', `file://${origin}`, clone);
    expect(git(clone, 'rev-parse', '--is-shallow-repository').trim()).toBe('true');

    const parent = await runCli(['check', '--against', 'HEAD~1'], clone);
    expect(parent.code).toBe(2);
    expect(parent.stderr).toContain('this is a shallow clone and the base commit was not fetched');
    expect(parent.stderr).toContain('`git fetch --unshallow`');
    expect(parent.stderr).toContain('`actions/checkout` and `fetch-depth: 0`');

    const branch = await runCli(['check', '--against', 'origin/main'], clone);
    expect(branch.code).toBe(2);
    const fetch = /`(git fetch --unshallow origin \S+)`/.exec(branch.stderr)?.[1];
    expect(fetch).toBe('git fetch --unshallow origin +refs/heads/main:refs/remotes/origin/main');
    git(clone, ...fetch!.split(' ').slice(1));
    const fetched = await runCli(['check', '--against', 'origin/main'], clone);
    expect(fetched.stderr).toContain('1 changed, 0 added, 0 removed, 2 unchanged; every version bump is right');
    expect(fetched.code).toBe(0);
  });

  it('a partial clone whose remote does not answer: the silent git is stopped (--git-timeout), exit 2', async ({ expect }) => {
    const origin = scenario();
    edits.wording(origin);
    setVersion(origin, '1.2.4');
    commitAll(origin, 'second commit');
    // Without the base's blobs: the gate fetches them from origin.
    const { clone } = partialClone(origin);
    git(clone, 'config', 'remote.origin.uploadpack', 'sleep 30; git-upload-pack');

    const started = performance.now();
    const stalled = runBin(['check', '--against', 'base', '--git-timeout', '1'], { cwd: clone });
    expect(stalled.stderr).toMatch(/^capreg check: git [a-z-]+ gave no output for 1 s and was stopped \(--git-timeout\): git may be waiting for a remote/);
    expect(stalled.code).toBe(2);
    expect(performance.now() - started).toBeLessThan(20_000);

    // The same clone with a remote that answers: the fetch is what the gate waited for.
    git(clone, 'config', '--unset', 'remote.origin.uploadpack');
    const answered = runBin(['check', '--against', 'base', '--git-timeout', '30'], { cwd: clone });
    expect(answered.stderr).toContain('1 changed, 0 added, 0 removed, 2 unchanged; every version bump is right');
    expect(answered.code).toBe(0);

    for (const value of ['0', '3601', '1.5']) {
      const refused = await runCli(['check', '--against', 'base', '--git-timeout', value], clone);
      expect(refused.stderr).toContain(`--git-timeout must be a whole number from 1 to 3600, not "${value}"`);
      expect(refused.code).toBe(2);
    }
  });

  it('a partial clone whose remote asks for a password: git does not prompt for one, it fails and says so', async ({ expect }) => {
    const origin = scenario();
    edits.wording(origin);
    setVersion(origin, '1.2.4');
    commitAll(origin, 'second commit');
    const { clone } = partialClone(origin);
    // The base's blobs are then fetched from a remote that wants credentials.
    const server = createServer((request, response) => {
      response.writeHead(401, { 'WWW-Authenticate': 'Basic realm="capreg"', 'Content-Length': '0' }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      git(clone, 'config', 'remote.origin.url', `http://127.0.0.1:${(server.address() as AddressInfo).port}/registry.git`);
      const started = performance.now();
      const asked = await runCli(['check', '--against', 'base', '--git-timeout', '30'], clone);
      expect(asked.stderr).toMatch(
        /^capreg check: git ls-tree [0-9a-f]{12} failed: could not read Username for 'http:\/\/127\.0\.0\.1:\d+': terminal prompts disabled/,
      );
      expect(asked.code).toBe(2);
      expect(performance.now() - started).toBeLessThan(20_000);
    } finally {
      server.close();
    }
  });

  it("a partial clone: the base's files that are not there yet come in one fetch, not one fetch each", ({ expect }) => {
    const origin = scenario();
    edits.wording(origin);
    setVersion(origin, '1.2.4');
    edits.notesWording(origin);
    commitAll(origin, 'second commit');
    for (const full of [true, false]) {
      const { result, fetches } = checkInClone(origin, { full });
      expect(result.stderr).toContain('2 changed, 0 added, 0 removed, 1 unchanged; every version bump is right');
      expect(result.code).toBe(0);
      // The base's two protocols that changed: fetched together (a full clone has them already).
      expect(fetches).toBe(full ? 0 : 1);
    }
  });

  it("a partial clone: the base's files come in one fetch as well when the base's tip changed nothing under capabilities/", ({ expect }) => {
    const origin = scenario();
    // The base is a commit that only touched a file outside the registry, as a branch's tip often is.
    write(origin, 'README.md', 'The registry.\n');
    commitAll(origin, 'readme');
    git(origin, 'tag', '-f', 'base');
    edits.wording(origin);
    setVersion(origin, '1.2.4');
    edits.notesWording(origin);
    commitAll(origin, 'second commit');
    const { result, fetches } = checkInClone(origin);
    expect(result.stderr).toContain('2 changed, 0 added, 0 removed, 1 unchanged; every version bump is right');
    expect(result.code).toBe(0);
    expect(fetches).toBe(1);
  });

  it("a partial clone: the base's files under a folder link's target outside capabilities/ come in one fetch too", ({ expect }) => {
    const origin = scenario();
    shareNotes(origin);
    commitAll(origin, 'notes shared');
    git(origin, 'tag', '-f', 'base');
    // The clone's checkout has the new files, not the base's.
    writeSharedReferences(origin, 'Revised reference');
    edits.notesWording(origin);
    commitAll(origin, 'second commit');
    const { result, fetches } = checkInClone(origin);
    expect(result.stderr).toContain('1 changed, 0 added, 0 removed, 2 unchanged; every version bump is right');
    expect(result.code).toBe(0);
    // One fetch for shared/notes (capabilities/ holds nothing the checkout lacks): not one for each of its five files.
    expect(fetches).toBe(1);
  });

  it("a partial clone: a link whose target holds a line break does not keep the other links' files from one fetch", ({ expect }) => {
    const origin = scenario();
    shareNotes(origin);
    // Passed to git on one line each, its target would read as two (the second an option).
    fs.symlinkSync('../shared/notes\n--all', path.join(origin, 'capabilities/odd'));
    commitAll(origin, 'notes shared');
    git(origin, 'tag', '-f', 'base');
    fs.rmSync(path.join(origin, 'capabilities/odd'));
    // The clone's checkout has the new files, not the base's.
    writeSharedReferences(origin, 'Revised reference');
    edits.notesWording(origin);
    commitAll(origin, 'second commit');
    const { result, fetches } = checkInClone(origin);
    expect(result.stderr).toContain('1 changed, 0 added, 0 removed, 2 unchanged; every version bump is right');
    // One fetch for capabilities/ (the link the checkout lacks), one for shared/notes: not one for each of its five files.
    expect(fetches).toBe(2);
  });

  it('a partial clone whose base holds more files than limits.maxFiles: refused after one fetch, not one fetch per file', ({ expect }) => {
    const origin = scenario();
    write(origin, 'capreg.config.yaml', 'limits:\n  maxFiles: 200\n');
    const references = (text: string): void => {
      for (let index = 0; index < 400; index += 1) write(origin, `capabilities/notes/references/r${index}.md`, `${text} ${index}.\n`);
    };
    references('Reference');
    commitAll(origin, 'many references');
    git(origin, 'tag', '-f', 'base');
    references('Revised reference');
    commitAll(origin, 'second commit');
    const { result, fetches } = checkInClone(origin);
    expect(result.stderr).toContain('holds more than 200 files, over limits.maxFiles');
    expect(result.code).toBe(2);
    // One fetch of the first 201, not one for each (about 200 packs); git ls-tree, which runs a pipe's
    // worth ahead of the listing until it is stopped, fetches some more on its own (about 90 here).
    expect(fetches).toBeLessThan(150);
  });

  it('a registry outside any Git repository', async ({ expect }) => {
    const dir = tempDir();
    track(dir);
    fs.cpSync(path.join(baseDir(), 'capabilities'), path.join(dir, 'capabilities'), { recursive: true });
    const result = await runCli(['check', '--against', 'main'], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('is not inside a Git repository');
  });

  it('--against is required', async ({ expect }) => {
    const result = await runCli(['check'], scenario());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--against <git-ref> is required');
  });
});

describe.concurrent('capreg check: a registry in a subfolder of its repository', () => {
  it('reads the base from <prefix>/capabilities and reports paths relative to the registry root', async ({ expect }) => {
    const dir = tempDir();
    track(dir);
    initRepository(dir);
    write(dir, 'README.md', 'A monorepo.\n');
    fs.cpSync(path.join(baseDir(), 'capabilities'), path.join(dir, 'registry/capabilities'), { recursive: true });
    commitAll(dir, 'registry in a subfolder');
    git(dir, 'tag', 'base');
    edits.triggerRemoved(path.join(dir, 'registry'));
    commitAll(dir, 'drop a trigger');
    for (const [cwd, args] of [
      [dir, ['--root', 'registry']],
      [path.join(dir, 'registry/capabilities/reports'), []],
    ] as const) {
      const result = await check(cwd, ...args);
      expect(result.code).toBe(1);
      expect(result.gateDiagnostics.map((d) => [d.file, d.message])).toEqual([
        [REPORTS_FILE, 'needs major: whenToUse lost `log my work`; protocol_version is still 1.2.3 (expected 2.0.0 or higher)'],
        [
          REPORTS_FILE,
          'protocol_updated is still 2026-01-10 though the capability changed (whenToUse lost `log my work`); set it to the date of this change (YYYY-MM-DD) as you bump protocol_version',
        ],
      ]);
      expect(result.json.gate.unchanged).toBe(2);
    }
  });
});

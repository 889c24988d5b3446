// The gate through the real executable (bin/capreg.js over the lib/ that globalSetup compiled):
// exit codes and stdout/stderr as CI sees them.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { INLINE_LIMIT } from '../../cli/parse-workers.js';
import { commitAll, createBaseRepository, edit, git, NOTES, REPORTS_FILE, write } from './fixture.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/capreg.js');
const dir = createBaseRepository();
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function capreg(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return capregIn(dir, ...args);
}

function capregIn(cwd: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

it('fails a change without a bump with exit 1 and a GitHub annotation at the protocol_version line', () => {
  edit(dir, REPORTS_FILE, '  - log my work\n', '');
  commitAll(dir, 'drop a trigger');
  const result = capreg('check', '--against', 'base', '--format', 'github');
  expect(result.stdout).toBe(
    '::error file=capabilities/reports/PROTOCOL.md,line=10,col=1,endLine=10,endColumn=24,title=version-bump::needs major: whenToUse lost `log my work`; protocol_version is still 1.2.3 (expected 2.0.0 or higher)\n' +
      '::error file=capabilities/reports/PROTOCOL.md,line=10,col=1,endLine=10,endColumn=24,title=version-date::protocol_updated is still 2026-01-10 though the capability changed (whenToUse lost `log my work`); set it to the date of this change (YYYY-MM-DD) as you bump protocol_version\n',
  );
  expect(result.stderr).toMatch(/against base \([0-9a-f]{12}\): 1 changed, 0 added, 0 removed, 2 unchanged; 1 failed the version gate/);
  expect(result.status).toBe(1);
});

it('exits 2 for a ref that does not exist', () => {
  const result = capreg('check', '--against', 'release-1');
  expect(result.status).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr).toContain('capreg check: unknown Git ref "release-1"');
});

it('exits 2 for a mistyped ref and suggests the closest names', () => {
  const result = capreg('check', '--against', 'mian');
  expect(result.status).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr).toContain(
    'capreg check: unknown Git ref "mian": no commit by that name in this repository; did you mean "main"? Otherwise check the name',
  );
});

it('offers the formats of one table: check adds markdown to the four of lint, in help and in the refusal', () => {
  const help = capreg('check', '--help');
  expect(help.status).toBe(0);
  expect(help.stdout).toContain('output format: stylish, json, github, sarif or markdown');
  const lintHelp = capreg('lint', '--help');
  expect(lintHelp.stdout).toContain('output format: stylish, json, github or sarif');
  const unknown = capreg('check', '--against', 'base', '--format', 'html');
  expect(unknown).toEqual({ status: 2, stdout: '', stderr: 'capreg check: unknown --format "html"; expected one of stylish, json, github, sarif, markdown\n' });
  const gateOnly = capreg('lint', '--format', 'markdown');
  expect(gateOnly).toEqual({ status: 2, stdout: '', stderr: 'capreg lint: unknown --format "markdown"; expected one of stylish, json, github, sarif\n' });
});

it('writes the same markdown to --summary as --format markdown prints', () => {
  const summary = path.join(dir, 'summary.md');
  const printed = capreg('check', '--against', 'base', '--format', 'markdown', '--summary', summary);
  expect(printed.status).toBe(1);
  expect(printed.stdout).toMatch(/^### capreg protocol gate: ❌ failed\n/);
  expect(fs.readFileSync(summary, 'utf8')).toBe(printed.stdout);
  fs.rmSync(summary);
});

it('refuses a --summary that is not a regular file instead of waiting on it (a FIFO with no reader)', () => {
  const fifo = path.join(dir, 'summary.fifo');
  spawnSync('mkfifo', [fifo]);
  const result = spawnSync(process.execPath, [BIN, 'check', '--against', 'base', '--summary', fifo], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  fs.rmSync(fifo);
  expect(result.signal).toBeNull();
  expect(result.status).toBe(2);
  expect(result.stderr).toMatch(new RegExp(`capreg check: --summary ${fifo.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: cannot write .*ENXIO`));
});

it('gives the same report with --jobs 1 (one thread, routing included) as with the default threads, and refuses --jobs 0', () => {
  edit(dir, REPORTS_FILE, 'description: Writes work reports from the work log.', 'description: Writes weekly summaries of the work log.');
  const threaded = capreg('check', '--against', 'base', '--format', 'json');
  const single = capreg('check', '--against', 'base', '--format', 'json', '--jobs', '1');
  expect(threaded.stderr).toMatch(/\d+ of \d+ eval requests moved/);
  expect(single).toEqual(threaded);
  const refused = capreg('check', '--against', 'base', '--jobs', '0');
  expect(refused).toEqual({ status: 2, stdout: '', stderr: 'capreg check: --jobs must be a whole number from 1 to 256, not "0"\n' });
});

/**
 * `capreg check --against base --jobs 1` (one thread per parse, the routing on the main thread) in
 * `dir`, and the parse worker threads it started: with --cpu-prof each thread writes a profile of
 * its own when it ends, named CPU.<date>.<time>.<pid>.<thread>.<n>, thread 0 the main one.
 */
function checkCountingWorkers(dir: string): { result: ReturnType<typeof capreg>; workers: number } {
  const profiles = path.join(dir, '.profiles');
  const result = spawnSync(process.execPath, ['--cpu-prof', '--cpu-prof-dir', profiles, BIN, 'check', '--against', 'base', '--jobs', '1'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 60_000,
  });
  const workers = fs.readdirSync(profiles).filter((name) => !/^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(name)).length;
  return { result: { status: result.status, stdout: result.stdout, stderr: result.stderr }, workers };
}

const DESCRIPTION = 'description: Writes work reports from the work log.';

it("starts no parse worker it does not use: one for the new tree, one for the base's changed file", () => {
  const scenario = createBaseRepository();
  try {
    // More protocols than one worker's share (INLINE_LIMIT): the new tree's parse keeps no worker, so
    // the count is the same whichever of Git's diff and that parse ends first (of three protocols,
    // a parse over before Git answers would hand its kept worker to the base's changed file: one).
    for (let i = 0; i <= INLINE_LIMIT; i += 1) {
      write(scenario, `capabilities/extra-${i}/PROTOCOL.md`, NOTES.replace('id: notes', `id: extra-${i}`).replace('name: Notes', `name: Extra ${i}`));
    }
    commitAll(scenario, 'more protocols');
    git(scenario, 'tag', '-f', 'base');
    edit(scenario, REPORTS_FILE, DESCRIPTION, 'description: Writes weekly summaries of the work log.');
    const { result, workers } = checkCountingWorkers(scenario);
    expect(result.stderr).toMatch(new RegExp(`1 changed, 0 added, 0 removed, ${INLINE_LIMIT + 3} unchanged`));
    expect(result.status).toBe(1);
    // The new tree's protocols in one worker, the base's changed one in another. A spare loaded once
    // both had begun would be a third, never used.
    expect(workers).toBe(2);
  } finally {
    fs.rmSync(scenario, { recursive: true, force: true });
  }
});

it("parses the base's changed file in the worker the new tree's parse kept, with the base's parse cache", () => {
  const scenario = createBaseRepository();
  try {
    expect(capregIn(scenario, 'lint').status).toBe(0);
    edit(scenario, REPORTS_FILE, DESCRIPTION, 'description: Writes weekly summaries of the work log.');
    // Git's diff of the working tree against the base waits on the hook, as a large base tree keeps
    // the check waiting on Git: the new tree's parse of its one changed file is over by then.
    git(scenario, 'config', 'core.fsmonitor', 'sleep 3; false');
    const { result, workers } = checkCountingWorkers(scenario);
    expect(result.stderr).toMatch(/1 changed, 0 added, 0 removed, 2 unchanged/);
    expect(result.status).toBe(1);
    // One worker parsed both versions of the changed file: the code before loaded a second.
    expect(workers).toBe(1);
  } finally {
    fs.rmSync(scenario, { recursive: true, force: true });
  }
});

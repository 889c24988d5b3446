// Which base files the gate parses: Git's list of changed files only starts their parse early
// (cli/commands/check.ts, parseEarly); the bytes decide. With core.autocrlf=true, Git calls a file
// checked out with CRLF unchanged although its bytes differ from the blob, so the gate must still
// parse the base blob (here through the real executable, whose parse runs in worker threads).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';
import { edit, gateScenarios, git, read, REPORTS_FILE, setVersion, write } from './fixture.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/capreg.js');
const { scenario } = gateScenarios();

interface Output {
  gate: { passed: boolean; changes: { id: string; kind: string; servedUnchanged?: boolean }[] };
}

function check(dir: string): { code: number | null; json: Output; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, 'check', '--against', 'base', '--format', 'json', '--no-cache'], { cwd: dir, encoding: 'utf8' });
  return { code: result.status, json: JSON.parse(result.stdout) as Output, stderr: result.stderr };
}

describe.concurrent('capreg check: the base documents', () => {
  it('a file Git calls unchanged (core.autocrlf) but whose bytes differ is parsed from the base', ({ expect }) => {
    const dir = scenario();
    git(dir, 'config', 'core.autocrlf', 'true');
    write(dir, REPORTS_FILE, read(dir, REPORTS_FILE).replace(/\n/g, '\r\n'));
    expect(git(dir, 'diff', '--name-only', 'base', '--', 'capabilities')).toBe('');
    const result = check(dir);
    expect(result.json.gate.changes.map((change) => [change.id, change.kind, change.servedUnchanged])).toEqual([['reports', 'unchanged', true]]);
    expect(result.code).toBe(0);
  });

  it('a file Git lists as changed, uncommitted, is compared with its base version', ({ expect }) => {
    const dir = scenario();
    edit(dir, REPORTS_FILE, '  - log my work\n', '');
    setVersion(dir, '2.0.0');
    expect(git(dir, 'diff', '--name-only', 'base', '--', 'capabilities').trim()).toBe(REPORTS_FILE);
    const result = check(dir);
    expect(result.json.gate.changes.filter((change) => change.kind !== 'unchanged').map((change) => [change.id, change.kind])).toEqual([
      ['reports', 'changed'],
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('1 changed, 0 added, 0 removed, 2 unchanged; every version bump is right');
  });
});

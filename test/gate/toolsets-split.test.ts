// capreg check with split toolsets: the base is read from Git in either layout, and moving toolsets
// between files changes nothing the gate sees, while a real change in a split file needs its bump.
// Real Git repositories and the real executable.
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../compiler/types.js';
import { runBin } from '../cli/helpers.js';
import { commitAll, copyRepository, createBaseRepository, edit, git, TOOLSETS, write } from './fixture.js';

const created: string[] = [];
afterAll(() => {
  for (const dir of created) fs.rmSync(dir, { recursive: true, force: true });
});

const WORK_LOGS = TOOLSETS.slice(0, TOOLSETS.indexOf('billing:'));
const REST = TOOLSETS.slice(TOOLSETS.indexOf('billing:'));

function repository(): string {
  const dir = createBaseRepository();
  created.push(dir);
  return dir;
}

/** Move the toolsets out of toolsets.yaml into two files of the folder. */
function split(root: string): void {
  fs.rmSync(`${root}/capabilities/toolsets.yaml`);
  write(root, 'capabilities/toolsets/a-work.yaml', WORK_LOGS);
  write(root, 'capabilities/toolsets/b-rest.yaml', REST);
}

function check(dir: string): { code: number; stderr: string; gate: Diagnostic[] } {
  const result = runBin(['check', '--against', 'base', '--format', 'json', '--no-cache'], { cwd: dir });
  const json = JSON.parse(result.stdout) as { diagnostics: Diagnostic[] };
  return { code: result.code, stderr: result.stderr, gate: json.diagnostics };
}

describe('capreg check with split toolsets', () => {
  it('passes when the toolsets only move from toolsets.yaml into capabilities/toolsets/', () => {
    const dir = repository();
    split(dir);
    const { code, stderr, gate } = check(dir);
    expect(gate).toEqual([]);
    expect(stderr).toMatch(/0 changed, 0 added, 0 removed, 3 unchanged; every version bump is right/);
    expect(code).toBe(0);
  });

  it('reads a split base from Git: a tool action change in a split file needs the major bump', () => {
    const dir = repository();
    split(dir);
    commitAll(dir, 'split toolsets');
    git(dir, 'tag', '-f', 'base');
    edit(dir, 'capabilities/toolsets/a-work.yaml', 'work_log_list: { action: read', 'work_log_list: { action: write');
    const { code, gate } = check(dir);
    expect(code).toBe(1);
    expect(gate.map((d) => `${d.file} ${d.ruleId}`)).toEqual([
      'capabilities/reports/PROTOCOL.md version-bump',
      'capabilities/reports/PROTOCOL.md version-date',
    ]);
    expect(gate[0]!.message).toContain('toolset `work-logs`: tool `work_log_list` action read → write');
  });

  it('reports a toolset defined in two files of the new tree (lint runs in the gate too)', () => {
    const dir = copyRepository(repository());
    created.push(dir);
    write(dir, 'capabilities/toolsets/extra.yaml', REST);
    const { code, gate } = check(dir);
    expect(code).toBe(1);
    expect(gate.filter((d) => d.ruleId === 'toolsets-schema').map((d) => `${d.file}:${d.line}`)).toEqual([
      'capabilities/toolsets.yaml:7',
      'capabilities/toolsets.yaml:11',
      'capabilities/toolsets/extra.yaml:1',
      'capabilities/toolsets/extra.yaml:5',
    ]);
  });
});

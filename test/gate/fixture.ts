// A small registry in a real Git repository, for the gate's end-to-end tests. The base repository is
// built once per test file; every scenario copies it (a few milliseconds), edits the registry,
// commits (or leaves the change uncommitted) and runs `capreg check --against base` in-process.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { main } from '../../cli/main.js';

export const TOOLSETS = `work-logs:
  description: Work log entries and reports.
  tools:
    work_log_record: { action: write, description: Record an entry. }
    work_log_list: { action: read, description: List entries. }
    work_log_generate: { action: write, description: Generate a report. }
billing:
  description: Invoices.
  tools:
    billing_invoice: { action: read, description: Read an invoice. }
calendar:
  description: Calendar events.
  tools:
    calendar_list: { action: read, description: List events. }
`;

/** The capability most scenarios change. `protocol_version` is on line 11. */
export const REPORTS = `---
id: reports
name: Reports
description: Writes work reports from the work log.
whenToUse:
  - write my report
  - log my work
requiredToolsets: [work-logs]
optionalToolsets: [calendar]
states: [PENDING, DONE]
protocol_version: 1.2.3
protocol_updated: 2026-01-10
---

# Reports

## Tools

| Tool | Use it to |
| --- | --- |
| \`work_log_record\` | add an entry |
| \`work_log_list\` | list entries |
| \`work_log_generate\` | start a report |

## Report states

- **PENDING**: the report is being written; keep polling and do not start another one.
- **DONE**: show the report exactly as returned.

## Rules

Never invent entries that the log does not hold.
`;

export const NOTES = `---
id: notes
name: Notes
description: Keeps short notes for the user.
whenToUse:
  - take a note
requiredToolsets: []
protocol_version: 0.3.0
protocol_updated: 2026-01-02
---

# Notes

Write down what the user says. Do not add anything they did not say.
`;

export const ARCHIVE = `---
id: archive
name: Archive
description: Answers questions about archived material.
whenToUse:
  - search the archive
requiredToolsets: []
protocol_version: 2.0.0
protocol_updated: 2025-12-01
---

# Archive

Answer from the archive only. Never guess what it holds.
`;

export const REPORTS_FILE = 'capabilities/reports/PROTOCOL.md';

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function write(root: string, relative: string, content: string): void {
  const file = path.join(root, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

export function read(root: string, relative: string): string {
  return fs.readFileSync(path.join(root, relative), 'utf8');
}

export function tempDir(prefix = 'capreg-gate-'): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

export function initRepository(dir: string): void {
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Gate Test');
  git(dir, 'config', 'user.email', 'gate@example.com');
  git(dir, 'config', 'commit.gpgsign', 'false');
  git(dir, 'config', 'core.autocrlf', 'false');
  // As the README asks: capreg's caches are never committed (the gate refuses a commit that has them).
  fs.writeFileSync(path.join(dir, '.gitignore'), '.capreg/\n');
}

export function commitAll(dir: string, message: string): void {
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '--allow-empty', '-m', message);
}

/** A repository whose first commit (tagged `base`) holds the fixture registry under `registryDir`. */
export function createBaseRepository(registryDir = ''): string {
  const dir = tempDir();
  initRepository(dir);
  const root = path.join(dir, registryDir);
  write(root, 'capabilities/toolsets.yaml', TOOLSETS);
  write(root, REPORTS_FILE, REPORTS);
  write(root, 'capabilities/notes/PROTOCOL.md', NOTES);
  write(root, 'capabilities/archive/PROTOCOL.md', ARCHIVE);
  write(root, 'capabilities/archive/references/sources.md', 'Where the archive comes from.\n');
  commitAll(dir, 'base registry');
  git(dir, 'tag', 'base');
  return dir;
}

/** A private copy of a base repository for one scenario. */
export function copyRepository(baseDir: string): string {
  const dir = tempDir();
  fs.cpSync(baseDir, dir, { recursive: true });
  return dir;
}

/**
 * Builds the base repository once per test file (`build` may add to it). `scenario()` gives each test
 * its own copy; `track(dir)` adds another folder to remove; all are removed after the file.
 */
export function gateScenarios(build: () => string = () => createBaseRepository()): {
  scenario: () => string;
  baseDir: () => string;
  track: (dir: string) => void;
} {
  const created: string[] = [];
  let base = '';
  beforeAll(() => {
    base = build();
    created.push(base);
  });
  afterAll(() => {
    for (const dir of created) fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    scenario: () => {
      const dir = copyRepository(base);
      created.push(dir);
      return dir;
    },
    baseDir: () => base,
    track: (dir) => void created.push(dir),
  };
}

/** Set a capability's version fields (the fixture's reports capability by default). */
export function setVersion(root: string, version: string, updated = '2026-02-01', file = REPORTS_FILE): void {
  const text = read(root, file);
  write(root, file, text.replace(/protocol_version: .*/, `protocol_version: ${version}`).replace(/protocol_updated: .*/, `protocol_updated: ${updated}`));
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCli(argv: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    cwd,
    env,
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

/** Replace `search` in a file (it must occur). */
export function edit(root: string, relative: string, search: string | RegExp, replacement: string): void {
  const before = read(root, relative);
  const after = before.replace(search, replacement);
  if (after === before) throw new Error(`edit: ${String(search)} not found in ${relative}`);
  write(root, relative, after);
}

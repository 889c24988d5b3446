// Real registries in temporary folders, and two ways to run capreg on them: in-process through
// `main(argv, context)` with captured output, and through the real executable (bin/capreg.js over
// the lib/ that globalSetup compiled).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { main } from '../../cli/main.js';
import type { CliContext } from '../../cli/context.js';
import { lintRecordFile } from '../../cli/lint-record.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(REPO_ROOT, 'bin/capreg.js');

export const TOOLSETS_YAML = `work-logs:
  description: Work log entries and reports.
  tools:
    work_log_record: { action: write, description: Record an entry. }
    work_log_list: { action: read, description: List entries. }
`;

/** A complete, clean PROTOCOL.md: passes every rule with the toolsets above. */
export function cleanProtocol(id: string, extra: { version?: string; body?: string } = {}): string {
  return `---
id: ${id}
name: ${id} name
description: Keeps ${id} entries for the user.
whenToUse:
  - keep a ${id} entry
requiredToolsets: []
protocol_version: ${extra.version ?? '1.0.0'}
protocol_updated: 2026-11-29
---
# ${id}

${extra.body ?? `Ask the user what the ${id} entry should say, then repeat it back before saving.\n\n- Never invent details of a ${id} entry that the user did not give.`}
`;
}

const created: string[] = [];
afterAll(() => {
  for (const dir of created) fs.rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary folder, removed after the test file. */
export function tempDir(prefix = 'capreg-cli-'): string {
  // realpath: on macOS the temp folder is a symlink, and capreg reports real paths.
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  created.push(dir);
  return dir;
}

/** Remove the last lint's record (cli/lint-record.ts), so that the next lint parses and lints: through the parse cache, if it has one. */
export function forgetLastLint(root: string): void {
  fs.rmSync(lintRecordFile(root), { force: true });
}

/** Write files (relative path -> text or bytes) under `root`. */
export function writeFiles(root: string, files: Record<string, string | Uint8Array>): void {
  for (const [relative, content] of Object.entries(files)) {
    const target = path.join(root, relative);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, content);
  }
}

/** A registry root with `capabilities/` (and toolsets.yaml unless given as null) and the files given. */
export function tempRegistry(files: Record<string, string | Uint8Array | null> = {}): string {
  const root = tempDir();
  fs.mkdirSync(path.join(root, 'capabilities'));
  const all: Record<string, string | Uint8Array | null> = { 'capabilities/toolsets.yaml': TOOLSETS_YAML, ...files };
  writeFiles(root, Object.fromEntries(Object.entries(all).filter((entry): entry is [string, string | Uint8Array] => entry[1] !== null)));
  return root;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** capreg in-process, with its output captured. The environment is empty unless given. */
export async function run(argv: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const context: CliContext = {
    cwd: options.cwd,
    env: options.env ?? {},
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  };
  const code = await main(argv, context);
  return { code, stdout, stderr };
}

/** The real executable in a child process. */
export function runBin(argv: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; nodeOptions?: string[] }): RunResult {
  const result = spawnSync(process.execPath, [...(options.nodeOptions ?? []), BIN, ...argv], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH, ...options.env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (result.error) throw result.error;
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

export interface JsonReport {
  diagnostics: {
    file: string;
    line: number;
    column: number;
    endLine: number;
    endColumn: number;
    severity: 'error' | 'warning';
    ruleId: string;
    message: string;
    capabilityId?: string;
  }[];
  errorCount: number;
  warningCount: number;
}

/** `capreg lint --format json` in-process, parsed. */
export async function lintJson(root: string, extra: string[] = []): Promise<RunResult & { report: JsonReport }> {
  const result = await run(['lint', '--format', 'json', '--no-cache', ...extra], { cwd: root });
  return { ...result, report: JSON.parse(result.stdout) as JsonReport };
}

/** Diagnostics as `file:line:column ruleId message` lines, for compact assertions. */
export function described(report: JsonReport): string[] {
  return report.diagnostics.map((d) => `${d.file}:${d.line}:${d.column} ${d.ruleId} ${d.message}`);
}

/** The build cache's tests: a registry of two clean capabilities, and what `capreg build` says of it. */
export const BUILD_CACHE = {
  ALPHA: 'capabilities/alpha/PROTOCOL.md',
  BETA: 'capabilities/beta/PROTOCOL.md',
  UP_TO_DATE: /^capreg build: dist\/manifest\.json \(2 capabilities, revision sha256:[0-9a-f]{12}…\) is up to date/,
  WROTE: /^capreg build: wrote dist\/manifest\.json/,
  registry: (extra: Record<string, string | null> = {}): string =>
    tempRegistry({ [BUILD_CACHE.ALPHA]: cleanProtocol('alpha'), [BUILD_CACHE.BETA]: cleanProtocol('beta'), ...extra }),
};

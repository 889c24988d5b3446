// The launcher (cli/respawn.ts): which command lines start again under --single-threaded-gc, and,
// through the real bin, that the child does the work, its output and exit are the command's, and
// signals reach it: Ctrl-C (the whole process group), SIGTERM to the launcher, and a child killed.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheDirectory } from '../../cli/cache-folder.js';
import { PARSE_GC_FLAG, RESPAWN_MIN_ENTRIES, respawnOptions } from '../../cli/respawn.js';
import { BIN, cleanProtocol, runBin, tempRegistry } from './helpers.js';

/** A registry of `count` clean capabilities. */
const registry = (count: number): string =>
  tempRegistry(Object.fromEntries(Array.from({ length: count }, (_, i) => [`capabilities/c${i}/PROTOCOL.md`, cleanProtocol(`c${i}`)])));

/**
 * Loaded into every process (the launcher passes its Node options on) and every worker thread: its
 * pid and whether it runs under the flag. One report per process.
 */
const REPORT = `data:text/javascript,${encodeURIComponent(
  "import{writeSync}from'node:fs';writeSync(2,'@@'+process.pid+' '+process.execArgv.includes('--single-threaded-gc')+'\\n')",
)}`;
const reports = (stderr: string): { pid: number; flagged: boolean }[] => {
  const byPid = new Map<number, boolean>();
  for (const match of stderr.matchAll(/^@@(\d+) (true|false)$/gm)) if (!byPid.has(Number(match[1]))) byPid.set(Number(match[1]), match[2] === 'true');
  return [...byPid].map(([pid, flagged]) => ({ pid, flagged }));
};
const withoutReports = (stderr: string): string => stderr.replace(/^@@\d+ (true|false)\n/gm, '');

describe('respawnOptions', () => {
  const big = registry(RESPAWN_MIN_ENTRIES);
  const small = registry(3);

  it('starts a parse of a large registry with no parse cache again under the flag, after the Node options it was given', () => {
    expect(respawnOptions(['lint'], [], big, 2)).toEqual([PARSE_GC_FLAG]);
    expect(respawnOptions(['build', '--root', big], ['--import', 'x.mjs'], '/', 2)).toEqual(['--import', 'x.mjs', PARSE_GC_FLAG]);
    expect(respawnOptions(['check', '--against', 'HEAD', '-j', '2'], [], big, 2)).toEqual([PARSE_GC_FLAG]);
    expect(respawnOptions(['lint', '--watch'], [], path.join(big, 'capabilities'), 2)).toEqual([PARSE_GC_FLAG]);
    expect(respawnOptions(['lint'], [], big, 1)).toEqual([PARSE_GC_FLAG]);
  });

  it('runs in place when the parse would leave a core free: --jobs under the cores, or too few files for every core', () => {
    expect(respawnOptions(['lint', '--jobs', '1'], [], big, 2)).toBeUndefined();
    expect(respawnOptions(['lint', '--jobs=3'], [], big, 4)).toBeUndefined();
    // 256 entries are 4 workers' worth (64 files each): 8 cores would leave 4 to the collector.
    expect(respawnOptions(['lint'], [], big, 8)).toBeUndefined();
    expect(respawnOptions(['lint'], [], small, 1)).toBeUndefined();
  });

  it('runs in place when the parse cache holds documents, unless --no-cache', () => {
    const cached = registry(RESPAWN_MIN_ENTRIES);
    fs.mkdirSync(cacheDirectory(cached), { recursive: true });
    expect(respawnOptions(['lint'], [], cached, 2)).toEqual([PARSE_GC_FLAG]);
    fs.writeFileSync(path.join(cacheDirectory(cached), '0.bin'), '');
    expect(respawnOptions(['lint'], [], cached, 2)).toBeUndefined();
    expect(respawnOptions(['lint', '--no-cache'], [], cached, 2)).toEqual([PARSE_GC_FLAG]);
  });

  it('runs in place a command that does not parse, help, a line main() refuses, and a process already flagged or debugged', () => {
    for (const argv of [
      [],
      ['serve'],
      ['new', 'x'],
      ['--version'],
      ['lint', '--help'],
      ['lint', '-h'],
      ['lint', '--bogus'],
      ['lint', '--jobs', '0'],
      ['lint', 'extra'],
    ]) {
      expect(respawnOptions(argv, [], big, 2), argv.join(' ')).toBeUndefined();
    }
    expect(respawnOptions(['lint', '--root', path.join(big, 'nope')], [], '/', 2)).toBeUndefined();
    expect(respawnOptions(['lint'], [], fs.mkdtempSync(path.join(big, '..', 'no-registry-')), 2)).toBeUndefined();
    expect(respawnOptions(['lint'], [PARSE_GC_FLAG], big, 2)).toBeUndefined();
    expect(respawnOptions(['lint'], ['--inspect=0'], big, 2)).toBeUndefined();
  });
});

describe('bin/capreg.js as a launcher', () => {
  const big = registry(RESPAWN_MIN_ENTRIES + 4);

  it('lints a large registry in a child under the flag, with the output and exit code the command has in place', { timeout: 120_000 }, () => {
    fs.writeFileSync(path.join(big, 'capabilities/c7/PROTOCOL.md'), cleanProtocol('c7').replace('protocol_version: 1.0.0', 'protocol_version: one'));
    const launched = runBin(['lint', '--no-cache'], { cwd: big, nodeOptions: ['--import', REPORT] });
    const processes = reports(launched.stderr);
    expect(processes).toHaveLength(2);
    expect(processes.map((report) => report.flagged)).toEqual([false, true]);
    expect(processes[0]!.pid).not.toBe(processes[1]!.pid);

    const inPlace = runBin(['lint', '--no-cache', '--jobs', '1'], { cwd: big, nodeOptions: ['--import', REPORT] });
    if (availableParallelism() > 1) expect(reports(inPlace.stderr)).toHaveLength(1);
    expect(inPlace.code).toBe(1);
    expect(inPlace.stdout).toContain('capabilities/c7/PROTOCOL.md');
    expect({ ...launched, stderr: withoutReports(launched.stderr) }).toEqual({ ...inPlace, stderr: withoutReports(inPlace.stderr) });
    fs.writeFileSync(path.join(big, 'capabilities/c7/PROTOCOL.md'), cleanProtocol('c7'));
  });

  /** `lint --watch` on the large registry, in a process group of its own, once its first lint is reported. */
  async function watching(): Promise<{
    launcher: number;
    child: number;
    stderr: () => string;
    exited: Promise<{ code: number | null; signal: string | null }>;
  }> {
    const launcher = spawn(process.execPath, ['--import', REPORT, BIN, 'lint', '--watch', '--no-cache'], {
      cwd: big,
      env: { PATH: process.env['PATH'] ?? '' },
      detached: true,
    });
    let stderr = '';
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => launcher.once('exit', (code, signal) => resolve({ code, signal })));
    await new Promise<void>((resolve, reject) => {
      launcher.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (/watching for changes/.test(stderr)) resolve();
      });
      void exited.then(() => reject(new Error(`exited before its first lint: ${stderr}`)));
    });
    const child = reports(stderr).find((report) => report.flagged);
    expect(child).toBeDefined();
    return { launcher: launcher.pid!, child: child!.pid, stderr: () => stderr, exited };
  }

  it('stops the watch once on Ctrl-C, which reaches both processes: exit 0 and no error', { timeout: 120_000 }, async () => {
    const session = await watching();
    process.kill(-session.launcher, 'SIGINT');
    expect(await session.exited).toEqual({ code: 0, signal: null });
    expect(withoutReports(session.stderr())).not.toMatch(/Error|internal/);
  });

  it('passes SIGTERM sent to the launcher alone on to the watch: exit 0', { timeout: 120_000 }, async () => {
    const session = await watching();
    process.kill(session.launcher, 'SIGTERM');
    expect(await session.exited).toEqual({ code: 0, signal: null });
  });

  it('ends by the signal that ended its child', { timeout: 120_000 }, async () => {
    const session = await watching();
    process.kill(session.child, 'SIGKILL');
    expect(await session.exited).toEqual({ code: null, signal: 'SIGKILL' });
  });
});

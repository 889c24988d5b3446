// The launcher (cli/respawn.ts): which command lines start again under --single-threaded-gc, and,
// through the real bin, that the child does the work, its output and exit are the command's, and
// signals reach it: Ctrl-C (the whole process group), SIGTERM to the launcher, and a child killed.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheDirectory } from '../../cli/cache-folder.js';
import { INLINE_LIMIT } from '../../cli/parse-workers.js';
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

/** The decision for `argv` run from `cwd` on `cores` cores, with these Node options. */
const decide = (argv: string[], cwd: string, cores: number, execArgv: string[] = [], nodeOptions = ''): string[] | undefined =>
  respawnOptions(argv, { execArgv, nodeOptions, cwd, cores });

describe('respawnOptions', () => {
  const big = registry(RESPAWN_MIN_ENTRIES);
  const small = registry(3);

  it('starts a parse of a large registry with no parse cache again under the flag, after the Node options it was given', () => {
    expect(decide(['lint'], big, 2)).toEqual([PARSE_GC_FLAG]);
    expect(decide(['build', '--root', big], '/', 2, ['--import', 'x.mjs'])).toEqual(['--import', 'x.mjs', PARSE_GC_FLAG]);
    expect(decide(['check', '--against', 'HEAD', '-j', '2'], big, 2)).toEqual([PARSE_GC_FLAG]);
    expect(decide(['lint', '--watch'], path.join(big, 'capabilities'), 2)).toEqual([PARSE_GC_FLAG]);
    expect(decide(['lint'], big, 1, [], '--max-old-space-size=4096')).toEqual([PARSE_GC_FLAG]);
  });

  it('runs in place when the parse would leave a core free: --jobs under the cores, or too few files for every core', () => {
    expect(decide(['lint', '--jobs', '1'], big, 2)).toBeUndefined();
    expect(decide(['lint', '--jobs=3'], big, 4)).toBeUndefined();
    // 256 entries are 4 workers' worth (64 files each): 8 cores would leave 4 to the collector.
    expect(decide(['lint'], big, 8)).toBeUndefined();
    expect(decide(['lint'], small, 1)).toBeUndefined();
  });

  it('runs in place when the parse cache holds documents, unless --no-cache', () => {
    const cached = registry(RESPAWN_MIN_ENTRIES);
    fs.mkdirSync(cacheDirectory(cached), { recursive: true });
    expect(decide(['lint'], cached, 2)).toEqual([PARSE_GC_FLAG]);
    fs.writeFileSync(path.join(cacheDirectory(cached), '0.bin'), '');
    expect(decide(['lint'], cached, 2)).toBeUndefined();
    expect(decide(['lint', '--no-cache'], cached, 2)).toEqual([PARSE_GC_FLAG]);
  });

  it('runs in place a command that does not parse, help, and a line main() refuses', () => {
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
      expect(decide(argv, big, 2), argv.join(' ')).toBeUndefined();
    }
    expect(decide(['lint', '--root', path.join(big, 'nope')], '/', 2)).toBeUndefined();
    expect(decide(['lint'], fs.mkdtempSync(path.join(big, '..', 'no-registry-')), 2)).toBeUndefined();
  });

  it("runs in place when Node was told what to do with the collector's threads, or to debug, on the command line or in NODE_OPTIONS", () => {
    for (const option of [PARSE_GC_FLAG, '--no-single-threaded-gc', '--single_threaded_gc', '--inspect=0', '--inspect-brk', '--debug-port=9230']) {
      expect(decide(['lint'], big, 2, [option]), option).toBeUndefined();
      expect(decide(['lint'], big, 2, [], `--max-old-space-size=4096 ${option}`), `NODE_OPTIONS ${option}`).toBeUndefined();
    }
  });
});

describe('bin/capreg.js as a launcher', () => {
  // Enough files for a parse worker on every core of the machine the tests run on.
  const big = registry(Math.max(RESPAWN_MIN_ENTRIES, INLINE_LIMIT * availableParallelism()) + 4);

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

  /**
   * `lint --watch` on the large registry, in a process group of its own, once its first lint is
   * reported; `child` is the process under the flag, if the launcher started one.
   */
  async function watching(extra: string[] = []): Promise<{
    launcher: number;
    child: number | undefined;
    stderr: () => string;
    exited: Promise<{ code: number | null; signal: string | null }>;
  }> {
    const launcher = spawn(process.execPath, ['--import', REPORT, BIN, 'lint', '--watch', '--no-cache', ...extra], {
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
    return { launcher: launcher.pid!, child: reports(stderr).find((report) => report.flagged)?.pid, stderr: () => stderr, exited };
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
    process.kill(session.child!, 'SIGKILL');
    expect(await session.exited).toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('leaves no child running once the launcher is killed: the watch stops as on SIGTERM', { timeout: 120_000 }, async () => {
    const session = await watching();
    const child = session.child!;
    process.kill(session.launcher, 'SIGKILL');
    expect(await session.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const alive = (): boolean => {
      try {
        process.kill(child, 0);
        return true;
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 20_000;
    while (alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(alive()).toBe(false);
  });

  it('in place too, a copy of the signal that stops the watch does not end it by that signal', { timeout: 120_000 }, async () => {
    const once = await watching(['--jobs', '1']);
    if (availableParallelism() > 1) expect(once.child).toBeUndefined();
    process.kill(once.launcher, 'SIGINT');
    process.kill(once.launcher, 'SIGINT');
    expect(await once.exited).toEqual({ code: 0, signal: null });
  });
});

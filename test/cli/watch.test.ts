// `capreg lint --watch` and `capreg build --watch` through the real bin: an edit is linted again
// (reading and parsing only that file), a new problem shows on stdout, the fix clears it, a build
// writes only a clean registry, and SIGTERM ends the session with exit 0 and nothing but stamped
// status lines on stderr.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { countWatched, watcherErrorLine, watchRefusal } from '../../cli/watch.js';
import { BIN, cleanProtocol, tempRegistry } from './helpers.js';

interface Session {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  /** Resolves when the stream's text so far matches. */
  waitFor: (stream: 'stdout' | 'stderr', pattern: RegExp) => Promise<void>;
  stop: () => Promise<number | null>;
}

function startWatch(argv: string[], cwd: string): Session {
  const child = spawn(process.execPath, [BIN, ...argv], { cwd, env: { PATH: process.env['PATH'] ?? '' } });
  const text = { stdout: '', stderr: '' };
  const waiters: (() => void)[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  for (const stream of ['stdout', 'stderr'] as const) {
    child[stream].on('data', (chunk: Buffer) => {
      text[stream] += chunk.toString();
      for (const waiter of [...waiters]) waiter();
    });
  }
  return {
    child,
    stdout: () => text.stdout,
    stderr: () => text.stderr,
    waitFor: (stream, pattern) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (!pattern.test(text[stream])) return;
          waiters.splice(waiters.indexOf(check), 1);
          resolve();
        };
        waiters.push(check);
        void exited.then(() => reject(new Error(`exited before ${pattern}: ${text.stderr}`)));
        check();
      }),
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

const count = (text: string, pattern: RegExp): number => text.match(new RegExp(pattern, 'g'))?.length ?? 0;

describe('capreg lint --watch', () => {
  it.skipIf(!fs.existsSync('/proc/self/fd'))('exits 0 on SIGTERM while its watchers are still starting', { timeout: 60_000 }, async () => {
    // 2,000 folders: the watcher walks them for a while before it is ready. The signal goes as soon
    // as the process holds an inotify descriptor, i.e. once the watchers have started; it is the
    // launcher's child when the launcher started one (cli/respawn.ts), and goes to the launcher.
    const root = tempRegistry(Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`capabilities/c${i}/PROTOCOL.md`, cleanProtocol(`c${i}`)])));
    const watch = startWatch(['lint', '--watch'], root);
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      watch.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const holdsInotify = (pid: string): boolean => {
      try {
        const fds = `/proc/${pid}/fd`;
        return fs.readdirSync(fds).some((fd) => fs.readlinkSync(path.join(fds, fd)) === 'anon_inode:inotify');
      } catch {
        return false;
      }
    };
    const childrenOf = (pid: string): string[] => {
      try {
        return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean);
      } catch {
        return [];
      }
    };
    const launcher = String(watch.child.pid);
    const watching = (): boolean => [launcher, ...childrenOf(launcher)].some(holdsInotify);
    while (!watching()) await new Promise((resolve) => setTimeout(resolve, 2));
    watch.child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(watch.stderr()).not.toMatch(/watching for changes|Error/);
  });

  it('lints an edited file again, reading and parsing only it, and shows and clears its problem', { timeout: 60_000 }, async () => {
    const root = tempRegistry({
      'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'),
      'capabilities/beta/PROTOCOL.md': cleanProtocol('beta'),
    });
    const watch = startWatch(['lint', '--watch', '--format', 'github'], root);
    await watch.waitFor('stderr', /watching for changes/);
    expect(watch.stderr()).toMatch(/read the registry \(\d+ files, 2 parsed\); linted 2 capabilities in \d+ ms/);

    const beta = path.join(root, 'capabilities/beta/PROTOCOL.md');
    fs.writeFileSync(beta, cleanProtocol('beta', { body: 'Call `work_log_delete` first.\n\n- Never guess.' }));
    await watch.waitFor('stdout', /work_log_delete/);
    await watch.waitFor('stderr', /1 file\(s\) read, 1 parsed; linted 2 capabilities/);
    expect(watch.stdout()).toMatch(/^::warning file=capabilities\/beta\/PROTOCOL\.md,line=\d+.*title=unknown-tools::/m);
    const reported = count(watch.stdout(), /work_log_delete/);

    const before = count(watch.stderr(), /watching for changes/);
    fs.writeFileSync(beta, cleanProtocol('beta', { version: '1.0.1' }));
    await watch.waitFor('stderr', new RegExp(`(watching for changes[\\s\\S]*){${before + 1}}`));
    // The fixed file is reported no more.
    expect(count(watch.stdout(), /work_log_delete/)).toBe(reported);

    expect(await watch.stop()).toBe(0);
    for (const line of watch.stderr().trimEnd().split('\n')) expect(line).toMatch(/^\d\d:\d\d:\d\d capreg lint: /);
  });

  it('refuses a folder made deeper than the limit, which it does not watch, and forgets it once removed', { timeout: 60_000 }, async () => {
    const root = tempRegistry({ 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha') });
    const watch = startWatch(['lint', '--watch', '--format', 'github'], root);
    await watch.waitFor('stderr', /watching for changes/);
    const top = path.join(root, 'capabilities/alpha/n');
    fs.mkdirSync(path.join(top, ...Array<string>(30).fill('n')), { recursive: true });
    await watch.waitFor('stdout', /folder is 17 levels deep under capabilities\/, over the limit of 16/);
    expect(watch.stdout()).toMatch(/^::error file=capabilities\/alpha(\/n){16},line=1.*title=registry-files::/m);

    // The compile that found it has ended (its status line follows the diagnostics).
    await watch.waitFor('stderr', /read the registry \(3 files, 0 parsed\)[\s\S]*watching for changes/);

    // The removal of 30 levels can come as several bursts of events, each compiled: the watch has
    // forgotten the folder once a compile reads the registry's two files again, nothing to report.
    fs.rmSync(top, { recursive: true });
    await watch.waitFor('stderr', /read the registry \(2 files, 0 parsed\); linted 1 capability[^\n]*\n[^\n]*watching for changes/);
    expect(await watch.stop()).toBe(0);
  });
});

describe('capreg lint --watch: symbolic links', () => {
  it('links back to their own folder do not hold the watcher, and an edit is still linted', { timeout: 60_000 }, async () => {
    const root = tempRegistry({ 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha') });
    // Followed, these make 8^16 paths down to the depth limit (by hand, a watcher that followed them
    // grew by ~40 MiB a second; in this harness the growth did not show, so this guards the behaviour).
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']) fs.symlinkSync('.', path.join(root, 'capabilities/alpha', name));
    const watch = startWatch(['lint', '--watch', '--format', 'github'], root);
    await watch.waitFor('stderr', /watching for changes/);
    const rss = (): number => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${watch.child.pid}/status`, 'utf8'))?.[1]) / 1024;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const settled = rss();
    await new Promise((resolve) => setTimeout(resolve, 6000));
    expect(rss() - settled).toBeLessThan(64);
    fs.writeFileSync(path.join(root, 'capabilities/alpha/PROTOCOL.md'), cleanProtocol('alpha', { version: 'banana' }));
    await watch.waitFor('stdout', /file=capabilities\/alpha\/PROTOCOL\.md,.*title=frontmatter-schema::.*"banana"/);
    expect(await watch.stop()).toBe(0);
  });

  it('an edit to the target of a link is linted, under every path that reads it', { timeout: 60_000 }, async () => {
    const root = tempRegistry({ 'shared/alpha.md': cleanProtocol('alpha'), 'capabilities/beta/PROTOCOL.md': cleanProtocol('beta') });
    fs.mkdirSync(path.join(root, 'capabilities/alpha'));
    // One link to a file outside capabilities/, one to a file inside it.
    fs.symlinkSync('../../shared/alpha.md', path.join(root, 'capabilities/alpha/PROTOCOL.md'));
    fs.mkdirSync(path.join(root, 'capabilities/gamma'));
    fs.symlinkSync('../beta/PROTOCOL.md', path.join(root, 'capabilities/gamma/PROTOCOL.md'));
    const watch = startWatch(['lint', '--watch', '--format', 'github'], root);
    await watch.waitFor('stderr', /watching for changes/);

    fs.writeFileSync(path.join(root, 'shared/alpha.md'), cleanProtocol('alpha', { version: 'banana' }));
    await watch.waitFor('stdout', /file=capabilities\/alpha\/PROTOCOL\.md,.*title=frontmatter-schema::.*"banana"/);

    fs.writeFileSync(path.join(root, 'capabilities/beta/PROTOCOL.md'), cleanProtocol('beta', { version: 'cherry' }));
    await watch.waitFor('stdout', /file=capabilities\/beta\/PROTOCOL\.md,.*"cherry"/);
    await watch.waitFor('stdout', /file=capabilities\/gamma\/PROTOCOL\.md,.*"cherry"/);
    expect(await watch.stop()).toBe(0);
  });

  it('compiles once at start without a config file when a capability folder is a link, and sees the config once made', { timeout: 60_000 }, async () => {
    const root = tempRegistry({ 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'), 'shared/beta/PROTOCOL.md': cleanProtocol('beta') });
    fs.symlinkSync('../shared/beta', path.join(root, 'capabilities/beta'));
    expect(fs.existsSync(path.join(root, 'capreg.config.yaml'))).toBe(false);
    const watch = startWatch(['lint', '--watch'], root);
    await watch.waitFor('stderr', /watching for changes/);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(count(watch.stderr(), /linted 2 capabilities/), watch.stderr()).toBe(1);
    // The config file, made, edited and removed, is still watched.
    fs.writeFileSync(path.join(root, 'capreg.config.yaml'), 'rules:\n  no-such-rule: off\n');
    await watch.waitFor('stderr', /unknown rule "no-such-rule"/);
    fs.writeFileSync(path.join(root, 'capreg.config.yaml'), 'rules: {}\n');
    await watch.waitFor('stderr', /(linted 2 capabilities[\s\S]*){2}watching for changes/);
    fs.rmSync(path.join(root, 'capreg.config.yaml'));
    await watch.waitFor('stderr', /(linted 2 capabilities[\s\S]*){3}watching for changes/);
    expect(await watch.stop()).toBe(0);
  });
});

describe('capreg lint --watch: the parse budget', () => {
  it('keeps refusing a protocol over the budget while another file changes, and lints it once it is fixed', { timeout: 120_000 }, async () => {
    const row = '| x | y |\n';
    const root = tempRegistry({
      'capreg.config.yaml': 'limits:\n  maxFileBytes: 8388608\n  maxParseMs: 1500\n',
      'capabilities/slow/PROTOCOL.md': cleanProtocol('slow', {
        body: `| Tool | Use |\n| --- | --- |\n${row.repeat(Math.ceil((3 * 1024 * 1024) / row.length))}`,
      }),
      'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'),
    });
    const refused = /capabilities\/slow\/PROTOCOL\.md,line=1,col=1,.*title=registry-files::parsing this file took over 1500 ms/g;
    const watch = startWatch(['lint', '--watch', '--format', 'github'], root);
    await watch.waitFor('stderr', /watching for changes/);
    expect(count(watch.stdout(), refused)).toBe(1);

    fs.writeFileSync(path.join(root, 'capabilities/alpha/PROTOCOL.md'), cleanProtocol('alpha', { body: 'Call `work_log_delete` first.\n\n- Never guess.' }));
    await watch.waitFor('stderr', /1 file\(s\) read, 1 parsed[\s\S]*watching for changes/);
    expect(count(watch.stdout(), refused)).toBe(2);
    expect(watch.stdout()).toMatch(/work_log_delete/);

    fs.writeFileSync(path.join(root, 'capabilities/slow/PROTOCOL.md'), cleanProtocol('slow'));
    await watch.waitFor('stderr', /(1 file\(s\) read, 1 parsed[\s\S]*){2}watching for changes/);
    expect(count(watch.stdout(), refused)).toBe(2);
    expect(watch.stderr()).toMatch(/linted 2 capabilities/);
    expect(await watch.stop()).toBe(0);
  });
});

describe('capreg build --watch', () => {
  it('writes the manifest again after a clean edit and nothing after an edit with an error', { timeout: 60_000 }, async () => {
    const root = tempRegistry({ 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha') });
    const manifest = path.join(root, 'dist/manifest.json');
    const watch = startWatch(['build', '--watch'], root);
    await watch.waitFor('stderr', /wrote dist\/manifest\.json[\s\S]*watching for changes/);
    const version = (): string =>
      (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { capabilities: { protocolVersion: string }[] }).capabilities[0]!.protocolVersion;
    expect(version()).toBe('1.0.0');

    const alpha = path.join(root, 'capabilities/alpha/PROTOCOL.md');
    fs.writeFileSync(alpha, cleanProtocol('alpha', { version: '1.0.1' }));
    await watch.waitFor('stderr', /1 file\(s\) read, 1 parsed[\s\S]*wrote dist\/manifest\.json[\s\S]*watching for changes/);
    expect(version(), watch.stderr()).toBe('1.0.1');

    fs.writeFileSync(alpha, `---\nid: alpha\nname: [unclosed\n---\nbody\n`);
    await watch.waitFor('stderr', /error\(s\); nothing written/);
    expect(version(), watch.stderr()).toBe('1.0.1');

    expect(await watch.stop()).toBe(0);
    for (const line of watch.stderr().trimEnd().split('\n')) expect(line).toMatch(/^\d\d:\d\d:\d\d capreg build: /);
  });
});

describe('capreg build --watch: capabilities/ itself goes away and comes back', () => {
  it('compiles once at start when capabilities/ is a link, not again for the link its first scan reports', { timeout: 60_000 }, async () => {
    const root = tempRegistry({ 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'), 'capabilities/beta/PROTOCOL.md': cleanProtocol('beta') });
    fs.renameSync(path.join(root, 'capabilities'), path.join(root, 'v1'));
    fs.symlinkSync('v1', path.join(root, 'capabilities'));
    const watch = startWatch(['build', '--watch'], root);
    await watch.waitFor('stderr', /watching for changes/);
    // A rewatch waits 300 ms for moves to settle and compiles 100 ms later: give it well over that.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(count(watch.stderr(), /linted 2 capabilities/), watch.stderr()).toBe(1);
    // And an edit through the link is still seen.
    fs.writeFileSync(path.join(root, 'v1/beta/PROTOCOL.md'), cleanProtocol('beta', { version: '1.0.1' }));
    await watch.waitFor('stderr', /(linted 2 capabilities[\s\S]*){2}watching for changes/);
    expect(await watch.stop()).toBe(0);
  });

  it(
    'sees edits under capabilities/ when it is a link to a folder in the root, and under the new target once the link is swapped',
    { timeout: 60_000 },
    async () => {
      const root = tempRegistry({ 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha') });
      fs.renameSync(path.join(root, 'capabilities'), path.join(root, 'v1'));
      fs.cpSync(path.join(root, 'v1'), path.join(root, 'v2'), { recursive: true });
      fs.symlinkSync('v1', path.join(root, 'capabilities'));
      const manifest = path.join(root, 'dist/manifest.json');
      const watch = startWatch(['build', '--watch'], root);
      await watch.waitFor('stderr', /wrote dist\/manifest\.json[\s\S]*watching for changes/);
      const version = (): string | undefined =>
        (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { capabilities: { protocolVersion: string }[] }).capabilities[0]?.protocolVersion;
      /** Whether the manifest serves `expected` within 10 s. */
      const serves = async (expected: string): Promise<boolean> => {
        for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
          if (version() === expected) return true;
        }
        return false;
      };
      await new Promise((resolve) => setTimeout(resolve, 500));
      fs.writeFileSync(path.join(root, 'v1/alpha/PROTOCOL.md'), cleanProtocol('alpha', { version: '1.0.1' }));
      const sawEdit = await serves('1.0.1');
      // A release that swaps the link (`ln -s v2 tmp && mv -T tmp capabilities`).
      fs.symlinkSync('v2', path.join(root, 'tmp-link'));
      fs.renameSync(path.join(root, 'tmp-link'), path.join(root, 'capabilities'));
      const sawSwap = await serves('1.0.0');
      fs.writeFileSync(path.join(root, 'v2/alpha/PROTOCOL.md'), cleanProtocol('alpha', { version: '1.1.0' }));
      const sawEditAfterSwap = await serves('1.1.0');
      expect(await watch.stop()).toBe(0);
      expect({ sawEdit, sawSwap, sawEditAfterSwap }).toEqual({ sawEdit: true, sawSwap: true, sawEditAfterSwap: true });
    },
  );

  it('builds again once the folder is back, and keeps seeing edits in it', { timeout: 60_000 }, async () => {
    const root = tempRegistry({ 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha') });
    const manifest = path.join(root, 'dist/manifest.json');
    const watch = startWatch(['build', '--watch'], root);
    await watch.waitFor('stderr', /wrote dist\/manifest\.json[\s\S]*watching for changes/);
    const version = (): string | undefined =>
      fs.existsSync(manifest)
        ? (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { capabilities: { protocolVersion: string }[] }).capabilities[0]!.protocolVersion
        : undefined;
    /** Resolves once the manifest serves `expected` (the test's timeout fails a watch that no longer builds). */
    const serves = async (expected: string): Promise<void> => {
      while (version() !== expected) await new Promise((resolve) => setTimeout(resolve, 50));
    };
    const gone = /capabilities\/ is missing \(moved or removed\)[^\n]*\n[^\n]*watching for changes/;
    const goneOnceMore = (): Promise<void> => watch.waitFor('stderr', new RegExp(`(${gone.source}[\\s\\S]*){${count(watch.stderr(), gone) + 1}}`));

    // What a branch switch or a tool that writes the folder anew does.
    let reported = goneOnceMore();
    fs.renameSync(path.join(root, 'capabilities'), path.join(root, 'away'));
    await reported;
    // Said once while it lasts, in plain words (it was the system's ENOENT line, several times a second).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(count(watch.stderr(), /is missing/)).toBe(1);
    expect(watch.stderr()).not.toContain('ENOENT');
    fs.rmSync(manifest);
    fs.renameSync(path.join(root, 'away'), path.join(root, 'capabilities'));
    await serves('1.0.0');
    fs.writeFileSync(path.join(root, 'capabilities/alpha/PROTOCOL.md'), cleanProtocol('alpha', { version: '1.0.1' }));
    await serves('1.0.1');

    reported = goneOnceMore();
    fs.rmSync(path.join(root, 'capabilities'), { recursive: true });
    await reported;
    fs.mkdirSync(path.join(root, 'capabilities/alpha'), { recursive: true });
    fs.writeFileSync(path.join(root, 'capabilities/toolsets.yaml'), '{}\n');
    fs.writeFileSync(path.join(root, 'capabilities/alpha/PROTOCOL.md'), cleanProtocol('alpha', { version: '1.0.2' }));
    await serves('1.0.2');
    expect(await watch.stop()).toBe(0);
  });

  it('keeps seeing edits in every folder after capabilities/ is moved away and back many times in a row', { timeout: 120_000 }, async () => {
    // The watcher could take in a removal late and lose its watches of the folders under
    // capabilities/ (about one run in four); three rounds of 20 quick moves, each followed by edits.
    const root = tempRegistry({ 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'), 'capabilities/beta/PROTOCOL.md': cleanProtocol('beta') });
    const capabilities = path.join(root, 'capabilities');
    const watch = startWatch(['lint', '--watch'], root);
    await watch.waitFor('stderr', /watching for changes/);
    const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
    for (let round = 1; round <= 3; round += 1) {
      for (let move = 0; move < 20; move += 1) {
        fs.renameSync(capabilities, path.join(root, 'away'));
        await sleep(move % 5);
        fs.renameSync(path.join(root, 'away'), capabilities);
        await sleep(move % 7);
      }
      await sleep(1000);
      for (const id of ['alpha', 'beta']) {
        const compiles = count(watch.stderr(), /watching for changes/);
        fs.writeFileSync(path.join(capabilities, `${id}/PROTOCOL.md`), cleanProtocol(id, { version: `1.0.${round}` }));
        // The test's timeout fails a watch that no longer sees the edit.
        await watch.waitFor('stderr', new RegExp(`(watching for changes[\\s\\S]*){${compiles + 1}}`));
      }
    }
    expect(await watch.stop()).toBe(0);
  });
});

describe('capreg lint --watch: limits.maxFiles', () => {
  const config = (maxFiles: number): string => `limits:\n  maxFiles: ${maxFiles}\n`;

  it('counts what it would watch and stops counting one past the limit, reading no folder whole', () => {
    const root = tempRegistry(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`capabilities/notes/n${i}.txt`, 'x'])));
    fs.mkdirSync(path.join(root, 'capabilities/.hidden'));
    fs.writeFileSync(path.join(root, 'capabilities/.hidden/skipped.txt'), 'x');
    // toolsets.yaml and the 40 notes; the folder notes/ (not the hidden one).
    expect(countWatched(path.join(root, 'capabilities'), 100)).toEqual({ files: 41, folders: 1 });
    expect(countWatched(path.join(root, 'capabilities'), 10)).toEqual({ files: 11, folders: 1 });
    expect(watchRefusal({ files: 11, folders: 1 }, 10)).toMatch(/^capabilities\/ holds more than 10 files, over limits\.maxFiles/);
    expect(watchRefusal({ files: 3, folders: 11 }, 10)).toMatch(/^capabilities\/ holds more than 10 folders/);
    expect(watchRefusal({ files: 10, folders: 10 }, 10)).toBeUndefined();
  });

  it('says what running out of watches means, once per kind of error', () => {
    const enospc = Object.assign(new Error("ENOSPC: System limit for number of file watchers reached, watch '/r/capabilities/a/n1.txt'"), { code: 'ENOSPC' });
    const { code, line } = watcherErrorLine(enospc);
    expect(code).toBe('ENOSPC');
    expect(line).toMatch(
      /^watching failed: ENOSPC: .*fs\.inotify\.max_user_watches.*changes to the files it could not watch are not seen.*\(further errors of this kind are not shown\)$/,
    );
    expect(watcherErrorLine(Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' })).line).toMatch(/ulimit -n/);
    expect(watcherErrorLine(new Error('odd')).code).toBe('unknown');
  });

  it('refuses to start on a registry over the limit (exit 2), before it watches or compiles anything', { timeout: 60_000 }, async () => {
    const root = tempRegistry({
      'capreg.config.yaml': config(5),
      'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'),
      ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`capabilities/alpha/notes/n${i}.txt`, 'x'])),
    });
    const watch = startWatch(['lint', '--watch'], root);
    const code = await new Promise<number | null>((resolve) => watch.child.once('exit', resolve));
    expect(code).toBe(2);
    expect(watch.stdout()).toBe('');
    expect(watch.stderr()).toMatch(
      /^\d\d:\d\d:\d\d capreg lint: not watching: capabilities\/ holds more than 5 files, over limits\.maxFiles in capreg\.config\.yaml;/,
    );
    expect(watch.stderr().trimEnd().split('\n')).toHaveLength(1);
  });

  it('refuses folders past the limit too: each is a watch of its own', { timeout: 60_000 }, async () => {
    const root = tempRegistry({ 'capreg.config.yaml': config(5), 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha') });
    for (let i = 0; i < 6; i += 1) fs.mkdirSync(path.join(root, `capabilities/alpha/empty${i}`));
    const watch = startWatch(['build', '--watch'], root);
    const code = await new Promise<number | null>((resolve) => watch.child.once('exit', resolve));
    expect(code).toBe(2);
    expect(watch.stderr()).toMatch(/capreg build: not watching: capabilities\/ holds more than 5 folders/);
    expect(fs.existsSync(path.join(root, 'dist'))).toBe(false);
  });

  for (const [label, remove] of [
    ['removed', (root: string) => fs.rmSync(root, { recursive: true })],
    ['moved away', (root: string) => fs.renameSync(root, `${root}.away`)],
  ] as const) {
    it(`stops (exit 2) when the registry root is ${label}, rather than watching what is no longer there`, { timeout: 60_000 }, async () => {
      const root = tempRegistry({ 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha') });
      const watch = startWatch(['build', '--watch'], root);
      await watch.waitFor('stderr', /watching for changes/);
      const exited = new Promise<number | null>((resolve) => watch.child.once('exit', resolve));
      remove(root);
      // A root made again at the path (`rm -rf repo && git clone …`) is not the folder it watches.
      fs.mkdirSync(path.join(root, 'capabilities/alpha'), { recursive: true });
      fs.writeFileSync(path.join(root, 'capabilities/alpha/PROTOCOL.md'), cleanProtocol('alpha'));
      const code = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('still watching'), 10_000))]);
      if (code === 'still watching') await watch.stop();
      expect(code).toBe(2);
      expect(watch.stderr().trimEnd().split('\n').at(-1)).toMatch(
        /^\d\d:\d\d:\d\d capreg build: stopped watching: .* was removed, moved or replaced; start the watch again$/,
      );
    });
  }

  it('stops (exit 2) once the registry grows past the limit while it is watched', { timeout: 60_000 }, async () => {
    const root = tempRegistry({ 'capreg.config.yaml': config(10), 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha') });
    const watch = startWatch(['lint', '--watch'], root);
    await watch.waitFor('stderr', /watching for changes/);
    fs.mkdirSync(path.join(root, 'capabilities/alpha/notes'));
    for (let i = 0; i < 12; i += 1) fs.writeFileSync(path.join(root, `capabilities/alpha/notes/n${i}.txt`), 'x');
    const code = await new Promise<number | null>((resolve) => watch.child.once('exit', resolve));
    expect(code).toBe(2);
    expect(watch.stderr()).toMatch(/capreg lint: stopped watching: capabilities\/ holds more than 10 files/);
    // Nothing said after it: no compile that ends then says it is still watching.
    expect(watch.stderr().trimEnd().split('\n').at(-1)).toMatch(/stopped watching/);
    for (const line of watch.stderr().trimEnd().split('\n')) expect(line).toMatch(/^\d\d:\d\d:\d\d capreg lint: /);
  });

  it('drops the compile in progress when it stops for the limit: the line that says why is the last', { timeout: 60_000 }, async () => {
    const root = tempRegistry({ 'capreg.config.yaml': config(10), 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha') });
    const watch = startWatch(['lint', '--watch'], root);
    await watch.waitFor('stderr', /watching for changes/);
    // A body that takes the compile a second or more, so the files below come while it runs.
    const paragraph = 'Ask the *user* what the **entry** should say, then `repeat` it [back](#x) before saving.\n\n';
    fs.writeFileSync(path.join(root, 'capabilities/alpha/PROTOCOL.md'), cleanProtocol('alpha', { body: paragraph.repeat(3000) }));
    await new Promise((resolve) => setTimeout(resolve, 250));
    fs.mkdirSync(path.join(root, 'capabilities/alpha/notes'));
    for (let i = 0; i < 12; i += 1) fs.writeFileSync(path.join(root, `capabilities/alpha/notes/n${i}.txt`), 'x');
    const code = await new Promise<number | null>((resolve) => watch.child.once('exit', resolve));
    expect(code).toBe(2);
    const lines = watch.stderr().trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(/capreg lint: stopped watching: capabilities\/ holds more than 10 files/);
    expect(count(watch.stderr(), /stopped watching/)).toBe(1);
    // The edit's compile said nothing: only the first compile's report.
    expect(count(watch.stderr(), /linted 1 capability/)).toBe(1);
  });

  it('takes the count again from the disk after a full compile: a lower limit in the config stops it', { timeout: 60_000 }, async () => {
    // The count the events keep can fall short of the disk (chokidar misses files made in a new
    // folder before it watches the folder); a full compile retakes it, and checks it against the
    // limit of the configuration it just read.
    const root = tempRegistry({
      'capreg.config.yaml': config(20),
      'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'),
      ...Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`capabilities/alpha/notes/n${i}.txt`, 'x'])),
    });
    const watch = startWatch(['lint', '--watch'], root);
    await watch.waitFor('stderr', /watching for changes/);
    fs.writeFileSync(path.join(root, 'capreg.config.yaml'), config(10));
    const code = await new Promise<number | null>((resolve) => watch.child.once('exit', resolve));
    expect(code).toBe(2);
    expect(watch.stderr().trimEnd().split('\n').at(-1)).toMatch(
      /capreg lint: stopped watching: capabilities\/ holds more than 10 files, over limits\.maxFiles/,
    );
  });

  it('takes what a one-off lint takes: links found while it starts are counted once', { timeout: 60_000 }, async () => {
    // toolsets.yaml, alpha's PROTOCOL.md and three links to files: 5 files, at the limit.
    const root = tempRegistry({ 'capreg.config.yaml': config(5), 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'), 'shared/a.md': 'a\n' });
    for (const name of ['l1.md', 'l2.md', 'l3.md']) fs.symlinkSync('../../shared/a.md', path.join(root, `capabilities/alpha/${name}`));
    const watch = startWatch(['lint', '--watch'], root);
    await watch.waitFor('stderr', /watching for changes/);
    expect(watch.stderr()).not.toMatch(/not watching|stopped watching/);
    expect(await watch.stop()).toBe(0);
  });

  it('keeps watching through a rename near the limit, which the watcher reports added before removed', { timeout: 60_000 }, async () => {
    const root = tempRegistry({
      'capreg.config.yaml': config(10),
      'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'),
      ...Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`capabilities/alpha/notes/n${i}.txt`, 'x'])),
    });
    const watch = startWatch(['lint', '--watch'], root);
    await watch.waitFor('stderr', /watching for changes/);
    const before = count(watch.stderr(), /watching for changes/);
    fs.renameSync(path.join(root, 'capabilities/alpha'), path.join(root, 'capabilities/beta'));
    await watch.waitFor('stderr', new RegExp(`(watching for changes[\\s\\S]*){${before + 1}}`));
    expect(watch.stderr()).not.toMatch(/stopped watching/);
    expect(await watch.stop()).toBe(0);
  });
});

// `--watch` for build and lint: compile once, then again after every change under capabilities/
// or to capreg.config.yaml, through one CompileSession (only the changed files are read and
// parsed again). Status lines (stderr) start with the local time; stdout keeps the formatter's
// exact output. Stops on SIGINT or SIGTERM, after the compile in progress, and with exit code 2
// when the registry holds more files or folders than limits.maxFiles (see countWatched), or when
// the root folder itself is removed, moved away or replaced; then the compile in progress is
// dropped (it read a registry the watch no longer follows), and the line that says why is the last one.
import { lstatSync, opendirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import { CONFIG_FILE } from '../compiler/config.js';
import { MAX_FOLDER_DEPTH } from '../compiler/layout.js';
import { LIMITS } from '../compiler/limits.js';
import { CompileSession, type SessionCompile, type SessionOptions } from './compile-session.js';
import type { CliContext } from './context.js';
import { loadConfig } from './load-config.js';
import { RegistryBudget } from './read-registry.js';
import { plainText } from '../compiler/formatters/escape.js';

/** Changes this close together are compiled together (a save of several files, a `git checkout`). */
const SETTLE_MS = 25;
/** After capabilities/ itself was moved, how long no further move must come before it is watched anew (see rewatch). */
const REWATCH_SETTLE_MS = 250;

/** A signal this soon after the one that stopped the watch is a copy of it, not a second Ctrl-C. */
export const REPEATED_SIGNAL_MS = 300;

/** How long a compile's report waits at most for the watcher of the link targets it found new. */
const TARGET_READY_MS = 5_000;

/** What every watcher of the registry's files is started with. */
const WATCH_OPTIONS = {
  ignoreInitial: true,
  ignored: (file: string) => path.basename(file).startsWith('.'),
  // Folders below the limit are not read (read-registry.ts); a folder made there is still seen.
  depth: MAX_FOLDER_DEPTH,
  // Links are watched as links, and their targets by their own paths (after each compile): followed,
  // a few links back to their own folder make the watcher walk every path through them, without end.
  followSymlinks: false,
};

/** `HH:MM:SS` in local time, for watch-mode lines (a terminal left open needs to say when). */
function localTime(date: Date): string {
  return [date.getHours(), date.getMinutes(), date.getSeconds()].map((part) => String(part).padStart(2, '0')).join(':');
}

/** Every line of `text` prefixed with the local time. */
function stamped(text: string): string {
  const time = localTime(new Date());
  return text.replace(/^(?=.)/gm, `${time} `);
}

/** What one compile changed, for the status line: "3 files changed, 1 parsed". */
export function describeCompile(compiled: SessionCompile, elapsedMs: number): string {
  const capabilities = compiled.result.registry.capabilities.length;
  const what =
    compiled.kind === 'full'
      ? `read the registry (${compiled.read} files, ${compiled.parsed} parsed)`
      : `${compiled.read} file(s) read, ${compiled.parsed} parsed`;
  return `${what}; linted ${capabilities} ${capabilities === 1 ? 'capability' : 'capabilities'} in ${Math.round(elapsedMs)} ms`;
}

const CAPABILITIES_MISSING = 'capabilities/ is missing (moved or removed); the watch goes on and reads it again when it is back';

/** Device and inode of a folder, or 'missing': a folder removed and made again is another one. */
function folderIdentity(folder: string): string {
  const stats = statSync(folder, { throwIfNoEntry: false });
  return stats === undefined ? 'missing' : `${stats.dev}:${stats.ino}`;
}

/** What the watcher holds: files (a link is one, it is not followed) and folders. */
export interface Watched {
  files: number;
  folders: number;
}

/**
 * The files and folders under `dir` that the watcher would watch (not hidden, links not followed,
 * folders to MAX_FOLDER_DEPTH). chokidar keeps an OS watch and a record for each, and walks the
 * whole tree before it is ready: a folder of 200,000 files copied into capabilities/ took it 100 s
 * and 1.4 GB before the first compile could refuse it. So the watch counts first, and the count
 * stops once either number passes `limit`: a folder is read entry by entry, never whole.
 */
export function countWatched(dir: string, limit: number): Watched {
  const counted: Watched = { files: 0, folders: 0 };
  const over = (): boolean => counted.files > limit || counted.folders > limit;
  const walk = (folder: string, depth: number): void => {
    let handle;
    try {
      handle = opendirSync(folder);
    } catch {
      return; // the compile says what it cannot read
    }
    try {
      for (let entry = handle.readSync(); entry !== null && !over(); entry = handle.readSync()) {
        if (entry.name.startsWith('.')) continue;
        if (!entry.isDirectory()) counted.files += 1;
        else if (depth <= MAX_FOLDER_DEPTH) {
          counted.folders += 1;
          walk(path.join(folder, entry.name), depth + 1);
        }
      }
    } finally {
      handle.closeSync();
    }
  };
  walk(dir, 1);
  return counted;
}

/** Why `watched` is more than watch mode takes under `maxFiles` (the read's own refusal), or undefined. */
export function watchRefusal(watched: Watched, maxFiles: number): string | undefined {
  const budget = new RegistryBudget({ maxFiles });
  return budget.filesRefusal(watched.files) ?? budget.foldersRefusal(watched.folders);
}

/** One line per kind of watcher error: without watches left, chokidar reports every file it could not watch. */
export function watcherErrorLine(error: unknown): { code: string; line: string } {
  const code = (error as NodeJS.ErrnoException).code ?? 'unknown';
  const message = error instanceof Error ? error.message : String(error);
  const hint =
    code === 'ENOSPC'
      ? '; the system allows no more file watches (fs.inotify.max_user_watches on Linux), so changes to the files it could not watch are not seen: raise that limit, or watch a smaller registry'
      : code === 'EMFILE'
        ? '; the process may open no more files (ulimit -n), so changes to the files it could not watch are not seen: raise that limit, or watch a smaller registry'
        : '';
  return { code, line: `watching failed: ${message}${hint} (further errors of this kind are not shown)` };
}

export interface WatchOptions extends SessionOptions {
  /** The command's name in status lines (`capreg build`). */
  command: string;
  /** Reports (and writes) one compile; called once per compile, never twice at once. */
  onCompile(compiled: SessionCompile, context: CliContext, elapsedMs: number): Promise<void> | void;
}

export async function watchRegistry(root: string, options: WatchOptions, outer: CliContext): Promise<number> {
  const context: CliContext = { ...outer, stderr: (text) => outer.stderr(stamped(text)) };
  // The limit of the configuration as it is now (the compile reports a broken one), then of each compile's.
  const configuredMaxFiles = (): Promise<number> =>
    loadConfig(root).then(
      (config) => config.maxFiles,
      () => LIMITS.maxFiles.default,
    );
  let maxFiles = await configuredMaxFiles();
  const capabilities = path.join(root, 'capabilities');
  const watched = countWatched(capabilities, maxFiles);
  const refused = watchRefusal(watched, maxFiles);
  if (refused !== undefined) {
    context.stderr(`${options.command}: not watching: ${refused}\n`);
    return 2;
  }
  const session = new CompileSession(root, options);
  let running = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let stopping = false;
  let dropping = false;
  let resolveStopped: (code: number) => void = () => undefined;
  const stopped = new Promise<number>((resolve) => (resolveStopped = resolve));
  const stop = (code: number): void => {
    stopping = true;
    resolveStopped(code);
  };
  // A signal stops the watch (exit 0) after the compile in progress, even while the watchers are
  // still starting. The same again within REPEATED_SIGNAL_MS is a copy of it (Ctrl-C reaches both
  // the launcher, which passes it on, and this process: cli/respawn.ts; so does a signal sent to
  // the process group); a later one ends the process at once, as a second Ctrl-C does.
  let firstSignalAt: number | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (firstSignalAt === undefined) {
      firstSignalAt = performance.now();
      stop(0);
    } else if (performance.now() - firstSignalAt >= REPEATED_SIGNAL_MS) {
      stopListening();
      process.kill(process.pid, signal);
    }
  };
  const stopListening = (): void => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  /** While a compile is being reported, a line that stops the watch waits for the report's end. */
  let reporting = false;
  let lastLine: string | undefined;
  /** Take the count from the disk; past the limit, say so and stop (exit 2). */
  const stoppedOnDiskCount = (): boolean => {
    Object.assign(watched, countWatched(capabilities, maxFiles));
    const refusal = watchRefusal(watched, maxFiles);
    if (refusal === undefined) return false;
    const line = `${options.command}: stopped watching: ${refusal}\n`;
    if (reporting) lastLine = line;
    else context.stderr(line);
    dropping = true;
    stop(2);
    return true;
  };
  /**
   * The root itself removed, moved away or replaced (`rm -rf repo && git clone …`): the watchers
   * follow folders that are no longer the registry at its path, and would wait for ever. Checked
   * every second and after each compile (whose read it drops); the watch says so and stops (exit 2).
   */
  const rootIdentity = folderIdentity(root);
  const stoppedOnRootGone = (): boolean => {
    if (folderIdentity(root) === rootIdentity) return false;
    if (!stopping) {
      const line = `${options.command}: stopped watching: ${root} was removed, moved or replaced; start the watch again\n`;
      if (reporting) lastLine = line;
      else context.stderr(line);
      dropping = true;
      stop(2);
    }
    return true;
  };
  const rootCheck = setInterval(stoppedOnRootGone, 1_000);
  rootCheck.unref();
  /**
   * A folder was added or removed, or the config changed, since the last compile: the count is taken
   * again from the disk after the next one. chokidar misses files made in a new folder between its
   * scan of the folder and its watch of it (paulmillr/chokidar#1471), so the count the events keep
   * can fall short; and a new limit applies to what is there already.
   */
  let recountDue = false;
  /** Why a compile failed, said plainly: capabilities/ gone is not a system error to the user. */
  const compileFailure = (error: unknown): { text: string; missing: boolean } => {
    const failure = error as NodeJS.ErrnoException;
    if (failure.code === 'ENOENT' && failure.path === capabilities) return { text: CAPABILITIES_MISSING, missing: true };
    return { text: plainText(error instanceof Error ? error.message : String(error)), missing: false };
  };
  /** The last compile failed because capabilities/ was missing, and that was said. */
  let missingSaid = false;
  const compile = (): void => {
    const recount = recountDue;
    recountDue = false;
    running = running.then(async () => {
      const started = performance.now();
      const compiled = await session.compile().then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      );
      if ('result' in compiled) maxFiles = compiled.result.config.maxFiles;
      if (recount && !stopping) {
        // A compile refused for the limit read the config's new one; so does this.
        if ('error' in compiled) maxFiles = await configuredMaxFiles();
        if (stoppedOnDiskCount()) return;
      }
      if (dropping || stoppedOnRootGone()) return;
      reporting = true;
      let repeated = false;
      try {
        if ('error' in compiled) throw compiled.error;
        const elapsed = performance.now() - started;
        await watchLinkTargets();
        missingSaid = false;
        await options.onCompile(compiled.result, context, elapsed);
      } catch (error) {
        // capabilities/ gone is said once while it lasts: each event under it compiles again, and
        // a tool that rewrites the folder would fill the terminal. Other failures are said each time
        // (an edit to a bad config must show it was read).
        const failure = compileFailure(error);
        repeated = failure.missing && missingSaid;
        missingSaid = failure.missing;
        if (!repeated) context.stderr(`${options.command}: ${failure.text}\n`);
      } finally {
        reporting = false;
      }
      if (repeated) return;
      if (lastLine !== undefined) context.stderr(lastLine);
      else if (!stopping) context.stderr(`${options.command}: watching for changes (Ctrl-C to stop)\n`);
    });
  };
  const configFile = path.resolve(root, CONFIG_FILE);
  /**
   * capabilities/, or the folder it links to when it is a link to a folder in the root (which the
   * read follows): the watcher does not follow links, and would see the link, not what is under it.
   * Taken again by each new watcher (rewatch), so a swapped link is followed.
   */
  const capabilitiesTarget = (): string => {
    try {
      if (!lstatSync(capabilities).isSymbolicLink()) return capabilities;
      const real = realpathSync(capabilities);
      return real.startsWith(`${realpathSync(root)}${path.sep}`) ? real : capabilities;
    } catch {
      return capabilities;
    }
  };
  /**
   * A watcher of capabilities/ whose events count once it is ready: before that, chokidar reports
   * the links it meets as added (even with ignoreInitial), and what was there is read whole by the
   * compile that follows its ready (`onReady`). The config file is the root watcher's (below).
   */
  const newWatcher = (onReady: () => void): FSWatcher => {
    const made = watch(capabilitiesTarget(), WATCH_OPTIONS);
    let madeReady = false;
    made.once('ready', () => {
      madeReady = true;
      onReady();
    });
    made.on('error', onWatcherError);
    made.on('all', (event, file) => {
      // capabilities/ itself is the root watcher's (a move).
      if (madeReady && path.resolve(file) !== capabilities) onEvent(event, file);
    });
    return made;
  };
  /**
   * Link targets outside capabilities/ (under it, the watcher sees them by their own paths): those a
   * compile found new are watched by a watcher of their own, whose ready the compile's report waits
   * for, so that "watching for changes" is said once an edit to them is seen too.
   */
  const watchedTargets = new Set<string>();
  const targetWatchers: FSWatcher[] = [];
  const watchLinkTargets = async (): Promise<void> => {
    const inside = `${realpathSync(capabilities)}${path.sep}`;
    const fresh = session.linkTargets().filter((target) => !target.startsWith(inside) && !watchedTargets.has(target));
    if (fresh.length === 0) return;
    for (const target of fresh) watchedTargets.add(target);
    const made = watch(fresh, WATCH_OPTIONS);
    targetWatchers.push(made);
    made.on('error', onWatcherError);
    let madeReady = false;
    made.on('all', (event, file) => {
      // While it scans, chokidar reports links it meets as added; an edit or a removal is news
      // (the compile read the target just before: a change now must compile again).
      if (madeReady || (event !== 'add' && event !== 'addDir')) onEvent(event, file);
    });
    await new Promise<void>((resolve) => {
      // Bounded: a watcher that never says it is ready (it could not watch) does not hold the
      // report, and a stop does not wait for it.
      const bound = setTimeout(resolve, TARGET_READY_MS);
      const done = (): void => {
        clearTimeout(bound);
        resolve();
      };
      made.once('ready', done);
      void stopped.then(done);
    });
    madeReady = true;
  };
  // A watcher that fails (no inotify watches left, a folder it cannot read) is reported, not a crash.
  const reportedErrors = new Set<string>();
  const onWatcherError = (error: unknown): void => {
    const { code, line } = watcherErrorLine(error);
    if (reportedErrors.has(code)) return;
    reportedErrors.add(code);
    context.stderr(`${options.command}: ${line}\n`);
  };
  let watcher!: FSWatcher;
  const firstWatcherReady = new Promise<void>((resolve) => (watcher = newWatcher(resolve)));
  let ready = false;
  const onEvent = (event: string, file: string): void => {
    // Before the first compile, what is there was counted above and is read whole.
    if (!ready || stopping) return;
    // The count from here on follows the events. They can run ahead of the disk (a rename is
    // reported added at once and removed 100 ms later) or miss it (link targets are watched by
    // their own paths): past the limit, it is taken again from the disk before anything stops.
    const folder = event === 'addDir' || event === 'unlinkDir';
    const change = event === 'add' || event === 'addDir' ? 1 : event === 'unlink' || event === 'unlinkDir' ? -1 : 0;
    if (folder) watched.folders = Math.max(0, watched.folders + change);
    else watched.files = Math.max(0, watched.files + change);
    if (watchRefusal(watched, maxFiles) !== undefined && stoppedOnDiskCount()) return;
    if (folder || path.resolve(file) === configFile) recountDue = true;
    session.noteChange(file, folder);
    clearTimeout(timer);
    timer = setTimeout(compile, SETTLE_MS);
  };
  /**
   * capabilities/ itself removed or renamed and back (a branch switch, a tool that writes the folder
   * anew): the watcher drops a watched folder that goes away and never sees it again, and after a
   * quick run of such moves it could even lose the watches of the folders under it while it still
   * listed them (about one run in four of 20 quick renames; watching capabilities/ anew on the same
   * watcher did not mend that). So the root is watched for that one entry, and once no move has
   * come for REWATCH_SETTLE_MS a new watcher replaces the old one and the registry is read whole
   * (what changed meanwhile is read then). Each move is also an event of its own: the compile after
   * a removal says capabilities/ is missing.
   */
  let rewatchTimer: NodeJS.Timeout | undefined;
  const rewatch = (): void => {
    if (stopping) return;
    const old = watcher;
    // The registry is read whole once the new watcher is ready: a change made while it scans is
    // then read by that compile, whether or not the watcher saw it.
    watcher = newWatcher(() => {
      if (stopping) return;
      recountDue = true;
      session.noteChange(capabilities, true);
      clearTimeout(timer);
      timer = setTimeout(compile, SETTLE_MS);
    });
    old.close().catch(onWatcherError);
  };
  // The root's two entries that matter: capabilities/ (moved, swapped) and the config file (made,
  // edited, removed). Watched at depth 0: a watcher given a config file that does not exist watches
  // its folder, the root, at the capabilities watcher's depth, and reported the links under
  // capabilities/ as added once it was ready, which compiled everything again at start.
  const rootWatcher = watch(root, {
    ignoreInitial: true,
    depth: 0,
    followSymlinks: false,
    ignored: (file) => ![path.resolve(root), capabilities, configFile].includes(path.resolve(file)),
  });
  rootWatcher.on('error', onWatcherError);
  rootWatcher.on('all', (event, file) => {
    // Before the first compile: a link reported as added by the first scan, not a move.
    if (!ready || stopping) return;
    if (path.resolve(file) === configFile) return onEvent(event, file);
    if (path.resolve(file) !== capabilities) return;
    clearTimeout(rewatchTimer);
    rewatchTimer = setTimeout(rewatch, REWATCH_SETTLE_MS);
    onEvent(event === 'add' ? 'addDir' : event === 'unlink' ? 'unlinkDir' : event, file);
  });
  await Promise.all([firstWatcherReady, new Promise<void>((resolve) => rootWatcher.once('ready', () => resolve()))]);
  ready = true;
  if (!stopping) compile();
  const code = await stopped;
  clearTimeout(timer);
  clearTimeout(rewatchTimer);
  clearInterval(rootCheck);
  await running;
  await Promise.all([watcher, rootWatcher, ...targetWatchers].map((each) => each.close()));
  // A copy of the signal may still be on its way while the process ends.
  if (firstSignalAt === undefined) stopListening();
  else setTimeout(stopListening, Math.max(0, firstSignalAt + REPEATED_SIGNAL_MS - performance.now())).unref();
  return code;
}

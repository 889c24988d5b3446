// `--watch` for build and lint: compile once, then again after every change under capabilities/
// or to capreg.config.yaml, through one CompileSession (only the changed files are read and
// parsed again). Status lines (stderr) start with the local time; stdout keeps the formatter's
// exact output. Stops on SIGINT or SIGTERM, after the compile in progress.
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { watch } from 'chokidar';
import { CONFIG_FILE } from '../compiler/config.js';
import { MAX_FOLDER_DEPTH } from '../compiler/layout.js';
import { CompileSession, type SessionCompile, type SessionOptions } from './compile-session.js';
import type { CliContext } from './context.js';

/** Changes this close together are compiled together (a save of several files, a `git checkout`). */
const SETTLE_MS = 25;

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

export interface WatchOptions extends SessionOptions {
  /** The command's name in status lines (`capreg build`). */
  command: string;
  /** Reports (and writes) one compile; called once per compile, never twice at once. */
  onCompile(compiled: SessionCompile, context: CliContext, elapsedMs: number): Promise<void> | void;
}

export async function watchRegistry(root: string, options: WatchOptions, outer: CliContext): Promise<number> {
  const context: CliContext = { ...outer, stderr: (text) => outer.stderr(stamped(text)) };
  const session = new CompileSession(root, options);
  let running = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const compile = (): void => {
    running = running.then(async () => {
      const started = performance.now();
      try {
        const compiled = await session.compile();
        watchLinkTargets();
        await options.onCompile(compiled, context, performance.now() - started);
      } catch (error) {
        context.stderr(`${options.command}: ${error instanceof Error ? error.message : String(error)}\n`);
      }
      context.stderr(`${options.command}: watching for changes (Ctrl-C to stop)\n`);
    });
  };
  const watcher = watch([path.join(root, 'capabilities'), path.join(root, CONFIG_FILE)], {
    ignoreInitial: true,
    ignored: (file) => path.basename(file).startsWith('.'),
    // Folders below the limit are not read (read-registry.ts); a folder made there is still seen.
    depth: MAX_FOLDER_DEPTH,
    // Links are watched as links, and their targets by their own paths (below, after each compile):
    // followed, a few links back to their own folder make the watcher walk every path through them, without end.
    followSymlinks: false,
  });
  // Link targets outside capabilities/ (under it, the watcher sees them by their own paths).
  const watchedTargets = new Set<string>();
  const watchLinkTargets = (): void => {
    const inside = `${realpathSync(path.join(root, 'capabilities'))}${path.sep}`;
    const fresh = session.linkTargets().filter((target) => !target.startsWith(inside) && !watchedTargets.has(target));
    for (const target of fresh) watchedTargets.add(target);
    if (fresh.length > 0) watcher.add(fresh);
  };
  // A watcher that fails (no inotify watches left, a folder it cannot read) is reported, not a crash.
  watcher.on('error', (error) => {
    context.stderr(`${options.command}: watching failed: ${error instanceof Error ? error.message : String(error)}\n`);
  });
  watcher.on('all', (event, file) => {
    session.noteChange(file, event === 'addDir' || event === 'unlinkDir');
    clearTimeout(timer);
    timer = setTimeout(compile, SETTLE_MS);
  });
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  compile();
  await new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  clearTimeout(timer);
  await running;
  await watcher.close();
  return 0;
}

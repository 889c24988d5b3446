// Watching a file that gets replaced, not edited: `capreg build` writes a temporary file and
// renames it over the old one, and deployments swap symlinks. Watching the file itself would lose
// track after the first rename, so the parent directory is watched and events are filtered on the
// file's name (and on its symlink target, and on Kubernetes-style `..data` swaps). A burst of
// events is debounced into one reload.
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';

export interface FileWatch {
  close(): Promise<void>;
  /** Resolves once the watcher has scanned its directories and reports changes. */
  ready: Promise<void>;
}

export interface WatchOptions {
  debounceMs?: number;
  log?: (line: string) => void;
}

export function watchFile(file: string, onChange: () => void, options: WatchOptions = {}): FileWatch {
  const debounceMs = options.debounceMs ?? 50;
  const log = options.log ?? (() => {});
  const target = path.resolve(file);
  const ownDir = path.dirname(target);
  // Basenames, because the raw directory events carry only the name of the entry that changed.
  const relevantNames = new Set<string>([path.basename(target)]);
  const watchedDirs = new Set<string>([ownDir]);

  const watcher: FSWatcher = watch([ownDir], { ignoreInitial: true, depth: 0, persistent: true });

  // A symlinked file can be rewritten where it really lives; follow the link's current target.
  const followTarget = (): void => {
    let real: string;
    try {
      real = realpathSync(target);
    } catch {
      return;
    }
    relevantNames.add(path.basename(real));
    const realDir = path.dirname(real);
    if (!watchedDirs.has(realDir)) {
      watchedDirs.add(realDir);
      watcher.add(realDir);
    }
  };
  followTarget();

  // Trailing debounce, but a steady stream of writes still reloads at least every `maxWaitMs`.
  const maxWaitMs = debounceMs * 4;
  let timer: NodeJS.Timeout | undefined;
  let burstStarted: number | undefined;
  const fire = (): void => {
    timer = undefined;
    burstStarted = undefined;
    followTarget();
    onChange();
  };
  const schedule = (): void => {
    const now = Date.now();
    burstStarted ??= now;
    clearTimeout(timer);
    timer = setTimeout(fire, Math.max(0, Math.min(debounceMs, burstStarted + maxWaitMs - now)));
  };
  const isRelevant = (changed: string): boolean => {
    const name = path.basename(changed);
    return relevantNames.has(name) || name.startsWith('..');
  };
  watcher.on('all', (_event, changed) => {
    if (isRelevant(changed)) schedule();
  });
  // chokidar throttles `change` events per path: two renames within a few tens of milliseconds
  // yield one event, which may come before the second write. The raw events of the directory
  // watch are not throttled, so they are watched too; the debounce merges both.
  watcher.on('raw', (_event, changed) => {
    if (typeof changed === 'string' && changed !== '' && isRelevant(changed)) schedule();
  });
  watcher.on('error', (error) => log(`capreg serve: watching ${file} failed: ${(error as Error).message}`));

  const ready = new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return {
    ready,
    close: async () => {
      clearTimeout(timer);
      await watcher.close();
    },
  };
}

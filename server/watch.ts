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
  const debounceMs = options.debounceMs ?? 75;
  const log = options.log ?? (() => {});
  const target = path.resolve(file);
  const ownDir = path.dirname(target);
  const relevant = new Set<string>([target]);
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
    relevant.add(real);
    const realDir = path.dirname(real);
    if (!watchedDirs.has(realDir)) {
      watchedDirs.add(realDir);
      watcher.add(realDir);
    }
  };
  followTarget();

  let timer: NodeJS.Timeout | undefined;
  watcher.on('all', (_event, changed) => {
    const absolute = path.resolve(changed);
    const swapsLink = path.dirname(absolute) === ownDir && path.basename(absolute).startsWith('..');
    if (!relevant.has(absolute) && !swapsLink) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      followTarget();
      onChange();
    }, debounceMs);
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

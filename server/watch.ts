// Watching a file that gets replaced, not edited. `capreg build` renames a temporary file over the
// old one, deployments run `rm -rf dist && capreg build` or `mv dist.new dist`, and swap symlinks
// (Kubernetes swaps a `..data` link). A watch on the file, or only on its folder, dies with the
// inode it was set on. So the path is resolved one component at a time, following every symlink,
// and each folder met on the way is watched for the one entry name that leads on (up to the nearest
// folder that exists). Any event on such a name re-resolves the path and re-arms the watches on
// folders that were replaced, then schedules one debounced reload. A cheap periodic stat of the
// resolved file (device, inode, size, mtime) is the safety net for anything the events miss.
import { watch, type FSWatcher } from 'node:fs';
import { lstat, readlink, stat } from 'node:fs/promises';
import path from 'node:path';
import { errorCode, statIdentity } from './read-file.js';

export interface FileWatch {
  close(): Promise<void>;
  /** Resolves once the watches are set and report changes. */
  ready: Promise<void>;
}

export interface WatchOptions {
  debounceMs?: number;
  /** Interval of the stat safety net. */
  pollMs?: number;
  log?: (line: string) => void;
  /** Asked by the safety net: the last reload must run again though nothing changed (a read that timed out). */
  retryDue?: () => boolean;
}

/** Like the kernel's limit on symlinks followed in one lookup (ELOOP). */
const MAX_SYMLINK_HOPS = 40;

/**
 * Each folder whose entries decide what `file` resolves to, with the entry names that matter in
 * it: every component of the path, every component of every symlink target followed on the way.
 */
export async function watchPoints(file: string): Promise<Map<string, Set<string>>> {
  const points = new Map<string, Set<string>>();
  const target = path.resolve(file);
  let current = path.parse(target).root;
  const pending = target.slice(current.length).split(path.sep);
  let hops = 0;
  while (pending.length > 0) {
    const name = pending.shift() as string;
    if (name === '' || name === '.') continue;
    if (name === '..') {
      current = path.dirname(current);
      continue;
    }
    let names = points.get(current);
    if (names === undefined) points.set(current, (names = new Set()));
    names.add(name);
    const next = path.join(current, name);
    let entry;
    try {
      entry = await lstat(next);
    } catch {
      break; // does not exist (yet): its folder's watch sees it appear
    }
    if (entry.isSymbolicLink()) {
      hops += 1;
      if (hops > MAX_SYMLINK_HOPS) break;
      let link: string;
      try {
        link = await readlink(next);
      } catch {
        break;
      }
      if (path.isAbsolute(link)) current = path.parse(link).root;
      pending.unshift(...link.slice(path.isAbsolute(link) ? current.length : 0).split(path.sep));
      continue;
    }
    if (pending.length === 0 || !entry.isDirectory()) break;
    current = next;
  }
  return points;
}

interface DirectoryWatch {
  watcher: FSWatcher;
  /** Device and inode of the folder the watch was set on: a replaced folder needs a new watch. */
  identity: string;
  names: Set<string>;
}

export function watchFile(file: string, onChange: () => void, options: WatchOptions = {}): FileWatch {
  const debounceMs = options.debounceMs ?? 50;
  const pollMs = options.pollMs ?? 1_000;
  const log = options.log ?? (() => {});
  const target = path.resolve(file);
  const watches = new Map<string, DirectoryWatch>();
  const unwatchable = new Set<string>();
  let closed = false;
  /** Set once the first watches are armed: from then on a new watch may have missed a write. */
  let started = false;

  // Trailing debounce, but a steady stream of writes still reloads at least every `maxWaitMs`.
  const maxWaitMs = debounceMs * 4;
  let timer: NodeJS.Timeout | undefined;
  let burstStarted: number | undefined;
  const fire = (): void => {
    timer = undefined;
    burstStarted = undefined;
    if (!closed) onChange();
  };
  const schedule = (): void => {
    const now = Date.now();
    burstStarted ??= now;
    clearTimeout(timer);
    timer = setTimeout(fire, Math.max(0, Math.min(debounceMs, burstStarted + maxWaitMs - now)));
  };

  // Re-arming runs one at a time; events during a run ask for one more run after it.
  let arming: Promise<void> | undefined;
  let armAgain = false;
  const rearm = (): Promise<void> => {
    if (arming) {
      armAgain = true;
      return arming;
    }
    arming = (async () => {
      do {
        armAgain = false;
        await arm();
      } while (armAgain && !closed);
    })()
      .catch((error: unknown) => log(`capreg serve: watching ${file} failed: ${errorCode(error)}`))
      .finally(() => (arming = undefined));
    return arming;
  };
  const changed = (): void => {
    if (closed) return;
    schedule();
    void rearm();
  };

  const arm = async (): Promise<void> => {
    const points = await watchPoints(target);
    if (closed) return;
    for (const [dir, current] of watches) {
      if (!points.has(dir)) {
        current.watcher.close();
        watches.delete(dir);
      }
    }
    let replaced = false;
    for (const [dir, names] of points) {
      let identity: string;
      try {
        const stats = await stat(dir, { bigint: true });
        identity = `${stats.dev}:${stats.ino}`;
      } catch {
        continue; // gone again: the event that says so re-arms
      }
      if (closed) return;
      const existing = watches.get(dir);
      if (existing && existing.identity === identity) {
        existing.names = names;
        continue;
      }
      existing?.watcher.close();
      watches.delete(dir);
      try {
        const watcher = watch(dir, { persistent: false }, (_event, name) => {
          // No name: the kernel dropped events; assume it was ours.
          if (name === null || watches.get(dir)?.names.has(name.toString())) changed();
        });
        watcher.on('error', () => {
          watcher.close();
          if (watches.get(dir)?.watcher === watcher) watches.delete(dir);
          changed();
        });
        watches.set(dir, { watcher, identity, names });
        replaced = true;
      } catch (error) {
        // Said once per folder: every later event would otherwise say it again.
        if (errorCode(error) !== 'ENOENT' && !unwatchable.has(dir)) {
          unwatchable.add(dir);
          log(`capreg serve: cannot watch ${dir}: ${errorCode(error)}; checking every ${pollMs} ms instead`);
        }
      }
    }
    // A new folder may already hold the file, written before its watch was set.
    if (replaced && started) schedule();
  };

  // The safety net: whatever the events missed (a folder replaced between two lookups, a network
  // file system, no inotify watches left), a changed identity of the resolved file is noticed.
  let lastIdentity: string | undefined;
  let polling = false;
  const poll = async (): Promise<void> => {
    if (polling || closed) return;
    polling = true;
    try {
      const identity = await statIdentity(target);
      if ((lastIdentity !== undefined && identity !== lastIdentity) || options.retryDue?.() === true) changed();
      lastIdentity = identity;
    } finally {
      polling = false;
    }
  };
  const interval = setInterval(() => void poll(), pollMs);
  interval.unref();

  const ready = Promise.all([rearm(), poll()]).then(() => {
    started = true;
  });
  return {
    ready,
    close: async () => {
      closed = true;
      clearTimeout(timer);
      clearInterval(interval);
      await arming;
      for (const { watcher } of watches.values()) watcher.close();
      watches.clear();
    },
  };
}

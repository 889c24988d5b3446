// Write a file so that readers see the old content or the new content, never a half-written file:
// write a temporary file in the same folder, flush it, then rename it over the target.
import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';

/**
 * This machine, in the names of its temporary files: a writer's process id means something only
 * where it was given, so the tag is made of the host name, the boot (Linux's boot id) and the
 * process-id namespace (a container's own). Replicas that share a folder on a network volume, a
 * container restarted with the same pid, a machine rebooted since: another tag, whose temporary
 * files are judged by their age alone.
 */
const HOST_TAG = createHash('sha256')
  .update(
    [hostname(), readOrEmpty(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()), readOrEmpty(() => readlinkSync('/proc/self/ns/pid'))].join(
      '\0',
    ),
  )
  .digest('hex')
  .slice(0, 8);

function readOrEmpty(read: () => string): string {
  try {
    return read();
  } catch {
    return '';
  }
}

/**
 * A temporary file's age after which another host's is stale: a writer adds to its temporary file
 * and renames it within one build or one poll (minutes at most), so one untouched for this long
 * was left by a writer that is gone. (This host's are judged by whether their process runs.)
 */
export const STALE_TEMPORARY_MS = 60 * 60 * 1000;

/** `.<name>.<pid>@<host>.<8 hex>.tmp` beside `target`: where a writer of `target` writes before the rename. */
export function temporaryPath(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}@${HOST_TAG}.${randomBytes(4).toString('hex')}.tmp`);
}

/** @param options.sync flush before the rename (default): off for caches, which need to be whole but not durable. */
export async function writeFileAtomic(target: string, content: string | Uint8Array, options: { sync?: boolean } = {}): Promise<void> {
  await mkdir(path.dirname(target), { recursive: true });
  const temporary = temporaryPath(target);
  const handle = await open(temporary, 'w');
  try {
    try {
      await handle.writeFile(content);
      if (options.sync !== false) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, target);
  } catch (error) {
    // A full disk or a failed rename must not leave the temporary file behind.
    await rm(temporary, { force: true });
    throw error;
  }
}

/**
 * Several files that belong together (a manifest and its signature): every temporary file is
 * written and flushed first, then they are renamed in the given order, back to back, so a reader
 * sees a mixed pair only in the microseconds between two renames (and a verifier retries those).
 */
export async function writeFilesAtomic(files: readonly { target: string; content: string | Uint8Array }[]): Promise<void> {
  const temporaries: string[] = [];
  try {
    for (const { target, content } of files) {
      await mkdir(path.dirname(target), { recursive: true });
      const temporary = temporaryPath(target);
      temporaries.push(temporary);
      const handle = await open(temporary, 'w');
      try {
        await handle.writeFile(content);
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
    for (const [index, { target }] of files.entries()) await rename(temporaries[index] as string, target);
  } catch (error) {
    await Promise.all(temporaries.map((temporary) => rm(temporary, { force: true })));
    throw error;
  }
}

/**
 * The temporary files above and the parse cache's shards (cli/parse-cache.ts): `.<name>.<pid>@<host>.<8 hex>.tmp`,
 * or `.<name>.<pid>.<8 hex>.tmp` as capreg wrote them before it named the host (taken as this host's).
 */
const TEMPORARY = /^\.(.+)\.(\d+)(?:@([0-9a-f]{8}))?\.[0-9a-f]{8}\.tmp$/;

/**
 * Remove the temporary files that a writer of `targets` left when it was killed (SIGKILL, Ctrl-C,
 * a crash between write and rename): this host's when their process no longer runs; another
 * host's (see HOST_TAG) once untouched for STALE_TEMPORARY_MS. Nothing else removes them, and each
 * is as large as its output (a manifest, a parse-cache shard). A running writer's files are left
 * alone; an error only leaves them where they are.
 */
export async function removeStaleTemporaries(targets: readonly string[], now = Date.now()): Promise<void> {
  const byFolder = new Map<string, Set<string>>();
  for (const target of targets) {
    const folder = path.dirname(target);
    if (!byFolder.has(folder)) byFolder.set(folder, new Set());
    byFolder.get(folder)!.add(path.basename(target));
  }
  for (const [folder, names] of byFolder) {
    let entries: string[];
    try {
      entries = await readdir(folder);
    } catch {
      continue;
    }
    for (const entry of entries) {
      const match = TEMPORARY.exec(entry);
      if (!match || !names.has(match[1]!)) continue;
      const file = path.join(folder, entry);
      const thisHost = match[3] === undefined || match[3] === HOST_TAG;
      const stale = thisHost ? !isRunning(Number(match[2])) : await untouchedSince(file, now - STALE_TEMPORARY_MS);
      if (!stale) continue;
      await rm(file, { force: true }).catch(() => undefined);
    }
  }
}

/** Whether `file` (not followed if a link) was last modified before `time`; false when it cannot be told. */
async function untouchedSince(file: string, time: number): Promise<boolean> {
  try {
    return (await lstat(file)).mtimeMs < time;
  } catch {
    return false;
  }
}

function isRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// Write a file so that readers see the old content or the new content, never a half-written file:
// write a temporary file in the same folder, flush it, then rename it over the target.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/** @param options.sync flush before the rename (default): off for caches, which need to be whole but not durable. */
export async function writeFileAtomic(target: string, content: string | Uint8Array, options: { sync?: boolean } = {}): Promise<void> {
  await mkdir(path.dirname(target), { recursive: true });
  const temporary = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
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
      const temporary = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
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

/** `.<name>.<pid>.<8 hex>.tmp`: the temporary files above, and the parse cache's shards (cli/parse-cache.ts). */
const TEMPORARY = /^\.(.+)\.(\d+)\.[0-9a-f]{8}\.tmp$/;

/**
 * Remove the temporary files that a writer of `targets` left when it was killed (SIGKILL, Ctrl-C,
 * a crash between write and rename): those of a process that no longer runs. Nothing else removes
 * them, and each is as large as its output (a manifest, a parse-cache shard). A running writer's
 * files are left alone; an error only leaves them where they are.
 */
export async function removeStaleTemporaries(targets: readonly string[]): Promise<void> {
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
      if (!match || !names.has(match[1]!) || isRunning(Number(match[2]))) continue;
      await rm(path.join(folder, entry), { force: true }).catch(() => undefined);
    }
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

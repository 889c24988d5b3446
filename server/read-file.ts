// Reading a file the server was told to serve from, bounded: opened without blocking (a FIFO
// would otherwise block the read, and every reload queued behind it, forever), refused unless it
// is a regular file, refused over a size limit, and given up on after a time limit. Also the
// identity (device, inode, size, mtime, ctime) by which a replaced or rewritten file is noticed.
import { closeSync, constants, fstatSync, openSync, readSync, type BigIntStats } from 'node:fs';
import { open, stat } from 'node:fs/promises';

export interface ReadLimits {
  maxBytes: number;
  timeoutMs: number;
}

export type ReadResult = { ok: true; text: string; identity: string } | { ok: false; reason: string; identity: string };

/**
 * Unless a file says otherwise: a manifest of 10,000 capabilities with ~4 KB protocols and their
 * tools tables is about 70 MB (bench/generate-registry.mjs), so 256 MiB leaves room for the
 * registries this server is built for and is a mistake rather than a registry; 5 s to read it is
 * far beyond a healthy disk (a hung network mount is what it catches).
 */
export const DEFAULT_READ_LIMITS: ReadLimits = { maxBytes: 256 * 1024 * 1024, timeoutMs: 5_000 };

/**
 * A key file named on the command line (`build --sign-key`, `serve --verify-key`, `--jwt-jwks`,
 * `--jwt-public-key`): a PEM key or a JWK is a few hundred bytes, a JWKS of several keys with their
 * certificate chains some KB; 64 KiB leaves room and refuses `/dev/zero` or a file given by mistake.
 */
export const KEY_FILE_LIMITS: ReadLimits = { maxBytes: 64 * 1024, timeoutMs: 5_000 };

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
const CHUNK_BYTES = 1024 * 1024;

/**
 * Changes whenever the file is replaced (rename, symlink swap, recreated folder) or rewritten, and
 * when its permissions change (ctime): a file that could not be opened is tried again once fixed.
 */
export function fileIdentity(stats: BigIntStats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

/**
 * The identity of a read that did not finish in time: nothing on disk tells when the file can be
 * read again (a network mount that hung, a server stopped mid-read), so a reload must be retried.
 */
export const TIMED_OUT = 'timeout';

/** Whether a read of `file` that timed out has still not returned (readBounded starts no other meanwhile). */
export function readOutstanding(file: string): boolean {
  return abandoned.has(file);
}

/** The first wait before a read that timed out is tried again, doubled at each timeout in a row up to MAX_RETRY_WAIT_MS. */
export const FIRST_RETRY_WAIT_MS = 1_000;
export const MAX_RETRY_WAIT_MS = 60_000;

/**
 * When to read again files whose last read timed out, though nothing says they changed: once that
 * read has returned, and after a wait that doubles while reads keep timing out, so that a file
 * always slower than the limit is not read without a pause (each read holds one of libuv's threads).
 */
export class TimeoutRetry {
  #timeouts = 0;
  #dueAt = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Record how the last read of the files ended. */
  record(timedOut: boolean): void {
    if (!timedOut) {
      this.#timeouts = 0;
      return;
    }
    this.#dueAt = this.now() + Math.min(MAX_RETRY_WAIT_MS, FIRST_RETRY_WAIT_MS * 2 ** this.#timeouts);
    this.#timeouts += 1;
  }

  due(files: readonly string[]): boolean {
    return this.#timeouts > 0 && this.now() >= this.#dueAt && !files.some(readOutstanding);
  }
}

/**
 * The identity of `file` as a stat (in libuv's thread pool, off the event loop) gives it now;
 * `openError`: the reason an open of it just failed, recorded when the stat fails too.
 */
export async function statIdentity(file: string, openError?: unknown): Promise<string> {
  try {
    return fileIdentity(await stat(file, { bigint: true }));
  } catch (error) {
    return missingIdentity(openError ?? error);
  }
}

/** The identity recorded for a path that could not be opened or stat'ed at all. */
export function missingIdentity(error: unknown): string {
  return `missing:${errorCode(error)}`;
}

/**
 * Why an open fails that belongs to the file itself (its permissions, its kind: a socket) and stays
 * until it changes. Any other reason (EMFILE, ENFILE, ENOMEM, EIO...) is of the moment: it is
 * recorded as missingIdentity, which no stat gives, so that the next check reads the file again.
 */
const OPEN_ERRORS_OF_THE_FILE: ReadonlySet<string> = new Set(['EACCES', 'EPERM', 'ENXIO']);

export function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}

function kindOf(stats: BigIntStats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** Why a file with these stats is not read, or undefined when it may be. */
function refusal(stats: BigIntStats, limits: ReadLimits): string | undefined {
  if (!stats.isFile()) return `it is ${kindOf(stats)}, not a regular file`;
  if (stats.size > BigInt(limits.maxBytes)) return `it is ${stats.size} bytes, over the limit of ${limits.maxBytes}`;
  return undefined;
}

const overLimit = (limits: ReadLimits): string => `it grew over the limit of ${limits.maxBytes} bytes while being read`;

/**
 * Read the whole file, within the limits. The time limit covers opening and reading; a read that
 * does not come back in time is abandoned (its handle is closed when it does come back).
 */
export async function readBounded(file: string, limits: ReadLimits): Promise<ReadResult> {
  // An abandoned read still holds one of libuv's few threads; never start a second one.
  if (abandoned.has(file)) return { ok: false, reason: 'an earlier read of it has not returned yet', identity: TIMED_OUT };
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const timeout = new Promise<ReadResult>((resolve) => {
    timer = setTimeout(() => {
      timedOut = true;
      resolve({ ok: false, reason: `reading it took over ${limits.timeoutMs} ms`, identity: TIMED_OUT });
    }, limits.timeoutMs);
  });
  // A monotonic deadline: the wall clock stepped forward during a read (NTP, a VM resumed) is not a read that took too long.
  const reading = readWithin(file, limits, performance.now() + limits.timeoutMs);
  try {
    return await Promise.race([reading, timeout]);
  } finally {
    clearTimeout(timer);
    if (timedOut) {
      abandoned.add(file);
      void reading.finally(() => abandoned.delete(file));
    }
  }
}

const abandoned = new Set<string>();

async function readWithin(file: string, limits: ReadLimits, deadline: number): Promise<ReadResult> {
  let handle;
  try {
    handle = await open(file, OPEN_FLAGS);
  } catch (error) {
    // A file that is there and cannot be opened for a reason of its own is recorded under what a
    // stat gives, so that a check comparing a stat's identity does not read and log it again on
    // every call until it changes.
    const identity = OPEN_ERRORS_OF_THE_FILE.has(errorCode(error)) ? await statIdentity(file, error) : missingIdentity(error);
    return { ok: false, reason: errorCode(error), identity };
  }
  try {
    const stats = await handle.stat({ bigint: true });
    const identity = fileIdentity(stats);
    const refused = refusal(stats, limits);
    if (refused !== undefined) return { ok: false, reason: refused, identity };
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      // One byte over the limit tells a file that grew while being read from one that did not.
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, limits.maxBytes + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > limits.maxBytes) return { ok: false, reason: overLimit(limits), identity };
      if (performance.now() >= deadline) return { ok: false, reason: `reading it took over ${limits.timeoutMs} ms`, identity: TIMED_OUT };
    }
    return { ok: true, text: Buffer.concat(chunks, total).toString('utf8'), identity };
  } catch (error) {
    return { ok: false, reason: errorCode(error), identity: 'unreadable' };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * The same, synchronously, for a check that must finish before the current request goes on (a
 * revoked key applies on the next call). A regular local file is read in a few system calls.
 */
export function readBoundedSync(file: string, limits: ReadLimits): ReadResult {
  let fd: number;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch (error) {
    return { ok: false, reason: errorCode(error), identity: missingIdentity(error) };
  }
  try {
    const stats = fstatSync(fd, { bigint: true });
    const identity = fileIdentity(stats);
    const refused = refusal(stats, limits);
    if (refused !== undefined) return { ok: false, reason: refused, identity };
    const buffer = Buffer.allocUnsafe(Number(stats.size) + 1);
    let total = 0;
    for (;;) {
      // Read to one byte past the size fstat gave: more means it is being written to right now.
      if (total === buffer.length) return { ok: false, reason: 'it changed while being read', identity };
      const bytesRead = readSync(fd, buffer, total, buffer.length - total, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > limits.maxBytes) return { ok: false, reason: overLimit(limits), identity };
    }
    return { ok: true, text: buffer.subarray(0, total).toString('utf8'), identity };
  } catch (error) {
    return { ok: false, reason: errorCode(error), identity: 'unreadable' };
  } finally {
    closeSync(fd);
  }
}

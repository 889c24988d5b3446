// A file the server serves from and reloads while running, the way OPA takes in bundles: read and
// check the new version off to the side, activate it with one assignment, and on any failure keep
// the last good version and remember why in `lastReloadError`. No MCP SDK code here.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { DEFAULT_READ_LIMITS, readBounded, statIdentity, TIMED_OUT, TimeoutRetry, type ReadLimits, type ReadResult } from './read-file.js';
import type { LineLog } from './log.js';

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

/** One activated version. Replaced as a whole, so a reader that holds it never sees a mix. */
export interface Snapshot<T> {
  value: T;
  /** ISO time at which this version was activated. */
  loadedAt: string;
}

export type LoadErrorCode = 'unreadable' | 'invalid';

export class LoadError extends Error {
  override name = 'LoadError';
  constructor(
    readonly code: LoadErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export type ReloadOutcome = 'activated' | 'unchanged' | 'rejected';

export interface ReloadableOptions<T> {
  file: string;
  /** What the file is, for messages: "manifest", "principals file". */
  label: string;
  parse: (text: string) => ParseResult<T>;
  /** What to say about an activated version in the log, e.g. its revision. */
  describe?: (value: T) => string;
  log?: LineLog;
  /** Default DEFAULT_READ_LIMITS. */
  limits?: ReadLimits;
}

/** Longest reason kept from an exception thrown while checking a file. */
const MAX_THROWN_REASON = 200;

export class ReloadableFile<T> {
  readonly file: string;
  readonly label: string;
  readonly #options: ReloadableOptions<T>;
  readonly #log: LineLog;
  readonly #limits: ReadLimits;
  #snapshot: Snapshot<T>;
  #lastReloadError: string | null = null;
  #lastAttemptDigest: string;
  /** The identity of the file as last read (or failed to read): a different one means re-read. */
  #lastIdentity: string;
  /** The last read did not finish in time: the file did not change, yet it must be read again. */
  readonly #retry = new TimeoutRetry();
  #queue: Promise<unknown> = Promise.resolve();
  /** The check (stat, and read when changed) running now, and the one callers that came meanwhile share. */
  #checking: Promise<ReloadOutcome> | undefined;
  #nextCheck: Promise<ReloadOutcome> | undefined;
  #checkingSince = 0;
  /** When a check that had not answered in time was first reported (a hung mount), until one answers; with its timeout. */
  #unchecked: { since: string; timeoutMs: number } | undefined;
  readonly #listeners = new Set<(next: Snapshot<T>, previous: Snapshot<T>) => void>();

  private constructor(options: ReloadableOptions<T>, snapshot: Snapshot<T>, digest: string, identity: string) {
    this.file = options.file;
    this.label = options.label;
    this.#options = options;
    this.#log = options.log ?? (() => {});
    this.#limits = options.limits ?? DEFAULT_READ_LIMITS;
    this.#snapshot = snapshot;
    this.#lastAttemptDigest = digest;
    this.#lastIdentity = identity;
  }

  /** First load. A missing, unreadable or invalid file is a LoadError: the server must not start on it. */
  static async open<T>(options: ReloadableOptions<T>): Promise<ReloadableFile<T>> {
    const read = await readBounded(options.file, options.limits ?? DEFAULT_READ_LIMITS);
    if (!read.ok) throw new LoadError('unreadable', `cannot read ${options.label} ${options.file}: ${read.reason}`);
    const parsed = parseSafely(options.parse, read.text);
    if (!parsed.ok) throw new LoadError('invalid', `invalid ${options.label} ${options.file}: ${parsed.error}`);
    return new ReloadableFile(options, { value: parsed.value, loadedAt: new Date().toISOString() }, digestText(read.text), read.identity);
  }

  /** The version to serve from. Take it once per request and use only that one. */
  get snapshot(): Snapshot<T> {
    return this.#snapshot;
  }

  get current(): T {
    return this.#snapshot.value;
  }

  /** Why the latest reload was refused (what, which file, when), or null when the file on disk is what is being served. */
  get lastReloadError(): string | null {
    return this.#lastReloadError;
  }

  /**
   * Whether the last read timed out and none of it still runs: no event will come when the file can
   * be read again (a hung mount that recovered, a server stopped mid-read), so the watch's safety
   * net reloads it.
   */
  get retryDue(): boolean {
    return this.#retry.due([this.file]);
  }

  /** Called after every activation with the new and the previous version. */
  onActivate(listener: (next: Snapshot<T>, previous: Snapshot<T>) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Re-read the file. Reloads run one at a time, in order, so the newest read wins. */
  reload(): Promise<ReloadOutcome> {
    const run = this.#queue.then(async () => this.#decide(await readBounded(this.file, this.#limits)));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /**
   * For a caller that must act on the file as it is now (a revoked key applies on the very next
   * call, not after the watcher's debounce): stats the file off the event loop, and reads and
   * decides it when its identity differs from the one last read. Bounded in time: resolves once a
   * stat that started after this call has answered (and the file, when it changed, was read and
   * decided), or with 'timeout' after `timeoutMs` (a hung mount: a synchronous stat would stall
   * every caller, for as long as the mount hangs). Callers that come while a check runs share the next one, so a hung stat holds
   * one thread of libuv's pool, not one per request; once a check has run past `timeoutMs`, callers
   * get 'timeout' at once until it answers.
   */
  async refresh(timeoutMs: number): Promise<ReloadOutcome | 'timeout'> {
    // A check already running for longer is hung: answer now rather than pile up waiters on it.
    if (this.#checking !== undefined && performance.now() - this.#checkingSince >= timeoutMs) return 'timeout';
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    try {
      const outcome = await Promise.race([this.#check(), timeout]);
      if (outcome === 'timeout') this.#reportUnchecked(timeoutMs);
      return outcome;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * While the file cannot be checked in time (a stat that hangs), what `/healthz` says about it:
   * since when, the file's name (not its folder), and that what needs it is refused meanwhile.
   */
  get uncheckedError(): string | null {
    if (this.#unchecked === undefined) return null;
    const { since, timeoutMs } = this.#unchecked;
    return `${this.label} could not be checked since ${since} (${path.basename(this.file)}): it did not answer within ${timeoutMs / 1000} s; requests that need it are refused (503) until it does`;
  }

  /** Said once, at `warn`, when checks start to time out; once, at `info`, when one answers again (#startCheck). */
  #reportUnchecked(timeoutMs: number): void {
    if (this.#unchecked !== undefined) return;
    this.#unchecked = { since: new Date().toISOString(), timeoutMs };
    this.#log(
      `capreg serve: ${this.label} ${this.file} could not be checked within ${timeoutMs / 1000} s (a hung mount?); requests that need it are refused until it answers`,
      'warn',
    );
  }

  #check(): Promise<ReloadOutcome> {
    if (this.#checking === undefined) return this.#startCheck();
    this.#nextCheck ??= this.#checking.then(
      () => this.#startNext(),
      () => this.#startNext(),
    );
    return this.#nextCheck;
  }

  #startNext(): Promise<ReloadOutcome> {
    this.#nextCheck = undefined;
    return this.#startCheck();
  }

  #startCheck(): Promise<ReloadOutcome> {
    const run = (async (): Promise<ReloadOutcome> => {
      const identity = await statIdentity(this.file);
      return identity === this.#lastIdentity ? 'unchanged' : this.reload();
    })();
    this.#checking = run;
    this.#checkingSince = performance.now();
    const done = (): void => {
      if (this.#checking === run) this.#checking = undefined;
      if (this.#unchecked === undefined) return;
      this.#unchecked = undefined;
      this.#log(`capreg serve: ${this.label} ${this.file} can be checked again`);
    };
    run.then(done, done);
    return run;
  }

  #decide(read: ReadResult): ReloadOutcome {
    this.#lastIdentity = read.identity;
    this.#retry.record(read.identity === TIMED_OUT);
    // During a non-atomic replace the file is briefly missing; the next event brings it back.
    if (!read.ok) return this.#reject(`cannot read ${this.label}: ${read.reason}`, null);
    const digest = digestText(read.text);
    if (digest === this.#lastAttemptDigest) {
      this.#log(`capreg serve: ${this.label} ${this.file} unchanged`);
      return 'unchanged';
    }
    const parsed = parseSafely(this.#options.parse, read.text);
    if (!parsed.ok) return this.#reject(parsed.error, digest);
    const previous = this.#snapshot;
    const next: Snapshot<T> = { value: parsed.value, loadedAt: new Date().toISOString() };
    this.#snapshot = next;
    this.#lastAttemptDigest = digest;
    this.#lastReloadError = null;
    const detail = this.#options.describe ? ` ${this.#options.describe(next.value)}` : '';
    this.#log(`capreg serve: ${this.label} reloaded${detail} from ${this.file}`);
    for (const listener of this.#listeners) {
      try {
        listener(next, previous);
      } catch (error) {
        this.#log(`capreg serve: listener after ${this.label} reload failed: ${(error as Error).message}`, 'warn');
      }
    }
    return 'activated';
  }

  #reject(reason: string, digest: string | null): ReloadOutcome {
    // An unreadable file leaves no digest: whatever is read next is checked again.
    this.#lastAttemptDigest = digest ?? '';
    const at = new Date().toISOString();
    const still = `still serving the version loaded at ${this.#snapshot.loadedAt}`;
    // /healthz is unauthenticated: it names the file, not the folder it is in.
    this.#lastReloadError = `${this.label} reload rejected at ${at} (${path.basename(this.file)}): ${reason}; ${still}`;
    this.#log(`capreg serve: ${this.label} reload rejected (${this.file}): ${reason}; ${still}`, 'warn');
    return 'rejected';
  }
}

/** A check that throws (a bug, or a limit it ran into) refuses the file; it never escapes a reload. */
function parseSafely<T>(parse: (text: string) => ParseResult<T>, text: string): ParseResult<T> {
  try {
    return parse(text);
  } catch (error) {
    const message = error instanceof Error ? `${error.name}: ${error.message.split('\n')[0] ?? ''}` : String(error);
    return { ok: false, error: `could not be checked (${message.slice(0, MAX_THROWN_REASON)})` };
  }
}

function digestText(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

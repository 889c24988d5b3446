// A file the server serves from and reloads while running, the way OPA takes in bundles: read and
// check the new version off to the side, activate it with one assignment, and on any failure keep
// the last good version and remember why in `lastReloadError`. No MCP SDK code here.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';

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
  log?: (line: string) => void;
}

export class ReloadableFile<T> {
  readonly file: string;
  readonly label: string;
  readonly #parse: (text: string) => ParseResult<T>;
  readonly #log: (line: string) => void;
  #snapshot: Snapshot<T>;
  #lastReloadError: string | null = null;
  #lastAttemptDigest: string;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #listeners = new Set<(next: Snapshot<T>, previous: Snapshot<T>) => void>();

  private constructor(options: ReloadableOptions<T>, snapshot: Snapshot<T>, digest: string) {
    this.file = options.file;
    this.label = options.label;
    this.#parse = options.parse;
    this.#log = options.log ?? (() => {});
    this.#snapshot = snapshot;
    this.#lastAttemptDigest = digest;
  }

  /** First load. A missing or invalid file is a LoadError: the server must not start on it. */
  static async open<T>(options: ReloadableOptions<T>): Promise<ReloadableFile<T>> {
    let text: string;
    try {
      text = await readFile(options.file, 'utf8');
    } catch (error) {
      throw new LoadError('unreadable', `cannot read ${options.label} ${options.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    const parsed = options.parse(text);
    if (!parsed.ok) throw new LoadError('invalid', `invalid ${options.label} ${options.file}: ${parsed.error}`);
    return new ReloadableFile(options, { value: parsed.value, loadedAt: new Date().toISOString() }, digestText(text));
  }

  /** The version to serve from. Take it once per request and use only that one. */
  get snapshot(): Snapshot<T> {
    return this.#snapshot;
  }

  get current(): T {
    return this.#snapshot.value;
  }

  /** Why the latest reload was refused, or null when the file on disk is what is being served. */
  get lastReloadError(): string | null {
    return this.#lastReloadError;
  }

  /** Called after every activation with the new and the previous version. */
  onActivate(listener: (next: Snapshot<T>, previous: Snapshot<T>) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Re-read the file. Reloads run one at a time, in order, so the newest read wins. */
  reload(): Promise<ReloadOutcome> {
    const run = this.#queue.then(() => this.#reloadNow());
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #reloadNow(): Promise<ReloadOutcome> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      // During a non-atomic replace the file is briefly missing; the next event brings it back.
      return this.#reject(`cannot read ${this.label}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, null);
    }
    const digest = digestText(text);
    if (digest === this.#lastAttemptDigest) return 'unchanged';
    const parsed = this.#parse(text);
    if (!parsed.ok) return this.#reject(parsed.error, digest);
    const previous = this.#snapshot;
    const next: Snapshot<T> = { value: parsed.value, loadedAt: new Date().toISOString() };
    this.#snapshot = next;
    this.#lastAttemptDigest = digest;
    this.#lastReloadError = null;
    for (const listener of this.#listeners) {
      try {
        listener(next, previous);
      } catch (error) {
        this.#log(`capreg serve: listener after ${this.label} reload failed: ${(error as Error).message}`);
      }
    }
    return 'activated';
  }

  #reject(reason: string, digest: string | null): ReloadOutcome {
    if (digest !== null) this.#lastAttemptDigest = digest;
    else this.#lastAttemptDigest = '';
    this.#lastReloadError = `${this.label} reload rejected, still serving the version loaded at ${this.#snapshot.loadedAt}: ${reason}`;
    this.#log(`capreg serve: ${this.#lastReloadError}`);
    return 'rejected';
  }
}

function digestText(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

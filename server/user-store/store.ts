// The persistence contract for user-defined capabilities (SPEC §8). A store keeps records and
// guards their integrity (ownership on writes, optimistic concurrency, the per-owner limit); it
// does not compile Markdown or decide visibility, which belong to the layer above. Two backends
// implement it: SQLite (one server) and PostgreSQL (several replicas). No MCP SDK code here.
import type { LineLog } from '../log.js';
import { randomBytes } from 'node:crypto';
import type { CompiledUserCapability, ToolBinding } from '../../compiler/user/compile-user.js';

export type { ToolBinding };

/**
 * What a caller saves: the Markdown and the fields compiled out of it. The served body is not
 * stored: it is rendered from the Markdown when it is served (renderStoredProtocol).
 */
export interface UserCapabilityData extends Omit<CompiledUserCapability, 'protocol'> {
  markdown: string;
}

export interface UserCapabilityRecord extends UserCapabilityData {
  /** `user:` followed by a server-generated id. */
  id: string;
  ownerId: string;
  /** Opaque; changes on every write. Pass it back as `expectedRevision` to update safely. */
  revision: string;
  /** ISO 8601, UTC. */
  createdAt: string;
  updatedAt: string;
}

/** What a catalog listing needs of a record: no Markdown, no bindings, no timestamps. */
export type UserCapabilitySummary = Pick<UserCapabilityRecord, 'id' | 'name' | 'description' | 'whenToUse' | 'dependencies' | 'revision'>;

export interface UserCapabilityStore {
  /** Throws LimitExceededError when the owner already has `maxPerOwner` capabilities. */
  create(ownerId: string, data: UserCapabilityData): Promise<UserCapabilityRecord>;
  /**
   * Replaces the data of the owner's capability `id`. With `expectedRevision`, refuses with
   * StaleRevisionError unless it is the stored revision. NotFoundError when there is no such id
   * *or* it belongs to someone else: a write never reveals that another owner's id exists.
   */
  update(ownerId: string, id: string, data: UserCapabilityData, expectedRevision?: string): Promise<UserCapabilityRecord>;
  /** True when the owner's capability was deleted; false when there was none (or not theirs). */
  delete(ownerId: string, id: string): Promise<boolean>;
  /** Any owner's record: visibility is decided by the caller of the store. */
  get(id: string): Promise<UserCapabilityRecord | undefined>;
  /** Sorted by id (byte order). */
  listByOwner(ownerId: string): Promise<UserCapabilityRecord[]>;
  /** The same rows as `listByOwner`, only the columns a catalog lists: the query of every `list_capabilities`. */
  listSummariesByOwner(ownerId: string): Promise<UserCapabilitySummary[]>;
  countByOwner(ownerId: string): Promise<number>;
  /** How many capabilities an owner may keep (`create` refuses past it). */
  readonly maxPerOwner: number;
  /**
   * Resolves when the database is reachable and its schema is migrated; StoreUnavailableError
   * otherwise. Every other method does the same check first, so calling it is optional: it lets a
   * server report an unreachable database at start-up and in its health status.
   */
  ping(): Promise<void>;
  /**
   * The state as last seen (SQLite also re-checks its file, cheaply), for `/healthz`: never a
   * path, host or password. Issues no query, so an unauthenticated probe cannot load the database.
   * A failed write is reported until a write succeeds, whatever reads do meanwhile (StoreHealth).
   */
  health(): UserStoreHealth;
  close(): Promise<void>;
}

/**
 * `unavailable`: the last call failed. `writes-failing`: calls work, but the last write failed and
 * none has succeeded since (a full disk, a read-only database): saved capabilities are still served.
 */
export type UserStoreHealth = { status: 'ok' } | { status: 'unavailable' | 'writes-failing'; reason: string };

export const DEFAULT_MAX_PER_OWNER = 100;

export type UserStoreErrorCode = 'stale-revision' | 'not-found' | 'limit-exceeded' | 'store-unavailable' | 'invalid-config';

export class UserStoreError extends Error {
  override name = 'UserStoreError';
  constructor(
    readonly code: UserStoreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export class StaleRevisionError extends UserStoreError {
  override name = 'StaleRevisionError';
  constructor(
    readonly id: string,
    readonly expectedRevision: string,
  ) {
    // Only a revision of the shape this server gives out is repeated: the caller's text (a megabyte,
    // control characters, words addressed to the agent) is never echoed into the answer.
    const since = REVISION_PATTERN.test(expectedRevision) ? `revision ${expectedRevision}` : 'the revision given (not one this server gives out)';
    super('stale-revision', `user capability ${id} was changed since ${since}: load it again and reapply the change`);
  }
}

export class NotFoundError extends UserStoreError {
  override name = 'NotFoundError';
  constructor(readonly id: string) {
    super('not-found', `user capability ${id} not found`);
  }
}

export class LimitExceededError extends UserStoreError {
  override name = 'LimitExceededError';
  constructor(readonly limit: number) {
    super('limit-exceeded', `an owner may keep at most ${limit} user capabilities: delete one before creating another`);
  }
}

export class StoreUnavailableError extends UserStoreError {
  override name = 'StoreUnavailableError';
  /** A short reason without paths, hosts or secrets (an error code), for the health report. */
  readonly reason: string;
  constructor(message: string, options?: { cause?: unknown; reason?: string }) {
    super('store-unavailable', message, options);
    this.reason = options?.reason ?? 'unavailable';
  }
}

/** The code of a driver or system error (`SQLITE_CORRUPT`, `ECONNREFUSED`, `28P01`), never its text. */
export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Za-z0-9_]{1,40}$/.test(code) ? code : 'error';
}

export function isUserStoreError(error: unknown, code?: UserStoreErrorCode): error is UserStoreError {
  return error instanceof UserStoreError && (code === undefined || error.code === code);
}

/** Where a store's lines go; `warn` for an outage that starts, `info` (the default) otherwise. */
export type StoreLog = LineLog;

/** Options both backends take. */
export interface UserStoreOptions {
  /** Per-owner limit on the number of user capabilities (default 100). */
  maxPerOwner?: number;
  /** Where warnings go (an outage, once when it starts and once when it ends; an idle connection lost); stderr in the server. */
  log?: StoreLog;
}

export function resolveMaxPerOwner(value: number | undefined): number {
  const limit = value ?? DEFAULT_MAX_PER_OWNER;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new UserStoreError('invalid-config', `the per-owner limit must be a positive integer, got ${String(value)}`);
  }
  return limit;
}

export const USER_ID_PREFIX = 'user:';

// RFC 4648 base32, lower case: ids stay within [a-z0-9] like platform ids, and read unambiguously.
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out;
}

/**
 * Every id `newUserCapabilityId` gives out, and nothing else: a caller's id of another shape (a NUL,
 * an upper-case letter, a path) names no user capability and never reaches a store, where it could
 * only fail (PostgreSQL refuses NUL in text, and would report the store down for it).
 */
export const USER_ID_PATTERN = new RegExp(`^${USER_ID_PREFIX}[${BASE32}]{16}$`);

/** `user:` + 80 random bits (16 characters): short for agents to copy, far from any collision. */
export function newUserCapabilityId(): string {
  return USER_ID_PREFIX + base32(randomBytes(10));
}

/** Every revision `newRevision` gives out: 26 characters of the same base32. */
export const REVISION_PATTERN = new RegExp(`^[${BASE32}]{26}$`);

/** 128 random bits: a revision must never repeat, even for identical content. */
export function newRevision(): string {
  return base32(randomBytes(16));
}

/**
 * Runs `init` on first use and shares the result; a failure is not remembered, so the next call
 * tries again. That is how a store opened while its database is down starts working once the
 * database is back, without a restart.
 */
export class RetryingInit {
  #pending: Promise<void> | undefined;
  #done = false;

  constructor(private readonly init: () => Promise<void>) {}

  get done(): boolean {
    return this.#done;
  }

  run(): Promise<void> {
    if (this.#done) return Promise.resolve();
    this.#pending ??= this.init().then(
      () => {
        this.#done = true;
      },
      (error: unknown) => {
        this.#pending = undefined;
        throw error;
      },
    );
    return this.#pending;
  }
}

const OK: UserStoreHealth = { status: 'ok' };

/**
 * What a store reports in `health()`, and logs when it changes. Two states: the last call's, and
 * the last write's. A full disk or a read-only database fails every save while reads still work,
 * so a failed write is cleared only by a write that succeeds, never by a read: `/healthz` stays
 * degraded for as long as saves fail. Each change is logged once (an outage at `warn` when it
 * starts, `info` when it ends), not once per call.
 */
export class StoreHealth {
  #call: UserStoreHealth = OK;
  #write: UserStoreHealth = OK;
  #reported: UserStoreHealth = OK;

  constructor(private readonly log: StoreLog) {}

  get current(): UserStoreHealth {
    return this.#reported;
  }

  /** The database answered (a refusal such as stale-revision included); `wrote`: a write succeeded. */
  answered(wrote: boolean): void {
    this.#call = OK;
    if (wrote) this.#write = OK;
    this.#report(undefined);
  }

  /**
   * A call failed. `write`: a write the database refused, reported until a write succeeds; any
   * other failure (a read, a lock another process held for too long) until the next call answers.
   */
  failed(error: StoreUnavailableError, write: boolean): void {
    if (write) this.#write = { status: 'writes-failing', reason: error.reason };
    else this.#call = { status: 'unavailable', reason: error.reason };
    this.#report(error.message);
  }

  #report(detail: string | undefined): void {
    const previous = this.#reported;
    const next = this.#call.status === 'ok' ? this.#write : this.#call;
    this.#reported = next;
    if (next.status === previous.status) return;
    if (next.status === 'unavailable') {
      this.log(`capreg user store: ${detail}; user-defined capabilities are unavailable, the platform catalog keeps serving`, 'warn');
    } else if (next.status === 'writes-failing') {
      this.log(
        detail === undefined
          ? `capreg user store: the user store answers again, but saves still fail (${next.reason}) until one succeeds`
          : `capreg user store: a save failed: ${detail}; saves fail until one succeeds, saved user capabilities are still served`,
        'warn',
      );
    } else {
      this.log(previous.status === 'writes-failing' ? 'capreg user store: saves succeed again' : 'capreg user store: the user store answers again');
    }
  }
}

/** A versioned schema change. The list only grows; an applied migration is never edited. */
export interface Migration {
  version: number;
  name: string;
  /** Statements run in one transaction, together with the `schema_migrations` row. */
  statements: string[];
}

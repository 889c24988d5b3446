// The persistence contract for user-defined capabilities (SPEC §8). A store keeps records and
// guards their integrity (ownership on writes, optimistic concurrency, the per-owner limit); it
// does not compile Markdown or decide visibility, which belong to the layer above. Two backends
// implement it: SQLite (one server) and PostgreSQL (several replicas). No MCP SDK code here.
import { randomBytes } from 'node:crypto';
import type { ToolBinding } from '../../compiler/user/compile-user.js';

export type { ToolBinding };

/** What a caller saves: the Markdown and the fields compiled out of it. */
export interface UserCapabilityData {
  markdown: string;
  name: string;
  description: string;
  whenToUse: string[];
  /** Declared: the platform capability ids the author may draw on. */
  uses: string[];
  /** Delivered: the capability ids the body actually links to. */
  dependencies: string[];
  toolBindings: ToolBinding[];
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
  /**
   * Resolves when the database is reachable and its schema is migrated; StoreUnavailableError
   * otherwise. Every other method does the same check first, so calling it is optional: it lets a
   * server report an unreachable database at start-up and in its health status.
   */
  ping(): Promise<void>;
  /**
   * The state as last seen (SQLite also re-checks its file, cheaply), for `/healthz`: never a
   * path, host or password. Issues no query, so an unauthenticated probe cannot load the database.
   */
  health(): UserStoreHealth;
  close(): Promise<void>;
}

export type UserStoreHealth = { status: 'ok' } | { status: 'unavailable'; reason: string };

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
    super('stale-revision', `user capability ${id} was changed since revision ${expectedRevision}: load it again and reapply the change`);
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

/** Options both backends take. */
export interface UserStoreOptions {
  /** Per-owner limit on the number of user capabilities (default 100). */
  maxPerOwner?: number;
  /** Where warnings go (an unreachable database, an idle connection lost); stderr in the server. */
  log?: (line: string) => void;
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

/** `user:` + 80 random bits (16 characters): short for agents to copy, far from any collision. */
export function newUserCapabilityId(): string {
  return USER_ID_PREFIX + base32(randomBytes(10));
}

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

/** A versioned schema change. The list only grows; an applied migration is never edited. */
export interface Migration {
  version: number;
  name: string;
  /** Statements run in one transaction, together with the `schema_migrations` row. */
  statements: string[];
}

// The embedded user store: one SQLite file through better-sqlite3, for a single server process
// (several processes on one host also work: file locks serialise the writers, and writes that
// need a consistent read take the write lock up front with BEGIN IMMEDIATE).
// The file is the store's only truth, so before every call the path is checked to still be the
// file that is open (device and inode): a database deleted or replaced while serving is refused
// as store-unavailable, never written to after it was unlinked, and reopened once a capreg
// database is back at the path. Rollback journal, not WAL: WAL maps its `-shm` index into memory,
// and another process truncating that file kills this one with SIGBUS.
// better-sqlite3 is synchronous; each call is short, and the async interface keeps the backends
// interchangeable.
import { accessSync, constants, existsSync, mkdirSync, type Stats, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { API_KEY_OWNER_PREFIX } from '../identity.js';
import {
  LimitExceededError,
  type Migration,
  NotFoundError,
  errorCode,
  resolveMaxPerOwner,
  StaleRevisionError,
  StoreHealth,
  type StoreLog,
  StoreUnavailableError,
  type UserCapabilityData,
  type UserCapabilityRecord,
  type UserCapabilityStore,
  type UserCapabilitySummary,
  UserStoreError,
  type UserStoreHealth,
  type UserStoreOptions,
  newRevision,
  newUserCapabilityId,
} from './store.js';

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'create user_capabilities',
    statements: [
      `CREATE TABLE user_capabilities (
        id            TEXT PRIMARY KEY,
        owner_id      TEXT NOT NULL,
        markdown      TEXT NOT NULL,
        name          TEXT NOT NULL,
        description   TEXT NOT NULL,
        when_to_use   TEXT NOT NULL, -- JSON array of strings
        uses          TEXT NOT NULL, -- JSON array of capability ids
        dependencies  TEXT NOT NULL, -- JSON array of capability ids
        tool_bindings TEXT NOT NULL, -- JSON array of {step, capability, tools}
        revision      TEXT NOT NULL,
        created_at    TEXT NOT NULL, -- ISO 8601, UTC
        updated_at    TEXT NOT NULL
      ) STRICT`,
      'CREATE INDEX user_capabilities_by_owner ON user_capabilities (owner_id, id)',
    ],
  },
  {
    version: 2,
    name: 'namespace owners by where the identity comes from',
    // Before, an owner was a bare principal id, shared by an API key and a JWT `sub` alike. The
    // API-key principal could already read and delete those rows, so giving them to it grants
    // nobody anything new (docs/user-store.md, "Owners").
    statements: [`UPDATE user_capabilities SET owner_id = '${API_KEY_OWNER_PREFIX}' || owner_id`],
  },
];

/** How long a call waits for another process's lock before giving up. */
export const DEFAULT_LOCK_TIMEOUT_MS = 5_000;
/** Longest pause between two tries for a lock: short, since writers hold it for milliseconds. */
const MAX_LOCK_RETRY_MS = 50;

export interface SqliteUserStoreOptions extends UserStoreOptions {
  /** How long a call waits for another process's lock (default 5 s); then store-unavailable. */
  lockTimeoutMs?: number;
}

/** SQLITE_BUSY and its extended codes: another connection holds the lock; nothing was written. */
function isBusy(error: unknown): boolean {
  return /^SQLITE_BUSY/.test(errorCode(error));
}

interface Row {
  id: string;
  owner_id: string;
  markdown: string;
  name: string;
  description: string;
  when_to_use: string;
  uses: string;
  dependencies: string;
  tool_bindings: string;
  revision: string;
  created_at: string;
  updated_at: string;
}

function toRecord(row: Row): UserCapabilityRecord {
  return {
    id: row.id,
    ownerId: row.owner_id,
    markdown: row.markdown,
    name: row.name,
    description: row.description,
    whenToUse: JSON.parse(row.when_to_use) as string[],
    uses: JSON.parse(row.uses) as string[],
    dependencies: JSON.parse(row.dependencies) as string[],
    toolBindings: JSON.parse(row.tool_bindings) as UserCapabilityRecord['toolBindings'],
    revision: row.revision,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

type SummaryRow = Pick<Row, 'id' | 'name' | 'description' | 'when_to_use' | 'dependencies' | 'revision'>;

function toSummary(row: SummaryRow): UserCapabilitySummary {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    whenToUse: JSON.parse(row.when_to_use) as string[],
    dependencies: JSON.parse(row.dependencies) as string[],
    revision: row.revision,
  };
}

function dataColumns(data: UserCapabilityData) {
  return {
    markdown: data.markdown,
    name: data.name,
    description: data.description,
    when_to_use: JSON.stringify(data.whenToUse),
    uses: JSON.stringify(data.uses),
    dependencies: JSON.stringify(data.dependencies),
    tool_bindings: JSON.stringify(data.toolBindings),
  };
}

/** Applies the missing migrations, each with its `schema_migrations` row, in one transaction. */
function migrate(db: Database.Database, log: (line: string) => void): void {
  db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    INTEGER PRIMARY KEY,
      name       TEXT NOT NULL,
      applied_at TEXT NOT NULL
    ) STRICT`);
    const applied = new Set(db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[]);
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const migration of SQLITE_MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      for (const statement of migration.statements) db.exec(statement);
      record.run(migration.version, migration.name, new Date().toISOString());
    }
    const known = Math.max(...SQLITE_MIGRATIONS.map((m) => m.version));
    const newest = Math.max(known, ...applied);
    if (newest > known) {
      // Migrations are additive, so a newer schema still serves this version (rolling upgrades).
      log(`capreg user store: schema version ${newest} is newer than this capreg knows (${known}); continuing`);
    }
  }).immediate();
}

function openStatements(db: Database.Database) {
  return {
    count: db.prepare<[string], number>('SELECT count(*) FROM user_capabilities WHERE owner_id = ?').pluck(),
    insert: db.prepare(`INSERT INTO user_capabilities
      (id, owner_id, markdown, name, description, when_to_use, uses, dependencies, tool_bindings, revision, created_at, updated_at)
      VALUES (@id, @owner_id, @markdown, @name, @description, @when_to_use, @uses, @dependencies, @tool_bindings, @revision, @created_at, @updated_at)
      RETURNING *`),
    update: db.prepare(`UPDATE user_capabilities SET
        markdown = @markdown, name = @name, description = @description, when_to_use = @when_to_use, uses = @uses,
        dependencies = @dependencies, tool_bindings = @tool_bindings, revision = @revision, updated_at = @updated_at
      WHERE id = @id AND owner_id = @owner_id AND (@expected IS NULL OR revision = @expected)
      RETURNING *`),
    ownedRevision: db.prepare<[string, string], string>('SELECT revision FROM user_capabilities WHERE id = ? AND owner_id = ?').pluck(),
    delete: db.prepare<[string, string]>('DELETE FROM user_capabilities WHERE id = ? AND owner_id = ?'),
    get: db.prepare<[string], Row>('SELECT * FROM user_capabilities WHERE id = ?'),
    list: db.prepare<[string], Row>('SELECT * FROM user_capabilities WHERE owner_id = ? ORDER BY id'),
    listSummaries: db.prepare<[string], SummaryRow>(
      'SELECT id, name, description, when_to_use, dependencies, revision FROM user_capabilities WHERE owner_id = ? ORDER BY id',
    ),
  };
}

type Statements = ReturnType<typeof openStatements>;

interface Open {
  db: Database.Database;
  statements: Statements;
  create: Database.Transaction<(ownerId: string, data: UserCapabilityData) => Row>;
  update: Database.Transaction<(ownerId: string, id: string, data: UserCapabilityData, expectedRevision: string | undefined) => Row>;
  /** The file this connection has open; the path must still name it. */
  identity: FileIdentity;
}

interface FileIdentity {
  dev: number;
  ino: number;
}

function identityOf(stats: Stats): FileIdentity {
  return { dev: stats.dev, ino: stats.ino };
}

function hasCapregSchema(db: Database.Database): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get() !== undefined;
}

function hasTables(db: Database.Database): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table'").get() !== undefined;
}

export class SqliteUserStore implements UserCapabilityStore {
  /** Absolute path of the database file. */
  readonly file: string;
  readonly #maxPerOwner: number;
  readonly #log: StoreLog;
  #open: Open | undefined;
  /**
   * Set once a database was open. From then on a missing or schema-less file is a database that
   * vanished or was replaced while serving: refused until a capreg database is back, never
   * silently recreated empty (which would hide every owner's capabilities and take new saves).
   */
  #hadDatabase = false;
  readonly #health: StoreHealth;
  readonly #lockTimeoutMs: number;
  #closed = false;

  /** Touches nothing on disk: the file is created and migrated on first use (or `ping()`). */
  constructor(file: string, options: SqliteUserStoreOptions = {}) {
    this.file = path.resolve(file);
    this.#maxPerOwner = resolveMaxPerOwner(options.maxPerOwner);
    this.#log = options.log ?? (() => {});
    this.#health = new StoreHealth(this.#log);
    this.#lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  }

  #unavailable(reason: string, detail: string): StoreUnavailableError {
    return new StoreUnavailableError(`user store unavailable: SQLite database ${this.file}: ${detail}`, { reason });
  }

  #connect(): Open {
    const mayCreate = !this.#hadDatabase;
    if (mayCreate) mkdirSync(path.dirname(this.file), { recursive: true });
    const before = statSync(this.file, { throwIfNoEntry: false });
    if (!mayCreate && before === undefined) {
      throw this.#unavailable('database-missing', 'the file is missing (deleted or moved while serving); restore it');
    }
    // No busy wait inside SQLite: it would block the event loop, and the Git catalog with it, for
    // as long as another process holds the lock. #use waits for it asynchronously instead.
    const db = new Database(this.file, { timeout: 0, fileMustExist: !mayCreate });
    try {
      // Reads and writes through the file descriptor only: a mapping of a file that another
      // process truncates faults with SIGBUS instead of returning an error.
      db.pragma('mmap_size = 0');
      // Checked before anything is written (the journal mode included): a file that is not a capreg
      // store is left as it is. At the first start, another application's database (a wrong path)
      // is refused too, and an existing file without any table (emptied, or a first start cut short)
      // becomes an empty store, which is said.
      if (!hasCapregSchema(db)) {
        if (!mayCreate) {
          throw this.#unavailable('not-a-user-store', 'the file is not a capreg user store (replaced or truncated while serving); restore it');
        }
        if (hasTables(db)) {
          throw this.#unavailable('not-a-user-store', "the file is another application's database, not a capreg user store; it is left untouched");
        }
        if (before !== undefined) this.#log(`capreg user store: ${this.file} had no tables: starting an empty user store in it`, 'warn');
      }
      const mode = db.pragma('journal_mode = DELETE', { simple: true });
      if (mode !== 'delete') {
        // Still WAL: another process (an older capreg) has the file open in WAL mode.
        throw this.#unavailable('journal-mode', `cannot leave journal mode ${String(mode)} while another process has the database open in it`);
      }
      // Every commit is on disk before the save is acknowledged.
      db.pragma('synchronous = FULL');
      // The same file before and after opening, or the handle may be on one that was swapped out.
      const identity = identityOf(statSync(this.file));
      if (before !== undefined && (before.dev !== identity.dev || before.ino !== identity.ino)) {
        throw this.#unavailable('database-replaced', 'the file was replaced while it was being opened');
      }
      migrate(db, this.#log);
      const statements = openStatements(db);
      const limit = this.#maxPerOwner;
      const create = db.transaction((ownerId: string, data: UserCapabilityData): Row => {
        if (statements.count.get(ownerId)! >= limit) throw new LimitExceededError(limit);
        const now = new Date().toISOString();
        return statements.insert.get({
          id: newUserCapabilityId(),
          owner_id: ownerId,
          ...dataColumns(data),
          revision: newRevision(),
          created_at: now,
          updated_at: now,
        }) as Row;
      });
      // An explicit transaction, not the UPDATE … RETURNING alone: in autocommit SQLite hands the row
      // back before it commits, and a commit refused then (SQLITE_BUSY: another process reading the
      // file) rolls the change back while better-sqlite3's get() still returns the row. The
      // transaction's COMMIT is checked, so a refused one is retried or reported, never acknowledged.
      const update = db.transaction((ownerId: string, id: string, data: UserCapabilityData, expectedRevision: string | undefined): Row => {
        // One conditional statement: the revision check and the write cannot be split by another writer.
        const row = statements.update.get({
          id,
          owner_id: ownerId,
          expected: expectedRevision ?? null,
          ...dataColumns(data),
          revision: newRevision(),
          updated_at: new Date().toISOString(),
        }) as Row | undefined;
        if (row) return row;
        if (expectedRevision !== undefined && statements.ownedRevision.get(id, ownerId) !== undefined) {
          throw new StaleRevisionError(id, expectedRevision);
        }
        throw new NotFoundError(id);
      });
      this.#hadDatabase = true;
      return { db, statements, create, update, identity };
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** Throws, after letting go of the connection, when the path no longer names the open file. */
  #verify(open: Open): void {
    const now = statSync(this.file, { throwIfNoEntry: false });
    if (now !== undefined && now.dev === open.identity.dev && now.ino === open.identity.ino) return;
    this.#drop();
    throw now === undefined
      ? this.#unavailable('database-missing', 'the file was deleted or moved while serving; restore it')
      : this.#unavailable('database-replaced', 'the file was replaced while serving; the new file is opened on the next call');
  }

  /**
   * Refuses a write to a file this process may not write (immutable, or read-only for its user)
   * before SQLite starts it: the rollback journal it would leave could not be rolled back, and that
   * hot journal would fail every read (SQLITE_READONLY_ROLLBACK) instead of serving the last good state.
   */
  #checkWritable(): void {
    try {
      accessSync(this.file, constants.W_OK);
    } catch (error) {
      throw this.#unavailable(errorCode(error), 'the file cannot be written (read-only or immutable); reads go on');
    }
  }

  #drop(): void {
    this.#open?.db.close();
    this.#open = undefined;
  }

  /**
   * Runs `operation` on a connection to the file the path names now. A write is checked again
   * after it committed: one that landed in a file unlinked meanwhile is lost, so not acknowledged.
   * A lock held by another process is waited for off the event loop, up to the lock timeout.
   */
  async #use<T>(operation: (open: Open) => T, kind: 'read' | 'write' = 'read', wrote: (result: T) => boolean = () => true): Promise<T> {
    const deadline = Date.now() + this.#lockTimeoutMs;
    for (let pause = 1; ; pause = Math.min(pause * 2, MAX_LOCK_RETRY_MS)) {
      if (this.#closed) throw new StoreUnavailableError('the user store is closed', { reason: 'closed' });
      // Set while a write runs on a file that opened and checked out: what fails then is the write.
      let writing = false;
      try {
        if (this.#open) this.#verify(this.#open);
        this.#open ??= this.#connect();
        const open = this.#open;
        writing = kind === 'write';
        if (writing) this.#checkWritable();
        const result = operation(open);
        writing = false;
        if (kind === 'write') this.#verify(open);
        this.#health.answered(kind === 'write' && wrote(result));
        return result;
      } catch (error) {
        // BUSY means the statement or transaction was rolled back: trying again cannot write twice.
        if (isBusy(error) && Date.now() + pause < deadline) {
          await new Promise((resolve) => setTimeout(resolve, pause));
          continue;
        }
        throw this.#failure(error, writing);
      }
    }
  }

  #failure(error: unknown, writing: boolean): UserStoreError {
    if (error instanceof UserStoreError && !(error instanceof StoreUnavailableError)) {
      this.#health.answered(false);
      return error;
    }
    const unavailable =
      error instanceof StoreUnavailableError
        ? error
        : new StoreUnavailableError(`user store unavailable: SQLite database ${this.file}: ${error instanceof Error ? error.message : String(error)}`, {
            cause: error,
            reason: errorCode(error),
          });
    // A driver error may leave the connection on a damaged file: the next call reopens and re-checks.
    if (!(error instanceof UserStoreError) && !isBusy(error)) this.#drop();
    // A write the file refuses (full, read-only) is refused again until something changes; a lock
    // held too long passes by itself, and a file that is gone fails reads as well.
    this.#health.failed(unavailable, writing && !isBusy(error));
    return unavailable;
  }

  create(ownerId: string, data: UserCapabilityData): Promise<UserCapabilityRecord> {
    // IMMEDIATE: count and insert under the write lock, so two processes cannot both pass the limit.
    return this.#use(({ create }) => toRecord(create.immediate(ownerId, data)), 'write');
  }

  update(ownerId: string, id: string, data: UserCapabilityData, expectedRevision?: string): Promise<UserCapabilityRecord> {
    // IMMEDIATE, as create: the write lock first, so a reader's lock is waited for before anything is written.
    return this.#use(({ update }) => toRecord(update.immediate(ownerId, id, data, expectedRevision)), 'write');
  }

  delete(ownerId: string, id: string): Promise<boolean> {
    // Deleting nothing wrote nothing: it does not show that saves work again.
    return this.#use(
      ({ statements }) => statements.delete.run(id, ownerId).changes > 0,
      'write',
      (deleted) => deleted,
    );
  }

  get(id: string): Promise<UserCapabilityRecord | undefined> {
    return this.#use(({ statements }) => {
      const row = statements.get.get(id);
      return row && toRecord(row);
    });
  }

  listByOwner(ownerId: string): Promise<UserCapabilityRecord[]> {
    return this.#use(({ statements }) => statements.list.all(ownerId).map(toRecord));
  }

  listSummariesByOwner(ownerId: string): Promise<UserCapabilitySummary[]> {
    return this.#use(({ statements }) => statements.listSummaries.all(ownerId).map(toSummary));
  }

  get maxPerOwner(): number {
    return this.#maxPerOwner;
  }

  countByOwner(ownerId: string): Promise<number> {
    return this.#use(({ statements }) => statements.count.get(ownerId)!);
  }

  ping(): Promise<void> {
    return this.#use(() => undefined);
  }

  health(): UserStoreHealth {
    if (this.#open) {
      try {
        this.#verify(this.#open);
      } catch (error) {
        this.#health.failed(error as StoreUnavailableError, false);
      }
    } else if (!this.#closed && this.#health.current.status === 'unavailable' && existsSync(this.file)) {
      // A file restored at the path (or the one that failed to open, fixed): opened now, as the
      // next call would, so that /healthz follows the file rather than the last call.
      try {
        this.#open = this.#connect();
        this.#health.answered(false);
      } catch (error) {
        this.#failure(error, false);
      }
    }
    return this.#health.current;
  }

  close(): Promise<void> {
    this.#closed = true;
    this.#drop();
    return Promise.resolve();
  }
}

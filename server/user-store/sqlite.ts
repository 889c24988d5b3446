// The embedded user store: one SQLite file through better-sqlite3, for a single server process
// (several processes on one host also work: WAL mode lets readers run beside the one writer, and
// writes that need a consistent read take the write lock up front with BEGIN IMMEDIATE).
// better-sqlite3 is synchronous; each call is short, and the async interface keeps the backends
// interchangeable.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import {
  LimitExceededError,
  type Migration,
  NotFoundError,
  resolveMaxPerOwner,
  RetryingInit,
  StaleRevisionError,
  StoreUnavailableError,
  type UserCapabilityData,
  type UserCapabilityRecord,
  type UserCapabilityStore,
  type UserCapabilitySummary,
  UserStoreError,
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
];

/** How long a write waits for another process's write lock before giving up. */
const BUSY_TIMEOUT_MS = 5_000;

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
}

export class SqliteUserStore implements UserCapabilityStore {
  /** Absolute path of the database file. */
  readonly file: string;
  readonly #maxPerOwner: number;
  readonly #log: (line: string) => void;
  readonly #ready: RetryingInit;
  #open: Open | undefined;
  #closed = false;

  /** Touches nothing on disk: the file is created and migrated on first use (or `ping()`). */
  constructor(file: string, options: UserStoreOptions = {}) {
    this.file = path.resolve(file);
    this.#maxPerOwner = resolveMaxPerOwner(options.maxPerOwner);
    this.#log = options.log ?? (() => {});
    this.#ready = new RetryingInit(async () => {
      this.#open = this.#connect();
    });
  }

  #connect(): Open {
    mkdirSync(path.dirname(this.file), { recursive: true });
    const db = new Database(this.file, { timeout: BUSY_TIMEOUT_MS });
    try {
      db.pragma('journal_mode = WAL');
      // Safe with WAL: a power loss may drop the last commits but never corrupts the file.
      db.pragma('synchronous = NORMAL');
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
      return { db, statements, create };
    } catch (error) {
      db.close();
      throw error;
    }
  }

  async #use<T>(operation: (open: Open) => T): Promise<T> {
    if (this.#closed) throw new StoreUnavailableError('the user store is closed');
    try {
      await this.#ready.run();
      return operation(this.#open!);
    } catch (error) {
      if (error instanceof UserStoreError) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      throw new StoreUnavailableError(`user store unavailable: SQLite database ${this.file}: ${reason}`, { cause: error });
    }
  }

  create(ownerId: string, data: UserCapabilityData): Promise<UserCapabilityRecord> {
    // IMMEDIATE: count and insert under the write lock, so two processes cannot both pass the limit.
    return this.#use(({ create }) => toRecord(create.immediate(ownerId, data)));
  }

  update(ownerId: string, id: string, data: UserCapabilityData, expectedRevision?: string): Promise<UserCapabilityRecord> {
    return this.#use(({ statements }) => {
      // One conditional statement: the revision check and the write cannot be split by another writer.
      const row = statements.update.get({
        id,
        owner_id: ownerId,
        expected: expectedRevision ?? null,
        ...dataColumns(data),
        revision: newRevision(),
        updated_at: new Date().toISOString(),
      }) as Row | undefined;
      if (row) return toRecord(row);
      if (expectedRevision !== undefined && statements.ownedRevision.get(id, ownerId) !== undefined) {
        throw new StaleRevisionError(id, expectedRevision);
      }
      throw new NotFoundError(id);
    });
  }

  delete(ownerId: string, id: string): Promise<boolean> {
    return this.#use(({ statements }) => statements.delete.run(id, ownerId).changes > 0);
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

  countByOwner(ownerId: string): Promise<number> {
    return this.#use(({ statements }) => statements.count.get(ownerId)!);
  }

  ping(): Promise<void> {
    return this.#use(() => undefined);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#open?.db.close();
    this.#open = undefined;
  }
}

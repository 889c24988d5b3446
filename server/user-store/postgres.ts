// The shared user store: PostgreSQL through a `pg` Pool, for several server replicas on one
// database. Each replica sees the others' writes on its next query (no cache here). Concurrency is
// settled by the database: updates are single conditional statements, and creates take a per-owner
// advisory lock for the limit check. Any failure of the database or the network becomes a
// StoreUnavailableError whose message never carries the connection password.
import pg from 'pg';
import { API_KEY_OWNER_PREFIX } from '../identity.js';
import { QUERY_PASSWORD } from '../log.js';
import {
  errorCode,
  LimitExceededError,
  type Migration,
  NotFoundError,
  resolveMaxPerOwner,
  RetryingInit,
  StaleRevisionError,
  StoreHealth,
  StoreUnavailableError,
  type ToolBinding,
  type UserCapabilityData,
  type UserCapabilityRecord,
  type UserCapabilityStore,
  type UserCapabilitySummary,
  UserStoreError,
  type UserStoreHealth,
  type UserStoreOptions,
  type StoreLog,
  newRevision,
  newUserCapabilityId,
} from './store.js';

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'create user_capabilities',
    statements: [
      `CREATE TABLE user_capabilities (
        id            text COLLATE "C" PRIMARY KEY,
        owner_id      text NOT NULL,
        markdown      text NOT NULL,
        name          text NOT NULL,
        description   text NOT NULL,
        when_to_use   jsonb NOT NULL,
        uses          jsonb NOT NULL,
        dependencies  jsonb NOT NULL,
        tool_bindings jsonb NOT NULL,
        revision      text NOT NULL,
        created_at    timestamptz NOT NULL,
        updated_at    timestamptz NOT NULL
      )`,
      'CREATE INDEX user_capabilities_by_owner ON user_capabilities (owner_id, id)',
    ],
  },
  {
    version: 2,
    name: 'namespace owners by where the identity comes from',
    // The same mapping as SQLite's version 2: bare owners go to the API-key namespace.
    statements: [`UPDATE user_capabilities SET owner_id = '${API_KEY_OWNER_PREFIX}' || owner_id`],
  },
];

// Advisory lock keys (classid, objid): 'capr' as a namespace so capreg's locks do not meet another
// application's in the same database. Owners are keyed by hashtext(owner_id); two owners with the
// same hash merely wait for each other.
const LOCK_NAMESPACE_OWNER = 0x63617072;
const LOCK_NAMESPACE_MIGRATIONS = 0x63617073;

const CONNECT_TIMEOUT_MS = 5_000;
const QUERY_TIMEOUT_MS = 15_000;
// Bounds, set on each transaction, that the database applies itself. A replica lost in the middle of
// a save (its host gone, a partition: nothing closes its socket) would otherwise keep its transaction,
// and the owner's advisory lock, until TCP keepalive gives up (hours), failing that owner's saves on
// every other replica; and a lock wait cut short only by the client-side query timeout leaves the
// ROLLBACK queued behind it for as long again, past the caller's request timeout.
const IDLE_IN_TRANSACTION_TIMEOUT_MS = QUERY_TIMEOUT_MS;
const LOCK_TIMEOUT_MS = 10_000;

export interface PostgresUserStoreOptions extends UserStoreOptions {
  /**
   * A schema to keep the tables in (created when missing) instead of the connection's
   * `search_path` default. Tests use one per run so that parallel runs do not collide.
   */
  schema?: string;
  /**
   * When no call has reached the database for this long, the store asks it itself (`SELECT 1`), so
   * that `health()` of an idle replica follows the database; 0: never. Default {@link HEALTH_CHECK_MS}.
   */
  healthCheckMs?: number;
}

/** How long an idle store's health may go unchecked: a readiness probe's usual period. */
export const HEALTH_CHECK_MS = 10_000;

/** `postgres://user:***@host:port/db` (and `?password=***`): safe for messages and logs. */
export function redactConnectionString(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString().replace(QUERY_PASSWORD, '$1***');
  } catch {
    // Unparseable: keep only the scheme rather than risk echoing a password.
    const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0] ?? '';
    return `${scheme}//<unparseable connection string>`;
  }
}

/** The passwords of a connection URL, in every spelling they could appear in, for scrubbing messages. */
function passwordSpellings(url: string): string[] {
  try {
    const parsed = new URL(url);
    const raws = [parsed.password, ...[...parsed.search.matchAll(QUERY_PASSWORD)].map((match) => match[0].slice(match[1]!.length))];
    const spellings = raws.flatMap((raw) => {
      try {
        return [raw, decodeURIComponent(raw.replace(/\+/g, ' ')), decodeURIComponent(raw)];
      } catch {
        return [raw];
      }
    });
    return [...new Set(spellings.filter((spelling) => spelling !== ''))];
  } catch {
    return [];
  }
}

/**
 * `text` with each of `secrets` replaced by `***` where it stands on its own: not where a letter or
 * digit continues it on either side. Replaced inside words too, a short password would show itself
 * by the words it cut ("unex***ectedly" for the password `p`); a password in a URL, a query or a
 * sentence is still replaced, since `:`, `@`, `=`, `&`, spaces and quotes end it.
 */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    const escaped = secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const before = /^[\p{L}\p{N}]/u.test(secret) ? '(?<![\\p{L}\\p{N}])' : '';
    const after = /[\p{L}\p{N}]$/u.test(secret) ? '(?![\\p{L}\\p{N}])' : '';
    out = out.replace(new RegExp(`${before}${escaped}${after}`, 'gu'), '***');
  }
  return out;
}

interface Row {
  id: string;
  owner_id: string;
  markdown: string;
  name: string;
  description: string;
  when_to_use: string[];
  uses: string[];
  dependencies: string[];
  tool_bindings: ToolBinding[];
  revision: string;
  created_at: Date;
  updated_at: Date;
}

function toRecord(row: Row): UserCapabilityRecord {
  return {
    id: row.id,
    ownerId: row.owner_id,
    markdown: row.markdown,
    name: row.name,
    description: row.description,
    whenToUse: row.when_to_use,
    uses: row.uses,
    dependencies: row.dependencies,
    toolBindings: row.tool_bindings,
    revision: row.revision,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Parameters $3..$9, in the column order the statements below use. */
function dataParameters(data: UserCapabilityData): unknown[] {
  return [
    data.markdown,
    data.name,
    data.description,
    JSON.stringify(data.whenToUse),
    JSON.stringify(data.uses),
    JSON.stringify(data.dependencies),
    JSON.stringify(data.toolBindings),
  ];
}

/** A readable reason; a refused dual-stack connect is an AggregateError with an empty message. */
function describe(error: unknown): string {
  if (error instanceof AggregateError && !error.message) return error.errors.map(describe).join('; ');
  if (error instanceof Error) return error.message || (error as NodeJS.ErrnoException).code || error.name;
  return String(error);
}

/**
 * A statement the database refused (a full disk, a read-only server, a missing grant), as opposed
 * to an error that says nothing about the next save, for which the next call is the test: class 08
 * (connection exception), class 28 (the role or password refused at connect), and `PASSING_CODES`.
 */
function refusedByDatabase(error: unknown): boolean {
  if (!(error instanceof pg.DatabaseError)) return false;
  const code = error.code ?? '';
  return !code.startsWith('08') && !code.startsWith('28') && !PASSING_CODES.has(code);
}

const PASSING_CODES = new Set([
  // The server ended the connection: a restart, a failover, `pg_terminate_backend`.
  '57P01',
  '57P02',
  '57P03',
  // A lock another session held past the lock timeout.
  '55P03',
  // A connection the server would not open: every slot taken (for the role or the server), the database gone.
  '53300',
  '3D000',
]);

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export class PostgresUserStore implements UserCapabilityStore {
  /** The connection URL with its password masked. */
  readonly target: string;
  readonly #pool: pg.Pool;
  readonly #schema: string | undefined;
  readonly #maxPerOwner: number;
  readonly #log: StoreLog;
  readonly #secrets: string[];
  readonly #ready: RetryingInit;
  readonly #health: StoreHealth;
  #closed = false;
  /** When a call last ended (answered or failed), by the monotonic clock. */
  #lastCall = performance.now();
  readonly #healthCheck: NodeJS.Timeout | undefined;
  #checking = false;
  /** The connection of the check's `SELECT 1` while it runs: close() ends it rather than wait up to the query timeout. */
  #checkClient: pg.PoolClient | undefined;
  readonly #connecting = new Set<pg.Client>();

  /** Opens no connection: the first query (or `ping()`, or the health check of an idle store) connects and migrates. */
  constructor(connectionString: string, options: PostgresUserStoreOptions = {}) {
    this.target = redactConnectionString(connectionString);
    this.#secrets = passwordSpellings(connectionString);
    this.#maxPerOwner = resolveMaxPerOwner(options.maxPerOwner);
    this.#log = options.log ?? (() => {});
    this.#health = new StoreHealth(this.#log);
    if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
      throw new UserStoreError('invalid-config', `schema name ${JSON.stringify(options.schema)} must match ${String(SCHEMA_NAME)}`);
    }
    this.#schema = options.schema;
    const every = options.healthCheckMs ?? HEALTH_CHECK_MS;
    // A timer's delay past 2^31 - 1 ms becomes 1 ms (Node's TimeoutOverflowWarning).
    if (!Number.isSafeInteger(every) || every < 0 || every > 2 ** 31 - 1) {
      throw new UserStoreError('invalid-config', `the health check period must be a whole number of milliseconds up to 2^31 - 1, got ${String(every)}`);
    }
    // Connections still being opened (a database that went silent keeps each for the 5 s connect
    // timeout): close() cuts them, or pool.end() would wait for every one of them to time out.
    const connecting = this.#connecting;
    class TrackedClient extends pg.Client {
      constructor(config?: string | pg.ClientConfig) {
        super(config);
        connecting.add(this);
        this.once('end', () => connecting.delete(this));
      }
    }
    this.#pool = new pg.Pool({
      Client: TrackedClient,
      connectionString,
      max: 10,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      application_name: 'capreg',
      ...(this.#schema ? { options: `-c search_path=${this.#schema}` } : {}),
    });
    // An idle connection dropped by the server (restart, failover) is reported here; without a
    // listener the EventEmitter would throw and take the whole process down with it.
    this.#pool.on('connect', (client) => connecting.delete(client as pg.Client));
    this.#pool.on('error', (error) => {
      this.#log(`capreg user store: idle PostgreSQL connection lost (${this.#scrub(error.message)}); it will be replaced`);
    });
    this.#ready = new RetryingInit(() => this.#migrate());
    // Unref'd: it never keeps a process alive. A check is a call like any other: it ends an outage
    // when the database answers and starts one when it does not.
    if (every > 0) this.#healthCheck = setInterval(() => this.#checkIfIdle(every), every).unref();
  }

  #checkIfIdle(every: number): void {
    if (this.#closed || this.#checking || performance.now() - this.#lastCall < every) return;
    this.#checking = true;
    this.#use(() => this.#checkQuery())
      .catch(() => undefined)
      .finally(() => (this.#checking = false));
  }

  /** `ping()`'s `SELECT 1`, on a connection close() can end. */
  #checkQuery(): Promise<void> {
    return this.#onClient(async (client, drop) => {
      this.#checkClient = client;
      try {
        if (this.#closed) throw new StoreUnavailableError('the user store is closed', { reason: 'closed' });
        await client.query('SELECT 1', []);
      } catch (error) {
        drop(error);
        throw error;
      } finally {
        this.#checkClient = undefined;
      }
    });
  }

  #scrub(text: string): string {
    return scrubSecrets(text, this.#secrets);
  }

  #unavailable(error: unknown): StoreUnavailableError {
    const reason = describe(error);
    // The cause is kept for debugging; pg's errors carry host, port and user, never the password.
    return new StoreUnavailableError(`user store unavailable: PostgreSQL ${this.target}: ${this.#scrub(reason)}`, {
      cause: error,
      reason: errorCode(error),
    });
  }

  /**
   * Runs `work` on a connection of its own. `drop(error)` says the connection is broken: it is then
   * closed instead of going back to the pool.
   */
  async #onClient<T>(work: (client: pg.PoolClient, drop: (error: unknown) => void) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    // While checked out, a client has no listener of the pool's; a connection dropped between two
    // queries would otherwise emit an unhandled 'error'. The failed query reports it instead.
    const ignore = (): void => {};
    client.on('error', ignore);
    let broken: Error | undefined;
    try {
      return await work(client, (error) => (broken = error instanceof Error ? error : new Error(String(error))));
    } finally {
      client.removeListener('error', ignore);
      client.release(broken);
    }
  }

  /** Runs `work` in a transaction on one connection; rolled back when it throws. */
  #transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.#onClient(async (client, drop) => {
      try {
        await client.query(
          `BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${IDLE_IN_TRANSACTION_TIMEOUT_MS}; SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}`,
        );
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        if (!(error instanceof pg.DatabaseError) && !(error instanceof UserStoreError)) {
          // The connection failed or went silent (the client-side query timeout): it is dropped, not
          // asked to roll back, which would wait as long again, past the caller's request timeout.
          // The database ends the transaction with the session (its idle timeout at the latest).
          drop(error);
          throw error;
        }
        try {
          await client.query('ROLLBACK');
        } catch (rollbackError) {
          drop(rollbackError);
        }
        throw error;
      }
    });
  }

  async #migrate(): Promise<void> {
    await this.#transaction(async (client) => {
      // Replicas starting together: one migrates, the others wait and then find nothing to do.
      await client.query('SELECT pg_advisory_xact_lock($1, 0)', [LOCK_NAMESPACE_MIGRATIONS]);
      if (this.#schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.#schema}`);
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version    integer PRIMARY KEY,
        name       text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      const applied = new Set(rows.map((row) => row.version));
      for (const migration of POSTGRES_MIGRATIONS) {
        if (applied.has(migration.version)) continue;
        for (const statement of migration.statements) await client.query(statement);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      }
      const known = Math.max(...POSTGRES_MIGRATIONS.map((m) => m.version));
      const newest = Math.max(known, ...applied);
      if (newest > known) {
        // Migrations are additive, so a newer schema still serves this version (rolling upgrades).
        this.#log(`capreg user store: schema version ${newest} is newer than this capreg knows (${known}); continuing`);
      }
    });
  }

  async #use<T>(operation: () => Promise<T>, kind: 'read' | 'write' = 'read', wrote: (result: T) => boolean = () => true): Promise<T> {
    if (this.#closed) throw new StoreUnavailableError('the user store is closed', { reason: 'closed' });
    // Set while the write runs, once connected and migrated: what fails then is the write.
    let writing = false;
    try {
      await this.#ready.run();
      writing = kind === 'write';
      const result = await operation();
      this.#lastCall = performance.now();
      this.#health.answered(kind === 'write' && wrote(result));
      return result;
    } catch (error) {
      this.#lastCall = performance.now();
      // Cut short by close() (the check's connection ended, the pool shutting down): no outage to report.
      if (this.#closed) throw error instanceof UserStoreError ? error : this.#unavailable(error);
      if (error instanceof UserStoreError) {
        this.#health.answered(false);
        throw error;
      }
      const unavailable = this.#unavailable(error);
      // A write the database refused (a full disk, a read-only server after a failover, a missing
      // grant), while reads may well work, stays reported until a write succeeds; a connection
      // that failed fails reads as well.
      this.#health.failed(unavailable, writing && refusedByDatabase(error));
      throw unavailable;
    }
  }

  create(ownerId: string, data: UserCapabilityData): Promise<UserCapabilityRecord> {
    return this.#use(
      () =>
        this.#transaction(async (client) => {
          // Serialises creates of one owner across replicas, so the count cannot be passed twice.
          await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_NAMESPACE_OWNER, ownerId]);
          const counted = await client.query<{ count: number }>('SELECT count(*)::int AS count FROM user_capabilities WHERE owner_id = $1', [ownerId]);
          if (counted.rows[0]!.count >= this.#maxPerOwner) throw new LimitExceededError(this.#maxPerOwner);
          const inserted = await client.query<Row>(
            `INSERT INTO user_capabilities
            (id, owner_id, markdown, name, description, when_to_use, uses, dependencies, tool_bindings, revision, created_at, updated_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now(), now())
          RETURNING *`,
            [newUserCapabilityId(), ownerId, ...dataParameters(data), newRevision()],
          );
          return toRecord(inserted.rows[0]!);
        }),
      'write',
    );
  }

  update(ownerId: string, id: string, data: UserCapabilityData, expectedRevision?: string): Promise<UserCapabilityRecord> {
    return this.#use(async () => {
      // One conditional statement: a concurrent writer that commits first changes the revision,
      // and PostgreSQL re-checks the WHERE clause against that new row before writing.
      const updated = await this.#pool.query<Row>(
        `UPDATE user_capabilities SET
            markdown = $3, name = $4, description = $5, when_to_use = $6, uses = $7, dependencies = $8,
            tool_bindings = $9, revision = $10, updated_at = now()
          WHERE id = $1 AND owner_id = $2 AND ($11::text IS NULL OR revision = $11)
          RETURNING *`,
        [id, ownerId, ...dataParameters(data), newRevision(), expectedRevision ?? null],
      );
      if (updated.rows[0]) return toRecord(updated.rows[0]);
      if (expectedRevision !== undefined) {
        const owned = await this.#pool.query('SELECT 1 FROM user_capabilities WHERE id = $1 AND owner_id = $2', [id, ownerId]);
        if (owned.rowCount) throw new StaleRevisionError(id, expectedRevision);
      }
      throw new NotFoundError(id);
    }, 'write');
  }

  delete(ownerId: string, id: string): Promise<boolean> {
    // Deleting nothing wrote nothing: it does not show that saves work again.
    return this.#use(
      async () => {
        const deleted = await this.#pool.query('DELETE FROM user_capabilities WHERE id = $1 AND owner_id = $2', [id, ownerId]);
        return (deleted.rowCount ?? 0) > 0;
      },
      'write',
      (deleted) => deleted,
    );
  }

  get(id: string): Promise<UserCapabilityRecord | undefined> {
    return this.#use(async () => {
      const { rows } = await this.#pool.query<Row>('SELECT * FROM user_capabilities WHERE id = $1', [id]);
      return rows[0] && toRecord(rows[0]);
    });
  }

  listByOwner(ownerId: string): Promise<UserCapabilityRecord[]> {
    return this.#use(async () => {
      const { rows } = await this.#pool.query<Row>('SELECT * FROM user_capabilities WHERE owner_id = $1 ORDER BY id', [ownerId]);
      return rows.map(toRecord);
    });
  }

  listSummariesByOwner(ownerId: string): Promise<UserCapabilitySummary[]> {
    return this.#use(async () => {
      // Named: prepared once per connection, since it runs on every list_capabilities of an owner.
      const { rows } = await this.#pool.query<UserCapabilitySummary>({
        name: 'capreg-list-summaries-by-owner',
        text: `SELECT id, name, description, when_to_use AS "whenToUse", dependencies, revision
          FROM user_capabilities WHERE owner_id = $1 ORDER BY id`,
        values: [ownerId],
      });
      return rows;
    });
  }

  get maxPerOwner(): number {
    return this.#maxPerOwner;
  }

  countByOwner(ownerId: string): Promise<number> {
    return this.#use(async () => {
      const { rows } = await this.#pool.query<{ count: number }>('SELECT count(*)::int AS count FROM user_capabilities WHERE owner_id = $1', [ownerId]);
      return rows[0]!.count;
    });
  }

  ping(): Promise<void> {
    return this.#use(async () => {
      await this.#pool.query('SELECT 1', []);
    });
  }

  health(): UserStoreHealth {
    return this.#health.current;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#healthCheck);
    // A check waiting on a silent database would hold pool.end() until its query timed out.
    this.#checkClient?.end().catch(() => undefined);
    // A connection not open yet has no query to finish: its socket is closed now, and the call that
    // waited for it fails as store-unavailable, rather than close() waiting out the connect timeout.
    for (const client of this.#connecting) (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    await this.#pool.end();
  }
}

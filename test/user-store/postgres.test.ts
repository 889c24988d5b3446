// The PostgreSQL store against a real server: `.ci/postgres.sh` starts one and prints
// CAPREG_TEST_PG_URL. Without it the suite is skipped locally, and fails in CI (CI must run it).
// Each test works in its own schema, so parallel runs on one database do not collide.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { inspect } from 'node:util';
import pg from 'pg';
import { closedPort, describeMissingPostgres, TEST_PG_URL } from '../support/postgres.js';
import { afterAll, describe, expect, it } from 'vitest';
import { openUserStore } from '../../server/user-store/open.js';
import {
  POSTGRES_MIGRATIONS,
  PostgresUserStore,
  redactConnectionString,
  scrubSecrets,
  type PostgresUserStoreOptions,
} from '../../server/user-store/postgres.js';
import { isUserStoreError, type UserCapabilityStore } from '../../server/user-store/store.js';
import { describeUserStoreContract, sampleData, type StoreBackend } from './contract.js';

const url = TEST_PG_URL;

function uniqueSchema(): string {
  return `capreg_test_${process.pid}_${randomBytes(4).toString('hex')}`;
}

/** A TCP relay to the real server that the test can cut and restore, to play a database outage. */
class Relay {
  readonly #sockets = new Set<net.Socket>();
  readonly #pairs: [net.Socket, net.Socket][] = [];
  #server: net.Server | undefined;

  constructor(
    readonly port: number,
    readonly target: { host: string; port: number },
  ) {}

  /** A relay (not up yet) on a free loopback port to the server of `databaseUrl`. */
  static async to(databaseUrl: string): Promise<Relay> {
    const target = new URL(databaseUrl);
    return new Relay(await closedPort(), { host: target.hostname, port: Number(target.port || 5432) });
  }

  /** `databaseUrl` through this relay. */
  url(databaseUrl: string): URL {
    const through = new URL(databaseUrl);
    through.port = String(this.port);
    return through;
  }

  async up(): Promise<void> {
    this.#server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
        socket.on('close', () => this.#sockets.delete(socket));
      }
      client.pipe(upstream).pipe(client);
      this.#pairs.push([client, upstream]);
    });
    await new Promise<void>((resolve) => this.#server!.listen(this.port, '127.0.0.1', resolve));
  }

  /** A lost host or a partition: the connections stay open and nothing more gets through. */
  silence(): void {
    for (const [client, upstream] of this.#pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
    }
  }

  async down(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
    this.#server = undefined;
  }
}

const PASSWORD = 'Sup3r-s3cret%2Fpw';

describe('PostgreSQL user store without a database', () => {
  it('answers store-unavailable quickly for a closed port, never showing the password', async () => {
    const port = await closedPort();
    const target = `postgres://capreg:${PASSWORD}@127.0.0.1:${port}/capreg`;
    const lines: string[] = [];
    const started = Date.now();
    const store = await openUserStore(target, { root: '.', log: (line) => lines.push(line) });
    const errors = await Promise.all([store.ping(), store.listByOwner('alice'), store.create('alice', sampleData())].map((p) => p.catch((e: unknown) => e)));
    expect(Date.now() - started).toBeLessThan(3_000);
    for (const error of errors) {
      expect(isUserStoreError(error, 'store-unavailable')).toBe(true);
      const text = `${(error as Error).message}\n${inspect(error, { depth: 10 })}`;
      expect(text).toContain(`127.0.0.1:${port}`);
      expect(text).not.toContain('s3cret');
    }
    expect((errors[0] as Error).message).toContain('ECONNREFUSED');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('s3cret');
    await store.close();
  });

  it('scrubs a password where it stands on its own, and does not show a short one by the words it would cut', () => {
    expect(scrubSecrets('Connection terminated unexpectedly', ['p'])).toBe('Connection terminated unexpectedly');
    expect(scrubSecrets('postgres://u:p@db/x?password=p&a=1, "p" and p.', ['p'])).toBe('postgres://u:***@db/x?password=***&a=1, "***" and ***.');
    expect(scrubSecrets('bad password s3cr.t! (s3cr.t!)', ['s3cr.t!'])).toBe('bad password *** (***)');
    expect(scrubSecrets('pässwörd: gëheim, gëheimer', ['gëheim'])).toBe('pässwörd: ***, gëheimer');
  });

  it('masks the password in connection strings', () => {
    expect(redactConnectionString(`postgres://capreg@db.internal:5432/x?password=${PASSWORD}&sslmode=require&sslpassword=k3y`)).toBe(
      'postgres://capreg@db.internal:5432/x?password=***&sslmode=require&sslpassword=***',
    );
    expect(redactConnectionString(`postgres://capreg:${PASSWORD}@db.internal:5432/x?sslmode=require`)).toBe(
      'postgres://capreg:***@db.internal:5432/x?sslmode=require',
    );
    expect(redactConnectionString('postgres://db.internal/x')).toBe('postgres://db.internal/x');
    expect(redactConnectionString(`postgres://capreg:${PASSWORD}@[bad`)).not.toContain('s3cret');
  });

  it('refuses a schema name it would have to quote', () => {
    expect(() => new PostgresUserStore('postgres://127.0.0.1/x', { schema: 'a"; DROP TABLE x; --' })).toThrow(/schema name/);
  });
});

if (!url) {
  describeMissingPostgres('PostgreSQL user store', 'test/user-store/postgres.test.ts');
} else {
  const databaseUrl = url;
  const admin = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  afterAll(() => admin.end());

  function postgresBackend(): Promise<StoreBackend> {
    const schema = uniqueSchema();
    const opened: UserCapabilityStore[] = [];
    return Promise.resolve({
      // A constructor that throws (a bad limit) must come back as a rejection.
      open: (options) =>
        Promise.resolve().then(() => {
          const store = new PostgresUserStore(databaseUrl, { ...options, schema });
          opened.push(store);
          return store;
        }),
      async appliedMigrations() {
        const { rows } = await admin.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
        return rows.map((r) => r.version);
      },
      knownMigrations: POSTGRES_MIGRATIONS.map((m) => m.version),
      async dispose() {
        await Promise.all(opened.map((s) => s.close()));
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      },
    });
  }

  describeUserStoreContract('PostgreSQL', postgresBackend);

  describe('PostgreSQL user store', () => {
    const schemas: string[] = [];
    afterAll(async () => {
      for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    });

    function schemaForTest(): string {
      const schema = uniqueSchema();
      schemas.push(schema);
      return schema;
    }

    /**
     * A store (a schema of its own unless `options` names one) whose connections go through a relay
     * that is up, and what it logs; `end()` takes the relay down, then closes the store, which a
     * silenced relay would otherwise keep waiting.
     */
    async function storeThroughRelay(options: PostgresUserStoreOptions = {}) {
      const relay = await Relay.to(databaseUrl);
      await relay.up();
      const lines: string[] = [];
      const store = new PostgresUserStore(relay.url(databaseUrl).toString(), { schema: schemaForTest(), log: (line) => lines.push(line), ...options });
      const end = async (): Promise<void> => {
        await relay.down();
        await store.close();
      };
      return { relay, store, lines, end };
    }

    it('refuses a wrong password as store-unavailable, without the password', async () => {
      const wrong = new URL(databaseUrl);
      wrong.password = 'Wr0ng-s3cret';
      const store = new PostgresUserStore(wrong.toString(), { schema: schemaForTest() });
      const error = await store.ping().catch((e: unknown) => e);
      expect(isUserStoreError(error, 'store-unavailable')).toBe(true);
      expect((error as Error).message).toMatch(/password authentication failed/);
      expect(`${(error as Error).message}\n${inspect(error, { depth: 10 })}`).not.toContain('Wr0ng-s3cret');
      await store.close();
    });

    it('opens through --user-store with a search_path in the URL', async () => {
      const schema = schemaForTest();
      await admin.query(`CREATE SCHEMA ${schema}`);
      const withSchema = new URL(databaseUrl);
      withSchema.searchParams.set('options', `-c search_path=${schema}`);
      const store = await openUserStore(withSchema.toString(), { root: '.' });
      const created = await store.create('alice', sampleData());
      const { rows } = await admin.query(`SELECT id FROM ${schema}.user_capabilities`);
      expect(rows).toEqual([{ id: created.id }]);
      await store.close();
    });

    it('starts while the database is down, and works once it is back', async () => {
      const relay = await Relay.to(databaseUrl);
      const schema = schemaForTest();
      await admin.query(`CREATE SCHEMA ${schema}`);
      const through = relay.url(databaseUrl);
      through.searchParams.set('options', `-c search_path=${schema}`);
      const lines: string[] = [];
      const store = await openUserStore(through.toString(), { root: '.', log: (l) => lines.push(l) });
      expect(lines).toHaveLength(1);
      await expect(store.countByOwner('alice')).rejects.toMatchObject({ code: 'store-unavailable' });
      await relay.up();
      try {
        expect(await store.countByOwner(`owner-${randomBytes(4).toString('hex')}`)).toBe(0);
      } finally {
        await store.close();
        await relay.down();
      }
    });

    it('survives the database going away mid-life: store-unavailable, no crash, then recovery', async () => {
      const { relay, store, lines, end } = await storeThroughRelay();
      try {
        const created = await store.create('alice', sampleData());
        // Idle pooled connections are cut: the pool reports it through the log, not a crash.
        await relay.down();
        await new Promise((resolve) => setTimeout(resolve, 100));
        const error = await store.get(created.id).catch((e: unknown) => e);
        expect(isUserStoreError(error, 'store-unavailable')).toBe(true);
        expect(lines.some((l) => l.includes('idle PostgreSQL connection lost'))).toBe(true);
        await relay.up();
        expect(await store.get(created.id)).toEqual(created);
      } finally {
        await end();
      }
    });

    it('an idle store checks the database itself: its health follows an outage and its end without any call', async () => {
      const { relay, store, lines, end } = await storeThroughRelay({ healthCheckMs: 200 });
      const healthWithin = async (ms: number, status: string): Promise<void> => {
        const until = Date.now() + ms;
        while (store.health().status !== status && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
        expect(store.health().status).toBe(status);
      };
      try {
        await store.create('alice', sampleData());
        await relay.down();
        // No call: the check finds the outage (within the 5 s connect timeout) and logs it once.
        await healthWithin(8_000, 'unavailable');
        expect(lines.filter((l) => l.includes('user-defined capabilities are unavailable'))).toHaveLength(1);
        await relay.up();
        await healthWithin(8_000, 'ok');
        expect(lines.filter((l) => l.includes('the user store answers again'))).toHaveLength(1);
      } finally {
        await end();
      }
    });

    it('closes at once while its own check waits on a database that went silent', async () => {
      const { relay, store, lines, end } = await storeThroughRelay({ healthCheckMs: 200 });
      try {
        await store.ping();
        relay.silence();
        // Idle: a check's SELECT 1 now waits for an answer that never comes (up to the query timeout).
        await new Promise((resolve) => setTimeout(resolve, 800));
        const started = performance.now();
        await store.close();
        expect(performance.now() - started).toBeLessThan(1_000);
        // The check that close() cut short is no outage: nothing is logged, the health is unchanged.
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(lines).toEqual([]);
        expect(store.health()).toEqual({ status: 'ok' });
      } finally {
        await end();
      }
    });

    it('with the check off, an idle store reports what its last call saw; the period is a whole number of milliseconds', async () => {
      const { relay, store, end } = await storeThroughRelay({ healthCheckMs: 0 });
      try {
        await store.create('alice', sampleData());
        await relay.down();
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        expect(store.health()).toEqual({ status: 'ok' });
        await expect(store.countByOwner('alice')).rejects.toMatchObject({ code: 'store-unavailable' });
        expect(store.health().status).toBe('unavailable');
      } finally {
        await end();
      }
      // Past 2^31 - 1 ms a timer fires after 1 ms instead (Node's TimeoutOverflowWarning).
      for (const healthCheckMs of [-1, 1.5, Number.NaN, 2 ** 31]) {
        expect(() => new PostgresUserStore(databaseUrl, { healthCheckMs })).toThrow(/health check period must be a whole number of milliseconds/);
      }
    });

    it('reports saves the database refuses until one succeeds, while reads serve; logged once, at warn', async () => {
      const schema = schemaForTest();
      const lines: { line: string; level: string }[] = [];
      const store = new PostgresUserStore(databaseUrl, { schema, log: (line, level = 'info') => void lines.push({ line, level }) });
      try {
        const kept = await store.create('alice', sampleData('kept'));
        // Stands in for a full disk: every insert is refused with its SQLSTATE, reads work.
        await admin.query(
          `CREATE FUNCTION ${schema}.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'full' USING ERRCODE = 'disk_full'; END $$`,
        );
        await admin.query(`CREATE TRIGGER refuse BEFORE INSERT ON ${schema}.user_capabilities FOR EACH ROW EXECUTE FUNCTION ${schema}.refuse()`);
        for (let n = 0; n < 3; n += 1) {
          await expect(store.create('alice', sampleData(String(n)))).rejects.toMatchObject({ code: 'store-unavailable' });
          expect((await store.listByOwner('alice')).map((r) => r.id)).toEqual([kept.id]);
          expect(store.health()).toEqual({ status: 'writes-failing', reason: '53100' });
          // A delete that finds nothing wrote nothing: it does not clear the state either.
          expect(await store.delete('alice', 'user:no-such-capability')).toBe(false);
          expect(store.health()).toEqual({ status: 'writes-failing', reason: '53100' });
        }
        expect(lines).toEqual([{ line: expect.stringContaining('a save failed') as unknown, level: 'warn' }]);
        await admin.query(`DROP TRIGGER refuse ON ${schema}.user_capabilities`);
        await store.create('alice', sampleData('after'));
        expect(store.health()).toEqual({ status: 'ok' });
        expect(lines.slice(1)).toEqual([{ line: 'capreg user store: saves succeed again', level: 'info' }]);
      } finally {
        await store.close();
      }
    });

    it('a connection the server ends during a save (a restart, a failover, pg_terminate_backend) is an outage the next answered call ends, not a refused save', async () => {
      const schema = schemaForTest();
      const lines: string[] = [];
      const store = new PostgresUserStore(databaseUrl, { schema, log: (line) => void lines.push(line) });
      const locker = await admin.connect();
      try {
        const kept = await store.create('alice', sampleData('kept'));
        // The next save waits inside PostgreSQL on a lock, and its backend is terminated there (57P01).
        await locker.query(`BEGIN; LOCK TABLE ${schema}.user_capabilities IN ACCESS EXCLUSIVE MODE`);
        const saving = store.create('alice', sampleData('cut')).catch((e: unknown) => e);
        const waiting = async (): Promise<number[]> =>
          (await admin.query<{ pid: number }>(`SELECT pid FROM pg_locks WHERE NOT granted AND relation = '${schema}.user_capabilities'::regclass`)).rows.map(
            (r) => r.pid,
          );
        while ((await waiting()).length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
        await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [await waiting()]);
        await locker.query('ROLLBACK');
        expect(await saving).toMatchObject({ code: 'store-unavailable', reason: '57P01' });
        expect(store.health()).toEqual({ status: 'unavailable', reason: '57P01' });
        // The database answers again: the outage is over without waiting for someone to save.
        expect((await store.listByOwner('alice')).map((r) => r.id)).toEqual([kept.id]);
        expect(store.health()).toEqual({ status: 'ok' });
        expect(lines.at(-1)).toBe('capreg user store: the user store answers again');
      } finally {
        locker.release();
        await store.close();
      }
    });

    it('a connection the database will not open (every slot taken) is an outage the next answered call ends, not a refused save', async () => {
      const schema = schemaForTest();
      const role = `capreg_one_slot_${randomBytes(4).toString('hex')}`;
      const secret = `pw-${randomBytes(8).toString('hex')}`;
      const setup = new PostgresUserStore(databaseUrl, { schema });
      const kept = await setup.create('alice', sampleData('kept'));
      await setup.close();
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${secret}' CONNECTION LIMIT 1`);
      const database = (await admin.query<{ name: string }>('SELECT current_database() AS name')).rows[0]!.name;
      await admin.query(
        `GRANT CREATE ON DATABASE ${database} TO ${role}; GRANT ALL ON SCHEMA ${schema} TO ${role}; GRANT ALL ON ALL TABLES IN SCHEMA ${schema} TO ${role}`,
      );
      const limitedUrl = new URL(databaseUrl);
      limitedUrl.username = role;
      limitedUrl.password = secret;
      const store = new PostgresUserStore(limitedUrl.href, { schema, healthCheckMs: 0 });
      const ofRole = async (): Promise<number> =>
        (await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1', [role])).rows[0]!.n;
      let holder: pg.Client | undefined;
      try {
        // Ready (schema checked), then its idle connection ended, so that the next call must open one.
        expect((await store.listByOwner('alice')).map((r) => r.id)).toEqual([kept.id]);
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [role]);
        while ((await ofRole()) > 0) await new Promise((resolve) => setTimeout(resolve, 20));
        holder = new pg.Client({ connectionString: limitedUrl.href });
        await holder.connect();

        await expect(store.delete('alice', kept.id)).rejects.toMatchObject({ code: 'store-unavailable', reason: '53300' });
        expect(store.health()).toEqual({ status: 'unavailable', reason: '53300' });
        await holder.end();
        holder = undefined;
        while ((await ofRole()) > 0) await new Promise((resolve) => setTimeout(resolve, 20));
        // A read is enough to end it: the save was never refused, the connection was.
        expect((await store.listByOwner('alice')).map((r) => r.id)).toEqual([kept.id]);
        expect(store.health()).toEqual({ status: 'ok' });
      } finally {
        await holder?.end();
        await store.close();
        await admin.query(`DROP OWNED BY ${role}; DROP ROLE ${role}`);
      }
    });

    it("a replica lost in the middle of a save does not hold the owner's saves on the other replicas for long", async () => {
      const schema = schemaForTest();
      const { relay, store: lost, end } = await storeThroughRelay({ schema });
      const other = new PostgresUserStore(databaseUrl, { schema });
      const locker = await admin.connect();
      try {
        await lost.create('alice', sampleData('first'));
        // The lost replica's save takes the owner's lock, then waits inside PostgreSQL on a table
        // lock held here; then its network goes silent, its socket still open.
        await locker.query(`BEGIN; LOCK TABLE ${schema}.user_capabilities IN ACCESS EXCLUSIVE MODE`);
        void lost.create('alice', sampleData('lost')).catch(() => undefined);
        const ownerLockHeld = async (): Promise<boolean> =>
          ((await admin.query("SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = 1667330162")).rowCount ?? 0) > 0;
        while (!(await ownerLockHeld())) await new Promise((resolve) => setTimeout(resolve, 20));
        relay.silence();
        await locker.query('ROLLBACK');

        // The other replica's saves for that owner: each answered well within a request's 30 s, and
        // one succeeds once the database has let the lost session go.
        const started = Date.now();
        for (;;) {
          const attempt = Date.now();
          const error = await other.create('alice', sampleData('other')).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(Date.now() - attempt).toBeLessThan(12_000);
          if (error === undefined) break;
          expect(error).toMatchObject({ code: 'store-unavailable' });
          expect(Date.now() - started).toBeLessThan(25_000);
        }
        expect(other.health()).toEqual({ status: 'ok' });
      } finally {
        locker.release();
        await other.close();
        await end();
      }
    }, 60_000);

    it('answers a save store-unavailable within the query timeout when the database goes silent', async () => {
      const { relay, store, end } = await storeThroughRelay();
      try {
        await store.create('alice', sampleData('first'));
        relay.silence();
        const started = Date.now();
        await expect(store.create('alice', sampleData('unanswered'))).rejects.toMatchObject({ code: 'store-unavailable' });
        // 15 s, the query timeout; not twice that (a ROLLBACK queued behind the silent statement),
        // which is past the 30 s an HTTP caller's request is given.
        expect(Date.now() - started).toBeLessThan(20_000);
      } finally {
        await end();
      }
    }, 60_000);

    it('migrates once when several replicas start together', async () => {
      const schema = schemaForTest();
      const replicas = Array.from({ length: 5 }, () => new PostgresUserStore(databaseUrl, { schema }));
      await Promise.all(replicas.map((r) => r.ping()));
      const { rows } = await admin.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
      expect(rows.map((r) => r.version)).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
      await Promise.all(replicas.map((r) => r.close()));
    });
  });
}

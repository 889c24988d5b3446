// The user-capability suite on PostgreSQL: `.ci/postgres.sh` starts one and prints
// CAPREG_TEST_PG_URL. Without it the suite is skipped locally and fails in CI (CI must run it).
// Each test works in its own schema; replicas of one test share it.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';
import { afterAll, describe, it } from 'vitest';
import { openUserStore } from '../../server/user-store/open.js';
import { PostgresUserStore } from '../../server/user-store/postgres.js';
import type { UserCapabilityStore } from '../../server/user-store/store.js';
import type { UserStoreBackend } from './harness.js';
import { describeUserCapabilities } from './suite.js';

const url = process.env.CAPREG_TEST_PG_URL;
const HOW = 'start one with: pg_env=$(bash .ci/postgres.sh) && eval "$pg_env"';
const inCI = !['', '0', 'false'].includes((process.env.CI ?? '').toLowerCase());

/** A port on the loopback interface where nothing listens. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

if (!url) {
  if (inCI) {
    describe('user-defined capabilities over MCP: PostgreSQL', () => {
      it('runs in CI', () => {
        throw new Error(`CAPREG_TEST_PG_URL is not set, and CI must run the PostgreSQL tests: ${HOW}`);
      });
    });
  } else {
    process.stderr.write(`test/user-capabilities/postgres.test.ts: skipping the PostgreSQL tests: CAPREG_TEST_PG_URL is not set (${HOW})\n`);
    describe.skip(`user-defined capabilities over MCP: PostgreSQL (skipped: CAPREG_TEST_PG_URL is not set; ${HOW})`, () => {
      it('needs a database', () => {});
    });
  }
} else {
  const databaseUrl = url;
  const admin = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  afterAll(() => admin.end());

  async function postgresBackend(): Promise<UserStoreBackend> {
    const schema = `capreg_test_${process.pid}_${randomBytes(4).toString('hex')}`;
    const opened: UserCapabilityStore[] = [];
    return {
      async open(options = {}) {
        const store = new PostgresUserStore(databaseUrl, { ...options, schema });
        opened.push(store);
        return store;
      },
      async openUnreachable(log) {
        const store = await openUserStore(`postgres://capreg:Sup3r-s3cret@127.0.0.1:${await closedPort()}/capreg`, { root: '.', log });
        opened.push(store);
        return store;
      },
      async dispose() {
        await Promise.all(opened.map((store) => store.close()));
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      },
    };
  }

  describeUserCapabilities('PostgreSQL', postgresBackend);
}

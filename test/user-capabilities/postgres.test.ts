// The user-capability suite on PostgreSQL: `.ci/postgres.sh` starts one and prints
// CAPREG_TEST_PG_URL. Without it the suite is skipped locally and fails in CI (CI must run it).
// Each test works in its own schema; replicas of one test share it.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { closedPort, describeMissingPostgres, TEST_PG_URL } from '../support/postgres.js';
import { afterAll } from 'vitest';
import { openUserStore } from '../../server/user-store/open.js';
import { PostgresUserStore } from '../../server/user-store/postgres.js';
import type { UserCapabilityStore } from '../../server/user-store/store.js';
import type { UserStoreBackend } from './harness.js';
import { describeUserCapabilities } from './suite.js';

const url = TEST_PG_URL;

if (!url) {
  describeMissingPostgres('user-defined capabilities over MCP: PostgreSQL', 'test/user-capabilities/postgres.test.ts');
} else {
  const databaseUrl = url;
  const admin = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  afterAll(() => admin.end());

  function postgresBackend(): Promise<UserStoreBackend> {
    const schema = `capreg_test_${process.pid}_${randomBytes(4).toString('hex')}`;
    const opened: UserCapabilityStore[] = [];
    return Promise.resolve({
      open(options = {}) {
        return Promise.resolve().then(() => {
          const store = new PostgresUserStore(databaseUrl, { ...options, schema });
          opened.push(store);
          return store;
        });
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
    });
  }

  describeUserCapabilities('PostgreSQL', postgresBackend);
}

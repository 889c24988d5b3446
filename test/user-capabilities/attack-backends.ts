// The two stores the attack tests run on: a fresh SQLite file, and (when CAPREG_TEST_PG_URL is set)
// a fresh schema on the test PostgreSQL. Each `open()` is one more replica on the same database.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach } from 'vitest';
import { PostgresUserStore } from '../../server/user-store/postgres.js';
import { SqliteUserStore } from '../../server/user-store/sqlite.js';
import type { UserCapabilityStore, UserStoreOptions } from '../../server/user-store/store.js';
import { TEST_PG_URL } from '../support/postgres.js';
import { startHarness, type Harness, type Session } from './harness.js';

export interface AttackBackend {
  open(options?: UserStoreOptions): UserCapabilityStore;
  dispose(): Promise<void>;
}

export const ATTACK_BACKENDS: { name: string; make: () => AttackBackend }[] = [
  {
    name: 'SQLite',
    make() {
      const dir = mkdtempSync(path.join(tmpdir(), 'capreg-attack-'));
      const opened: UserCapabilityStore[] = [];
      return {
        open(options = {}) {
          const store = new SqliteUserStore(path.join(dir, 'user-capabilities.db'), options);
          opened.push(store);
          return store;
        },
        async dispose() {
          await Promise.all(opened.map((store) => store.close()));
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  ...(TEST_PG_URL
    ? [
        {
          name: 'PostgreSQL',
          make(): AttackBackend {
            const url = TEST_PG_URL!;
            const schema = `capreg_attack_${process.pid}_${randomBytes(4).toString('hex')}`;
            const opened: UserCapabilityStore[] = [];
            return {
              open(options = {}) {
                const store = new PostgresUserStore(url, { ...options, schema, healthCheckMs: 0 });
                opened.push(store);
                return store;
              },
              async dispose() {
                await Promise.all(opened.map((store) => store.close()));
                const admin = new pg.Client({ connectionString: url });
                await admin.connect();
                await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
                await admin.end();
              },
            };
          },
        },
      ]
    : []),
];

/**
 * For each test of the describe block it is called in: a server on a fresh store of `make`'s
 * backend, and Alice's session on it; both closed after the test.
 */
export function aliceOnFreshStore(make: () => AttackBackend): () => Promise<{ alice: Session; store: UserCapabilityStore }> {
  let backend: AttackBackend | undefined;
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.close();
    await backend?.dispose();
    harness = undefined;
    backend = undefined;
  });
  return async () => {
    const opened = make();
    backend = opened;
    let store: UserCapabilityStore | undefined;
    harness = await startHarness(() => Promise.resolve((store = opened.open())));
    const alice = await harness.session('key-alice');
    return { alice, store: store! };
  };
}

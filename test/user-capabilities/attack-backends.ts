// The two stores the attack tests run on: a fresh SQLite file, and (when CAPREG_TEST_PG_URL is set)
// a fresh schema on the test PostgreSQL. Each `open()` is one more replica on the same database.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { PostgresUserStore } from '../../server/user-store/postgres.js';
import { SqliteUserStore } from '../../server/user-store/sqlite.js';
import type { UserCapabilityStore, UserStoreOptions } from '../../server/user-store/store.js';
import { TEST_PG_URL } from '../support/postgres.js';

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

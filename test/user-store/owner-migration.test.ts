// Migration 2 on a database created by the version-1 schema (bare principal ids as owners): every
// owner moves to the API-key namespace, on SQLite and on PostgreSQL, and nothing else changes.
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ownerKey } from '../../server/identity.js';
import { POSTGRES_MIGRATIONS, PostgresUserStore } from '../../server/user-store/postgres.js';
import { SQLITE_MIGRATIONS, SqliteUserStore } from '../../server/user-store/sqlite.js';
import { describeMissingPostgres, TEST_PG_URL } from '../support/postgres.js';

const OLD_OWNERS = ['reporter', 'team:ops', 'jwt:looks-namespaced', 'Ünïcode owner'];
const ROW = ['# m', 'n', 'd', '["w"]', '[]', '[]', '[]', 'rev'];

describe('owner migration on SQLite', () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'capreg-owner-migration-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('moves bare owners of a version-1 database to key:<id>, once', async () => {
    const file = path.join(scratch, 'v1.db');
    const db = new Database(file);
    db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT');
    for (const statement of SQLITE_MIGRATIONS[0]!.statements) db.exec(statement);
    db.prepare("INSERT INTO schema_migrations VALUES (1, 'create user_capabilities', '2025-01-01T00:00:00.000Z')").run();
    const insert = db.prepare("INSERT INTO user_capabilities VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')");
    OLD_OWNERS.forEach((owner, n) => insert.run(`user:old${n}`, owner, ...ROW));
    db.close();

    const store = new SqliteUserStore(file);
    for (const [n, owner] of OLD_OWNERS.entries()) {
      expect((await store.listByOwner(ownerKey({ method: 'api-key' }, owner))).map((r) => r.id)).toEqual([`user:old${n}`]);
      expect(await store.countByOwner(owner)).toBe(0);
    }
    await store.close();
    // Reopening applies nothing again (no key:key: owners).
    const reopened = new SqliteUserStore(file);
    expect((await reopened.get('user:old0'))?.ownerId).toBe('key:reporter');
    await reopened.close();
    const check = new Database(file, { readonly: true });
    expect(check.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all()).toEqual(SQLITE_MIGRATIONS.map((m) => m.version));
    check.close();
  });
});

if (!TEST_PG_URL) {
  describeMissingPostgres('owner migration on PostgreSQL', 'test/user-store/owner-migration.test.ts');
} else {
  const url = TEST_PG_URL;
  describe('owner migration on PostgreSQL', () => {
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    const schema = `capreg_test_owners_${process.pid}_${randomBytes(4).toString('hex')}`;
    afterAll(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    });

    it('moves bare owners of a version-1 database to key:<id>, once', async () => {
      const client = await admin.connect();
      try {
        await client.query(`CREATE SCHEMA ${schema}`);
        await client.query(`SET search_path = ${schema}`);
        await client.query('CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
        for (const statement of POSTGRES_MIGRATIONS[0]!.statements) await client.query(statement);
        await client.query("INSERT INTO schema_migrations (version, name) VALUES (1, 'create user_capabilities')");
        for (const [n, owner] of OLD_OWNERS.entries()) {
          await client.query(`INSERT INTO user_capabilities VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8::jsonb, $9::jsonb, $10, now(), now())`, [
            `user:old${n}`,
            owner,
            ...ROW,
          ]);
        }
        await client.query('RESET search_path');
      } finally {
        client.release();
      }

      const store = new PostgresUserStore(url, { schema });
      for (const [n, owner] of OLD_OWNERS.entries()) {
        expect((await store.listByOwner(ownerKey({ method: 'api-key' }, owner))).map((r) => r.id)).toEqual([`user:old${n}`]);
        expect(await store.countByOwner(owner)).toBe(0);
      }
      await store.close();
      const reopened = new PostgresUserStore(url, { schema });
      expect((await reopened.get('user:old0'))?.ownerId).toBe('key:reporter');
      await reopened.close();
      const { rows } = await admin.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
      expect(rows.map((r) => r.version)).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
    });
  });
}

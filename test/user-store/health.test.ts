// store.health(): what /healthz shows of the user store. The state the last call saw, without a
// query; SQLite re-checks its file. The reason is a code: never a path, host or password.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresUserStore } from '../../server/user-store/postgres.js';
import { SqliteUserStore } from '../../server/user-store/sqlite.js';
import { closedPort } from '../support/postgres.js';
import { sampleData } from './contract.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'capreg-store-health-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('user store health', () => {
  it('SQLite: notices a deleted file on the probe itself, and recovers once it is restored', async () => {
    const file = path.join(scratch, 'health.db');
    const store = new SqliteUserStore(file);
    await store.create('key:alice', sampleData());
    expect(store.health()).toEqual({ status: 'ok' });
    copyFileSync(file, `${file}.backup`);
    rmSync(file);
    const health = store.health();
    expect(health).toEqual({ status: 'unavailable', reason: 'database-missing' });
    expect(JSON.stringify(health)).not.toContain(scratch);
    copyFileSync(`${file}.backup`, file);
    expect(await store.countByOwner('key:alice')).toBe(1);
    expect(store.health()).toEqual({ status: 'ok' });
    await store.close();
  });

  it('PostgreSQL: reports the failure code of the last call, without host or password', async () => {
    const port = await closedPort();
    const store = new PostgresUserStore(`postgres://capreg:Sup3r-s3cret@127.0.0.1:${port}/capreg`);
    await expect(store.ping()).rejects.toMatchObject({ code: 'store-unavailable' });
    const health = store.health();
    expect(health).toEqual({ status: 'unavailable', reason: 'ECONNREFUSED' });
    expect(JSON.stringify(health)).not.toMatch(/s3cret|127\.0\.0\.1/);
    await store.close();
  });
});

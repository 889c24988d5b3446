// store.health(): what /healthz shows of the user store. The state the last call saw, without a
// query; SQLite re-checks its file. The reason is a code: never a path, host or password.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openUserStore } from '../../server/user-store/open.js';
import { PostgresUserStore } from '../../server/user-store/postgres.js';
import { SqliteUserStore } from '../../server/user-store/sqlite.js';
import { structured } from '../server/helpers.js';
import { closedPort } from '../support/postgres.js';
import { startHarness, UNIFORM_ERROR_TEXT, userEntries, WEEKLY_DIGEST } from '../user-capabilities/harness.js';
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

  it('SQLite: saves the database refuses keep the server degraded until one succeeds, while reads serve; logged once, at warn', async () => {
    const file = path.join(scratch, 'refusing.db');
    const lines: { line: string; level: string }[] = [];
    const log = (line: string, level = 'info'): void => void lines.push({ line, level });
    const harness = await startHarness(() => openUserStore(`sqlite:${file}`, { root: scratch, log }), { log });
    try {
      const alice = await harness.session('key-alice');
      const saved = await alice.json('save_user_capability', { markdown: WEEKLY_DIGEST });
      expect(saved).toMatchObject({ success: true });
      // Stands in for a full disk or a read-only file (root, as CI may run, writes those anyway):
      // SQLite refuses every insert while reads work.
      const db = new Database(file);
      db.exec("CREATE TRIGGER refuse BEFORE INSERT ON user_capabilities BEGIN SELECT RAISE(ABORT, 'refused'); END");
      for (let n = 0; n < 3; n += 1) {
        expect(structured(await alice.call('save_user_capability', { markdown: WEEKLY_DIGEST }))).toMatchObject({ code: 'store-unavailable' });
        // The saved capability is still served, and the probe after that read still says saves fail.
        expect(userEntries(await alice.json('list_capabilities')).map((e) => e.id)).toEqual([saved['capabilityId']]);
        expect(harness.runtime.health()).toMatchObject({ status: 'degraded', userStore: { status: 'writes-failing', reason: 'SQLITE_CONSTRAINT_TRIGGER' } });
        // A delete that finds nothing wrote nothing: it does not clear the state either.
        expect(await alice.text('delete_user_capability', { capabilityId: 'user:no-such-capability' })).toBe(UNIFORM_ERROR_TEXT);
        expect(harness.runtime.health()).toMatchObject({ status: 'degraded', userStore: { status: 'writes-failing' } });
      }
      expect(JSON.stringify(harness.runtime.health())).not.toContain(scratch);
      // One line when it starts, at warn: not one (or two) per save.
      expect(lines).toEqual([{ line: expect.stringContaining('a save failed') as unknown, level: 'warn' }]);

      db.exec('DROP TRIGGER refuse');
      db.close();
      expect(await alice.json('save_user_capability', { markdown: WEEKLY_DIGEST })).toMatchObject({ success: true });
      expect(harness.runtime.health()).toMatchObject({ status: 'ok', userStore: { status: 'ok' } });
      expect(lines.slice(1)).toEqual([{ line: 'capreg user store: saves succeed again', level: 'info' }]);
    } finally {
      await harness.close();
    }
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

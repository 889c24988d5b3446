import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openUserStore } from '../../server/user-store/open.js';
import { SQLITE_MIGRATIONS, SqliteUserStore } from '../../server/user-store/sqlite.js';
import { isUserStoreError, type UserCapabilityStore } from '../../server/user-store/store.js';
import { describeUserStoreContract, sampleData, type StoreBackend } from './contract.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'capreg-user-store-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let counter = 0;

function freshFile(): string {
  counter += 1;
  // A folder that does not exist yet: the store creates the parents of its file.
  return path.join(scratch, `run-${counter}`, 'nested', 'user-capabilities.db');
}

function sqliteBackend(): Promise<StoreBackend> {
  const file = freshFile();
  const opened: UserCapabilityStore[] = [];
  return Promise.resolve({
    // A constructor that throws (a bad limit) must come back as a rejection.
    open: (options) =>
      Promise.resolve().then(() => {
        const store = new SqliteUserStore(file, options);
        opened.push(store);
        return store;
      }),
    appliedMigrations() {
      const db = new Database(file, { readonly: true });
      try {
        return Promise.resolve(db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all() as number[]);
      } finally {
        db.close();
      }
    },
    knownMigrations: SQLITE_MIGRATIONS.map((m) => m.version),
    async dispose() {
      await Promise.all(opened.map((s) => s.close()));
    },
  });
}

describeUserStoreContract('SQLite', sqliteBackend);

describe('SQLite user store', () => {
  it('uses a rollback journal (no memory-mapped -shm file another process could truncate)', async () => {
    const file = freshFile();
    const store = new SqliteUserStore(file);
    await store.create('key:alice', sampleData());
    const db = new Database(file, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('delete');
    db.close();
    expect(existsSync(`${file}-shm`)).toBe(false);
    expect(existsSync(`${file}-wal`)).toBe(false);
    await store.close();
  });

  it('touches nothing on disk until first used', async () => {
    const file = freshFile();
    const store = new SqliteUserStore(file);
    expect(existsSync(path.dirname(file))).toBe(false);
    await store.close();
  });

  it('reports a path it cannot create as store-unavailable, and opening does not throw', async () => {
    const blocker = path.join(scratch, 'a-file');
    writeFileSync(blocker, 'not a folder');
    const lines: string[] = [];
    const store = await openUserStore(`sqlite:${path.join(blocker, 'db.sqlite')}`, { root: scratch, log: (l) => lines.push(l) });
    const error = await store.ping().catch((e: unknown) => e);
    expect(isUserStoreError(error, 'store-unavailable')).toBe(true);
    expect((error as Error).message).toContain(blocker);
    expect(lines.join('\n')).toContain('user-defined capabilities are unavailable');
    await store.close();
  });

  it('reports a file that is not a database as store-unavailable', async () => {
    const file = path.join(scratch, 'garbage.db');
    writeFileSync(file, 'this is not an SQLite database, just text that is long enough to have a header'.repeat(20));
    const store = new SqliteUserStore(file);
    const error = await store.listByOwner('alice').catch((e: unknown) => e);
    expect(isUserStoreError(error, 'store-unavailable')).toBe(true);
    await store.close();
  });

  it("refuses another application's database at the first start, and leaves it untouched", async () => {
    const file = path.join(scratch, 'another-application.db');
    const other = new Database(file);
    other.exec("PRAGMA journal_mode = WAL; CREATE TABLE users (id INTEGER PRIMARY KEY, login TEXT); INSERT INTO users (login) VALUES ('ada')");
    other.close();
    const before = readFileSync(file);
    const store = await openUserStore(`sqlite:${file}`, { root: scratch });
    await expect(store.create('key:alice', sampleData())).rejects.toMatchObject({ code: 'store-unavailable', reason: 'not-a-user-store' });
    expect(store.health()).toEqual({ status: 'unavailable', reason: 'not-a-user-store' });
    await store.close();
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('starts an empty store in an existing file without tables (emptied, or a first start cut short), and says so', async () => {
    const file = path.join(scratch, 'emptied.db');
    writeFileSync(file, '');
    const lines: { line: string; level: string | undefined }[] = [];
    const store = await openUserStore(`sqlite:${file}`, { root: scratch, log: (line, level) => void lines.push({ line, level }) });
    expect(await store.listByOwner('key:alice')).toEqual([]);
    expect(lines).toEqual([{ line: `capreg user store: ${file} had no tables: starting an empty user store in it`, level: 'warn' }]);
    await store.close();
  });

  it('opens the default file under the root', async () => {
    const root = path.join(scratch, 'registry');
    const store = await openUserStore(undefined, { root });
    const created = await store.create('alice', sampleData());
    expect(existsSync(path.join(root, '.capreg', 'user-capabilities.db'))).toBe(true);
    await store.close();
    const reopened = await openUserStore('sqlite:.capreg/user-capabilities.db', { root });
    expect(await reopened.get(created.id)).toEqual(created);
    await reopened.close();
  });

  // Separate processes, each with its own connection: the conditional UPDATE and BEGIN IMMEDIATE
  // must hold across processes, not only within one event loop. Runs the compiled store in lib/
  // (test/global-setup.ts builds it before the suite).
  it('lets exactly one of several processes win an update, and holds the limit across processes', async () => {
    const here = path.dirname(fileURLToPath(import.meta.url));
    const compiled = path.resolve(here, '../../lib/server/user-store/sqlite.js');
    const file = freshFile();
    const store = new SqliteUserStore(file, { maxPerOwner: 4 });
    const created = await store.create('alice', sampleData('v0'));
    const script = `
      const { SqliteUserStore } = await import(${JSON.stringify(compiled)});
      const [file, id, revision, n] = process.argv.slice(1);
      const store = new SqliteUserStore(file, { maxPerOwner: 4 });
      const outcome = async (p) => p.then(() => 'ok', (e) => e.code ?? String(e));
      const update = await outcome(store.update('alice', id, { markdown: 'm' + n, name: 'n' + n, description: 'd',
        whenToUse: ['w'], uses: [], dependencies: [], toolBindings: [] }, revision));
      const create = await outcome(store.create('alice', { markdown: 'c' + n, name: 'c', description: 'd',
        whenToUse: ['w'], uses: [], dependencies: [], toolBindings: [] }));
      await store.close();
      process.stdout.write(JSON.stringify({ update, create }));
    `;
    const run = promisify(execFile);
    const outputs = await Promise.all(
      Array.from({ length: 6 }, (_, n) => run(process.execPath, ['--input-type=module', '-e', script, file, created.id, created.revision, String(n)])),
    );
    const results = outputs.map((o) => JSON.parse(o.stdout) as { update: string; create: string });
    expect(results.filter((r) => r.update === 'ok')).toHaveLength(1);
    expect(results.filter((r) => r.update === 'stale-revision')).toHaveLength(5);
    // One record existed, the limit is 4: exactly three creates fit.
    expect(results.filter((r) => r.create === 'ok')).toHaveLength(3);
    expect(results.filter((r) => r.create === 'limit-exceeded')).toHaveLength(3);
    expect(await store.countByOwner('alice')).toBe(4);
    await store.close();
  });
});

// The SQLite file under the running store: deleted, replaced, truncated or made read-only while
// serving. Whatever happens, a save the store acknowledged is in the file at the path (checked by
// reopening it, as a restart does), and a database that is gone is refused, never recreated empty.
import { chmodSync, copyFileSync, existsSync, linkSync, mkdtempSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SqliteUserStore } from '../../server/user-store/sqlite.js';
import { isUserStoreError, type StoreUnavailableError } from '../../server/user-store/store.js';
import { sampleData } from './contract.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'capreg-sqlite-file-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let counter = 0;
const stores: SqliteUserStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

/** `chattr` on a file; false where it is not allowed (not root) or not supported (the file system). */
function chattr(flag: '+i' | '-i', file: string): boolean {
  return spawnSync('chattr', [flag, file], { stdio: 'ignore' }).status === 0;
}

const immutableFiles = (() => {
  const probe = path.join(scratch, 'chattr-probe');
  writeFileSync(probe, '');
  const supported = chattr('+i', probe) && chattr('-i', probe);
  rmSync(probe);
  return supported;
})();

function freshFile(): string {
  counter += 1;
  return path.join(scratch, `run-${counter}`, 'user-capabilities.db');
}

function open(file: string): SqliteUserStore {
  const store = new SqliteUserStore(file);
  stores.push(store);
  return store;
}

async function unavailable(promise: Promise<unknown>): Promise<StoreUnavailableError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isUserStoreError(error, 'store-unavailable'), `expected store-unavailable, got ${String(error)}`).toBe(true);
  return error as StoreUnavailableError;
}

/** What a restart finds: the ids in the file at the path, read by a fresh connection. */
function idsOnDisk(file: string): string[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT id FROM user_capabilities ORDER BY id').pluck().all() as string[];
  } finally {
    db.close();
  }
}

describe('SQLite user store: the database file changes under a running store', () => {
  it('refuses a deleted database (never recreating it empty) until it is restored', async () => {
    const file = freshFile();
    const store = open(file);
    const kept = await store.create('key:alice', sampleData('kept'));
    copyFileSync(file, `${file}.backup`);
    rmSync(file);

    for (const call of [store.create('key:alice', sampleData('lost')), store.listByOwner('key:alice'), store.get(kept.id)]) {
      expect((await unavailable(call)).reason).toBe('database-missing');
    }
    expect(store.health()).toEqual({ status: 'unavailable', reason: 'database-missing' });
    expect(existsSync(file)).toBe(false);

    copyFileSync(`${file}.backup`, file);
    // /healthz follows the file: restored is ok before any call reaches the store.
    expect(store.health()).toEqual({ status: 'ok' });
    const after = await store.create('key:alice', sampleData('after'));
    expect(store.health()).toEqual({ status: 'ok' });
    expect((await store.listByOwner('key:alice')).map((r) => r.id).sort()).toEqual([kept.id, after.id].sort());
    expect(idsOnDisk(file).sort()).toEqual([kept.id, after.id].sort());
  });

  it('notices a database replaced by rename and never writes into the unlinked file', async () => {
    const file = freshFile();
    const store = open(file);
    const before = await store.create('key:alice', sampleData('before'));
    // Another capreg database, moved over the path (a restore from a backup, say).
    const other = path.join(path.dirname(file), 'other.db');
    const otherStore = new SqliteUserStore(other);
    const foreign = await otherStore.create('key:bob', sampleData('bob'));
    await otherStore.close();
    const oldInode = `${file}.old`;
    linkSync(file, oldInode);
    renameSync(other, file);

    expect((await unavailable(store.create('key:alice', sampleData('racing')))).reason).toBe('database-replaced');
    // The next call opens the file the path names now.
    const after = await store.create('key:alice', sampleData('after'));
    expect(await store.get(foreign.id)).toMatchObject({ ownerId: 'key:bob' });
    expect(await store.get(before.id)).toBeUndefined();
    expect(idsOnDisk(file).sort()).toEqual([foreign.id, after.id].sort());
    expect(idsOnDisk(oldInode)).toEqual([before.id]);
  });

  it.each([
    ['an empty file', (file: string) => writeFileSync(file, '')],
    ['a file that is not a database', (file: string) => writeFileSync(file, 'not a database '.repeat(300))],
    ['an SQLite database of something else', (file: string) => new Database(file).exec('CREATE TABLE t (x)').close()],
  ])('refuses a database replaced by %s, and does not initialise it', async (_label, make) => {
    const file = freshFile();
    const store = open(file);
    await store.create('key:alice', sampleData());
    const replacement = `${file}.new`;
    make(replacement);
    const bytes = readFileSync(replacement);
    renameSync(replacement, file);
    await unavailable(store.create('key:alice', sampleData('x')));
    const second = await unavailable(store.create('key:alice', sampleData('y')));
    expect(second.reason).not.toBe('database-replaced');
    expect(store.health().status).toBe('unavailable');
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });

  it('refuses saves into a truncated database, and keeps refusing until it is restored', async () => {
    const file = freshFile();
    const store = open(file);
    const kept = await store.create('key:alice', sampleData('kept'));
    copyFileSync(file, `${file}.backup`);
    truncateSync(file, 0);
    await unavailable(store.create('key:alice', sampleData('lost')));
    await unavailable(store.create('key:alice', sampleData('lost again')));
    expect(store.health().status).toBe('unavailable');
    copyFileSync(`${file}.backup`, file);
    const after = await store.create('key:alice', sampleData('after'));
    expect(idsOnDisk(file).sort()).toEqual([kept.id, after.id].sort());
  });

  it('never acknowledges a save it loses when the file is made read-only', async () => {
    const file = freshFile();
    const store = open(file);
    const acknowledged = [(await store.create('key:alice', sampleData('0'))).id];
    chmodSync(file, 0o444);
    chmodSync(path.dirname(file), 0o555);
    try {
      for (let n = 1; n <= 3; n += 1) {
        // As root the modes do not bind and saves go on; otherwise they are refused. Either way
        // nothing acknowledged may be missing after a restart.
        const outcome = await store.create('key:alice', sampleData(String(n))).then(
          (record) => record.id,
          (error: unknown) => error,
        );
        if (typeof outcome === 'string') acknowledged.push(outcome);
        else expect(isUserStoreError(outcome, 'store-unavailable')).toBe(true);
      }
      await store.close();
      const restarted = open(file);
      expect((await restarted.listByOwner('key:alice')).map((r) => r.id).sort()).toEqual(acknowledged.sort());
    } finally {
      chmodSync(path.dirname(file), 0o755);
      chmodSync(file, 0o644);
    }
  });

  // Read-only even for root and for the descriptor already open; needs root and chattr.
  it.skipIf(!immutableFiles)('keeps serving the last good state when the file is made immutable, and saves after', async () => {
    const file = freshFile();
    const store = open(file);
    const kept = await store.create('key:alice', sampleData('kept'));
    chattr('+i', file);
    try {
      for (let n = 0; n < 2; n += 1) {
        await unavailable(store.create('key:alice', sampleData(String(n))));
        // No hot journal left behind, so reads need no rollback they could not do.
        expect(existsSync(`${file}-journal`)).toBe(false);
        expect((await store.listByOwner('key:alice')).map((r) => r.id)).toEqual([kept.id]);
        expect(await store.get(kept.id)).toMatchObject({ id: kept.id });
        expect(store.health()).toEqual({ status: 'writes-failing', reason: 'EPERM' });
      }
    } finally {
      chattr('-i', file);
    }
    const after = await store.create('key:alice', sampleData('after'));
    expect(store.health()).toEqual({ status: 'ok' });
    expect(idsOnDisk(file).sort()).toEqual([kept.id, after.id].sort());
  });

  it('keeps every acknowledged save across a restart', async () => {
    const file = freshFile();
    const store = open(file);
    const ids = await Promise.all(Array.from({ length: 5 }, (_, n) => store.create('key:alice', sampleData(String(n))).then((r) => r.id)));
    await store.close();
    expect(idsOnDisk(file).sort()).toEqual(ids.sort());
  });

  it('converts a WAL database of an earlier version, keeping its data, and leaves no -shm behind', async () => {
    const file = freshFile();
    const store = open(file);
    const record = await store.create('key:alice', sampleData());
    await store.close();
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.prepare("UPDATE user_capabilities SET name = 'written in WAL'").run();
    db.close();
    const reopened = open(file);
    expect(await reopened.get(record.id)).toMatchObject({ name: 'written in WAL' });
    expect(existsSync(`${file}-shm`)).toBe(false);
    expect(existsSync(`${file}-wal`)).toBe(false);
  });
});

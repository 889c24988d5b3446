// Another process holding the SQLite lock must not freeze the server: the store waits for it off
// the event loop (timers keep firing, so the Git catalog keeps serving), gives up with
// store-unavailable after its lock timeout, and works as soon as the lock is released.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteUserStore } from '../../server/user-store/sqlite.js';
import { isUserStoreError, type StoreUnavailableError } from '../../server/user-store/store.js';
import { sampleData } from './contract.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'capreg-sqlite-locks-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** How late a 10 ms timer fires while `work` is pending: the event loop's longest stall, roughly. */
async function worstTimerDelay(work: Promise<unknown>): Promise<{ result: unknown; worstMs: number }> {
  let worstMs = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    worstMs = Math.max(worstMs, now - last - 10);
    last = now;
  }, 10);
  const result = await work.catch((error: unknown) => error);
  clearInterval(timer);
  return { result, worstMs };
}

describe("SQLite user store under another connection's lock", () => {
  it('waits without blocking the event loop, then serves once the lock is released', async () => {
    const file = path.join(scratch, 'released.db');
    const store = new SqliteUserStore(file);
    const kept = await store.create('key:alice', sampleData());
    const other = new Database(file);
    other.exec('BEGIN EXCLUSIVE');
    setTimeout(() => other.exec('COMMIT'), 1_500);
    const { result, worstMs } = await worstTimerDelay(Promise.all([store.listByOwner('key:alice'), store.create('key:alice', sampleData('b'))]));
    other.close();
    expect(Array.isArray(result)).toBe(true);
    expect((result as [{ id: string }[]])[0].map((r) => r.id)).toEqual([kept.id]);
    // A synchronous busy wait would stall for the whole 1,500 ms; half of it leaves room for a busy machine.
    expect(worstMs).toBeLessThan(750);
    expect(await store.countByOwner('key:alice')).toBe(2);
    await store.close();
  });

  it('gives up with store-unavailable (SQLITE_BUSY) after the lock timeout, and recovers', async () => {
    const file = path.join(scratch, 'held.db');
    const store = new SqliteUserStore(file, { lockTimeoutMs: 1_200 });
    await store.create('key:alice', sampleData());
    const other = new Database(file);
    other.exec('BEGIN EXCLUSIVE');
    const started = performance.now();
    const { result, worstMs } = await worstTimerDelay(store.create('key:alice', sampleData('blocked')));
    const elapsed = performance.now() - started;
    expect(isUserStoreError(result, 'store-unavailable')).toBe(true);
    expect((result as StoreUnavailableError).reason).toMatch(/^SQLITE_BUSY/);
    expect(store.health()).toMatchObject({ status: 'unavailable' });
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(6_000);
    // A synchronous wait would stall for the whole 1,200 ms.
    expect(worstMs).toBeLessThan(600);
    other.exec('ROLLBACK');
    other.close();
    expect(await store.countByOwner('key:alice')).toBe(1);
    expect(store.health()).toEqual({ status: 'ok' });
    await store.close();
  });

  // A reader's shared lock lets the UPDATE run but refuses its commit: the row the statement hands
  // back must not be taken for a write that landed.
  it('acknowledges an update only once it is committed while another connection reads the file', async () => {
    const file = path.join(scratch, 'read-during-update.db');
    const store = new SqliteUserStore(file);
    const saved = await store.create('key:alice', sampleData('v1'));
    const reader = new Database(file, { readonly: true });
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM user_capabilities').get();
    setTimeout(() => reader.exec('COMMIT'), 600);
    const updated = await store.update('key:alice', saved.id, sampleData('v2'), saved.revision);
    reader.close();
    expect(updated.revision).not.toBe(saved.revision);
    const check = new Database(file, { readonly: true });
    const stored = check.prepare('SELECT revision, name FROM user_capabilities WHERE id = ?').get(saved.id);
    check.close();
    expect(stored).toEqual({ revision: updated.revision, name: updated.name });
    // The revision just acknowledged is the one the next update must name.
    const next = await store.update('key:alice', saved.id, sampleData('v3'), updated.revision);
    expect(next.name).toBe(sampleData('v3').name);
    await store.close();
  });

  it('reports an update the readers keep refusing as store-unavailable, and leaves the stored revision', async () => {
    const file = path.join(scratch, 'read-through-update.db');
    const store = new SqliteUserStore(file, { lockTimeoutMs: 800 });
    const saved = await store.create('key:alice', sampleData('v1'));
    const reader = new Database(file, { readonly: true });
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM user_capabilities').get();
    const result = await store.update('key:alice', saved.id, sampleData('v2'), saved.revision).catch((error: unknown) => error);
    reader.exec('COMMIT');
    reader.close();
    expect(isUserStoreError(result, 'store-unavailable')).toBe(true);
    expect((result as StoreUnavailableError).reason).toMatch(/^SQLITE_BUSY/);
    expect((await store.get(saved.id))?.revision).toBe(saved.revision);
    await store.close();
  });
});

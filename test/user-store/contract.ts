// The behaviour every user store must have, run against each backend (sqlite.test.ts,
// postgres.test.ts) with a real database: no mock stands in for one.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  isUserStoreError,
  LimitExceededError,
  NotFoundError,
  StaleRevisionError,
  type UserCapabilityData,
  type UserCapabilityStore,
  type UserStoreErrorCode,
} from '../../server/user-store/store.js';

/** One empty database for one test, on which any number of store instances can be opened. */
export interface StoreBackend {
  /** Opens one more store on this backend's database (a second replica, or a reopen). */
  open(options?: { maxPerOwner?: number }): Promise<UserCapabilityStore>;
  /** The versions recorded in `schema_migrations`, duplicates kept. */
  appliedMigrations(): Promise<number[]>;
  /** The versions the code knows. */
  knownMigrations: number[];
  /** Closes every store it opened and drops the database. */
  dispose(): Promise<void>;
}

export function sampleData(label = 'a', overrides: Partial<UserCapabilityData> = {}): UserCapabilityData {
  return {
    markdown: `---\nname: Weekly report ${label}\n---\n\nCollect the week's work, then [report](capability:work-reporting).\n`,
    name: `Weekly report ${label}`,
    description: `Writes the weekly report (${label}).`,
    whenToUse: [`weekly report ${label}`, 'summarise my week'],
    uses: ['work-reporting', 'personal-automation'],
    dependencies: ['work-reporting'],
    toolBindings: [{ step: 'collect', capability: 'work-reporting', tools: ['list_tasks', 'get_task'] }],
    ...overrides,
  };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

async function expectCode(promise: Promise<unknown>, code: UserStoreErrorCode): Promise<unknown> {
  const error = await rejection(promise);
  expect(isUserStoreError(error, code), `expected a ${code} error, got ${String(error)}`).toBe(true);
  return error;
}

export function describeUserStoreContract(label: string, createBackend: () => Promise<StoreBackend>): void {
  describe(`user store contract: ${label}`, () => {
    let backend: StoreBackend;
    let store: UserCapabilityStore;

    beforeEach(async () => {
      backend = await createBackend();
      store = await backend.open();
    });
    afterEach(async () => {
      await backend.dispose();
    });

    it('creates a record with a server-generated id, a revision and timestamps', async () => {
      const data = sampleData();
      const created = await store.create('alice', data);
      expect(created.id).toMatch(/^user:[a-z2-7]{16}$/);
      expect(created.ownerId).toBe('alice');
      expect(created.revision).toMatch(/^[a-z2-7]{26}$/);
      expect(created).toMatchObject(data);
      expect(Number.isNaN(Date.parse(created.createdAt))).toBe(false);
      expect(created.updatedAt).toBe(created.createdAt);
      expect(await store.get(created.id)).toEqual(created);
    });

    it('keeps Unicode and large Markdown byte for byte', async () => {
      const markdown = `---\nname: 周报\n---\n\n不要跳过审批。${'x'.repeat(200_000)}\n🙂\n`;
      const created = await store.create('alice', sampleData('u', { markdown, name: '周报', whenToUse: ['写周报'] }));
      const read = await store.get(created.id);
      expect(read?.markdown).toBe(markdown);
      expect(read?.name).toBe('周报');
      expect(read?.whenToUse).toEqual(['写周报']);
    });

    it('lists and counts by owner, sorted by id', async () => {
      const ids = new Set<string>();
      for (const n of [1, 2, 3, 4, 5]) ids.add((await store.create('alice', sampleData(String(n)))).id);
      await store.create('bob', sampleData('b'));
      expect(ids.size).toBe(5);
      const listed = await store.listByOwner('alice');
      expect(listed.map((r) => r.id)).toEqual([...ids].sort());
      expect(listed.every((r) => r.ownerId === 'alice')).toBe(true);
      expect(await store.countByOwner('alice')).toBe(5);
      expect(await store.countByOwner('bob')).toBe(1);
      expect(await store.listByOwner('nobody')).toEqual([]);
      expect(await store.countByOwner('nobody')).toBe(0);
    });

    it('lists summaries by owner: the same rows as listByOwner, only the listed columns', async () => {
      for (const n of [1, 2, 3]) await store.create('alice', sampleData(String(n)));
      await store.create('bob', sampleData('b'));
      const summaries = await store.listSummariesByOwner('alice');
      expect(summaries).toEqual(
        (await store.listByOwner('alice')).map(({ id, name, description, whenToUse, dependencies, revision }) => ({
          id,
          name,
          description,
          whenToUse,
          dependencies,
          revision,
        })),
      );
      expect(await store.listSummariesByOwner('nobody')).toEqual([]);
    });

    it('updates with the current revision: new revision, new data, same createdAt', async () => {
      const created = await store.create('alice', sampleData('v1'));
      const next = sampleData('v2', { uses: ['work-reporting'], dependencies: [], toolBindings: [] });
      const updated = await store.update('alice', created.id, next, created.revision);
      expect(updated).toMatchObject({ ...next, id: created.id, ownerId: 'alice', createdAt: created.createdAt });
      expect(updated.revision).not.toBe(created.revision);
      expect(Date.parse(updated.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt));
      expect(await store.get(created.id)).toEqual(updated);
    });

    it('changes the revision on every write, even when the content is the same', async () => {
      const created = await store.create('alice', sampleData());
      const again = await store.update('alice', created.id, sampleData(), created.revision);
      expect(again.revision).not.toBe(created.revision);
    });

    it('updates without an expected revision (last write wins)', async () => {
      const created = await store.create('alice', sampleData('v1'));
      const updated = await store.update('alice', created.id, sampleData('v2'));
      expect(updated.name).toBe('Weekly report v2');
    });

    it('refuses a stale expected revision and keeps the stored data', async () => {
      const created = await store.create('alice', sampleData('v1'));
      const updated = await store.update('alice', created.id, sampleData('v2'), created.revision);
      const error = await expectCode(store.update('alice', created.id, sampleData('v3'), created.revision), 'stale-revision');
      expect(error).toBeInstanceOf(StaleRevisionError);
      expect((error as Error).message).toContain(created.id);
      expect(await store.get(created.id)).toEqual(updated);
    });

    it('deletes only once; a deleted id is not found afterwards', async () => {
      const created = await store.create('alice', sampleData());
      expect(await store.delete('alice', created.id)).toBe(true);
      expect(await store.get(created.id)).toBeUndefined();
      expect(await store.delete('alice', created.id)).toBe(false);
      expect(await store.countByOwner('alice')).toBe(0);
      const error = await expectCode(store.update('alice', created.id, sampleData(), created.revision), 'not-found');
      expect(error).toBeInstanceOf(NotFoundError);
    });

    it('answers an unknown id as not found, with or without an expected revision', async () => {
      expect(await store.get('user:doesnotexist0000')).toBeUndefined();
      await expectCode(store.update('alice', 'user:doesnotexist0000', sampleData()), 'not-found');
      await expectCode(store.update('alice', 'user:doesnotexist0000', sampleData(), 'whatever'), 'not-found');
      expect(await store.delete('alice', 'user:doesnotexist0000')).toBe(false);
    });

    it('never lets another owner update or delete, and answers exactly as for a missing id', async () => {
      const created = await store.create('alice', sampleData());
      const withRevision = (await rejection(store.update('mallory', created.id, sampleData('x'), created.revision))) as Error;
      const missing = (await rejection(store.update('mallory', 'user:doesnotexist0000', sampleData('x'), created.revision))) as Error;
      expect(isUserStoreError(withRevision, 'not-found')).toBe(true);
      expect(withRevision.message.replace(created.id, 'ID')).toBe(missing.message.replace('user:doesnotexist0000', 'ID'));
      await expectCode(store.update('mallory', created.id, sampleData('x')), 'not-found');
      expect(await store.delete('mallory', created.id)).toBe(false);
      expect(await store.listByOwner('mallory')).toEqual([]);
      expect(await store.get(created.id)).toEqual(created);
    });

    it('lets exactly one of 10 concurrent updates with the same expected revision win', async () => {
      const other = await backend.open();
      const created = await store.create('alice', sampleData('v0'));
      await Promise.all(Array.from({ length: 10 }, (_, n) => (n % 2 === 0 ? store : other).countByOwner('warm-up')));
      const attempts = Array.from({ length: 10 }, (_, n) => (n % 2 === 0 ? store : other).update('alice', created.id, sampleData(`w${n}`), created.revision));
      const results = await Promise.allSettled(attempts);
      const winners = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const losers = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      expect(winners).toHaveLength(1);
      expect(losers.every((e) => isUserStoreError(e, 'stale-revision'))).toBe(true);
      // No lost write: what is stored is exactly the winner's write.
      expect(await other.get(created.id)).toEqual(winners[0]);
    });

    it('enforces the per-owner limit, per owner', async () => {
      const limited = await backend.open({ maxPerOwner: 3 });
      const first = await limited.create('alice', sampleData('1'));
      await limited.create('alice', sampleData('2'));
      await limited.create('alice', sampleData('3'));
      const error = await expectCode(limited.create('alice', sampleData('4')), 'limit-exceeded');
      expect(error).toBeInstanceOf(LimitExceededError);
      expect((error as LimitExceededError).limit).toBe(3);
      expect((error as Error).message).toContain('3');
      await limited.create('bob', sampleData('b'));
      // Updating at the limit is fine; deleting makes room.
      await limited.update('alice', first.id, sampleData('1b'));
      await limited.delete('alice', first.id);
      await limited.create('alice', sampleData('5'));
      expect(await limited.countByOwner('alice')).toBe(3);
    });

    it('holds the limit under concurrent creates from two instances', async () => {
      const a = await backend.open({ maxPerOwner: 3 });
      const b = await backend.open({ maxPerOwner: 3 });
      // Warm connections first, so that the creates really overlap instead of queueing on connects.
      await Promise.all(Array.from({ length: 10 }, (_, n) => (n % 2 === 0 ? a : b).countByOwner('warm-up')));
      const results = await Promise.allSettled(Array.from({ length: 10 }, (_, n) => (n % 2 === 0 ? a : b).create('alice', sampleData(String(n)))));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
      const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      expect(refused.every((e) => isUserStoreError(e, 'limit-exceeded'))).toBe(true);
      expect(await a.countByOwner('alice')).toBe(3);
    });

    it('defaults the per-owner limit to 100', async () => {
      await Promise.all(Array.from({ length: 100 }, (_, n) => store.create('alice', sampleData(String(n)))));
      await expectCode(store.create('alice', sampleData('101')), 'limit-exceeded');
    });

    it('refuses a limit that is not a positive integer', async () => {
      for (const maxPerOwner of [0, -1, 1.5, Number.NaN]) {
        await expectCode(backend.open({ maxPerOwner }), 'invalid-config');
      }
    });

    it('applies each migration once; reopening keeps the data and applies nothing again', async () => {
      const created = await store.create('alice', sampleData());
      expect(await backend.appliedMigrations()).toEqual(backend.knownMigrations);
      await store.close();
      const reopened = await backend.open();
      await reopened.ping();
      const again = await backend.open();
      await again.ping();
      expect(await backend.appliedMigrations()).toEqual(backend.knownMigrations);
      expect(await reopened.get(created.id)).toEqual(created);
    });

    it("lets two instances on one database see each other's writes at once", async () => {
      const replica = await backend.open();
      const created = await store.create('alice', sampleData('v1'));
      expect(await replica.get(created.id)).toEqual(created);
      expect((await replica.listByOwner('alice')).map((r) => r.id)).toEqual([created.id]);
      const updated = await replica.update('alice', created.id, sampleData('v2'), created.revision);
      expect(await store.get(created.id)).toEqual(updated);
      await expectCode(store.update('alice', created.id, sampleData('v3'), created.revision), 'stale-revision');
      expect(await store.delete('alice', created.id)).toBe(true);
      expect(await replica.get(created.id)).toBeUndefined();
      expect(await replica.countByOwner('alice')).toBe(0);
    });

    it('answers store-unavailable after close, and close is idempotent', async () => {
      await store.ping();
      await store.close();
      await store.close();
      await expectCode(store.get('user:doesnotexist0000'), 'store-unavailable');
      await expectCode(store.create('alice', sampleData()), 'store-unavailable');
    });
  });
}

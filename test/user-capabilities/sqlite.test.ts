// The user-capability suite on the embedded store: one SQLite file per test.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { openUserStore } from '../../server/user-store/open.js';
import { SqliteUserStore } from '../../server/user-store/sqlite.js';
import type { UserCapabilityStore } from '../../server/user-store/store.js';
import type { UserStoreBackend } from './harness.js';
import { describeUserCapabilities } from './suite.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'capreg-user-caps-sqlite-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let counter = 0;

function sqliteBackend(): Promise<UserStoreBackend> {
  counter += 1;
  const file = path.join(scratch, `run-${counter}`, 'user-capabilities.db');
  const opened: UserCapabilityStore[] = [];
  return Promise.resolve({
    open(options = {}) {
      return Promise.resolve().then(() => {
        const store = new SqliteUserStore(file, options);
        opened.push(store);
        return store;
      });
    },
    async openUnreachable(log) {
      // The parent "folder" is a file: the database can never be created.
      const blocker = path.join(scratch, `blocked-${counter}`);
      writeFileSync(blocker, '');
      const store = await openUserStore(`sqlite:${path.join(blocker, 'user-capabilities.db')}`, { root: scratch, log });
      opened.push(store);
      return store;
    },
    async dispose() {
      await Promise.all(opened.map((store) => store.close()));
    },
  });
}

describeUserCapabilities('SQLite', sqliteBackend);

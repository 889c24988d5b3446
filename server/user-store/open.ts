// `--user-store` (SPEC §8): `sqlite:PATH` (relative to the folder the caller passes as `root`) or a PostgreSQL URL.
import path from 'node:path';
import { PostgresUserStore, redactConnectionString } from './postgres.js';
import { SqliteUserStore } from './sqlite.js';
import { isUserStoreError, type UserCapabilityStore, UserStoreError, type UserStoreOptions } from './store.js';

export const DEFAULT_SQLITE_PATH = '.capreg/user-capabilities.db';

export type UserStoreLocation = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

const USAGE = '--user-store must be sqlite:PATH (relative to the working directory) or postgres://USER:PASSWORD@HOST:PORT/DATABASE';

/** Where a `--user-store` value points; UserStoreError `invalid-config` when it is neither form. */
export function parseUserStoreSpec(spec: string | undefined, root: string): UserStoreLocation {
  if (spec === undefined || spec === '') return { kind: 'sqlite', file: path.resolve(root, DEFAULT_SQLITE_PATH) };
  if (/^postgres(ql)?:\/\//i.test(spec)) {
    try {
      new URL(spec);
    } catch {
      throw new UserStoreError('invalid-config', `${USAGE}; ${redactConnectionString(spec)} is not a valid URL`);
    }
    return { kind: 'postgres', url: spec };
  }
  if (/^sqlite:/i.test(spec)) {
    const file = spec.slice('sqlite:'.length);
    if (file.startsWith('//')) {
      throw new UserStoreError('invalid-config', `${USAGE}; write sqlite:${file.replace(/^\/\/+/, '/')} for an absolute path, without "//"`);
    }
    return { kind: 'sqlite', file: path.resolve(root, file || DEFAULT_SQLITE_PATH) };
  }
  throw new UserStoreError('invalid-config', `${USAGE}; got ${JSON.stringify(redactConnectionString(spec))}`);
}

export interface OpenUserStoreOptions extends UserStoreOptions {
  /** The folder relative `sqlite:` paths start from (the CLI: the registry root for the default store, else the working directory). */
  root: string;
}

/**
 * Opens the store `spec` names (the default SQLite file when undefined). Throws only for a spec
 * that is wrong (`invalid-config`). A database that cannot be reached is logged (by the store, as
 * every outage) and the store is still returned: its calls fail with `store-unavailable` until the
 * database is back, while the rest of the server (the Git catalog) keeps serving.
 */
export async function openUserStore(spec: string | undefined, options: OpenUserStoreOptions): Promise<UserCapabilityStore> {
  const location = parseUserStoreSpec(spec, options.root);
  const storeOptions: UserStoreOptions = { maxPerOwner: options.maxPerOwner, log: options.log };
  const store = location.kind === 'sqlite' ? new SqliteUserStore(location.file, storeOptions) : new PostgresUserStore(location.url, storeOptions);
  try {
    await store.ping();
  } catch (error) {
    if (!isUserStoreError(error, 'store-unavailable')) throw error;
  }
  return store;
}

import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseUserStoreSpec } from '../../server/user-store/open.js';
import { isUserStoreError } from '../../server/user-store/store.js';

const root = path.resolve('/srv/registry');

function refusal(spec: string): Error {
  try {
    parseUserStoreSpec(spec, root);
  } catch (error) {
    expect(isUserStoreError(error, 'invalid-config')).toBe(true);
    return error as Error;
  }
  throw new Error(`${spec} was accepted`);
}

describe('--user-store', () => {
  it.each([
    [undefined, path.join(root, '.capreg/user-capabilities.db')],
    ['', path.join(root, '.capreg/user-capabilities.db')],
    ['sqlite:', path.join(root, '.capreg/user-capabilities.db')],
    ['sqlite:data/user.db', path.join(root, 'data/user.db')],
    ['sqlite:../shared/user.db', path.resolve(root, '../shared/user.db')],
    ['sqlite:/var/lib/capreg/user.db', path.resolve('/var/lib/capreg/user.db')],
  ])('%j is the SQLite file %s', (spec, file) => {
    expect(parseUserStoreSpec(spec, root)).toEqual({ kind: 'sqlite', file });
  });

  it.each(['postgres://capreg:pw@db:5432/capreg', 'postgresql://db/capreg?sslmode=require', 'POSTGRES://db/capreg'])('%s is PostgreSQL', (spec) => {
    expect(parseUserStoreSpec(spec, root)).toEqual({ kind: 'postgres', url: spec });
  });

  it('refuses other schemes, and says what it expects', () => {
    for (const spec of ['mysql://db/x', 'redis', 'file:x.db', 'user.db']) {
      expect(refusal(spec).message).toMatch(/sqlite:PATH .* or postgres:\/\//);
    }
  });

  it('refuses sqlite:// with a hint', () => {
    expect(refusal('sqlite:///var/x.db').message).toContain('sqlite:/var/x.db');
  });

  it('never repeats a password when refusing', () => {
    for (const spec of ['mysql://capreg:s3cret@db/x', 'postgres://capreg:s3cret@[db/x']) {
      expect(refusal(spec).message).not.toContain('s3cret');
    }
  });
});

// resources/list in pages: a catalog of 10,000 capabilities was one 3.3 MB answer, about 150 ms of
// the event loop on every call, and the cursor was ignored. Pages of RESOURCES_PAGE_SIZE now, with an
// opaque cursor that names a position in the caller's own listing only.
import path from 'node:path';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticatedCaller, type Caller } from '../../server/identity.js';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { inMemoryClient, makeManifest, tempDir, writeManifest } from './helpers.js';

/** RESOURCES_PAGE_SIZE in server/resources/capability-resource.ts. */
const RESOURCES_PAGE_SIZE = 200;
const COUNT = 2 * RESOURCES_PAGE_SIZE + 50;
let dir: string;
let runtime: Runtime;

beforeAll(async () => {
  dir = tempDir('capreg-resource-pages-');
  const specs = Array.from({ length: COUNT }, (_, n) => ({ id: `open-${String(n).padStart(4, '0')}` }));
  specs.push({ id: 'secret-report', requiredToolsets: ['reports'] } as (typeof specs)[number]);
  writeManifest(path.join(dir, 'manifest.json'), makeManifest(specs));
  runtime = await startRuntime({ manifestFile: path.join(dir, 'manifest.json'), watch: false });
});

afterAll(async () => {
  await runtime.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function allPages(caller: () => Caller): Promise<{ pages: number[]; uris: string[] }> {
  const { client, close } = await inMemoryClient(runtime, caller);
  try {
    const pages: number[] = [];
    const uris: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listResources(cursor === undefined ? {} : { cursor });
      pages.push(page.resources.length);
      uris.push(...page.resources.map((resource) => resource.uri));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return { pages, uris };
  } finally {
    await close();
  }
}

describe('resources/list', () => {
  it('answers in pages that together list exactly what the caller may read', async () => {
    const reporter = authenticatedCaller('reporter', 'Reporter', ['reports:read'], 'api-key');
    const anonymous = await allPages(() => authenticatedCaller('nobody', 'Nobody', [], 'api-key'));
    expect(anonymous.pages).toEqual([RESOURCES_PAGE_SIZE, RESOURCES_PAGE_SIZE, 50]);
    expect(anonymous.uris).not.toContain('capability://secret-report');
    const allowed = await allPages(() => reporter);
    expect(allowed.uris).toHaveLength(COUNT + 1);
    expect(allowed.uris).toContain('capability://secret-report');
  });

  it('refuses a cursor it did not give, or one past the caller’s own listing, with -32602', async () => {
    const { client, close } = await inMemoryClient(runtime);
    try {
      const first = await client.listResources();
      expect(first.nextCursor).toBeDefined();
      const offset = (n: number): string => Buffer.from(`o${n}`).toString('base64url');
      await expect(client.listResources({ cursor: 'made-up' })).rejects.toThrow(/-32602.*invalid cursor/);
      await expect(client.listResources({ cursor: offset(COUNT + 1) })).rejects.toThrow(/-32602.*invalid cursor/);
      expect((await client.listResources({ cursor: offset(COUNT) })).resources).toEqual([]);
    } finally {
      await close();
    }
  });
});

// A principals file whose open fails for a reason of the moment (EMFILE: the process is out of file
// descriptors, as under a flood of connections) must be read again on the next check. It was
// recorded under the file's stat identity, as a file without read permission is, so no check saw a
// change: a key revoked by the write whose reload hit EMFILE kept working until the file changed again.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { startHttpServer, type HttpServerHandle } from '../../server/transports/http.js';
import { makeManifest, PRINCIPALS, principalsYaml, STANDARD_CAPABILITIES, tempDir, writeAtomic, writeManifest } from './helpers.js';

/** Opens of this path fail with EMFILE while set. */
const failing = { file: '' };

function emfile(): NodeJS.ErrnoException {
  return Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE', errno: -24 });
}

vi.mock('node:fs/promises', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs/promises')>();
  const open = (async (file: fs.PathLike, ...rest: unknown[]) => {
    if (String(file) === failing.file) throw emfile();
    return (original.open as (...args: unknown[]) => Promise<fs.promises.FileHandle>)(file, ...rest);
  }) as typeof original.open;
  return { ...original, default: { ...original, open }, open };
});

let dir: string;
let principalsFile: string;
let runtime: Runtime;
let http: HttpServerHandle;

beforeEach(async () => {
  dir = tempDir();
  const manifestFile = path.join(dir, 'manifest.json');
  principalsFile = path.join(dir, 'principals.yaml');
  writeManifest(manifestFile, makeManifest(STANDARD_CAPABILITIES));
  writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
  runtime = await startRuntime({ manifestFile, principalsFile, watch: false });
  http = await startHttpServer(runtime, { port: 0 });
});

afterEach(async () => {
  failing.file = '';
  await http.close();
  await runtime.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function listTools(key: string): Promise<Response> {
  return fetch(`${http.url}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${key}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
}

const withoutAlice = (): string => principalsYaml(PRINCIPALS.filter((principal) => principal.id !== 'alice'));

describe('a principals file whose open fails for a reason of the moment', () => {
  it('is read again on the next request once it opens, so a key revoked meanwhile stops working', async () => {
    expect((await listTools('key-alice-reports')).status).toBe(200);
    failing.file = principalsFile;
    writeAtomic(principalsFile, withoutAlice());
    // The revocation cannot be read yet: the keys read before keep working.
    expect((await listTools('key-alice-reports')).status).toBe(200);
    expect(runtime.health().lastReloadError).toContain('EMFILE');
    failing.file = '';
    expect((await listTools('key-alice-reports')).status).toBe(401);
    expect(runtime.health().lastReloadError).toBeNull();
  });
});

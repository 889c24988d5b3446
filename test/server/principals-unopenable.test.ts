// A principals file that cannot be opened. When the reason is the file's own (no read permission,
// or a socket put in its place), each check stat'ed it, found an identity other than the one
// recorded for the failed open, and read and logged it again, on every request. The permission
// case cannot be made as root, so a socket stands in for it: open(2) fails (ENXIO) where stat
// succeeds, as with EACCES. When the reason is of the moment (EMFILE: the process is out of file
// descriptors, as under a flood of connections), the file must be read again on the next check: a
// key revoked by the write whose reload hit EMFILE would otherwise keep working.
import fs from 'node:fs';
import net from 'node:net';
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
const lines: string[] = [];

beforeEach(async () => {
  dir = tempDir();
  const manifestFile = path.join(dir, 'manifest.json');
  principalsFile = path.join(dir, 'principals.yaml');
  writeManifest(manifestFile, makeManifest(STANDARD_CAPABILITIES));
  writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
  lines.length = 0;
  runtime = await startRuntime({ manifestFile, principalsFile, watch: false, log: (line) => lines.push(line) });
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
const rejections = (): string[] => lines.filter((line) => line.includes('principals file reload rejected'));

describe('a principals file that cannot be opened for a reason of its own', () => {
  let socket: net.Server | undefined;
  beforeEach(async () => {
    fs.rmSync(principalsFile);
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(principalsFile, resolve));
    socket = server;
  });
  afterEach(async () => {
    await new Promise<void>((resolve) => (socket ? socket.close(() => resolve()) : resolve()));
    socket = undefined;
  });

  it('is tried and logged once, not on every request, while the keys loaded before keep working', async () => {
    for (let i = 0; i < 10; i++) expect((await listTools('key-alice-reports')).status).toBe(200);
    for (let i = 0; i < 10; i++) await runtime.currentPrincipals();
    expect(rejections()).toHaveLength(1);
    expect(rejections()[0]).toContain('ENXIO');
    expect(runtime.health().lastReloadError).toContain('principals file reload rejected');
  });

  it('is read again once it is replaced by a file that can be', async () => {
    expect((await listTools('key-alice-reports')).status).toBe(200);
    await new Promise<void>((resolve) => socket!.close(() => resolve()));
    socket = undefined;
    writeAtomic(principalsFile, withoutAlice());
    expect((await listTools('key-alice-reports')).status).toBe(401);
    expect(runtime.health().lastReloadError).toBeNull();
  });
});

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

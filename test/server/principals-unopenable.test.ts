// A principals file that is there but cannot be opened (no read permission, or a socket put in its
// place): each check stat'ed it, found an identity other than the one recorded for the failed
// open, and read and logged it again, on every request. The permission case cannot be made as
// root, so a socket stands in for it: open(2) fails (ENXIO) where stat succeeds, as with EACCES.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { startHttpServer, type HttpServerHandle } from '../../server/transports/http.js';
import { makeManifest, PRINCIPALS, principalsYaml, STANDARD_CAPABILITIES, tempDir, writeAtomic, writeManifest } from './helpers.js';

let dir: string;
let principalsFile: string;
let runtime: Runtime;
let http: HttpServerHandle;
let socket: net.Server | undefined;
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
  fs.rmSync(principalsFile);
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(principalsFile, resolve));
  socket = server;
});

afterEach(async () => {
  await http.close();
  await runtime.close();
  await new Promise<void>((resolve) => (socket ? socket.close(() => resolve()) : resolve()));
  fs.rmSync(dir, { recursive: true, force: true });
});

function listTools(key: string): Promise<Response> {
  return fetch(`${http.url}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${key}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
}

const rejections = (): string[] => lines.filter((line) => line.includes('principals file reload rejected'));

describe('a principals file that cannot be opened', () => {
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
    writeAtomic(principalsFile, principalsYaml(PRINCIPALS.filter((principal) => principal.id !== 'alice')));
    expect((await listTools('key-alice-reports')).status).toBe(401);
    expect(runtime.health().lastReloadError).toBeNull();
  });
});

// A principals file on a mount that hangs (found by an HTTP attack pass): every request stat'ed it
// synchronously, so one hung stat froze the whole process (/healthz and every caller) for as long
// as the mount hung; stdio did the same in each call. The stat is made to hang here, the way a dead
// NFS server makes it.
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { exportSPKI, generateKeyPair, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { startHttpServer, type HttpServerHandle } from '../../server/transports/http.js';
import { serveStdio } from '../../server/transports/stdio.js';
import { makeManifest, PRINCIPALS, principalsYaml, STANDARD_CAPABILITIES, tempDir, writeAtomic, signedJwt, writeManifest } from './helpers.js';

/** Stats of this path hang until this time (Date.now()). */
const hung = { file: '', until: 0 };

vi.mock('node:fs', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs')>();
  const statSync = ((file: fs.PathLike, options?: fs.StatSyncOptions) => {
    const wait = hung.until - Date.now();
    if (String(file) === hung.file && wait > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, wait);
    return original.statSync(file, options);
  }) as typeof original.statSync;
  return { ...original, default: { ...original, statSync }, statSync };
});

vi.mock('node:fs/promises', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs/promises')>();
  const stat = (async (file: fs.PathLike, options?: fs.StatOptions) => {
    const wait = hung.until - Date.now();
    if (String(file) === hung.file && wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    return original.stat(file, options);
  }) as typeof original.stat;
  return { ...original, default: { ...original, stat }, stat };
});

let dir: string;
let runtime: Runtime;
let http: HttpServerHandle;
let privateKey: CryptoKey;
/** The runtime's log, each line after its level. */
const lines: string[] = [];
const ISSUER = 'https://issuer.example';
const AUDIENCE = 'capreg';

/** A JWT for `sub`: verified against the public key, whatever the principals file does. */
function jwt(sub: string): Promise<string> {
  return signedJwt(privateKey, { sub, scopes: ['reports:read'], issuer: ISSUER, audience: AUDIENCE });
}

beforeAll(async () => {
  dir = tempDir();
  const manifestFile = path.join(dir, 'manifest.json');
  const principalsFile = path.join(dir, 'principals.yaml');
  writeManifest(manifestFile, makeManifest(STANDARD_CAPABILITIES));
  writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
  hung.file = principalsFile;
  const pair = await generateKeyPair('ES256');
  privateKey = pair.privateKey;
  const publicKeyFile = path.join(dir, 'public.pem');
  fs.writeFileSync(publicKeyFile, await exportSPKI(pair.publicKey));
  runtime = await startRuntime({
    manifestFile,
    principalsFile,
    watch: false,
    jwt: { publicKeyFile, issuer: ISSUER, audience: AUDIENCE },
    log: (line, level) => lines.push(`${level ?? 'info'} ${line}`),
  });
  http = await startHttpServer(runtime, { port: 0 });
});

afterAll(async () => {
  hung.until = 0;
  await http.close();
  await runtime.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function call(key: string): Promise<Response> {
  return fetch(`${http.url}/mcp`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
}

describe('a principals file whose stat hangs', () => {
  it('does not stall the process: /healthz answers, callers get 503 after a bounded wait, then 200 once it answers again', async () => {
    expect((await call('key-bob-all')).status).toBe(200);
    hung.until = Date.now() + 4_000;
    const started = performance.now();
    const calls = Array.from({ length: 5 }, () => call('key-bob-all'));
    // Measured from the start: a process frozen by the stat fires this timer only once it thaws.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const health = await fetch(`${http.url}/healthz`);
    const healthMs = performance.now() - started;
    expect(health.status).toBe(200);
    expect(healthMs).toBeLessThan(1_500);
    const answers = await Promise.all(calls);
    const callsMs = performance.now() - started;
    // Fail closed: a key is neither trusted nor refused on a file that cannot be checked.
    expect(answers.map((answer) => answer.status)).toEqual([503, 503, 503, 503, 503]);
    expect(answers[0]!.headers.get('retry-after')).toBe('1');
    expect(callsMs).toBeLessThan(3_500);
    // A JWT does not depend on the principals file: it is verified and served meanwhile.
    expect((await call(await jwt('reporter'))).status).toBe(200);
    expect((await call(`${await jwt('reporter')}x`)).status).toBe(503);
    // The stat still hangs: a request now is told at once, instead of waiting its 2 s in turn.
    const late = performance.now();
    expect((await call('key-bob-all')).status).toBe(503);
    expect(performance.now() - late).toBeLessThan(500);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, hung.until - Date.now()) + 50));
    expect((await call('key-bob-all')).status).toBe(200);
    expect((await call('not-a-key')).status).toBe(401);
  });
});

describe('/healthz and the log, while the principals file cannot be checked', () => {
  it('say so (every API key gets 503 meanwhile), once, and again when it answers', async () => {
    // They said nothing: /healthz "ok", no log line, while every API-key caller got 503.
    const health = async (): Promise<{ status: string; lastReloadError: string | null }> =>
      (await fetch(`${http.url}/healthz`)).json() as Promise<{ status: string; lastReloadError: string | null }>;
    expect(await health()).toMatchObject({ status: 'ok', lastReloadError: null });
    lines.length = 0;
    hung.until = Date.now() + 3_000;
    const calls = [call('key-bob-all'), call('key-bob-all')];
    expect((await Promise.all(calls)).map((answer) => answer.status)).toEqual([503, 503]);
    expect((await call('key-bob-all')).status).toBe(503);
    const down = await health();
    expect(down.status).toBe('degraded');
    expect(down.lastReloadError).toMatch(
      /^principals file could not be checked since \S+ \(principals\.yaml\): it did not answer within 2 s; requests that need it are refused \(503\) until it does$/,
    );
    expect(down.lastReloadError).not.toContain(dir);
    expect(lines.filter((line) => line.startsWith('warn ') && line.includes('could not be checked'))).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, hung.until - Date.now()) + 50));
    expect((await call('key-bob-all')).status).toBe(200);
    expect(await health()).toMatchObject({ status: 'ok', lastReloadError: null });
    expect(lines.filter((line) => line.startsWith('info ') && line.includes('can be checked again'))).toHaveLength(1);
  });
});

describe('over stdio, a principals file whose stat hangs', () => {
  it('does not freeze the session: calls fail closed after a bounded wait, in order, then are served once it answers', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const session = await serveStdio(runtime, { apiKey: 'key-bob-all', stdin, stdout });
    const answers: { id: number; result?: unknown; error?: { code: number; message: string } }[] = [];
    let pending = '';
    stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n')) {
        answers.push(JSON.parse(pending.slice(0, end)) as (typeof answers)[number]);
        pending = pending.slice(end + 1);
      }
    });
    const send = (id: number, method: string, params: Record<string, unknown> = {}): void => {
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    };
    const listCapabilities = (id: number): void => send(id, 'tools/call', { name: 'list_capabilities', arguments: {} });
    const answered = async (count: number): Promise<void> => {
      while (answers.length < count) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    try {
      send(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } });
      await answered(1);
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
      hung.until = Date.now() + 4_000;
      const started = performance.now();
      // A process frozen by the stat would fire this timer only once it thaws.
      let timerLateMs = Number.POSITIVE_INFINITY;
      const tick = performance.now();
      setTimeout(() => (timerLateMs = performance.now() - tick - 100), 100);
      listCapabilities(2);
      listCapabilities(3);
      await answered(3);
      expect(timerLateMs).toBeLessThan(500);
      expect(performance.now() - started).toBeLessThan(3_500);
      expect(answers.slice(1).map((answer) => [answer.id, answer.error?.code])).toEqual([
        [2, -32000],
        [3, -32000],
      ]);
      expect(answers[1]!.error!.message).toBe('The principals file could not be checked in time: retry shortly');
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, hung.until - Date.now()) + 50));
      listCapabilities(4);
      await answered(4);
      expect(answers[3]).toMatchObject({ id: 4, result: { structuredContent: expect.anything() as unknown } });
    } finally {
      hung.until = 0;
      stdin.end();
      await session.close();
    }
  });
});

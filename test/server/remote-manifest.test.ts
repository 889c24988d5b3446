// Manifests from a URL (docs/server.md, "Manifests from a URL"), against a real local HTTP server:
// fetched at start, polled with If-None-Match (a 304 changes nothing), the signature fetched from
// URL + .sig and verified before the swap; a tampered publish, a 5xx, a stalled server, an
// oversized body and too many redirects each leave the last good version serving and say why,
// without stalling requests; the cache boots a server whose URL is down, and is verified too.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serializeManifest } from '../../compiler/manifest.js';
import { LoadError } from '../../server/reloadable.js';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { urlRefusal } from '../../server/manifest-source.js';
import { generateSigningKey, parseVerificationKeys, signDetached, type SigningKey, type VerificationKeys } from '../../server/signature.js';
import { closedPort } from '../support/postgres.js';
import { STANDARD_CAPABILITIES, eventually, inMemoryClient, makeManifest, serveArgv, structured, tempDir } from './helpers.js';
import { startManifestServer, type ManifestServer, type Published } from './manifest-server.js';

let signing: SigningKey;
let keys: VerificationKeys;
let server: ManifestServer;
let dir: string;
const runtimes: Runtime[] = [];
const POLL_MS = 100;
const DEMO_PRINCIPALS = path.resolve(import.meta.dirname, '../../examples/principals.demo.yaml');

const text = (marker: string): string => serializeManifest(makeManifest(STANDARD_CAPABILITIES, { marker }));
const revisionOf = (manifest: string): string => (JSON.parse(manifest) as { revision: string }).revision;
const signed = async (manifest: string): Promise<Published> => ({ manifest, signature: await signDetached(Buffer.from(manifest), signing) });

beforeEach(async () => {
  const generated = await generateSigningKey();
  signing = { kid: generated.kid, privateJwk: generated.privateJwk };
  keys = parseVerificationKeys([{ label: 'test', text: JSON.stringify(generated.publicJwks) }]);
  server = await startManifestServer(await signed(text('a')));
  dir = tempDir();
});

afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function start(
  options: { url?: string; cacheDir?: string; fetchLimits?: { maxBytes: number; timeoutMs: number }; signed?: boolean } = {},
): Promise<Runtime> {
  const runtime = await startRuntime({
    manifestFile: options.url ?? server.url,
    manifestSource: {
      ...(options.signed === false ? {} : { keys }),
      remote: {
        pollIntervalMs: POLL_MS,
        ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
        ...(options.fetchLimits ? { fetchLimits: options.fetchLimits } : {}),
      },
    },
  });
  runtimes.push(runtime);
  return runtime;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('polling a manifest URL', () => {
  it('serves it, answers polls with 304 at no cost, and swaps in a new signed version', async () => {
    const runtime = await start();
    expect(runtime.health()).toMatchObject({ status: 'ok', revision: revisionOf(text('a')), source: 'url', signedBy: signing.kid });
    await eventually(() => expect(server.counts.notModified).toBeGreaterThanOrEqual(3));
    expect(server.counts.ok).toBe(1);
    const before = runtime.manifests.snapshot;
    expect(runtime.manifests.snapshot).toBe(before); // a 304 activates nothing

    const next = text('b');
    server.publish(await signed(next));
    await eventually(() => expect(runtime.health().revision).toBe(revisionOf(next)));
    expect(runtime.health()).toMatchObject({ status: 'ok', lastReloadError: null, signedBy: signing.kid });
  });

  it('takes the new ETag of the same bytes republished (a rebuild): the polls after it are 304s again', async () => {
    const runtime = await start();
    await eventually(() => expect(server.counts.notModified).toBeGreaterThanOrEqual(2));
    const served = runtime.manifests.snapshot;
    server.etagSalt = 'rebuilt';
    const before = server.counts.notModified;
    await eventually(() => expect(server.counts.notModified).toBeGreaterThanOrEqual(before + 3));
    // One full download for the new ETag, then 304s; the same bytes are not activated again.
    expect(server.counts.ok).toBe(2);
    expect(runtime.manifests.snapshot).toBe(served);
    expect(runtime.health()).toMatchObject({ status: 'ok', lastReloadError: null });
  });

  it('stops polling when the start fails after the manifest was fetched', async () => {
    await expect(
      startRuntime({ manifestFile: server.url, principalsFile: path.join(dir, 'missing.yaml'), manifestSource: { keys, remote: { pollIntervalMs: POLL_MS } } }),
    ).rejects.toBeInstanceOf(LoadError);
    const fetched = server.counts.ok + server.counts.notModified;
    await sleep(POLL_MS * 5);
    expect(server.counts.ok + server.counts.notModified).toBe(fetched);
  });

  it('counts every poll in the reload metric, by result', async () => {
    const runtime = await startRuntime({ manifestFile: server.url, metrics: true, manifestSource: { keys, remote: { pollIntervalMs: POLL_MS } } });
    runtimes.push(runtime);
    const count = async (result: string): Promise<number> => {
      const line = (await runtime.metrics!.scrape()).split('\n').find((row) => row.startsWith(`capreg_reloads_total{file="manifest",result="${result}"}`));
      return line === undefined ? 0 : Number(line.split(' ').at(-1));
    };
    await eventually(async () => expect(await count('unchanged')).toBeGreaterThanOrEqual(2));
    server.publish(await signed(text('b')));
    await eventually(async () => expect(await count('activated')).toBe(1));
    const { signature } = await signed(text('c'));
    server.publish({ manifest: text('d'), signature });
    await eventually(async () => expect(await count('rejected')).toBeGreaterThanOrEqual(1));
  });

  it('keeps the good version through a tampered publish and a missing signature, and says why', async () => {
    const runtime = await start();
    const good = revisionOf(text('a'));
    const next = text('b');
    const { signature } = await signed(next);
    server.publish({ manifest: next.replace('Does open-help', 'Does 0pen-help'), signature });
    await eventually(() => expect(runtime.health().lastReloadError).toMatch(/signature refused: .*does not match its content/));
    expect(runtime.health()).toMatchObject({ status: 'degraded', revision: good });
    server.publish({ manifest: next });
    await eventually(() => expect(runtime.health().lastReloadError).toMatch(/it has no signature/));
    expect(runtime.health().revision).toBe(good);
    // The corrected signature is picked up: a refused version is fetched in full.
    server.publish({ manifest: next, signature });
    await eventually(() => expect(runtime.health()).toMatchObject({ revision: revisionOf(next), lastReloadError: null }));
  });

  it('a 5xx keeps the good version and degrades /healthz; the next good answer clears it', async () => {
    const runtime = await start();
    server.failWith = 503;
    await eventually(() => expect(runtime.health().lastReloadError).toMatch(/cannot fetch it: the server answered HTTP 503/));
    expect(runtime.health().revision).toBe(revisionOf(text('a')));
    server.failWith = undefined;
    await eventually(() => expect(runtime.health()).toMatchObject({ status: 'ok', lastReloadError: null }));
  });

  it('a stalled server times out; requests are answered meanwhile without waiting for it', async () => {
    const runtime = await start({ fetchLimits: { maxBytes: 64 * 1024 * 1024, timeoutMs: 2_000 } });
    const { client, close } = await inMemoryClient(runtime);
    try {
      server.stall = true;
      await sleep(POLL_MS * 2); // a poll is now waiting on the stalled body
      const started = Date.now();
      for (let i = 0; i < 5; i++) expect(structured(await client.callTool({ name: 'list_capabilities', arguments: {} }))['success']).toBe(true);
      expect(Date.now() - started).toBeLessThan(1_000);
      await eventually(() => expect(runtime.health().lastReloadError).toMatch(/no complete answer within 2000 ms/));
      expect(runtime.health().revision).toBe(revisionOf(text('a')));
    } finally {
      server.stall = false;
      await close();
    }
  });

  it('refuses a body over the size limit, at start and when polled', async () => {
    const small = text('a');
    const limits = { maxBytes: Buffer.byteLength(small) + 100, timeoutMs: 5_000 };
    const runtime = await start({ fetchLimits: limits });
    server.publish(await signed(text(`b${'x'.repeat(500)}`)));
    await eventually(() => expect(runtime.health().lastReloadError).toMatch(/over the limit of \d+ bytes/));
    expect(runtime.health().revision).toBe(revisionOf(small));
    await expect(start({ fetchLimits: { maxBytes: 100, timeoutMs: 5_000 } })).rejects.toThrow(/over the limit of 100/);
  });

  it('follows at most 5 redirects, each checked like the first URL', async () => {
    const base = server.url.replace('/manifest.json', '');
    // The signature URL is the redirected URL + .sig: both follow the same chain.
    expect((await start({ url: `${base}/hop/5/manifest.json`, signed: false })).health().source).toBe('url');
    await expect(start({ url: `${base}/hop/6/manifest.json`, signed: false })).rejects.toThrow(/more than 5 redirects/);
  });

  it('refuses http:// off loopback unless allowed, and every scheme but http(s)', async () => {
    expect(urlRefusal(new URL('http://example.com/m.json'), false)).toMatch(/only on loopback/);
    expect(urlRefusal(new URL('http://example.com/m.json'), true)).toBeUndefined();
    expect(urlRefusal(new URL('https://example.com/m.json'), false)).toBeUndefined();
    expect(urlRefusal(new URL('http://[::1]:8080/m.json'), false)).toBeUndefined();
    expect(urlRefusal(new URL('file:///etc/passwd'), true)).toMatch(/only https/);
    await expect(start({ url: 'http://example.com/manifest.json' })).rejects.toThrow(/http:\/\/ is allowed only on loopback/);
  });

  it("quotes a redirect's scheme cut short: /healthz does not carry 15 KB of the answering server's text", async () => {
    const runtime = await start();
    server.redirectTo = `${'x'.repeat(15_000)}:y`;
    await eventually(() => expect(runtime.health().lastReloadError).toMatch(/refused a redirect: only https:\/\/ .* is fetched, not x{64}…/));
    expect(runtime.health().lastReloadError!.length).toBeLessThan(1_000);
  });

  it('refuses a URL with a user name or password, given or reached by a redirect, and never repeats the password', async () => {
    expect(urlRefusal(new URL('https://deploy:pw@example.com/m.json'), false)).toMatch(/user name or password/);
    expect(urlRefusal(new URL('https://deploy@example.com/m.json'), false)).toMatch(/user name or password/);
    const withPassword = server.url.replace('http://', 'http://deploy:S3CRET-PASS@');
    const refused = (await start({ url: withPassword }).then(
      () => new Error('started'),
      (error: unknown) => error,
    )) as Error;
    expect(refused).toBeInstanceOf(LoadError);
    expect(refused.message).toMatch(/a URL with a user name or password \(user:password@\) is not fetched/);
    expect(refused.message).not.toContain('S3CRET');

    const runtime = await start();
    server.redirectTo = withPassword.replace('S3CRET-PASS', 'REDIRECT-PASS');
    await eventually(() => expect(runtime.health().lastReloadError).toMatch(/refused a redirect: a URL with a user name or password/));
    expect(JSON.stringify(runtime.health())).not.toContain('REDIRECT-PASS');
    expect(runtime.health().revision).toBe(revisionOf(text('a')));
  });

  it('a URL that answers at start with a manifest that fails verification is refused (LoadError)', async () => {
    server.publish({ manifest: text('a') });
    const refused = start();
    await expect(refused).rejects.toBeInstanceOf(LoadError);
    await expect(refused).rejects.toThrow(/it has no signature/);
  });
});

describe('--manifest-cache', () => {
  it('persists what it activates; boots from it (verified) when the URL is down, then goes back to the URL', async () => {
    const cacheDir = path.join(dir, 'cache');
    const first = await start({ cacheDir });
    const next = text('b');
    server.publish(await signed(next));
    await eventually(() => expect(first.health().revision).toBe(revisionOf(next)));
    await eventually(() => expect(fs.readFileSync(path.join(cacheDir, 'manifest.json'), 'utf8')).toBe(next));
    expect(fs.readFileSync(path.join(cacheDir, 'manifest.json.sig'), 'utf8')).toBe((await signed(next)).signature);

    // The URL is down: boot from the cache, say so, keep polling.
    const down = `http://127.0.0.1:${await closedPort()}/manifest.json`;
    const booted = await start({ url: down, cacheDir });
    expect(booted.health()).toMatchObject({ source: 'cache', revision: revisionOf(next), signedBy: signing.kid });

    server.failWith = 503;
    const fromCache = await start({ cacheDir });
    expect(fromCache.health().source).toBe('cache');
    server.failWith = undefined;
    await eventually(() => expect(fromCache.health()).toMatchObject({ source: 'url', revision: revisionOf(next), lastReloadError: null }));
  });

  it('never boots from a cached copy that fails verification, nor without one', async () => {
    const cacheDir = path.join(dir, 'cache');
    await start({ cacheDir });
    const down = `http://127.0.0.1:${await closedPort()}/manifest.json`;
    const cached = path.join(cacheDir, 'manifest.json');
    fs.writeFileSync(cached, fs.readFileSync(cached, 'utf8').replace('Does open-help', 'Does 0pen-help'));
    await expect(start({ url: down, cacheDir })).rejects.toThrow(/unreachable|cannot fetch it.*the cache cannot stand in: .*does not match its content/);
    await expect(start({ url: down, cacheDir: path.join(dir, 'empty') })).rejects.toThrow(/cannot fetch it/);
  });
});

describe('capreg serve --manifest URL (the bin)', () => {
  const serve = (args: string[]): { status: number | null; stderr: string } => {
    const result = spawnSync(process.execPath, serveArgv(args), { cwd: dir, encoding: 'utf8', timeout: 20_000, env: { PATH: process.env['PATH'] ?? '' } });
    return { status: result.status, stderr: result.stderr };
  };

  it('exits 2 with one line: URL flags on a file, http off loopback, a URL that is down with no cache', async () => {
    const file = path.join(dir, 'manifest.json');
    fs.writeFileSync(file, text('a'));
    expect(serve(['--manifest', file, '--poll-interval', '1'])).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/--poll-interval applies only with --manifest https:/) as unknown,
    });
    expect(serve(['--manifest', server.url, '--poll-interval', '0'])).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/--poll-interval must be a number of seconds from 0.1 to 3600/) as unknown,
    });
    expect(serve(['--manifest', 'http://example.com/manifest.json'])).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/http:\/\/ is allowed only on loopback/) as unknown,
    });
    const down = serve(['--manifest', `http://127.0.0.1:${await closedPort()}/manifest.json?token=s3cret`]);
    expect(down.status).toBe(2);
    expect(down.stderr).toMatch(
      /capreg serve: manifest http:\/\/127\.0\.0\.1:\d+\/manifest\.json refused: cannot fetch it: it could not be fetched \(ECONNREFUSED\)/,
    );
    expect(down.stderr).not.toContain('s3cret');
  });

  it('prints no part of the URL that may hold a secret at start, and logs a refused poll at warn', async () => {
    const child = spawn(
      process.execPath,
      serveArgv([
        '--http',
        '--port',
        '0',
        '--principals',
        DEMO_PRINCIPALS,
        '--manifest',
        `${server.url}?token=s3cret-token`,
        '--poll-interval',
        '0.2',
        '--log-level',
        'warn',
      ]),
      { cwd: dir, env: { PATH: process.env['PATH'] ?? '' } },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await eventually(() => expect(stderr).toContain('A real key is any long random secret'), 15_000);
      expect(stderr).toContain('"<your --manifest URL>"');
      // Broken bytes: refused, the last good version kept, and said at warn (the level asked for).
      server.publish({ manifest: '{"schemaVersion": 1' });
      await eventually(() => expect(stderr).toMatch(/"level":"warn"[^\n]*manifest reload rejected/), 10_000);
      expect(stderr).not.toContain('s3cret-token');
      expect(stderr).not.toMatch(/"level":"info"/);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});

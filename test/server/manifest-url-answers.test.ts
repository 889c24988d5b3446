// Answers a manifest URL may give that must not be taken at their word (docs/server.md, "Manifests
// from a URL"), against real local HTTP servers: a 304 Not Modified to a request that asked nothing
// (no If-None-Match, or another ETag) is a failed fetch, never "unchanged" — it neither clears
// /healthz after a refused version nor stops a first fetch from falling back to the cache; and a
// redirect may not take the server from one kind of host to a more internal one (loopback, private,
// link-local: the cloud metadata address) it was not configured to reach.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serializeManifest } from '../../compiler/manifest.js';
import { LoadError } from '../../server/reloadable.js';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { fetchBounded } from '../../server/manifest-source.js';
import { RedirectGuard, type Resolve } from '../../server/redirect-guard.js';
import { STANDARD_CAPABILITIES, eventually, makeManifest, serveArgv, tempDir } from './helpers.js';

const POLL_MS = 100;
const DEMO_PRINCIPALS = path.resolve(import.meta.dirname, '../../examples/principals.demo.yaml');
const text = (marker: string): string => serializeManifest(makeManifest(STANDARD_CAPABILITIES, { marker }));
const revisionOf = (manifest: string): string => (JSON.parse(manifest) as { revision: string }).revision;

/** What the test server does with one request; `null` answers the published manifest honestly. */
type Answer = (request: http.IncomingMessage, response: http.ServerResponse) => boolean;

interface TestServer {
  url: string;
  published: string;
  /** Tried first on every request; returns true when it answered. */
  answer: Answer | undefined;
  /** The If-None-Match of every request for the manifest, in order (undefined when none was sent). */
  asked: (string | undefined)[];
  close(): Promise<void>;
}

async function startServer(published: string): Promise<TestServer> {
  const state: Pick<TestServer, 'published' | 'answer' | 'asked'> = { published, answer: undefined, asked: [] };
  const server = http.createServer((request, response) => {
    if (request.url?.split('?')[0] === '/manifest.json') state.asked.push(request.headers['if-none-match']);
    if (state.answer?.(request, response) === true) return;
    if (request.url?.split('?')[0] !== '/manifest.json') {
      response.writeHead(404).end();
      return;
    }
    const etag = `"${createHash('sha256').update(state.published).digest('hex').slice(0, 16)}"`;
    if (request.headers['if-none-match'] === etag) {
      response.writeHead(304, { etag }).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json', etag }).end(state.published);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/manifest.json`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

/** The test server answers requests for `from` (whatever their query) with a 302 to `location`. */
function redirect(from: string, location: string): void {
  server.answer = (request, response) => {
    if (request.url?.split('?')[0] !== from) return false;
    response.writeHead(302, { location }).end();
    return true;
  };
}

/** A 304 to every request for the manifest, whatever it asked (with an ETag header, or without). */
const alwaysNotModified =
  (etag?: string): Answer =>
  (request, response) => {
    if (request.url !== '/manifest.json') return false;
    response.writeHead(304, etag !== undefined ? { etag } : {}).end();
    return true;
  };

let server: TestServer;
let dir: string;
const runtimes: Runtime[] = [];
const guards: RedirectGuard[] = [];

beforeEach(async () => {
  server = await startServer(text('a'));
  dir = tempDir();
});

afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
  for (const guard of guards.splice(0)) await guard.close();
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function start(options: { url?: string; cacheDir?: string; timeoutMs?: number } = {}): Promise<Runtime> {
  const runtime = await startRuntime({
    manifestFile: options.url ?? server.url,
    manifestSource: {
      remote: {
        pollIntervalMs: POLL_MS,
        ...(options.cacheDir !== undefined ? { cacheDir: options.cacheDir } : {}),
        ...(options.timeoutMs !== undefined ? { fetchLimits: { maxBytes: 64 * 1024 * 1024, timeoutMs: options.timeoutMs } } : {}),
      },
    },
  });
  runtimes.push(runtime);
  return runtime;
}

describe('a 304 Not Modified the server was not asked for', () => {
  it('after a refused version, a 304 to a request without If-None-Match keeps /healthz degraded and says why', async () => {
    const runtime = await start();
    const good = revisionOf(text('a'));
    server.published = '{"schemaVersion": 1';
    await eventually(() => expect(runtime.health().lastReloadError).toMatch(/manifest reload rejected/));
    // The refused version is fetched in full from now on: no ETag is sent.
    await eventually(() => expect(server.asked.at(-1)).toBeUndefined());
    server.answer = alwaysNotModified();
    const answered = server.asked.length;
    await eventually(() => expect(server.asked.length).toBeGreaterThanOrEqual(answered + 3));
    expect(server.asked.slice(answered).every((etag) => etag === undefined)).toBe(true);
    expect(runtime.health()).toMatchObject({ status: 'degraded', revision: good });
    expect(runtime.health().lastReloadError).toMatch(/cannot fetch it: the server answered 304 Not Modified to a request without If-None-Match/);
  });

  it('a 304 naming another ETag than the one sent is a failed poll, not "unchanged"', async () => {
    const runtime = await start();
    const etag = `"${createHash('sha256').update(text('a')).digest('hex').slice(0, 16)}"`;
    await eventually(() => expect(server.asked.at(-1)).toBe(etag));
    server.answer = alwaysNotModified('"some-other-version"');
    await eventually(() => expect(runtime.health().lastReloadError).toMatch(/cannot fetch it: the server answered 304 Not Modified with another ETag/));
    expect(runtime.health()).toMatchObject({ status: 'degraded', revision: revisionOf(text('a')) });
    // The same ETag (strong or weak, as a compressing proxy rewrites it) is a real 304.
    server.answer = alwaysNotModified(`W/${etag}`);
    await eventually(() => expect(runtime.health()).toMatchObject({ status: 'ok', lastReloadError: null }));
  });

  it('a 304 to the first fetch falls back to the cache like an unreachable URL, and is refused without one', async () => {
    const cacheDir = path.join(dir, 'cache');
    const first = await start({ cacheDir });
    await eventually(() => expect(fs.existsSync(path.join(cacheDir, 'manifest.json'))).toBe(true));
    await first.close();
    runtimes.splice(runtimes.indexOf(first), 1);

    server.answer = alwaysNotModified('"anything"');
    const booted = await start({ cacheDir });
    expect(booted.health()).toMatchObject({ source: 'cache', revision: revisionOf(text('a')) });

    const refused = start({ cacheDir: path.join(dir, 'empty') });
    await expect(refused).rejects.toBeInstanceOf(LoadError);
    await expect(refused).rejects.toThrow(/cannot fetch it: the server answered 304 Not Modified to a request without If-None-Match/);
  });

  it('the bin: a 304 at start boots from --manifest-cache; without a cache it is exit 2 saying so', async () => {
    const cacheDir = path.join(dir, 'cache');
    const first = await start({ cacheDir });
    await eventually(() => expect(fs.existsSync(path.join(cacheDir, 'manifest.json'))).toBe(true));
    server.answer = alwaysNotModified();

    const env = { PATH: process.env['PATH'] ?? '' };
    // Not spawnSync: the server answering it runs in this process.
    const none = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, serveArgv(['--manifest', server.url]), { cwd: dir, env, timeout: 20_000 });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('exit', (status) => resolve({ status, stderr }));
    });
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/refused: cannot fetch it: the server answered 304 Not Modified to a request without If-None-Match/);
    expect(none.stderr).not.toMatch(/nothing to load/);

    const child = spawn(
      process.execPath,
      serveArgv(['--http', '--port', '0', '--principals', DEMO_PRINCIPALS, '--manifest', server.url, '--manifest-cache', cacheDir, '--log-level', 'warn']),
      { cwd: dir, env },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await eventually(() => expect(stderr).toContain('A real key is any long random secret'), 15_000);
      expect(stderr).toMatch(/unreachable at start \(cannot fetch it: the server answered 304 Not Modified[^)]*\); booting from the cache/);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(first.health().revision).toBe(revisionOf(text('a')));
  });
});

describe('redirects to internal addresses', () => {
  it('the rule: an internal address (loopback, private, link-local) is reached only from a host of the same kind', () => {
    // Judged by their names, before any request: a literal address or localhost (a DNS name is judged at its look-up, below).
    const refusal = (from: string, to: string): string | undefined => {
      const guard = new RedirectGuard();
      guards.push(guard);
      guard.hop(new URL(from), undefined);
      return guard.hop(new URL(to), new URL(from));
    };
    const publicHost = 'https://manifests.example.com/m.json';
    for (const internal of [
      'https://127.0.0.1/x',
      'https://127.8.9.10/x',
      'https://2130706433/x', // 127.0.0.1, as URL reads it
      'https://localhost/x',
      'https://LOCALHOST./x',
      'https://api.localhost/x',
      'https://[::1]/x',
      'https://0.0.0.0/x',
      'https://[::]/x',
      'https://10.1.2.3/x',
      'https://172.16.0.1/x',
      'https://172.31.255.255/x',
      'https://192.168.1.1/x',
      'https://100.64.0.1/x',
      'https://[fd00::1]/x',
      'https://[fc00::1]/x',
      'https://169.254.169.254/latest/meta-data/',
      'https://[fe80::1]/x',
      'https://[::ffff:169.254.169.254]/x',
      'https://[::ffff:127.0.0.1]/x',
      // NAT64 (64:ff9b::/96) reaches the IPv4 address in its last 32 bits.
      'https://[64:ff9b::a9fe:a9fe]/x',
      'https://[64:ff9b::7f00:1]/x',
      'https://[64:ff9b::10.1.2.3]/x',
      // Metadata and host services outside 169.254/16.
      'https://[fd00:ec2::254]/x',
      'https://100.100.100.200/x',
      'https://168.63.129.16/x',
    ]) {
      expect(refusal(publicHost, internal), internal).toMatch(/^from a public host to a (loopback|private|link-local) address/);
    }
    expect(refusal(publicHost, 'https://169.254.169.254/latest/meta-data/')).toMatch(/link-local address .*cloud metadata/);
    // Public addresses and names (what a name resolves to is not looked at).
    for (const external of [
      'https://cdn.example.net/m.json',
      'https://8.8.8.8/x',
      'https://172.32.0.1/x',
      'https://[2001:db8::1]/x',
      'https://[64:ff9b::808:808]/x',
    ]) {
      expect(refusal(publicHost, external), external).toBeUndefined();
    }
    // The same kind: a loopback server to itself, an internal server inside its network.
    expect(refusal('http://127.0.0.1:8080/m.json', 'http://localhost:9090/m.json')).toBeUndefined();
    expect(refusal('https://10.0.0.5/m.json', 'https://192.168.3.4/m.json')).toBeUndefined();
    expect(refusal('https://10.0.0.5/m.json', 'https://cdn.example.net/m.json')).toBeUndefined();
    // Inward from there: an internal server may not send the replica to its own loopback or the metadata service.
    expect(refusal('https://10.0.0.5/m.json', 'https://127.0.0.1/admin')).toMatch(/from a private host to a loopback address/);
    expect(refusal('http://127.0.0.1/m.json', 'http://169.254.169.254/latest/')).toMatch(/from a loopback host to a link-local address/);
    expect(refusal('http://127.0.0.1/m.json', 'http://10.0.0.1/m.json')).toMatch(/from a loopback host to a private address/);
    // The metadata services that sit inside private ranges are not private hosts a private mirror may send the server to.
    for (const metadata of ['http://[fd00:ec2::254]/latest/', 'http://100.100.100.200/latest/', 'http://[64:ff9b::a9fe:a9fe]/latest/']) {
      expect(refusal('https://10.0.0.5/m.json', metadata), metadata).toMatch(/from a private host to a link-local address/);
      expect(refusal('https://[fd00::5]/m.json', metadata), metadata).toMatch(/from a private host to a link-local address/);
    }
  });

  it('a redirect to the metadata address or a private one is refused before any request; the good version keeps serving', async () => {
    const runtime = await start({ timeoutMs: 1_500 });
    const good = revisionOf(text('a'));
    for (const [target, kind] of [
      ['http://169.254.169.254/latest/meta-data/iam/security-credentials/?token=s3cret', 'link-local'],
      ['http://10.255.255.1/manifest.json', 'private'],
    ] as const) {
      redirect('/manifest.json', target);
      await eventually(() =>
        expect(runtime.health().lastReloadError).toMatch(new RegExp(`cannot fetch it: refused a redirect from a loopback host to a ${kind} address`)),
      );
      expect(runtime.health()).toMatchObject({ status: 'degraded', revision: good });
      expect(JSON.stringify(runtime.health())).not.toContain('s3cret');
    }
    await expect(start({ url: `${server.url}?at=start`, timeoutMs: 1_500 })).rejects.toThrow(
      /refused: cannot fetch it: refused a redirect from a loopback host to a private address/,
    );
    server.answer = undefined;
    await eventually(() => expect(runtime.health()).toMatchObject({ status: 'ok', lastReloadError: null }));
  });

  it('a redirect between loopback addresses is still followed', async () => {
    const port = new URL(server.url).port; // an absolute Location, to a loopback literal
    redirect('/hop', `http://127.0.0.1:${port}/manifest.json`);
    const runtime = await start({ url: server.url.replace('/manifest.json', '/hop') });
    expect(runtime.health()).toMatchObject({ status: 'ok', source: 'url', revision: revisionOf(text('a')) });
  });
  describe('a DNS name is judged by the addresses it resolves to', () => {
    /** Names resolved as a DNS server would answer them; every lookup is recorded. */
    function resolver(answers: Record<string, string[]>): { resolve: Resolve; asked: string[] } {
      const asked: string[] = [];
      const resolve: Resolve = (hostname, _options, callback) => {
        asked.push(hostname);
        const addresses = answers[hostname];
        if (addresses === undefined) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
        callback(
          null,
          addresses.map((address) => ({ address, family: isIP(address) })),
        );
      };
      return { resolve, asked };
    }
    const limits = { maxBytes: 1024 * 1024, timeoutMs: 3_000 };
    const redirectTo = (location: string): void => redirect('/hop', location);

    it('a redirect from loopback to a name that resolves to the metadata or a private address is refused at its lookup', async () => {
      const port = new URL(server.url).port;
      const hop = new URL(server.url.replace('/manifest.json', '/hop'));
      for (const [addresses, kind] of [
        [['169.254.169.254'], 'link-local'],
        [['10.0.0.7'], 'private'],
        [['fd00::7'], 'private'],
        // One internal address among public ones is enough: the socket may be opened to any of them.
        [['8.8.8.8', '192.168.1.20'], 'private'],
      ] as const) {
        const { resolve, asked } = resolver({ 'manifests.internal.test': [...addresses] });
        redirectTo(`http://manifests.internal.test:${port}/manifest.json`);
        const result = await fetchBounded(hop, { limits, allowInsecure: true, resolve });
        expect(result.ok).toBe(false);
        expect(!result.ok && result.reason).toMatch(new RegExp(`^refused a redirect from a loopback host to a ${kind} address`));
        expect(asked).toEqual(['manifests.internal.test']);
      }
    });

    it('a redirect to a name that resolves to loopback, like the host that sent it, is followed and connects to that address', async () => {
      const port = new URL(server.url).port;
      const { resolve, asked } = resolver({ 'replica-cache.test': ['127.0.0.1'] });
      redirectTo(`http://replica-cache.test:${port}/manifest.json`);
      const result = await fetchBounded(new URL(server.url.replace('/manifest.json', '/hop')), { limits, allowInsecure: true, resolve });
      expect(result).toMatchObject({ ok: true, status: 200 });
      expect(result.ok && 'bytes' in result && result.bytes.toString('utf8')).toBe(text('a'));
      expect(asked).toEqual(['replica-cache.test']);
    });

    it('the host the operator named is judged by its address too: a name on loopback may redirect to a loopback literal', async () => {
      const port = new URL(server.url).port;
      const { resolve } = resolver({ 'manifests.test': ['127.0.0.1'] });
      redirectTo(`http://127.0.0.1:${port}/manifest.json`);
      const result = await fetchBounded(new URL(`http://manifests.test:${port}/hop`), { limits, allowInsecure: true, resolve });
      expect(result).toMatchObject({ ok: true, status: 200 });
    });

    it('every hop is looked up and judged, even back to a host an earlier hop kept a connection to', async () => {
      // mirror -> cdn -> mirror: the third hop used to reuse the first hop's kept-alive connection
      // without a look-up, so a public host could send the server back into an internal mirror.
      const port = new URL(server.url).port;
      server.answer = (request, response) => {
        if (request.url === '/hop') response.writeHead(302, { location: `http://cdn.test:${port}/back` }).end();
        else if (request.url === '/back') response.writeHead(302, { location: `http://mirror.test:${port}/manifest.json` }).end();
        else return false;
        return true;
      };
      const { resolve, asked } = resolver({ 'mirror.test': ['127.0.0.1'], 'cdn.test': ['127.0.0.1'] });
      const result = await fetchBounded(new URL(`http://mirror.test:${port}/hop`), { limits, allowInsecure: true, resolve });
      expect(result).toMatchObject({ ok: true, status: 200 });
      expect(asked).toEqual(['mirror.test', 'cdn.test', 'mirror.test']);
    });

    it('a name that resolves to a metadata service outside 169.254/16 counts as link-local', async () => {
      const port = new URL(server.url).port;
      for (const address of ['fd00:ec2::254', '100.100.100.200', '168.63.129.16', '64:ff9b::a9fe:a9fe']) {
        const { resolve } = resolver({ 'metadata.test': [address] });
        redirectTo(`http://metadata.test:${port}/latest/meta-data/`);
        const result = await fetchBounded(new URL(server.url.replace('/manifest.json', '/hop')), { limits, allowInsecure: true, resolve });
        expect(!result.ok && result.reason, address).toMatch(/^refused a redirect from a loopback host to a link-local address/);
      }
    });

    it('a look-up that never answers still ends the fetch within its time limit; one that fails says nothing of what it was told', async () => {
      const started = performance.now();
      const silent: Resolve = () => {};
      const result = await fetchBounded(new URL('http://slow.test:8080/manifest.json'), {
        limits: { maxBytes: 1024, timeoutMs: 500 },
        allowInsecure: true,
        resolve: silent,
      });
      expect(result).toEqual({ ok: false, reason: 'no complete answer within 500 ms' });
      expect(performance.now() - started).toBeLessThan(2_000);
      const talkative: Resolve = (_hostname, _options, callback) => callback(new Error('the resolver said 10.1.2.3 for secret.test?token=abc'), []);
      const failed = await fetchBounded(new URL('http://secret.test:8080/manifest.json?token=abc'), { limits, allowInsecure: true, resolve: talkative });
      expect(failed.ok).toBe(false);
      expect(!failed.ok && failed.reason).not.toMatch(/10\.1\.2\.3|token/);
      const empty: Resolve = (_hostname, _options, callback) => callback(null, []);
      expect((await fetchBounded(new URL('http://empty.test:8080/manifest.json'), { limits, allowInsecure: true, resolve: empty })).ok).toBe(false);
    });

    it('a name that does not resolve fails the fetch as before, without a refusal', async () => {
      const { resolve } = resolver({});
      const result = await fetchBounded(new URL('http://nowhere.test:8080/manifest.json'), { limits, allowInsecure: true, resolve });
      expect(result).toEqual({ ok: false, reason: 'it could not be fetched (ENOTFOUND)' });
    });
  });
});

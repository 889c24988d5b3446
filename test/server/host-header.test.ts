// DNS rebinding: a server on loopback answers only requests that name it by a loopback name (or a
// name given with --allowed-hosts), on every path; the metrics listener likewise. Requests are sent
// with node:http so that the Host header can be chosen.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import fc from 'fast-check';
import { exportSPKI, generateKeyPair } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { allowedHostNames, hostAllowed, listensOnLoopbackOnly, normalizeHostName } from '../../server/host-header.js';
import { ServerMetrics, startMetricsServer } from '../../server/metrics.js';
import { startRuntime } from '../../server/runtime.js';
import { hostRefusalLog, startHttpServer } from '../../server/transports/http.js';
import { makeManifest, STANDARD_CAPABILITIES, startStandardServer, tempDir, writeManifest, type StandardServer } from './helpers.js';

let server: StandardServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function request(port: number, path: string, host: string, method = 'GET', headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, headers: { Host: host, ...headers }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** An HTTP/1.0 request without any Host header (HTTP/1.1 without one is refused by Node itself). */
function requestWithoutHost(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(`GET ${path} HTTP/1.0\r\n\r\n`));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

describe('the Host check of a server on loopback', () => {
  it('refuses a foreign Host on every path, health and preflights included, and logs the first refusal', async () => {
    const lines: string[] = [];
    server = await startStandardServer({ log: (line) => lines.push(line) });
    const { port } = server.http;
    for (const [path, method] of [
      ['/healthz', 'GET'],
      ['/healthz', 'HEAD'],
      ['/mcp', 'POST'],
      ['/mcp', 'OPTIONS'],
      ['/nope', 'GET'],
    ] as const) {
      const answer = await request(port, path, `rebound.attacker.example:${port}`, method);
      expect(answer.status, `${method} ${path}`).toBe(403);
      if (method !== 'HEAD') expect(JSON.parse(answer.body)).toEqual({ error: 'host not allowed' });
    }
    // One line for the burst, naming the Host and the fix; the rest are counted for the next line.
    expect(lines).toEqual([
      `capreg serve: refused 1 request(s) for a Host not allowed (e.g. "rebound.attacker.example:${port}"); a reverse proxy that forwards Host needs --allowed-hosts with its name`,
    ]);
  });

  it('answers loopback names, with or without a port, in any case', async () => {
    server = await startStandardServer();
    const { port } = server.http;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'LOCALHOST', `[::1]:${port}`, 'localhost.']) {
      const answer = await request(port, '/healthz', host);
      expect(answer.status, host).toBe(200);
    }
  });

  it('refuses a request without Host, a malformed Host and an address it does not listen on', async () => {
    const lines: string[] = [];
    server = await startStandardServer({ log: (line) => lines.push(line) });
    const { port } = server.http;
    expect(await requestWithoutHost(port, '/healthz')).toMatch(/^HTTP\/1\.1 403 /);
    for (const host of ['10.0.0.5', '0.0.0.0', 'localhost.attacker.example', 'user@localhost', '127.0.0.1.nip.io']) {
      expect((await request(port, '/healthz', host)).status, host).toBe(403);
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('(e.g. (none))');
  });

  it('answers the names of --allowed-hosts besides the loopback ones, and still refuses others', async () => {
    server = await startStandardServer({ allowedHosts: ['mcp.example.com', '::1'] });
    const { port } = server.http;
    expect((await request(port, '/healthz', 'mcp.example.com')).status).toBe(200);
    expect((await request(port, '/healthz', 'MCP.example.com:443')).status).toBe(200);
    expect((await request(port, '/healthz', `127.0.0.1:${port}`)).status).toBe(200);
    expect((await request(port, '/healthz', 'other.example.com')).status).toBe(403);
    expect((await request(port, '/healthz', 'sub.mcp.example.com')).status).toBe(403);
  });

  it('puts only an allowed Host into the OAuth metadata a client is sent to', async () => {
    server = await startStandardServer();
    const { port } = server.http;
    const answer = await request(port, '/mcp', `rebound.attacker.example:${port}`, 'POST', { 'Content-Type': 'application/json' });
    expect(answer.status).toBe(403);
    expect(answer.body).not.toContain('attacker');
  });
});

describe('two Host headers', () => {
  it('are refused with 400 on every path, whichever comes first', async () => {
    server = await startStandardServer();
    const { port } = server.http;
    for (const [first, second] of [
      ['localhost', 'rebound.attacker.example'],
      ['rebound.attacker.example', 'localhost'],
      ['localhost', 'localhost'],
    ]) {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () =>
          socket.end(`GET /healthz HTTP/1.1\r\nHost: ${first}\r\nHost: ${second}\r\nConnection: close\r\n\r\n`),
        );
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (text += chunk));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      expect(answer, `${first}, ${second}`).toMatch(/^HTTP\/1\.1 400 /);
    }
  });
});

describe('the metrics listener', () => {
  it('on loopback answers loopback names only', async () => {
    const metrics = new ServerMetrics({ revision: () => 'r1', cachedProjections: () => 0 });
    const listener = await startMetricsServer(metrics, { port: 0 });
    try {
      expect((await request(listener.port, '/metrics', `127.0.0.1:${listener.port}`)).status).toBe(200);
      const refused = await request(listener.port, '/metrics', `rebound.attacker.example:${listener.port}`);
      expect(refused).toEqual({ status: 403, body: 'host not allowed\n' });
    } finally {
      await listener.close();
    }
  });
});

describe('host names', () => {
  it('keeps names, addresses and bracketed IPv6, and refuses URLs, ports, paths and wildcards', () => {
    expect(normalizeHostName('MCP.Example.com.')).toBe('mcp.example.com');
    expect(normalizeHostName('10.1.2.3')).toBe('10.1.2.3');
    expect(normalizeHostName('::1')).toBe('[::1]');
    expect(normalizeHostName('[fd00::1]')).toBe('[fd00::1]');
    for (const bad of ['https://mcp.example.com', 'mcp.example.com:443', 'mcp.example.com/x', '*.example.com', '', '-a.example', 'a..b', '[mcp.example.com]']) {
      expect(normalizeHostName(bad), bad).toBeUndefined();
    }
  });

  it('knows which listen addresses only this machine reaches', () => {
    for (const host of ['127.0.0.1', '127.3.2.1', 'localhost', '::1', '[::1]']) expect(listensOnLoopbackOnly(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', 'example.com', '128.0.0.1']) expect(listensOnLoopbackOnly(host), host).toBe(false);
    expect(allowedHostNames('0.0.0.0', undefined)).toBeUndefined();
    expect([...allowedHostNames('0.0.0.0', ['mcp.example.com'])!].sort()).toEqual(['127.0.0.1', '[::1]', 'localhost', 'mcp.example.com']);
    expect([...allowedHostNames('127.0.0.2', undefined)!].sort()).toEqual(['127.0.0.1', '127.0.0.2', '[::1]', 'localhost']);
  });

  it('never allows a Host that does not name an allowed host, whatever its bytes', () => {
    const allowed = allowedHostNames('127.0.0.1', ['mcp.example.com'])!;
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (host) => {
        if (!hostAllowed(host, allowed)) return;
        const name = host
          .replace(/:\d{1,5}$/, '')
          .toLowerCase()
          .replace(/\.$/, '');
        expect(allowed.has(name)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
    expect(hostAllowed(undefined, allowed)).toBe(false);
    expect(hostAllowed('anything', undefined)).toBe(true);
  });
});

describe('a listener that is on loopback under another spelling', () => {
  // `--host 127.1`, `0:0:0:0:0:0:0:1`, `::ffff:127.0.0.1` or a name that resolves to 127.0.1.1 bind
  // loopback only, yet were taken for "beyond loopback" and answered any Host.
  for (const host of ['127.1', '2130706433', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) {
    it(`refuses a foreign Host with --host ${host}, and answers a loopback one`, async () => {
      server = await startStandardServer({ host });
      const { port } = server.http;
      const connect = new URL(server.http.url).hostname.replace(/^\[(.*)\]$/, '$1');
      const status = (name: string): Promise<number> =>
        new Promise((resolve, reject) => {
          const req = http.request({ host: connect, port, path: '/healthz', headers: { Host: name }, agent: false }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          });
          req.on('error', reject).end();
        });
      expect(await status(`rebound.attacker.example:${port}`)).toBe(403);
      expect(await status(`localhost:${port}`)).toBe(200);
    });
  }

  it('the metrics listener likewise', async () => {
    const metrics = new ServerMetrics({ revision: () => 'r1', cachedProjections: () => 0 });
    const listener = await startMetricsServer(metrics, { host: '127.1', port: 0 });
    try {
      expect((await request(listener.port, '/metrics', 'rebound.attacker.example')).status).toBe(403);
      expect((await request(listener.port, '/metrics', 'localhost')).status).toBe(200);
    } finally {
      await listener.close();
    }
  });
});

describe('IPv6 addresses in another spelling', () => {
  it('are compared in the form browsers send (RFC 5952), in --allowed-hosts and in the Host header', () => {
    // A browser sends http://[fd00:0:0:0:0:0:0:1]/ as Host [fd00::1]: the listed spelling must match it.
    const listed = allowedHostNames('0.0.0.0', ['fd00:0:0:0:0:0:0:1', '::FFFF:10.0.0.1'])!;
    expect(hostAllowed('[fd00::1]:8765', listed)).toBe(true);
    expect(hostAllowed('[::ffff:a00:1]', listed)).toBe(true);
    expect(hostAllowed('[0:0:0:0:0:0:0:1]:8765', allowedHostNames('127.0.0.1', undefined))).toBe(true);
    expect(normalizeHostName('0:0::1')).toBe('[::1]');
    // A zone id never reaches a Host header: refused at start rather than listed in vain.
    expect(normalizeHostName('fe80::1%eth0')).toBeUndefined();
  });
});

describe('the OAuth base URL of a server that verifies JWTs', () => {
  it('never names a refused Host: the challenge and the metadata are sent to allowed names only', async () => {
    const dir = tempDir();
    const manifestFile = path.join(dir, 'manifest.json');
    writeManifest(manifestFile, makeManifest(STANDARD_CAPABILITIES));
    const publicKeyFile = path.join(dir, 'public.pem');
    fs.writeFileSync(publicKeyFile, await exportSPKI((await generateKeyPair('ES256')).publicKey));
    const runtime = await startRuntime({ manifestFile, watch: false, jwt: { publicKeyFile, issuer: 'https://issuer.example', audience: 'capreg' } });
    const listener = await startHttpServer(runtime, { port: 0 });
    const ask = (pathName: string, method: string, host: string): Promise<{ status: number; text: string }> =>
      new Promise((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: listener.port, path: pathName, method, headers: { Host: host }, agent: false }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: `${JSON.stringify(res.headers)} ${body}` }));
        });
        req.on('error', reject).end();
      });
    try {
      for (const [pathName, method] of [
        ['/mcp', 'POST'],
        ['/.well-known/oauth-protected-resource', 'GET'],
        ['/.well-known/oauth-protected-resource/mcp', 'GET'],
      ] as const) {
        const refused = await ask(pathName, method, 'rebound.attacker.example:1');
        expect(refused.status, pathName).toBe(403);
        expect(refused.text).not.toContain('attacker');
        const allowed = await ask(pathName, method, `localhost:${listener.port}`);
        expect(allowed.status, pathName).toBe(method === 'POST' ? 401 : 200);
        expect(allowed.text).toContain(`http://localhost:${listener.port}/`);
      }
    } finally {
      await listener.close();
      await runtime.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the log of refused Hosts', () => {
  it('says how many were refused after the first line even when no refusal comes a minute later', () => {
    vi.useFakeTimers();
    try {
      const lines: string[] = [];
      const refused = hostRefusalLog((line) => lines.push(line));
      refused('first.attacker.example');
      expect(lines).toHaveLength(1);
      for (let i = 0; i < 500; i++) refused('flood.attacker.example');
      vi.advanceTimersByTime(59_000);
      expect(lines).toHaveLength(1);
      vi.advanceTimersByTime(1_000);
      expect(lines).toHaveLength(2);
      expect(lines[1]).toContain('refused 500 request(s) for a Host not allowed (e.g. "flood.attacker.example")');
      // Quiet since: nothing more is said, and the next refusal a minute on is logged at once.
      vi.advanceTimersByTime(600_000);
      expect(lines).toHaveLength(2);
      refused('again.attacker.example');
      expect(lines).toHaveLength(3);
      expect(lines[2]).toContain('refused 1 request(s)');
    } finally {
      vi.useRealTimers();
    }
  });
});

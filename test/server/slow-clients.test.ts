// Slow and numerous clients against the real HTTP server on loopback: a slowloris of many sockets
// sending headers a byte at a time, a body that trickles in, and connections past the cap. The
// server keeps answering /healthz, closes slow sockets once their timeout passes, and never holds
// more connections than its cap.
import fs from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { MAX_PIPELINED_REQUESTS, startHttpServer, type HttpServerHandle } from '../../server/transports/http.js';
import type { ToolRegistrar } from '../../server/tools/deps.js';
import { PRINCIPALS, STANDARD_CAPABILITIES, makeManifest, principalsYaml, tempDir, writeAtomic, writeManifest } from './helpers.js';

let dir: string;
let runtime: Runtime;
let http: HttpServerHandle | undefined;
const sockets: net.Socket[] = [];

beforeEach(async () => {
  dir = tempDir();
  const manifestFile = path.join(dir, 'manifest.json');
  const principalsFile = path.join(dir, 'principals.yaml');
  writeManifest(manifestFile, makeManifest(STANDARD_CAPABILITIES));
  writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
  runtime = await startRuntime({ manifestFile, principalsFile, watch: false });
});

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await http?.close();
  http = undefined;
  await runtime.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

interface SlowSocket {
  socket: net.Socket;
  closed: Promise<number>;
  isClosed: () => boolean;
  received: () => string;
}

/** A client that sends `first`, then one more byte of `rest` every `everyMs` until closed. */
function slowClient(url: string, first: string, rest: string, everyMs: number): SlowSocket {
  const { hostname, port } = new URL(url);
  const socket = net.connect({ host: hostname, port: Number(port) });
  sockets.push(socket);
  const opened = Date.now();
  let received = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.on('error', () => undefined);
  let next = 0;
  const timer = setInterval(() => {
    if (!socket.writable) return;
    socket.write(rest[next % rest.length] ?? 'x');
    next += 1;
  }, everyMs);
  socket.once('connect', () => socket.write(first));
  const closedAt = new Promise<number>((resolve) =>
    socket.once('close', () => {
      clearInterval(timer);
      closed = true;
      resolve(Date.now() - opened);
    }),
  );
  return {
    socket,
    closed: closedAt,
    isClosed: () => closed,
    received: () => received,
  };
}

async function health(url: string): Promise<number> {
  const response = await fetch(`${url}/healthz`, {
    headers: { Connection: 'close' },
    signal: AbortSignal.timeout(10_000),
  });
  await response.text();
  return response.status;
}

describe('slow clients', () => {
  it('keeps /healthz answering through a slowloris of many sockets, within the connection cap, and closes them after the header timeout', async () => {
    http = await startHttpServer(runtime, {
      port: 0,
      maxConnections: 40,
      headersTimeoutMs: 1_000,
      requestTimeoutMs: 2_000,
    });
    const url = http.url;
    const attackers: SlowSocket[] = [];
    for (let i = 0; i < 150; i += 1) attackers.push(slowClient(url, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n', 'X-Slow: a\r\n', 100));
    await Promise.all(
      attackers.map((attacker) => new Promise<void>((resolve) => (attacker.socket.connecting ? attacker.socket.once('connect', () => resolve()) : resolve()))),
    );

    // Answered while the attack goes on (the attackers keep dribbling bytes).
    for (let i = 0; i < 5; i += 1) expect(await health(url)).toBe(200);
    // The server let go of the sockets past its cap: at most 40 (plus ours) can still be open.
    await expect
      .poll(() => attackers.filter((attacker) => !attacker.isClosed()).length, {
        timeout: 10_000,
      })
      .toBeLessThanOrEqual(40);

    // Every slow socket is closed soon after the 1 s header timeout, though it never stops sending.
    const lifetimes = await Promise.all(attackers.map((attacker) => attacker.closed));
    expect(Math.max(...lifetimes)).toBeLessThan(8_000);
    // Those that lived to the timeout were told so (408), not just dropped.
    expect(attackers.some((attacker) => attacker.received().startsWith('HTTP/1.1 408'))).toBe(true);
    expect(await health(url)).toBe(200);
  }, 30_000);

  it('closes a connection whose body trickles in once the request timeout passes', async () => {
    http = await startHttpServer(runtime, {
      port: 0,
      headersTimeoutMs: 500,
      requestTimeoutMs: 1_000,
    });
    const headers =
      'POST /mcp HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer key-bob-all\r\nContent-Type: application/json\r\n' +
      'Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n';
    const slow = slowClient(http.url, headers, ' ', 50);
    const lifetime = await slow.closed;
    expect(lifetime).toBeGreaterThanOrEqual(900);
    expect(lifetime).toBeLessThan(6_000);
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408/);
  }, 20_000);

  /** A `hold` tool that answers once `release()` is called, and counts the calls it started. */
  function holdTool(name = 'hold'): { registrar: ToolRegistrar; started: () => number; release: () => void } {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    const registrar: ToolRegistrar = (server) => {
      server.registerTool(name, { inputSchema: z.object({}).strict() }, async () => {
        started += 1;
        await released;
        return { content: [{ type: 'text', text: 'released' }] };
      });
    };
    return { registrar, started: () => started, release };
  }

  const mcpRequest = (method: string, params: Record<string, unknown>): string => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
  const post = (url: string, key: string, body: string): Promise<Response> =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Connection: 'close' },
      body,
    });
  const holdCall = (url: string, key: string, name = 'hold'): Promise<Response> => post(url, key, mcpRequest('tools/call', { name, arguments: {} }));

  it("answers one caller's requests a few at a time, the rest in turn, while other callers and /healthz are answered", async () => {
    const hold = holdTool();
    http = await startHttpServer(runtime, { port: 0, callerConcurrency: 2, extraRegistrars: [hold.registrar] });
    const url = http.url;
    const held = [1, 2, 3, 4, 5].map(() => holdCall(url, 'key-bob-all'));
    await expect.poll(() => hold.started(), { timeout: 10_000 }).toBe(2);
    // Another caller, and the health check, are not behind bob's requests.
    const other = await post(url, 'key-carol-calendar', mcpRequest('tools/list', {}));
    expect(other.status).toBe(200);
    expect(await health(url)).toBe(200);
    // Still two of bob's: the other three wait their turn, not refused.
    expect(hold.started()).toBe(2);
    hold.release();
    for (const response of await Promise.all(held)) expect(response.status).toBe(200);
    expect(hold.started()).toBe(5);
  }, 30_000);

  it('answers 429 with Retry-After to a request that waited longer than its turn may take', async () => {
    const hold = holdTool();
    http = await startHttpServer(runtime, { port: 0, callerConcurrency: 1, turnWaitMs: 300, extraRegistrars: [hold.registrar] });
    const url = http.url;
    const first = holdCall(url, 'key-bob-all');
    await expect.poll(() => hold.started(), { timeout: 10_000 }).toBe(1);
    const waited = await holdCall(url, 'key-bob-all');
    expect(waited.status).toBe(429);
    expect(waited.headers.get('retry-after')).toBe('1');
    expect(await waited.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Too many requests from this caller at once: retry shortly' },
      id: null,
    });
    hold.release();
    expect((await first).status).toBe(200);
    expect(hold.started()).toBe(1);
  }, 30_000);

  it('answers a call that outlasts --request-timeout, and a request that waited its turn longer than that with 429: the server preparing an answer is not the client sitting silent', async () => {
    // Both connections used to be closed without a word once silent for the request timeout (the
    // client saw "other side closed"), so neither the call's answer nor the documented 429 arrived.
    const hold = holdTool();
    http = await startHttpServer(runtime, {
      port: 0,
      callerConcurrency: 1,
      turnWaitMs: 2_500,
      headersTimeoutMs: 1_000,
      requestTimeoutMs: 1_000,
      extraRegistrars: [hold.registrar],
    });
    const url = http.url;
    const started = Date.now();
    const first = holdCall(url, 'key-bob-all');
    await expect.poll(() => hold.started(), { timeout: 10_000 }).toBe(1);
    const waited = await holdCall(url, 'key-bob-all');
    expect(waited.status).toBe(429);
    expect(waited.headers.get('retry-after')).toBe('1');
    expect(Date.now() - started).toBeGreaterThan(2_000);
    hold.release();
    const answered = await first;
    expect(answered.status).toBe(200);
    expect(await answered.text()).toContain('released');
    expect(await health(url)).toBe(200);
  }, 30_000);

  it('answers a pipelined call that outlasts --request-timeout when a request behind it was answered first: that answer waits its turn, the client is not silent', async () => {
    // The answer to the ping behind the held call is ready at once but cannot be sent before the
    // held call's: it counted as an answer the client was not reading, so the connection was closed
    // at --request-timeout with nothing answered (and a save there dropped).
    const hold = holdTool();
    http = await startHttpServer(runtime, { port: 0, headersTimeoutMs: 1_000, requestTimeoutMs: 1_000, extraRegistrars: [hold.registrar] });
    const request = (body: string): string =>
      'POST /mcp HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer key-bob-all\r\nContent-Type: application/json\r\n' +
      `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const client = slowClient(http.url, request(mcpRequest('tools/call', { name: 'hold', arguments: {} })) + request(mcpRequest('ping', {})), '', 60_000);
    await expect.poll(() => hold.started(), { timeout: 10_000 }).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(client.isClosed()).toBe(false);
    hold.release();
    await expect.poll(() => client.received().split('HTTP/1.1 200').length - 1, { timeout: 10_000 }).toBe(2);
    expect(client.received()).toContain('released');
  }, 30_000);

  it(`closes a connection that pipelines more than ${MAX_PIPELINED_REQUESTS} requests at once`, async () => {
    const hold = holdTool();
    const later = holdTool('hold_later');
    http = await startHttpServer(runtime, { port: 0, extraRegistrars: [hold.registrar, later.registrar] });
    const body = mcpRequest('tools/call', { name: 'hold', arguments: {} });
    const one =
      'POST /mcp HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer key-bob-all\r\nContent-Type: application/json\r\n' +
      `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    // The listeners the open requests keep are bounded: Node must not warn of a leak on stderr.
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning);
    process.on('warning', onWarning);
    const pipelined = slowClient(http.url, one.repeat(MAX_PIPELINED_REQUESTS + 1), '', 60_000);
    // Closed at once (the request timeout would have taken 30 s), before any answer: the held calls were never released.
    expect(await pipelined.closed).toBeLessThan(10_000);
    expect(pipelined.received()).toBe('');
    process.off('warning', onWarning);
    expect(warnings.map((warning) => warning.name)).not.toContain('MaxListenersExceededWarning');
    hold.release();
    expect(await health(http.url)).toBe(200);
    // The turns its requests held came back when it closed: four of bob's requests are answered at once again.
    const after = [1, 2, 3, 4].map(() => holdCall(http!.url, 'key-bob-all', 'hold_later'));
    await expect.poll(() => later.started(), { timeout: 10_000 }).toBe(4);
    later.release();
    expect((await Promise.all(after)).map((response) => response.status)).toEqual([200, 200, 200, 200]);
  }, 30_000);

  it('leaves nothing behind on a keep-alive connection from one request to the next', async () => {
    http = await startHttpServer(runtime, { port: 0 });
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const { port } = new URL(http.url);
      const body = mcpRequest('tools/list', {});
      for (let i = 0; i < 30; i += 1) {
        const status = await new Promise<number | undefined>((resolve, reject) => {
          const req = httpRequest(
            {
              host: '127.0.0.1',
              port: Number(port),
              path: '/mcp',
              method: 'POST',
              agent,
              headers: {
                Authorization: 'Bearer key-bob-all',
                'Content-Type': 'application/json',
                Accept: 'application/json, text/event-stream',
                'Content-Length': Buffer.byteLength(body),
              },
            },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode));
            },
          );
          req.on('error', reject);
          req.end(body);
        });
        expect(status).toBe(200);
      }
      agent.destroy();
      // One listener per request on the socket would pass Node's limit of 10 and say so.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  }, 30_000);

  it('answers a quick 503 past the cap when every connection is being answered, and serves again after', async () => {
    const hold = holdTool();
    http = await startHttpServer(runtime, {
      port: 0,
      maxConnections: 2,
      extraRegistrars: [hold.registrar],
    });
    const url = http.url;
    const held = [holdCall(url, 'key-bob-all'), holdCall(url, 'key-bob-all')];
    await expect.poll(() => hold.started(), { timeout: 10_000 }).toBe(2);

    const refused = slowClient(url, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n', '', 60_000);
    const began = Date.now();
    await refused.closed;
    expect(Date.now() - began).toBeLessThan(3_000);
    expect(refused.received()).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n[\s\S]*Retry-After: 1\r\n[\s\S]*too many connections/);

    hold.release();
    for (const response of await Promise.all(held)) expect(response.status).toBe(200);
    await expect.poll(() => health(url), { timeout: 10_000 }).toBe(200);
  }, 30_000);
});

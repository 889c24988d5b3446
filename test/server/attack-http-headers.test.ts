// Header ambiguities a hostile caller (or a proxy in front) may send (found by an HTTP attack pass).
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpServerHandle } from '../../server/transports/http.js';
import { startStandardServer, type StandardServer } from './helpers.js';

let server: StandardServer;
let http: HttpServerHandle;

beforeAll(async () => {
  server = await startStandardServer();
  http = server.http;
});

afterAll(() => server.close());

/** One raw HTTP/1.1 request on its own connection; the whole answer as text. */
function raw(headers: readonly string[], body: string): Promise<string> {
  const { port } = new URL(http.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (data: string) => (answer += data));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    // Written, not ended: the server closes the connection after its answer (Connection: close).
    socket.write(
      ['POST /mcp HTTP/1.1', 'Host: 127.0.0.1', 'Connection: close', ...headers, `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n'),
    );
  });
}

const PING = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_current_user', arguments: {} } });
const MCP_HEADERS = ['Content-Type: application/json', 'Accept: application/json, text/event-stream'];

describe('Authorization header ambiguities', () => {
  it('refuses a request with two Authorization headers, whichever order and whether or not both are valid', async () => {
    for (const pair of [
      ['Authorization: Bearer key-alice-reports', 'Authorization: Bearer key-bob-all'],
      ['Authorization: Bearer key-bob-all', 'authorization: Bearer not-a-key'],
      ['Authorization: Bearer not-a-key', 'AUTHORIZATION: Bearer key-bob-all'],
    ]) {
      const answer = await raw([...pair, ...MCP_HEADERS], PING);
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
      expect(answer).toMatch(/WWW-Authenticate: Bearer realm="capreg", error="invalid_request"/i);
      expect(answer).not.toContain('bob');
      expect(answer).not.toContain('alice');
    }
  });

  it('still answers a request with one Authorization header', async () => {
    const answer = await raw(['Authorization: Bearer key-bob-all', ...MCP_HEADERS], PING);
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(answer).toContain('bob');
  });
});

describe('a refused request whose body keeps coming', () => {
  it('is not read for --request-timeout: the connection ends soon after the 401', async () => {
    const { port } = new URL(http.url);
    // Half-open allowed: a hostile client goes on sending after the server's FIN.
    const socket = net.connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
    let answer = '';
    let sent = 0;
    const started = performance.now();
    socket.setEncoding('utf8');
    socket.on('data', (data: string) => (answer += data));
    socket.on('error', () => undefined);
    const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(performance.now() - started)));
    socket.write(
      ['POST /mcp HTTP/1.1', 'Host: 127.0.0.1', 'Authorization: Bearer not-a-key', ...MCP_HEADERS, 'Transfer-Encoding: chunked', '', ''].join('\r\n'),
    );
    const frame = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 'a'), Buffer.from('\r\n')]);
    // An endless chunked body, as fast as the server takes it, for at most 8 s.
    const pump = (): void => {
      while (!socket.destroyed && performance.now() - started < 8_000) {
        sent += frame.length;
        if (!socket.write(frame)) return void socket.once('drain', pump);
      }
      socket.destroy();
    };
    pump();
    const closedAfterMs = await closed;
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 401 Unauthorized');
    expect(answer).toMatch(/Connection: close/i);
    // The server (default --request-timeout 30 s) closed it, not the 8 s pump.
    expect(closedAfterMs).toBeLessThan(5_000);
    expect(sent).toBeGreaterThan(0);
  });
});

describe('a refused request without a body', () => {
  /** Requests written one after another on one keep-alive connection; each answer's head, and whether the connection is still open after. */
  async function onOneConnection(requests: readonly string[]): Promise<{ heads: string[]; openAfter: boolean }> {
    const { port } = new URL(http.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.setEncoding('utf8');
    let text = '';
    let closed = false;
    socket.on('data', (data: string) => (text += data));
    socket.on('error', () => undefined);
    socket.on('close', () => (closed = true));
    const heads: string[] = [];
    for (const request of requests) {
      text = '';
      socket.write(request);
      // Each answer is small and has a Content-Length: wait for its head and whole body.
      await new Promise<void>((resolve) => {
        const check = (): void => {
          const end = text.indexOf('\r\n\r\n');
          const length = /content-length: (\d+)/i.exec(text);
          if ((end !== -1 && length && text.length >= end + 4 + Number(length[1])) || closed) resolve();
          else setTimeout(check, 5);
        };
        check();
      });
      heads.push(text.split('\r\n\r\n')[0] ?? '');
    }
    // Past the 1 s after which a refused connection with an unread body is cut.
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    const openAfter = !closed;
    socket.destroy();
    return { heads, openAfter };
  }

  it('keeps its keep-alive connection: a 405 (an MCP client opening its GET stream), a 404, then a 200 on the same one', async () => {
    const { heads, openAfter } = await onOneConnection([
      'GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n',
      'GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
    ]);
    expect(heads.map((head) => head.split('\r\n')[0])).toEqual(['HTTP/1.1 405 Method Not Allowed', 'HTTP/1.1 404 Not Found', 'HTTP/1.1 200 OK']);
    for (const head of heads) expect(head).not.toMatch(/Connection: close/i);
    expect(openAfter).toBe(true);
  });
});

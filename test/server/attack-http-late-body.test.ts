// A request's calls are in its body, and the body may arrive long after the headers were
// authenticated (up to --request-timeout, plus the wait for the caller's turn). A key revoked, or a
// scope narrowed, in between must apply to those calls: a client must not be able to open requests
// with a key it is about to lose and send what they ask for once it has lost it.
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRINCIPALS, principalsYaml, startStandardServer, writeAtomic, type StandardServer } from './helpers.js';

let server: StandardServer;
let principalsFile: string;

beforeAll(async () => {
  server = await startStandardServer();
  principalsFile = path.join(server.dir, 'principals.yaml');
});

afterAll(async () => {
  await server.close();
});

/** Sends a request's headers, then (once `between` has run) its body; resolves with the raw answer. */
async function lateBody(key: string, body: string, between: () => void | Promise<void>): Promise<{ status: number; body: string }> {
  const socket = net.connect(server.http.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(
    'POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n' +
      `Authorization: Bearer ${key}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
  );
  // Let the server authenticate the headers and start waiting for the body.
  await new Promise((resolve) => setTimeout(resolve, 200));
  await between();
  socket.write(body);
  await ended;
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
  return { status, body: answer.slice(answer.indexOf('\r\n\r\n') + 4) };
}

const call = (capabilityId: string): string =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_capability_protocol', arguments: { capabilityId } } });

describe('a request whose body comes after a change to the principals', () => {
  it('is refused when its key was revoked after its headers arrived', async () => {
    const answer = await lateBody('key-bob-all', call('work-reporting'), () => {
      writeAtomic(principalsFile, principalsYaml(PRINCIPALS.filter((principal) => principal.id !== 'bob')));
    });
    writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
    expect(answer.status).toBe(401);
    expect(answer.body).not.toContain('"success":true');
  });

  it('is answered with the scopes as they are once its body has arrived', async () => {
    const narrowed = PRINCIPALS.map((principal) => (principal.id === 'bob' ? { ...principal, scopes: ['calendar:read'] } : principal));
    const answer = await lateBody('key-bob-all', call('work-reporting'), () => {
      writeAtomic(principalsFile, principalsYaml(narrowed));
    });
    writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('capability not found or not accessible');
  });

  it('is still served when nothing changed', async () => {
    const answer = await lateBody('key-bob-all', call('work-reporting'), () => {});
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('"success":true');
  });
});

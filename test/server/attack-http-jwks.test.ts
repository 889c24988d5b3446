// A JWKS URL that fails or answers too much (found by an HTTP attack pass): jose fetched the URL
// again for every token presented while it failed, and read any answer whole into memory.
import fs from 'node:fs';
import { createServer as createHttpServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRuntime } from '../../server/runtime.js';
import { startHttpServer } from '../../server/transports/http.js';
import { makeManifest, STANDARD_CAPABILITIES, tempDir, writeManifest } from './helpers.js';

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'capreg-test';

let dir: string;
let manifestFile: string;
let privateKey: CryptoKey;
let goodJwks: string;

beforeAll(async () => {
  dir = tempDir();
  manifestFile = path.join(dir, 'manifest.json');
  writeManifest(manifestFile, makeManifest(STANDARD_CAPABILITIES));
  const pair = await generateKeyPair('ES256');
  privateKey = pair.privateKey;
  goodJwks = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' }] });
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function keyServer(answer: (res: ServerResponse) => void): Promise<{ server: Server; url: string; fetches: () => number }> {
  let fetches = 0;
  const server = createHttpServer((_req, res) => {
    fetches += 1;
    answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`, fetches: () => fetches };
}

function token(kid: string): Promise<string> {
  return new SignJWT({ sub: 'gina', scp: 'calendar:read' })
    .setProtectedHeader({ alg: 'ES256', kid })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setExpirationTime('5m')
    .sign(privateKey);
}

/** Posts a ping with each token in turn, one after the other; the statuses. */
async function against(jwksUrl: string, tokens: readonly string[]): Promise<{ statuses: number[]; lines: string[] }> {
  const lines: string[] = [];
  const runtime = await startRuntime({
    manifestFile,
    jwt: { jwks: jwksUrl, issuer: ISSUER, audience: AUDIENCE },
    watch: false,
    log: (line) => lines.push(line),
  });
  const http = await startHttpServer(runtime, { port: 0 });
  const statuses: number[] = [];
  try {
    for (const bearer of tokens) {
      const response = await fetch(`${http.url}/mcp`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      await response.arrayBuffer();
      statuses.push(response.status);
    }
  } finally {
    await http.close();
    await runtime.close();
  }
  return { statuses, lines };
}

describe('a JWKS URL under attack', () => {
  it('is not fetched again for every token while it fails (error status, redirect, keys that are not keys)', async () => {
    for (const answer of [
      (res: ServerResponse) => res.writeHead(500).end('down'),
      (res: ServerResponse) => res.writeHead(302, { Location: '/elsewhere' }).end(),
      // A 200 whose keys are not keys: jose refuses the set after the fetch said it succeeded.
      (res: ServerResponse) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"keys":[1,"k"]}'),
    ]) {
      const keys = await keyServer(answer);
      try {
        const bearer = await token('k1');
        const { statuses, lines } = await against(
          `${keys.url}?access_token=jwks-secret`,
          Array.from({ length: 30 }, () => bearer),
        );
        expect(statuses).toEqual(Array.from({ length: 30 }, () => 401));
        // One fetch, then a wait of at least a second before the next: 30 tokens in a row were 30 fetches.
        expect(keys.fetches()).toBeLessThanOrEqual(2);
        expect(lines.some((line) => line.includes('cannot fetch the JWKS URL'))).toBe(true);
        // The URL is logged without its query, which may carry a token.
        expect(lines.join('\n')).not.toContain('jwks-secret');
      } finally {
        keys.server.close();
        keys.server.closeAllConnections();
      }
    }
  });

  it('reads a huge answer only up to the limit, and refuses it', async () => {
    const total = 64 * 1024 * 1024;
    let written = 0;
    const keys = await keyServer((res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"keys":[],"padding":"');
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const more = (): void => {
        while (written < total) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end('"}');
      };
      res.on('close', () => res.off('drain', more));
      more();
    });
    try {
      const { statuses } = await against(keys.url, [await token('k1')]);
      expect(statuses).toEqual([401]);
      // The client stopped reading past its limit (64 KiB): the server could not push the 64 MiB it had.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(written).toBeLessThan(16 * 1024 * 1024);
    } finally {
      keys.server.close();
      keys.server.closeAllConnections();
    }
  });

  it('says in /healthz while the JWKS URL cannot be fetched (every JWT refused), and when it answers again', async () => {
    // A wrong --jwt-jwks URL, or an issuer that is down, refuses every JWT caller: the log said so,
    // and /healthz, what an operator's probe reads, said "ok" throughout.
    let up = false;
    const keys = await keyServer((res) => (up ? res.writeHead(200, { 'Content-Type': 'application/json' }).end(goodJwks) : res.writeHead(404).end('no')));
    const runtime = await startRuntime({ manifestFile, jwt: { jwks: `${keys.url}?key=jwks-secret`, issuer: ISSUER, audience: AUDIENCE }, watch: false });
    const http = await startHttpServer(runtime, { port: 0 });
    const ping = async (): Promise<number> => {
      const response = await fetch(`${http.url}/mcp`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${await token('k1')}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      await response.arrayBuffer();
      return response.status;
    };
    const health = async (): Promise<{ status: string; jwks?: unknown }> =>
      (await fetch(`${http.url}/healthz`)).json() as Promise<{ status: string; jwks?: unknown }>;
    try {
      // Not fetched before a token needs it.
      expect(await health()).toMatchObject({ status: 'ok', jwks: { status: 'ok' } });
      expect(await ping()).toBe(401);
      const down = await health();
      expect(down).toMatchObject({ status: 'degraded', jwks: { status: 'unavailable' } });
      expect(JSON.stringify(down)).not.toContain('jwks-secret');
      up = true;
      // Fetched again once the wait after a failure (1 s) is over.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(await ping()).toBe(200);
      expect(await health()).toMatchObject({ status: 'ok', jwks: { status: 'ok' } });
    } finally {
      await http.close();
      await runtime.close();
      keys.server.close();
      keys.server.closeAllConnections();
    }
  });

  it('still verifies tokens from a JWKS URL that works, fetching it once', async () => {
    const keys = await keyServer((res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(goodJwks));
    try {
      const good = await token('k1');
      const unknownKid = await token('k2');
      const { statuses } = await against(keys.url, [good, unknownKid, unknownKid, good]);
      expect(statuses).toEqual([200, 401, 401, 200]);
      expect(keys.fetches()).toBe(1);
    } finally {
      keys.server.close();
      keys.server.closeAllConnections();
    }
  });
});

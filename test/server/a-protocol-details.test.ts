// Protocol details that clients see: one error for every resource URI that yields no protocol
// (unknown, forbidden, malformed, traversing), listChanged announced only where it is sent, and one
// `updatedAt` format for platform and user capabilities.
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../server/runtime.js';
import type { HttpServerHandle } from '../../server/transports/http.js';
import { serveStdio } from '../../server/transports/stdio.js';
import { openUserStore } from '../../server/user-store/open.js';
import { WEEKLY_DIGEST, startHarness } from '../user-capabilities/harness.js';
import { INITIALIZE, rawSession, startStandardServer, structured, type StandardServer } from './helpers.js';

let server: StandardServer;
let dir: string;
let runtime: Runtime;
let http: HttpServerHandle;

beforeAll(async () => {
  server = await startStandardServer();
  ({ dir, runtime, http } = server);
});

afterAll(() => server.close());

describe('resources/read of a URI that yields no protocol', () => {
  const BAD_URIS = [
    'capability://nothing-here', // unknown
    'capability://personal-automation', // forbidden
    'not a uri',
    '',
    'capability:',
    'capability://',
    'capability:work-reporting',
    'CAPABILITY://work-reporting',
    'capability://work reporting',
    'capability://%zz',
    'capability://work-reporting/',
    'capability://work-reporting?x=1',
    'capability://user:abc',
    'capability://../work-reporting',
    'capability://./work-reporting',
    'capability://open-help/../work-reporting',
    'capability://__proto__',
    'file:///etc/passwd',
    'http://[::1',
    `capability://${'a'.repeat(100_000)}`,
  ];

  it('answers every one with the same -32602 error, byte for byte, and still reads a good one', async () => {
    const session = await rawSession(runtime, ['reports:read']);
    const errors = new Set<string>();
    for (const uri of BAD_URIS) {
      const answer = (await session.ask('resources/read', { uri })) as {
        error?: unknown;
      };
      errors.add(JSON.stringify(answer.error));
    }
    expect([...errors]).toEqual([
      JSON.stringify({
        code: -32602,
        message: 'MCP error -32602: capability not found or not accessible',
      }),
    ]);
    const good = (await session.ask('resources/read', {
      uri: 'capability://work-reporting',
    })) as unknown as { result: { contents: { uri: string }[] } };
    expect(good.result.contents[0]?.uri).toBe('capability://work-reporting');
    await session.close();
  });

  it('answers the same over HTTP', async () => {
    const bodies = new Set<string>();
    for (const uri of ['capability://nothing-here', 'capability://personal-automation', 'not a uri', 'capability://../x']) {
      const response = await fetch(`${http.url}/mcp`, {
        method: 'POST',
        headers: {
          Authorization: 'Bearer key-alice-reports',
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'resources/read',
          params: { uri },
        }),
      });
      bodies.add(await response.text());
    }
    expect([...bodies]).toEqual(['{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"MCP error -32602: capability not found or not accessible"}}']);
  });
});

describe('listChanged', () => {
  it('is announced over HTTP for neither tools nor resources: a stateless server sends no notifications', async () => {
    const response = await fetch(`${http.url}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: 'Bearer key-alice-reports',
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(INITIALIZE),
    });
    const answer = (await response.json()) as {
      result: { capabilities: Record<string, unknown> };
    };
    expect(answer.result.capabilities['tools']).toEqual({ listChanged: false });
    expect(answer.result.capabilities['resources']).toEqual({
      listChanged: false,
    });
  });

  it('is announced over stdio for resources (sent on a visible change), not for tools (fixed for the session)', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const session = await serveStdio(runtime, {
      apiKey: 'key-alice-reports',
      stdin,
      stdout,
    });
    const line = new Promise<string>((resolve) => {
      let text = '';
      stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('\n')) resolve(text.slice(0, text.indexOf('\n')));
      });
    });
    stdin.write(`${JSON.stringify(INITIALIZE)}\n`);
    const answer = JSON.parse(await line) as {
      result: { capabilities: Record<string, unknown> };
    };
    expect(answer.result.capabilities['tools']).toEqual({ listChanged: false });
    expect(answer.result.capabilities['resources']).toEqual({
      listChanged: true,
    });
    await session.close();
  });
});

describe('updatedAt', () => {
  const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

  it('is an ISO 8601 UTC timestamp for platform and user capabilities alike; the manifest keeps its date', async () => {
    const harness = await startHarness(() => openUserStore('sqlite:user.db', { root: dir }));
    try {
      const alice = await harness.session('key-alice');
      const platform = await alice.json('get_capability_protocol', {
        capabilityId: 'work-reporting',
      });
      expect(platform['updatedAt']).toBe('2025-01-01T00:00:00.000Z');
      expect(harness.runtime.manifests.current.manifest.capabilities.find((entry) => entry.id === 'work-reporting')?.protocolUpdated).toBe('2025-01-01');

      const saved = await alice.json('save_user_capability', {
        markdown: WEEKLY_DIGEST,
      });
      expect(saved['success']).toBe(true);
      const user = structured(
        await alice.call('get_capability_protocol', {
          capabilityId: saved['capabilityId'] as string,
        }),
      );
      expect(user['updatedAt']).toMatch(TIMESTAMP);
      expect(platform['updatedAt']).toMatch(TIMESTAMP);
    } finally {
      await harness.close();
    }
  });
});

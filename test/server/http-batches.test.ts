// A JSON-RPC batch over HTTP holds up to 100 calls in one request. The SDK ran all of them in one
// stretch of microtasks and kept every answer until the last: a batch of 100 big listings held
// /healthz for seconds and took ~1 GB. Its calls now run one at a time with the event loop free
// between them, and once their answers pass a limit of bytes the rest are answered with an error.
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Runtime } from '../../server/runtime.js';
import { startRuntime } from '../../server/runtime.js';
import { startHttpServer, type HttpServerHandle } from '../../server/transports/http.js';
import { batchLimitMessage, jsonBytes } from '../../server/transports/http-batch.js';
import type { ToolRegistrar } from '../../server/tools/deps.js';
import { runs } from '../support/property.js';
import { PRINCIPALS, STANDARD_CAPABILITIES, makeManifest, principalsYaml, tempDir, writeAtomic, writeManifest } from './helpers.js';

const BUSY_MS = 20;
const BATCH = 50;
/** Calls of `busy` running at once, and the most there were. */
const busy = { running: 0, most: 0, started: 0 };

const registrar: ToolRegistrar = (server) => {
  // Holds the event loop for BUSY_MS, then yields once before answering (as a call that awaits I/O).
  server.registerTool('busy', { inputSchema: z.object({}).strict() }, async () => {
    busy.started += 1;
    busy.running += 1;
    busy.most = Math.max(busy.most, busy.running);
    const until = performance.now() + BUSY_MS;
    while (performance.now() < until);
    await new Promise((resolve) => setTimeout(resolve, 1));
    busy.running -= 1;
    return { content: [{ type: 'text', text: 'done' }] };
  });
  server.registerTool('sized', { inputSchema: z.object({ chars: z.number().int() }).strict() }, ({ chars }) => ({
    content: [{ type: 'text', text: 'é"'.repeat(chars / 2) }],
  }));
};

let dir: string;
let runtime: Runtime;
const servers: HttpServerHandle[] = [];

beforeAll(async () => {
  dir = tempDir();
  writeManifest(`${dir}/manifest.json`, makeManifest(STANDARD_CAPABILITIES));
  writeAtomic(`${dir}/principals.yaml`, principalsYaml(PRINCIPALS));
  runtime = await startRuntime({ manifestFile: `${dir}/manifest.json`, principalsFile: `${dir}/principals.yaml`, watch: false });
});

afterAll(async () => {
  for (const server of servers) await server.close();
  await runtime.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function serve(batchAnswerBytes?: number): Promise<HttpServerHandle> {
  const http = await startHttpServer(runtime, { port: 0, extraRegistrars: [registrar], ...(batchAnswerBytes === undefined ? {} : { batchAnswerBytes }) });
  servers.push(http);
  return http;
}

const call = (id: number, name: string, args: Record<string, unknown> = {}): unknown => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

async function post(http: HttpServerHandle, body: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(`${http.url}/mcp`, {
    method: 'POST',
    headers: { Authorization: 'Bearer key-alice-reports', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

describe('a batch over HTTP', () => {
  it('runs its calls one at a time, and /healthz answers between them', async () => {
    const http = await serve();
    busy.most = 0;
    // A notification among the calls goes on in its place.
    const messages = Array.from({ length: BATCH }, (_, i) => call(i + 1, 'busy'));
    messages.splice(10, 0, { jsonrpc: '2.0', method: 'notifications/initialized' });
    const started = performance.now();
    let done = false;
    const batch = post(http, messages).finally(() => (done = true));
    let slowest = 0;
    let health = 0;
    while (!done) {
      const asked = performance.now();
      const response = await fetch(`${http.url}/healthz`);
      await response.text();
      if (!done) {
        slowest = Math.max(slowest, performance.now() - asked);
        health += 1;
      }
    }
    const answer = await batch;
    const took = performance.now() - started;
    expect(answer.status).toBe(200);
    const answers = JSON.parse(answer.text) as { id: number; result?: { content: { text: string }[] } }[];
    expect(answers.map((one) => [one.id, one.result?.content[0]?.text])).toEqual(Array.from({ length: BATCH }, (_, i) => [i + 1, 'done']));
    // The batch held the event loop for BATCH × BUSY_MS (1 s) in all; /healthz waited about one call.
    expect(took).toBeGreaterThan(BATCH * BUSY_MS);
    expect(slowest).toBeLessThan(10 * BUSY_MS);
    expect(health).toBeGreaterThan(BATCH / 2);
    expect(busy.most).toBe(1);
  });

  it('runs no more of its calls once its client is gone', async () => {
    const http = await serve();
    busy.started = 0;
    const abort = new AbortController();
    const gone = fetch(`${http.url}/mcp`, {
      method: 'POST',
      headers: { Authorization: 'Bearer key-alice-reports', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify(Array.from({ length: BATCH }, (_, i) => call(i + 1, 'busy'))),
      signal: abort.signal,
    }).catch(() => 'aborted');
    await new Promise((resolve) => setTimeout(resolve, 5 * BUSY_MS));
    abort.abort();
    expect(await gone).toBe('aborted');
    const then = busy.started;
    await new Promise((resolve) => setTimeout(resolve, 10 * BUSY_MS));
    expect(then).toBeGreaterThan(0);
    expect(busy.started).toBeLessThanOrEqual(then + 1);
  });

  it('answers the calls after its answers passed the limit with an error saying so, without running them', async () => {
    // The size of one answer as the SDK sends it (one digit of id, like those below).
    const alone = await post(await serve(), call(1, 'sized', { chars: 1000 }));
    const size = Buffer.byteLength(alone.text);
    const ids = [1, 2, 3, 4, 5, 6, 7];
    const outcome = async (limit: number): Promise<(string | undefined)[]> => {
      const answer = await post(await serve(limit), [
        ...ids.map((id) => call(id, 'sized', { chars: 1000 })),
        { jsonrpc: '2.0', method: 'notifications/initialized' },
      ]);
      expect(answer.status).toBe(200);
      const answers = JSON.parse(answer.text) as { id: number; result?: unknown; error?: { code: number; message: string } }[];
      expect(answers.map((one) => one.id)).toEqual(ids);
      for (const one of answers) if (one.error) expect(one.error).toEqual({ code: -32000, message: batchLimitMessage(limit) });
      return answers.map((one) => (one.error ? 'refused' : 'answered'));
    };
    // Counted to the byte: three answers of `size` pass a limit one byte under them, not one of exactly their size.
    expect(await outcome(3 * size - 1)).toEqual(['answered', 'answered', 'answered', 'refused', 'refused', 'refused', 'refused']);
    expect(await outcome(3 * size)).toEqual(['answered', 'answered', 'answered', 'answered', 'refused', 'refused', 'refused']);
    // The first call is always run, however large its answer.
    expect(await outcome(0)).toEqual(['answered', 'refused', 'refused', 'refused', 'refused', 'refused', 'refused']);
    expect(batchLimitMessage(16)).toBe(
      'Batch answer limit: the calls before this one in the batch were answered with more than 16 bytes, the most for one HTTP request; send this call in another request',
    );
  });

  it('answers as soon as its other calls are done when some are cancelled, without them (a cancelled call has no answer)', async () => {
    const http = await serve();
    busy.started = 0;
    const cancel = (requestId: number): unknown => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'changed my mind' } });
    // A cancel just before its call (the SDK never answered the call, and the batch waited 30 s for
    // it, holding one of its caller's turns), one after its call, and one of no call.
    const started = performance.now();
    const answer = await post(http, [cancel(1), call(1, 'busy'), call(2, 'busy'), call(3, 'busy'), cancel(3), cancel(9), call(4, 'busy')]);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(answer.status).toBe(200);
    const answers = JSON.parse(answer.text) as { id: number; result?: { content: { text: string }[] } }[];
    expect(answers.map((one) => [one.id, one.result?.content[0]?.text])).toEqual([
      [2, 'done'],
      [4, 'done'],
    ]);
    expect(busy.started).toBe(2);
    // Every call cancelled: nothing to answer, as for a batch of notifications.
    const none = await post(http, [call(5, 'busy'), cancel(5)]);
    expect(none).toEqual({ status: 202, text: '' });
  });

  it('is refused whole when two of its requests share an id (the later answer took the earlier one\'s place), without running any; ids 1 and "1" differ', async () => {
    const http = await serve();
    busy.started = 0;
    const shared = await post(http, [call(1, 'busy'), { jsonrpc: '2.0', method: 'notifications/initialized' }, call(2, 'busy'), call(1, 'busy')]);
    expect(shared.status).toBe(400);
    expect(JSON.parse(shared.text)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid Request: messages 1 and 4 of the batch are requests with the same id; give each request of a batch its own id' },
      id: null,
    });
    expect(busy.started).toBe(0);
    const distinct = await post(http, [call(1, 'busy'), { ...(call(1, 'busy') as object), id: '1' }]);
    expect(distinct.status).toBe(200);
    expect((JSON.parse(distinct.text) as { id: unknown }[]).map((one) => one.id)).toEqual([1, '1']);
    expect(busy.started).toBe(2);
  });
});

describe('jsonBytes', () => {
  it('is the UTF-8 length of JSON.stringify, without the string', () => {
    const strings = ['', 'plain', 'é', '😀', '"\\', '\n\t\b\f\r', '\u0000\u001f', '\ud800', 'a\udc00b', '\ud83d\ude00\ud83d', '\u2028'];
    for (const text of strings) expect({ text, bytes: jsonBytes(text) }).toEqual({ text, bytes: Buffer.byteLength(JSON.stringify(text)) });
    const odd = { a: undefined, b: [undefined, () => 1, Number.NaN, -0, 1e21, 0.1], c: new Date(0), d: { toJSON: () => 'x' }, e: true, f: null };
    expect(jsonBytes(odd)).toBe(Buffer.byteLength(JSON.stringify(odd)));
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.string({ unit: 'binary' }), (value, text) => {
        expect(jsonBytes(value)).toBe(Buffer.byteLength(JSON.stringify(value)));
        expect(jsonBytes({ [text]: [text] })).toBe(Buffer.byteLength(JSON.stringify({ [text]: [text] })));
      }),
      { numRuns: runs(500) },
    );
  });
});

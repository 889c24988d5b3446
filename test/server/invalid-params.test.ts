// A request whose params its method's schema refuses is JSON-RPC -32602 with one short line naming
// what is wrong (the SDK alone answered -32603 with zod's JSON dump), on every transport; methods
// without a handler stay -32601, and the handlers that take params loosely keep their own answers.
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invalidParamsMessage, MAX_INVALID_PARAMS_MESSAGE, NOT_JSON_RPC_MESSAGE } from '../../server/invalid-params.js';
import type { Runtime } from '../../server/runtime.js';
import type { HttpServerHandle } from '../../server/transports/http.js';
import { serveStdio } from '../../server/transports/stdio.js';
import { runs } from '../support/property.js';
import { INITIALIZE, rawSession, startStandardServer, type StandardServer } from './helpers.js';

let server: StandardServer;
let runtime: Runtime;
let http: HttpServerHandle;

beforeAll(async () => {
  server = await startStandardServer();
  ({ runtime, http } = server);
});

afterAll(() => server.close());

const PREFIX = 'MCP error -32602: ';
const invalidParams = (message: string): { code: number; message: string } => ({ code: -32602, message: `${PREFIX}invalid params: ${message}` });
const GOOD_INITIALIZE = INITIALIZE.params;

/** Requests the SDK's schemas refuse, and what the answer names. */
const REFUSED: [method: string, params: unknown, names: string][] = [
  ['tools/call', { name: 42 }, 'name: expected string'],
  ['tools/call', undefined, 'params: expected object'],
  ['tools/call', { name: 'list_capabilities', arguments: 5 }, 'arguments: expected record'],
  // A huge bogus param is not echoed.
  ['tools/call', { name: 42, filler: 'x'.repeat(500_000) }, 'name: expected string'],
  ['tools/list', { cursor: 5 }, 'cursor: expected string'],
  ['resources/list', { cursor: 5 }, 'cursor: expected string'],
  ['resources/templates/list', { cursor: ['a'] }, 'cursor: expected string'],
  ['initialize', { ...GOOD_INITIALIZE, protocolVersion: 5 }, 'protocolVersion: expected string'],
  ['initialize', {}, 'protocolVersion: expected string; capabilities: expected object; clientInfo: expected object'],
  // A request asked to run as a task (MCP 2025-11-25), which this server declares for none: the SDK
  // threw a plain Error, answered -32603 "Server does not support task creation", whatever the method.
  ['tools/call', { name: 'list_capabilities', arguments: {}, task: { ttl: 60_000 } }, 'task: this server runs no request as a task'],
  ['skills/list', { task: {} }, 'task: this server runs no request as a task'],
  ['resources/read', { uri: 'capability://open-help', task: {} }, 'task: this server runs no request as a task'],
];

describe('a request whose params its method schema refuses', () => {
  it('is answered -32602 with one short line naming what is wrong, and the session goes on', async () => {
    const session = await rawSession(runtime, ['reports:read']);
    try {
      for (const [method, params, names] of REFUSED) {
        expect({ method, answer: await session.ask(method, params) }).toEqual({
          method,
          answer: { jsonrpc: '2.0', id: expect.any(Number) as number, error: invalidParams(names) },
        });
      }
      const listed = (await session.ask('tools/call', { name: 'list_capabilities', arguments: {} })) as { result?: { isError?: boolean } };
      expect(listed.result?.isError).toBeUndefined();
      const tools = (await session.ask('tools/list', {})) as { result?: { tools: unknown[] } };
      expect(tools.result?.tools.length).toBeGreaterThan(0);
    } finally {
      await session.close();
    }
  });

  it('keeps the answers of the handlers that take params loosely (the uniform error, the skills cursor)', async () => {
    const session = await rawSession(runtime, ['reports:read']);
    const UNIFORM = { code: -32602, message: 'MCP error -32602: capability not found or not accessible' };
    try {
      for (const params of [{ uri: 5 }, {}, undefined, { uri: 'capability://personal-automation' }, { uri: 'capability://nothing-here' }]) {
        expect((await session.ask('resources/read', params)) as unknown).toMatchObject({ error: UNIFORM });
        expect((await session.ask('skills/get', params)) as unknown).toMatchObject({ error: UNIFORM });
      }
      expect((await session.ask('skills/list', { cursor: 5 })) as unknown).toMatchObject({
        error: { code: -32602, message: 'MCP error -32602: invalid cursor: pass back a nextCursor from skills/list, or none for the first page' },
      });
      const forbidden = (await session.ask('tools/call', {
        name: 'get_capability_protocol',
        arguments: { capabilityId: 'personal-automation' },
      })) as unknown as {
        result: { content: { text: string }[]; isError: boolean };
      };
      expect(forbidden.result.isError).toBe(true);
      expect(forbidden.result.content[0]?.text).toBe('{"success":false,"error":"capability not found or not accessible"}');
    } finally {
      await session.close();
    }
  });

  it('leaves a method without a handler -32601, whatever its params', async () => {
    const session = await rawSession(runtime, ['reports:read']);
    try {
      for (const [method, params] of [
        ['prompts/list', { cursor: 5 }],
        ['prompts/get', { name: 42 }],
        ['completion/complete', { ref: 5 }],
        ['logging/setLevel', { level: 5 }],
        ['no/such-method', { anything: 1 }],
      ] as const) {
        expect((await session.ask(method, params)) as unknown).toMatchObject({ error: { code: -32601, message: 'Method not found' } });
      }
    } finally {
      await session.close();
    }
  });

  it('is answered the same over HTTP', async () => {
    const post = async (method: string, params: unknown): Promise<string> => {
      const response = await fetch(`${http.url}/mcp`, {
        method: 'POST',
        headers: { Authorization: 'Bearer key-alice-reports', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
      });
      return response.text();
    };
    for (const [method, params, names] of REFUSED) {
      expect(await post(method, params)).toBe(JSON.stringify({ jsonrpc: '2.0', id: 7, error: invalidParams(names) }));
    }
    expect(JSON.parse(await post('tools/call', { name: 'list_capabilities', arguments: {} }))).toHaveProperty('result.structuredContent.success', true);
  });

  it('is answered the same over stdio, and a session whose input ends closes without waiting for it', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const session = await serveStdio(runtime, { apiKey: 'key-alice-reports', stdin, stdout });
    const answers = new Map<number, unknown>();
    const arrived: (() => void)[] = [];
    let text = '';
    stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n')) {
        const answer = JSON.parse(text.slice(0, end)) as { id: number };
        text = text.slice(end + 1);
        answers.set(answer.id, answer);
        arrived.shift()?.();
      }
    });
    const ask = async (id: number, method: string, params: unknown): Promise<unknown> => {
      const next = new Promise<void>((resolve) => arrived.push(resolve));
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      await next;
      return answers.get(id);
    };
    expect(await ask(1, 'initialize', { ...GOOD_INITIALIZE, protocolVersion: 5 })).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: invalidParams('protocolVersion: expected string'),
    });
    expect(await ask(2, 'initialize', GOOD_INITIALIZE)).toHaveProperty('result.serverInfo.name', 'capreg');
    expect(await ask(3, 'tools/call', { name: 42 })).toEqual({ jsonrpc: '2.0', id: 3, error: invalidParams('name: expected string') });
    expect(await ask(4, 'tools/call', { name: 'list_capabilities', arguments: {} })).toHaveProperty('result.structuredContent.success', true);
    // The last request is refused: the session, which answers what it was asked before it closes, knows it was answered.
    expect(await ask(5, 'tools/list', { cursor: 5 })).toEqual({ jsonrpc: '2.0', id: 5, error: invalidParams('cursor: expected string') });
    stdin.end();
    const outcome = await Promise.race([session.closed.then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('still waiting'), 2_500))]);
    expect(outcome).toBe('closed');
    await session.close();
  });

  it('tools/call with any params object gets a result or a short -32602, never -32603', async () => {
    const session = await rawSession(runtime, ['reports:read']);
    const LIMIT = PREFIX.length + MAX_INVALID_PARAMS_MESSAGE;
    // `_meta` is the JSON-RPC envelope's, checked (and refused without an answer) before any method.
    const key = fc.string().filter((name) => name !== '_meta' && name !== '__proto__');
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(fc.constantFrom('list_capabilities', 'find_capabilities', 'get_capability_protocol', 'get_current_user', 'no_such_tool'), fc.anything()),
          fc.option(fc.anything(), { nil: undefined }),
          fc.dictionary(key, fc.anything(), { maxKeys: 3 }),
          async (name, args, extra) => {
            const params = { ...extra, name, ...(args === undefined ? {} : { arguments: args }) };
            const answer = (await session.ask('tools/call', params)) as { result?: unknown; error?: { code: number; message: string } };
            if (answer.error === undefined) {
              expect(answer.result).toBeDefined();
              return;
            }
            expect(answer.error.code).toBe(-32602);
            expect(answer.error.message.startsWith(`${PREFIX}invalid params: `)).toBe(true);
            expect(answer.error.message.length).toBeLessThanOrEqual(LIMIT);
            expect(answer.error.message).not.toMatch(/[\n\r]/);
          },
        ),
        { numRuns: runs(200) },
      );
    } finally {
      await session.close();
    }
  });
});

// JSON.parse keeps `"__proto__"` as an own key, but a copy made by assignment (the SDK's zod parse
// of arguments, its envelope parse of params) turns it into the copy's prototype or drops it: the
// strict schemas then see nothing extra, and the call was served. Each line below is a raw message.
const PROTO_REQUESTS: [line: string, names: string][] = [
  [
    '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_capability_protocol","arguments":{"capabilityId":"work-reporting","__proto__":{"x":1}}}}',
    'arguments.__proto__: key not allowed',
  ],
  ['{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"capability://work-reporting","__proto__":{}}}', '__proto__: key not allowed'],
  ['{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"progressToken":1,"__proto__":null}}}', '_meta.__proto__: key not allowed'],
  // Whatever the method, one without a handler included (any other extra key gets -32601 there).
  ['{"jsonrpc":"2.0","id":7,"method":"prompts/list","params":{"__proto__":{}}}', '__proto__: key not allowed'],
  // Escaped in the JSON text, the same key once parsed.
  ['{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"x":[1,{"\\u005f_proto__":1}]}}', 'x[1].__proto__: key not allowed'],
];

describe('a request whose params hold an own __proto__ key, at any depth', () => {
  it('is refused -32602 over HTTP, where any other extra key is refused too', async () => {
    const post = async (body: string): Promise<{ status: number; text: string }> => {
      const response = await fetch(`${http.url}/mcp`, {
        method: 'POST',
        headers: { Authorization: 'Bearer key-alice-reports', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body,
      });
      return { status: response.status, text: await response.text() };
    };
    for (const [line, names] of PROTO_REQUESTS) {
      expect({ line, answer: await post(line) }).toEqual({
        line,
        answer: { status: 200, text: JSON.stringify({ jsonrpc: '2.0', id: 7, error: invalidParams(names) }) },
      });
    }
    // A batch holding one is refused whole, as the SDK refuses a batch holding a malformed message.
    const batch = await post(`[${PROTO_REQUESTS[1]![0]},{"jsonrpc":"2.0","id":8,"method":"tools/list"}]`);
    expect(batch).toEqual({ status: 400, text: JSON.stringify({ jsonrpc: '2.0', id: null, error: invalidParams('__proto__: key not allowed') }) });
    // The same calls without it are served.
    const served = await post(PROTO_REQUESTS[0]![0].replace(',"__proto__":{"x":1}', ''));
    expect(JSON.parse(served.text)).toHaveProperty('result.structuredContent.success', true);
  });

  it('is refused -32602 over stdio, and the session goes on', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const session = await serveStdio(runtime, { apiKey: 'key-alice-reports', stdin, stdout });
    const lines: string[] = [];
    const arrived: (() => void)[] = [];
    let text = '';
    stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n')) {
        lines.push(text.slice(0, end));
        text = text.slice(end + 1);
        arrived.shift()?.();
      }
    });
    const send = async (line: string): Promise<string> => {
      const next = new Promise<void>((resolve) => arrived.push(resolve));
      stdin.write(`${line}\n`);
      await next;
      return lines.at(-1)!;
    };
    try {
      expect(await send(JSON.stringify(INITIALIZE))).toContain('"serverInfo"');
      for (const [line, names] of PROTO_REQUESTS) {
        expect({ line, answer: await send(line) }).toEqual({ line, answer: JSON.stringify({ jsonrpc: '2.0', id: 7, error: invalidParams(names) }) });
      }
      expect(JSON.parse(await send(PROTO_REQUESTS[0]![0].replace(',"__proto__":{"x":1}', '')))).toHaveProperty('result.structuredContent.success', true);
    } finally {
      await session.close();
    }
  });

  it('is refused -32602 on a transport that hands messages on as they are (in memory)', async () => {
    const session = await rawSession(runtime, ['reports:read']);
    try {
      for (const [line, names] of PROTO_REQUESTS) {
        const { method, params } = JSON.parse(line) as { method: string; params: unknown };
        expect({ line, answer: await session.ask(method, params) }).toEqual({
          line,
          answer: { jsonrpc: '2.0', id: expect.any(Number) as number, error: invalidParams(names) },
        });
      }
    } finally {
      await session.close();
    }
  });
});

describe('JSON that is not a JSON-RPC message', () => {
  it('is answered over HTTP as over stdio: -32600 Invalid Request (not -32700, the body parsed), under its id when it has a readable one', async () => {
    const post = async (body: string): Promise<{ status: number; answer: unknown }> => {
      const response = await fetch(`${http.url}/mcp`, {
        method: 'POST',
        headers: { Authorization: 'Bearer key-alice-reports', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body,
      });
      return { status: response.status, answer: await response.json() };
    };
    const invalid = (id: unknown): unknown => ({ status: 400, answer: { jsonrpc: '2.0', error: { code: -32600, message: NOT_JSON_RPC_MESSAGE }, id } });
    expect(await post('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":[1,2]}')).toEqual(invalid(7));
    expect(await post('{"jsonrpc":"1.0","id":"a","method":"ping"}')).toEqual(invalid('a'));
    expect(await post('{"jsonrpc":"2.0","id":1.5,"method":"ping"}')).toEqual(invalid(null));
    expect(await post('42')).toEqual(invalid(null));
    // A batch holding one is refused whole, with no id: the SDK refuses it whole.
    expect(await post('[{"jsonrpc":"2.0","id":8,"method":"ping"},{"jsonrpc":"2.0","id":9,"method":"ping","params":"x"}]')).toEqual(invalid(null));
    // An empty batch holds no message: JSON-RPC answers it so (the SDK answered 202 Accepted, with no body).
    expect(await post('[]')).toEqual(invalid(null));
    // What is not JSON at all is still a parse error.
    expect(await post('{"jsonrpc"')).toEqual({
      status: 400,
      answer: { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the body is not JSON' }, id: null },
    });
  });
});

describe("the SDK's own tool errors (unknown tool, arguments the input schema refuses)", () => {
  it('are one short line that echoes nothing sent at length, while the tools keep their own answers', async () => {
    const session = await rawSession(runtime, ['reports:read']);
    const hostile = `\u001b[2J${'x'.repeat(300_000)}\r\n\u0000`;
    try {
      for (const params of [
        { name: hostile, arguments: {} },
        { name: 'get_capability_protocol', arguments: { capabilityId: 'open-help', [hostile]: 1 } },
        { name: 'list_capabilities', arguments: { [hostile]: 1, b: 2, c: 3, d: 4 } },
        { name: 'find_capabilities', arguments: { query: 'x', limit: 1e308 } },
      ]) {
        const answer = (await session.ask('tools/call', params)) as unknown as { result: { content: { type: string; text: string }[]; isError?: boolean } };
        expect(answer.result.isError).toBe(true);
        const [block, ...rest] = answer.result.content;
        expect(rest).toEqual([]);
        expect(block?.text.startsWith('MCP error -32602: ')).toBe(true);
        expect(block?.text.length).toBeLessThanOrEqual(PREFIX.length + MAX_INVALID_PARAMS_MESSAGE);
        expect(block?.text).not.toMatch(/\p{Cc}/u);
      }
      // The tools' own errors are untouched.
      const forbidden = (await session.ask('tools/call', {
        name: 'get_capability_protocol',
        arguments: { capabilityId: 'personal-automation' },
      })) as unknown as {
        result: { content: { text: string }[] };
      };
      expect(forbidden.result.content[0]?.text).toBe('{"success":false,"error":"capability not found or not accessible"}');
    } finally {
      await session.close();
    }
  });
});

describe('invalidParamsMessage', () => {
  it('names at most three problems on one line, paths relative to params, counting the rest', () => {
    const issue = (path: PropertyKey[], expected: string): { code: string; path: PropertyKey[]; message: string; expected: string } => ({
      code: 'invalid_type',
      path,
      message: `Invalid input: expected ${expected}, received number`,
      expected,
    });
    expect(invalidParamsMessage([issue(['params', 'name'], 'string')])).toBe('invalid params: name: expected string');
    expect(invalidParamsMessage([issue(['params'], 'object')])).toBe('invalid params: params: expected object');
    expect(invalidParamsMessage([issue(['params', 'items', 0, 'a key'], 'string')])).toBe('invalid params: items[0]["a key"]: expected string');
    expect(
      invalidParamsMessage([
        issue(['params', 'a'], 'string'),
        issue(['params', 'b'], 'string'),
        issue(['params', 'c'], 'string'),
        issue(['params', 'd'], 'string'),
      ]),
    ).toBe('invalid params: a: expected string; b: expected string; c: expected string (and 1 more)');
    expect(invalidParamsMessage([{ code: 'custom', path: ['params', 'uri'], message: 'Invalid\n  URI\tformat' }])).toBe(
      'invalid params: uri: Invalid URI format',
    );
  });

  it('cuts a message past the limit, never inside a character, and keeps it on one line', () => {
    const long = invalidParamsMessage([
      { code: 'unrecognized_keys', path: ['params', `k\n${'y'.repeat(100_000)}`], message: `Unrecognized key: "${'z'.repeat(100_000)}"` },
    ]);
    expect(long.length).toBe(MAX_INVALID_PARAMS_MESSAGE);
    expect(long.endsWith('…')).toBe(true);
    expect(long).not.toMatch(/\n/);
    const emoji = invalidParamsMessage([{ code: 'custom', path: [], message: '😀'.repeat(200) }]);
    expect(emoji.length).toBeLessThanOrEqual(MAX_INVALID_PARAMS_MESSAGE);
    expect(emoji).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });
});

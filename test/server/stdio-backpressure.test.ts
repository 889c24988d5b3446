// stdio when the client writes requests and does not read the answers: the server stops reading
// requests while stdout holds answers the client has not taken, instead of answering every request
// into memory (an answer is often thousands of times its request: the heap grew by ~140 MB/s).
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MESSAGE_BYTES } from '../../server/create-server.js';
import { serveStdio } from '../../server/transports/stdio.js';
import { INITIALIZE, eventually, startStandardServer, type StandardServer } from './helpers.js';

let server: StandardServer;

beforeAll(async () => {
  server = await startStandardServer();
});

afterAll(() => server.close());

/** Every line written to `stdout`, parsed, as it arrives. */
function collect(stdout: PassThrough): { id?: unknown; error?: { code: number } }[] {
  const lines: { id?: unknown; error?: { code: number } }[] = [];
  let text = '';
  stdout.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    const parts = text.split('\n');
    text = parts.pop() ?? '';
    for (const part of parts) lines.push(JSON.parse(part) as { id?: unknown });
  });
  return lines;
}

describe('stdio lines', () => {
  it('reads a message however the input is cut: byte by byte, CRLF, several to a chunk', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const answers = collect(stdout);
    const session = await serveStdio(server.runtime, { stdin, stdout });
    const ping = (id: number): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });
    for (const byte of Buffer.from(`${JSON.stringify(INITIALIZE)}\r\n`)) stdin.write(Buffer.from([byte]));
    // A multi-byte character cut between two chunks is still one character.
    const split = Buffer.from(`{"jsonrpc":"2.0","id":"é","method":"ping"}\n`);
    const cut = split.indexOf(0xc3) + 1;
    stdin.write(split.subarray(0, cut));
    stdin.write(split.subarray(cut));
    stdin.write(`${ping(2)}\n${ping(3)}\r\n${ping(4)}`);
    stdin.write('\n');
    await eventually(() => expect(answers.map((answer) => answer.id)).toEqual([0, 'é', 2, 3, 4]));
    await session.close();
  });

  it('takes a message of exactly 1 MiB whichever line ending it comes with', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const answers = collect(stdout);
    const session = await serveStdio(server.runtime, { stdin, stdout });
    stdin.write(`${JSON.stringify(INITIALIZE)}\n`);
    const exactly = (id: number): string => {
      const head = `{"jsonrpc":"2.0","id":${id},"method":"ping","params":{"_meta":{"pad":"`;
      const tail = '"}}}';
      return head + 'x'.repeat(MAX_MESSAGE_BYTES - head.length - tail.length) + tail;
    };
    expect(Buffer.byteLength(exactly(2))).toBe(MAX_MESSAGE_BYTES);
    stdin.write(`${exactly(2)}\n`);
    stdin.write(`${exactly(3)}\r\n`);
    await eventually(() => expect(answers.map((answer) => answer.id)).toEqual([0, 2, 3]));
    await session.close();
  });

  it('ends the session on a line over 1 MiB that comes in pieces', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const answers = collect(stdout);
    const session = await serveStdio(server.runtime, { stdin, stdout });
    stdin.write(`${JSON.stringify(INITIALIZE)}\n`);
    await eventually(() => expect(answers).toHaveLength(1));
    stdin.write('{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"');
    for (let piece = 0; piece < 20; piece += 1) stdin.write('x'.repeat(64 * 1024));
    await session.closed;
    expect(answers.map((answer) => answer.id)).toEqual([0]);
  });
});

describe('stdio output backpressure', () => {
  it('is not bypassed by cancelling each request once its answer is written', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const session = await serveStdio(server.runtime, { apiKey: 'key-alice-reports', stdin, stdout });
    stdin.write(`${JSON.stringify(INITIALIZE)}\n`);
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    for (let id = 1; id <= 2_000; id += 1) {
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' })}\n`);
      await new Promise((resolve) => setImmediate(resolve));
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } })}\n`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(stdout.readableLength + stdout.writableLength).toBeLessThan(1024 * 1024);
    stdout.resume();
    await session.close();
  }, 30_000);

  it('reads no more lines while the client is not reading the answers to lines that are not JSON', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const session = await serveStdio(server.runtime, { stdin, stdout });
    const LINES = 50_000;
    for (let line = 0; line < LINES; line += 1) stdin.write(`not json ${line}\n`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Every line gets a ~100-byte error answer: held back, not all 5 MB of them.
    expect(stdout.readableLength + stdout.writableLength).toBeLessThan(1024 * 1024);
    let answers = 0;
    stdout.on('data', (chunk: Buffer) => (answers += chunk.toString().split('\n').length - 1));
    await eventually(() => expect(answers).toBe(LINES), 20_000);
    await session.close();
  }, 30_000);

  it('holds to the bound when many requests come in one chunk (a pipe hands over up to 64 KiB at once)', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const session = await serveStdio(server.runtime, { apiKey: 'key-alice-reports', stdin, stdout });
    const REQUESTS = 1_000;
    const lines = [JSON.stringify(INITIALIZE), JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })];
    for (let id = 1; id <= REQUESTS; id += 1) lines.push(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' }));
    // One write, so one chunk: every line in it used to be taken, past MAX_UNANSWERED.
    stdin.write(`${lines.join('\n')}\n`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // ~7 KiB per answer: all 1,000 would be ~7 MiB held; MAX_UNANSWERED of them ~450 KiB.
    expect(stdout.readableLength + stdout.writableLength).toBeLessThan(1024 * 1024);
    let answers = 0;
    stdout.on('data', (chunk: Buffer) => (answers += chunk.toString().split('\n').length - 1));
    await eventually(() => expect(answers).toBe(REQUESTS + 1), 20_000);
    await session.close();
  }, 30_000);

  it('answers every request of a chunk held back when the input then ends', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const answers = collect(stdout);
    const session = await serveStdio(server.runtime, { apiKey: 'key-alice-reports', stdin, stdout });
    const REQUESTS = 1_000;
    const lines = [JSON.stringify(INITIALIZE), JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })];
    for (let id = 1; id <= REQUESTS; id += 1) lines.push(JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }));
    stdin.end(`${lines.join('\n')}\n`);
    await session.closed;
    expect(answers).toHaveLength(REQUESTS + 1);
  }, 30_000);

  it.each([
    ['distinct ids', (id: number) => id],
    ['one id sent again and again', () => 1],
  ])(
    'reads no more requests while the client is not reading answers, and answers them all once it does (%s)',
    async (_, idOf) => {
      const stdin = new PassThrough();
      const stdout = new PassThrough();
      const session = await serveStdio(server.runtime, { apiKey: 'key-alice-reports', stdin, stdout });
      const REQUESTS = 2_000;
      stdin.write(`${JSON.stringify(INITIALIZE)}\n`);
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
      for (let id = 1; id <= REQUESTS; id += 1) stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: idOf(id), method: 'tools/list' })}\n`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      // Each tools/list answer is ~7 KiB: all of them would be ~14 MiB held for a client that reads nothing;
      // MAX_UNANSWERED of them are ~450 KiB.
      const held = stdout.readableLength + stdout.writableLength;
      expect(held).toBeLessThan(1024 * 1024);

      let answers = 0;
      let text = '';
      stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        let newline = text.indexOf('\n');
        while (newline !== -1) {
          answers += 1;
          text = text.slice(newline + 1);
          newline = text.indexOf('\n');
        }
      });
      await eventually(() => expect(answers).toBe(REQUESTS + 1), 20_000);
      await session.close();
    },
    30_000,
  );
});

// stdio when the client writes requests and does not read the answers: the server stops reading
// requests while stdout holds answers the client has not taken, instead of answering every request
// into memory (an answer is often thousands of times its request: the heap grew by ~140 MB/s).
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveStdio } from '../../server/transports/stdio.js';
import { INITIALIZE, eventually, startStandardServer, type StandardServer } from './helpers.js';

let server: StandardServer;

beforeAll(async () => {
  server = await startStandardServer();
});

afterAll(() => server.close());

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

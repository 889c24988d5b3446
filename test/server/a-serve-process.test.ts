// The real `bin/capreg.js serve` as a process: how a session ends (stdin closed, SIGTERM, SIGINT,
// input ending mid-request, the client no longer reading), how HTTP mode shuts down, and what a busy
// port says. Each ends with exit 0 and nothing on stderr but the server's own lines, or exit 2 with
// one line.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PRINCIPALS as USER_PRINCIPALS, WEEKLY_DIGEST } from '../user-capabilities/harness.js';
import {
  PRINCIPALS,
  STANDARD_CAPABILITIES,
  httpClient,
  makeManifest,
  principalsYaml,
  serveArgv,
  structured,
  tempDir,
  writeAtomic,
  writeManifest,
} from './helpers.js';

let dir: string;
let manifestFile: string;
let principalsFile: string;
const children: ChildProcessWithoutNullStreams[] = [];

beforeEach(() => {
  dir = tempDir();
  manifestFile = path.join(dir, 'manifest.json');
  principalsFile = path.join(dir, 'principals.yaml');
  writeManifest(manifestFile, makeManifest(STANDARD_CAPABILITIES));
  writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
});

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Served {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  /** Resolves once stderr matches. */
  stderrMatches: (pattern: RegExp) => Promise<void>;
  exit: Promise<number | null>;
}

function serve(args: string[], env: Record<string, string> = {}): Served {
  const child = spawn(process.execPath, serveArgv(['--manifest', manifestFile, '--principals', principalsFile, ...args]), {
    cwd: dir,
    env: { PATH: process.env['PATH'] ?? '', ...env },
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  const waiting: { pattern: RegExp; resolve: () => void }[] = [];
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const wait of waiting.splice(0)) {
      if (wait.pattern.test(stderr)) wait.resolve();
      else waiting.push(wait);
    }
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stderrMatches = (pattern: RegExp): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (pattern.test(stderr)) return resolve();
      waiting.push({ pattern, resolve });
      void exit.then(() => reject(new Error(`exited before stderr matched ${pattern}: ${stderr}`)));
    });
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    stderrMatches,
    exit,
  };
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'pipe', version: '1' },
  },
});
const INITIALIZED = JSON.stringify({
  jsonrpc: '2.0',
  method: 'notifications/initialized',
});
const LIST = JSON.stringify({
  jsonrpc: '2.0',
  id: 2,
  method: 'tools/call',
  params: { name: 'list_capabilities', arguments: {} },
});

/** The one line a stdio server prints when it is ready, and nothing else. */
const STDIO_START = /^capreg serve: no registry root[^\n]*\ncapreg serve: 4 capabilities, revision sha256:[0-9a-f]{64}, on stdio\n$/;

function answers(stdout: string): { id: number | string | null; result?: unknown; error?: unknown }[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { id: number });
}

describe('capreg serve over stdio: the end of a session', () => {
  it('exits 0 with a clean stderr when the client closes stdin after initialize', async () => {
    const served = serve([], { CAPREG_API_KEY: 'key-alice-reports' });
    served.child.stdin.end(`${INITIALIZE}\n`);
    expect(await served.exit).toBe(0);
    expect(served.stderr()).toMatch(STDIO_START);
    expect(answers(served.stdout()).map((answer) => answer.id)).toEqual([1]);
  });

  it('answers requests already received when stdin closes right after them, then exits 0', async () => {
    const served = serve([], { CAPREG_API_KEY: 'key-alice-reports' });
    served.child.stdin.end(`${INITIALIZE}\n${INITIALIZED}\n${LIST}\n`);
    expect(await served.exit).toBe(0);
    expect(served.stderr()).toMatch(STDIO_START);
    const byId = answers(served.stdout());
    expect(byId.map((answer) => answer.id)).toEqual([1, 2]);
    expect(JSON.stringify(byId[1]?.result)).toContain('work-reporting');
  });

  it('exits 0 when stdin closes in the middle of a message', async () => {
    const served = serve([]);
    served.child.stdin.end(`${INITIALIZE}\n${LIST.slice(0, 30)}`);
    expect(await served.exit).toBe(0);
    expect(served.stderr()).toMatch(STDIO_START);
    expect(answers(served.stdout()).map((answer) => answer.id)).toEqual([1]);
  });

  it('ends the session on a message over 1 MiB with exit 0 and one line that says why', async () => {
    const served = serve([]);
    served.child.stdin.on('error', () => undefined);
    served.child.stdin.write(`${INITIALIZE}\n`);
    served.child.stdin.end(`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"${'x'.repeat(1024 * 1024)}"}}\n`);
    expect(await served.exit).toBe(0);
    const lines = served.stderr().trimEnd().split('\n');
    // After the start lines the server logs JSON (pino).
    expect(JSON.parse(lines.at(-1) ?? '')).toMatchObject({
      level: 'info',
      msg: 'unreadable input on stdin: a line that is not a JSON-RPC message, or one over 1048576 bytes (which ends the session); further input errors are not logged',
    });
    expect(lines).toHaveLength(3);
    expect(answers(served.stdout()).map((answer) => answer.id)).toEqual([1]);
  });

  it('says once that input lines are unreadable, echoes none of them, and keeps answering', async () => {
    const served = serve([]);
    const garbage = Array.from({ length: 50 }, (_, i) => `not json secret-${i}`).join('\n');
    served.child.stdin.end(`${INITIALIZE}\n${garbage}\n${JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' })}\n`);
    expect(await served.exit).toBe(0);
    expect(served.stderr().match(/unreadable input on stdin/g)).toHaveLength(1);
    expect(served.stderr()).not.toContain('secret-');
    expect(served.stdout()).not.toContain('secret-');
    // Answers come as they are ready: an error at once, the answer to `initialize` a little later.
    const all = answers(served.stdout());
    expect(all.filter((answer) => answer.id !== null).map((answer) => answer.id)).toEqual([1, 9]);
    const unreadable = all.filter((answer) => answer.id === null);
    expect(unreadable).toHaveLength(50);
    for (const answer of unreadable) expect(answer).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
  });

  it('answers JSON that is not a JSON-RPC message, a batch included, with Invalid Request, under the id when it has one', async () => {
    const served = serve([]);
    const lines = [
      '[{"jsonrpc":"2.0","id":2,"method":"ping"}]',
      '{"id":3,"method":"ping"}',
      '42',
      '{"jsonrpc":"2.0","id":"four","method":"ping","params":{"_meta":"not a mapping"}}',
      // A malformed answer to a request of the server's, and a blank line: neither is answered.
      '{"jsonrpc":"2.0","id":5,"result":"not an object"}',
      '   ',
    ];
    served.child.stdin.end(`${INITIALIZE}\n${lines.join('\n')}\n${JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' })}\n`);
    expect(await served.exit).toBe(0);
    const all = answers(served.stdout());
    const invalid = all.filter((answer) => answer.error !== undefined);
    expect(all.filter((answer) => answer.error === undefined).map((answer) => answer.id)).toEqual([1, 9]);
    expect(invalid.map((answer) => answer.id).sort()).toEqual([3, 'four', null, null].sort());
    for (const answer of invalid) {
      expect(answer.error).toMatchObject({ code: -32600 });
      expect(JSON.stringify(answer.error)).toContain('batches are not supported');
    }
    expect(served.stderr().match(/unreadable input on stdin/g)).toHaveLength(1);
  });

  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`exits 0 with a clean stderr on ${signal} during a session`, async () => {
      const served = serve([], { CAPREG_API_KEY: 'key-alice-reports' });
      await served.stderrMatches(/on stdio\n/);
      served.child.stdin.write(`${INITIALIZE}\n`);
      await new Promise<void>((resolve) => served.child.stdout.once('data', () => resolve()));
      served.child.kill(signal);
      expect(await served.exit).toBe(0);
      expect(served.stderr()).toMatch(STDIO_START);
    });
  }

  it('exits 0 without a stack trace when the client stops reading stdout', async () => {
    const served = serve([]);
    await served.stderrMatches(/on stdio\n/);
    served.child.stdout.destroy();
    // Enough answers to hit the closed pipe.
    for (let id = 10; id < 20; id += 1) served.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n`);
    served.child.stdin.end();
    expect(await served.exit).toBe(0);
    expect(served.stderr()).toMatch(STDIO_START);
  });
});

describe('capreg serve --http as a process', () => {
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`shuts down on ${signal} with exit 0 and only its own lines on stderr`, async () => {
      const served = serve(['--http', '--port', '0']);
      await served.stderrMatches(/"mcpServers"[\s\S]*\n}\n/);
      const url = /on (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(served.stderr())?.[1] ?? '';
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      served.child.kill(signal);
      expect(await served.exit).toBe(0);
      const lines = served.stderr().trimEnd().split('\n');
      expect(JSON.parse(lines.at(-1) ?? '')).toMatchObject({ level: 'info', msg: 'shutting down' });
      expect(served.stderr()).not.toMatch(/Error| {4}at /);
      expect(served.stdout()).toBe('');
    });
  }

  const badLimits: { argv: string[]; message: string }[] = [
    {
      argv: ['--http', '--max-connections', '0'],
      message: '--max-connections must be a whole number from 1 to 100000, not "0"',
    },
    {
      argv: ['--http', '--max-connections', '1e3'],
      message: '--max-connections must be a whole number from 1 to 100000, not "1e3"',
    },
    {
      argv: ['--http', '--headers-timeout', 'soon'],
      message: '--headers-timeout must be a number of seconds from 0.1 to 3600, not "soon"',
    },
    {
      argv: ['--http', '--request-timeout', '0'],
      message: '--request-timeout must be a number of seconds from 0.1 to 3600, not "0"',
    },
    {
      argv: ['--http', '--headers-timeout', '5', '--request-timeout', '2'],
      message: '--request-timeout (2 s) must not be shorter than --headers-timeout (5 s): the headers are part of the request',
    },
    {
      argv: ['--max-connections', '10'],
      message: '--max-connections applies only with --http (stdio takes its key from CAPREG_API_KEY)',
    },
    {
      argv: ['--http', '--caller-concurrency', '0'],
      message: '--caller-concurrency must be a whole number from 1 to 1000, not "0"',
    },
    {
      argv: ['--caller-concurrency', '2'],
      message: '--caller-concurrency applies only with --http (stdio takes its key from CAPREG_API_KEY)',
    },
    {
      argv: ['--user-compile-workers', '65'],
      message: '--user-compile-workers must be a whole number from 1 to 64, not "65"',
    },
    {
      argv: ['--user-compile-budget', '0'],
      message: '--user-compile-budget must be a number of seconds from 0.1 to 3600, not "0"',
    },
  ];
  for (const { argv, message } of badLimits) {
    it(`refuses ${argv.join(' ')} with exit 2 and one line`, async () => {
      const served = serve(argv);
      expect(await served.exit).toBe(2);
      expect(served.stderr()).toBe(`capreg serve: ${message}\n`);
    });
  }

  it("applies --caller-concurrency and --user-compile-budget: a caller's next request waits for its turn, a save past the budget is refused", async () => {
    writeAtomic(principalsFile, principalsYaml(USER_PRINCIPALS));
    const store = `sqlite:${path.join(dir, 'user-capabilities.db')}`;
    const served = serve(['--http', '--port', '0', '--user-store', store, '--caller-concurrency', '1', '--user-compile-budget', '0.3']);
    await served.stderrMatches(/"mcpServers"[\s\S]*\n}\n/);
    const url = /on (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(served.stderr())?.[1] ?? '';
    const [alice, bob] = [await httpClient(url, 'key-alice'), await httpClient(url, 'key-bob')];
    const finished: string[] = [];
    const call = (client: typeof alice, label: string, name: string, args: Record<string, unknown> = {}): Promise<unknown> =>
      client.callTool({ name, arguments: args }).then((result) => (finished.push(label), result));
    // 60 KiB of blank lines take seconds to check: past the 0.3 s budget.
    const save = call(alice, 'save', 'save_user_capability', { markdown: WEEKLY_DIGEST.replace(/\n*$/, '\n') + '\n'.repeat(60 * 1024) });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const lists = [call(alice, 'alice list', 'list_capabilities'), call(bob, 'bob list', 'list_capabilities')];
    const [saved] = await Promise.all([save, ...lists]);
    // One request of alice's at a time: her list is answered after her save; bob's is not held up.
    expect(finished.indexOf('alice list')).toBeGreaterThan(finished.indexOf('save'));
    expect(finished.indexOf('bob list')).toBeLessThan(finished.indexOf('save'));
    expect(structured(saved)['diagnostics']).toEqual([
      expect.objectContaining({ message: expect.stringContaining("within the server's budget (300 ms)") as unknown }),
    ]);
    await Promise.all([alice.close(), bob.close()]);
    served.child.kill('SIGTERM');
    expect(await served.exit).toBe(0);
    expect(served.stderr()).not.toMatch(/Error| {4}at /);
  });

  it('applies --max-connections and --headers-timeout: slow sockets are closed, /healthz answers', async () => {
    const served = serve(['--http', '--port', '0', '--max-connections', '5', '--headers-timeout', '0.5', '--request-timeout', '1']);
    await served.stderrMatches(/"mcpServers"[\s\S]*\n}\n/);
    const { hostname, port } = new URL(/on (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(served.stderr())?.[1] ?? '');
    const slow = Array.from({ length: 12 }, () => {
      const socket = net.connect({ host: hostname, port: Number(port) }, () => socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n'));
      socket.on('error', () => undefined);
      socket.resume(); // read the 408 and the end of the stream, or 'close' never comes
      const began = Date.now();
      return new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - began)));
    });
    expect(
      (
        await fetch(`http://${hostname}:${port}/healthz`, {
          headers: { Connection: 'close' },
        })
      ).status,
    ).toBe(200);
    // Closed after the 0.5 s header timeout (or earlier, to stay within 5 connections), not Node's default 60 s.
    expect(Math.max(...(await Promise.all(slow)))).toBeLessThan(5_000);
    served.child.kill('SIGTERM');
    expect(await served.exit).toBe(0);
  }, 30_000);

  it('exits 2 with one line naming the port when the port is in use', async () => {
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as net.AddressInfo).port;
    try {
      const served = serve(['--http', '--port', String(port)]);
      expect(await served.exit).toBe(2);
      const lines = served.stderr().trimEnd().split('\n');
      expect(lines.at(-1)).toBe(`capreg serve: port ${port} on 127.0.0.1 is already in use (pick another with --port, or --port 0 for a free one)`);
      expect(served.stderr()).not.toMatch(/ {4}at /);
    } finally {
      await new Promise<void>((resolve) => busy.close(() => resolve()));
    }
  });
});

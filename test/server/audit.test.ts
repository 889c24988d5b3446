// The audit log (docs/server.md, "Metrics and logs") through the real bin: over stdio and over
// HTTP, one JSON line per protocol handed out or refused, naming who, what, which version, where.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PRINCIPALS,
  STANDARD_CAPABILITIES,
  eventually,
  httpClient,
  makeManifest,
  principalsYaml,
  serveArgv,
  tempDir,
  writeAtomic,
  writeManifest,
} from './helpers.js';

const manifest = makeManifest(STANDARD_CAPABILITIES);
let dir: string;

beforeAll(() => {
  dir = tempDir();
  writeManifest(path.join(dir, 'manifest.json'), manifest);
  writeAtomic(path.join(dir, 'principals.yaml'), principalsYaml(PRINCIPALS));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function start(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, serveArgv(['--manifest', 'manifest.json', '--principals', 'principals.yaml', ...args]), {
    cwd: dir,
    env: { PATH: process.env['PATH'] ?? '', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exit };
}

function records(file: string): Record<string, unknown>[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const rpc = (id: number, method: string, params: Record<string, unknown>): string => `${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`;
const INIT = rpc(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } });

describe('--audit-log', () => {
  it('over stdio: served, refused and resource reads, appended to what the file held, with nothing secret', async () => {
    const file = path.join(dir, 'audit-stdio.jsonl');
    fs.writeFileSync(file, '{"earlier":true}\n');
    const served = start(['--audit-log', file], { CAPREG_API_KEY: 'key-alice-reports' });
    served.child.stdin.end(
      INIT +
        rpc(2, 'tools/call', { name: 'get_capability_protocol', arguments: { capabilityId: 'work-reporting' } }) +
        rpc(3, 'tools/call', { name: 'get_capability_protocol', arguments: { capabilityId: 'calendar-digest' } }) +
        rpc(4, 'tools/call', { name: 'get_capability_protocol', arguments: { capabilityId: 'x'.repeat(10_000) } }) +
        rpc(5, 'resources/read', { uri: 'capability://open-help' }),
    );
    expect(await served.exit).toBe(0);
    const [earlier, ...lines] = records(file);
    expect(earlier).toEqual({ earlier: true });
    const reporting = manifest.capabilities.find((capability) => capability.id === 'work-reporting')!;
    const openHelp = manifest.capabilities.find((capability) => capability.id === 'open-help')!;
    const common = { principal: 'key:alice', revision: manifest.revision, transport: 'stdio' };
    expect(lines).toHaveLength(4);
    // Requests are answered concurrently: find each record by what it was about.
    const about = (via: string, id: string) => lines.find((line) => line['via'] === via && String(line['capabilityId']).startsWith(id));
    expect(about('get_capability_protocol', 'work-reporting')).toMatchObject({
      ...common,
      protocolVersion: reporting.protocolVersion,
      digest: reporting.digest,
      outcome: 'served',
    });
    expect(about('get_capability_protocol', 'calendar-digest')).toMatchObject({ ...common, protocolVersion: null, digest: null, outcome: 'uniform-error' });
    expect(String(about('get_capability_protocol', 'xxx')!['capabilityId'])).toHaveLength(257);
    expect(about('resources/read', 'open-help')).toMatchObject({ ...common, digest: openHelp.digest, outcome: 'served' });
    for (const line of lines) expect(Date.parse(String(line['time']))).toBeGreaterThan(0);
    expect(fs.readFileSync(file, 'utf8')).not.toContain('key-alice-reports');
  });

  it('records a missing, non-string or deeply nested URI by its type, refused with the uniform -32602', async () => {
    const file = path.join(dir, 'audit-malformed.jsonl');
    const served = start(['--audit-log', file], { CAPREG_API_KEY: 'key-alice-reports' });
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    served.child.stdin.end(
      INIT +
        rpc(2, 'resources/read', { uri: 5 }) +
        rpc(3, 'resources/read', {}) +
        `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":${deep}}}\n` +
        `{"jsonrpc":"2.0","id":5,"method":"skills/get","params":{"uri":${deep}}}\n`,
    );
    expect(await served.exit).toBe(0);
    const answers = served
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: number; error?: unknown });
    const uniform = { code: -32602, message: 'MCP error -32602: capability not found or not accessible' };
    expect(answers.filter((answer) => answer.id > 1).sort((a, b) => a.id - b.id)).toEqual([2, 3, 4, 5].map((id) => ({ jsonrpc: '2.0', id, error: uniform })));
    expect(records(file).map((line) => [line['via'], line['capabilityId'], line['outcome']])).toEqual([
      ['resources/read', '<number>', 'uniform-error'],
      ['resources/read', '<missing>', 'uniform-error'],
      ['resources/read', '<array>', 'uniform-error'],
      ['skills/get', '<array>', 'uniform-error'],
    ]);
  });

  it('over HTTP: the principal of each request, transport http', async () => {
    const file = path.join(dir, 'audit-http.jsonl');
    const served = start(['--http', '--port', '0', '--audit-log', file]);
    const url = await eventually(() => /on (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(served.stderr())![1]!, 10_000);
    const alice = await httpClient(url, 'key-alice-reports');
    await alice.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'work-reporting' } });
    await alice.close();
    const bob = await httpClient(url, 'key-bob-all');
    await bob.readResource({ uri: 'capability://personal-automation' });
    await bob.close();
    served.child.kill('SIGTERM');
    expect(await served.exit).toBe(0);
    const lines = records(file);
    expect(lines.map((line) => [line['principal'], line['capabilityId'], line['transport'], line['outcome']])).toEqual([
      ['key:alice', 'work-reporting', 'http', 'served'],
      ['key:bob', 'personal-automation', 'http', 'served'],
    ]);
  });

  it('follows an audit file moved away (log rotation) or deleted: the next records go to a new file at the path, said at info', async () => {
    const file = path.join(dir, 'audit-rotated.jsonl');
    const served = start(['--http', '--port', '0', '--audit-log', file]);
    const url = await eventually(() => /on (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(served.stderr())![1]!, 10_000);
    const alice = await httpClient(url, 'key-alice-reports');
    const handout = async (capabilityId: string): Promise<void> => {
      await alice.callTool({ name: 'get_capability_protocol', arguments: { capabilityId } });
    };
    await handout('first');
    await eventually(() => expect(records(file)).toHaveLength(1));
    fs.renameSync(file, `${file}.1`);
    await handout('after-rotation');
    await eventually(() => expect(records(file)).toHaveLength(1));
    fs.rmSync(file);
    await handout('after-delete');
    await alice.close();
    served.child.kill('SIGTERM');
    expect(await served.exit).toBe(0);
    expect(records(`${file}.1`).map((line) => line['capabilityId'])).toEqual(['first']);
    expect(records(file).map((line) => line['capabilityId'])).toEqual(['after-delete']);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const followed = served.stderr().match(/"level":"info".*the file was moved away or deleted/g) ?? [];
    expect(followed).toHaveLength(2);
  });

  it('reports a failing audit file on stderr and keeps serving', async () => {
    if (!fs.existsSync('/dev/full')) return;
    const served = start(['--audit-log', '/dev/full'], { CAPREG_API_KEY: 'key-alice-reports' });
    served.child.stdin.end(
      INIT +
        rpc(2, 'tools/call', { name: 'get_capability_protocol', arguments: { capabilityId: 'work-reporting' } }) +
        rpc(3, 'tools/call', { name: 'get_capability_protocol', arguments: { capabilityId: 'work-reporting' } }),
    );
    expect(await served.exit).toBe(0);
    const answers = served
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: number; result?: { isError?: boolean } });
    expect(answers.map((answer) => [answer.id, answer.result?.isError ?? false])).toEqual([
      [1, false],
      [2, false],
      [3, false],
    ]);
    expect(served.stderr()).toMatch(/"level":"error".*audit log \/dev\/full: write failed \(ENOSPC\)/);
  });

  it('never blocks on a FIFO at the audit path with nothing reading it: exit 2 at start, a failed write later', async () => {
    const fifo = path.join(dir, 'audit-fifo-start.jsonl');
    execFileSync('mkfifo', [fifo]);
    const atStart = start(['--http', '--port', '0', '--audit-log', fifo]);
    const timer = setTimeout(() => atStart.child.kill('SIGKILL'), 5_000);
    expect(await atStart.exit).toBe(2);
    clearTimeout(timer);
    expect(atStart.stderr()).toMatch(/^capreg serve: cannot open --audit-log .*audit-fifo-start\.jsonl: ENXIO\n$/m);

    // Replaced by one while serving (a log agent's pipe, a mistake): the open used to block the
    // event loop until a reader came, so no request, /healthz or SIGTERM was answered.
    const file = path.join(dir, 'audit-fifo-later.jsonl');
    const served = start(['--http', '--port', '0', '--audit-log', file]);
    try {
      const url = await eventually(() => /on (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(served.stderr())![1]!, 10_000);
      const alice = await httpClient(url, 'key-alice-reports');
      await alice.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'work-reporting' } });
      await eventually(() => expect(records(file)).toHaveLength(1));
      fs.rmSync(file);
      execFileSync('mkfifo', [file]);
      const answer = await alice.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'work-reporting' } }, undefined, { timeout: 3_000 });
      expect(answer.isError).toBeFalsy();
      const health = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(3_000) });
      expect(health.status).toBe(200);
      await eventually(() => expect(served.stderr()).toMatch(/"level":"error".*audit-fifo-later\.jsonl: write failed \(ENXIO\), records lost/));
      await alice.close();
      served.child.kill('SIGTERM');
      expect(await served.exit).toBe(0);
    } finally {
      served.child.kill('SIGKILL');
    }
  });

  it('refuses an audit file it cannot open with exit 2', async () => {
    const served = start(['--audit-log', path.join(dir, 'missing-folder', 'audit.jsonl')]);
    expect(await served.exit).toBe(2);
    expect(served.stderr()).toMatch(/^capreg serve: cannot open --audit-log .*audit\.jsonl: ENOENT\n$/m);
  });
});

// User-defined capabilities over the real transports: Streamable HTTP (a fresh server per request,
// so the tools are registered per caller), and `capreg serve` over stdio with the default store
// under the registry root. SQLite here; the full suite runs on both stores (sqlite/postgres.test.ts).
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serveCommand } from '../../cli/commands/serve.js';
import { UsageError, type CliContext } from '../../cli/context.js';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { startHttpServer, type HttpServerHandle } from '../../server/transports/http.js';
import { openUserStore } from '../../server/user-store/open.js';
import {
  STANDARD_CAPABILITIES,
  httpClient,
  makeManifest,
  principalsYaml,
  serveArgv,
  structured,
  tempDir,
  writeAtomic,
  writeManifest,
} from '../server/helpers.js';
import { PRINCIPALS, UNIFORM_ERROR_TEXT, WEEKLY_DIGEST, clientSession, userEntries, type Session } from './harness.js';

let dir: string;
let manifestFile: string;
let principalsFile: string;
const cleanups: (() => Promise<void>)[] = [];

beforeEach(() => {
  dir = tempDir('capreg-user-caps-transport-');
  manifestFile = path.join(dir, 'manifest.json');
  principalsFile = path.join(dir, 'principals.yaml');
  writeManifest(manifestFile, makeManifest(STANDARD_CAPABILITIES));
  writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('user-defined capabilities over Streamable HTTP', () => {
  let runtime: Runtime;
  let http: HttpServerHandle;

  async function as(token: string): Promise<Session> {
    const client = await httpClient(http.url, token);
    const session = clientSession(client, () => client.close());
    cleanups.push(session.close);
    return session;
  }

  beforeEach(async () => {
    runtime = await startRuntime({
      manifestFile,
      principalsFile,
      watch: false,
      openUserStore: () => openUserStore('sqlite:user-capabilities.db', { root: dir }),
    });
    http = await startHttpServer(runtime, { port: 0 });
    cleanups.push(
      () => runtime.close(),
      () => http.close(),
    );
  });

  it('registers the write tools per request for callers with the scope, and serves the owner only', async () => {
    const alice = await as('key-alice');
    const carol = await as('key-carol');
    const bob = await as('key-bob');
    const names = async (session: Session) => (await session.client.listTools()).tools.map((t) => t.name).sort();
    expect(await names(alice)).toContain('save_user_capability');
    expect(await names(alice)).toContain('delete_user_capability');
    expect(await names(carol)).toEqual(['find_capabilities', 'get_capability_protocol', 'get_current_user', 'list_capabilities']);

    const saved = await alice.json('save_user_capability', { markdown: WEEKLY_DIGEST });
    expect(saved).toMatchObject({ success: true, capabilityId: expect.stringMatching(/^user:/) as unknown });
    const capabilityId = saved['capabilityId'] as string;
    expect(userEntries(await alice.json('list_capabilities')).map((e) => e.id)).toEqual([capabilityId]);
    expect(await alice.json('get_capability_protocol', { capabilityId })).toMatchObject({
      success: true,
      dependencies: ['calendar-digest', 'work-reporting'],
    });
    for (const other of [bob, carol]) {
      expect(userEntries(await other.json('list_capabilities'))).toEqual([]);
      expect(await other.text('get_capability_protocol', { capabilityId })).toBe(UNIFORM_ERROR_TEXT);
    }
    expect(await bob.text('delete_user_capability', { capabilityId })).toBe(UNIFORM_ERROR_TEXT);
    expect(await alice.json('delete_user_capability', { capabilityId })).toEqual({ success: true });
    expect(fs.existsSync(path.join(dir, 'user-capabilities.db'))).toBe(true);
  });
});

describe('capreg serve --user-store', () => {
  function context(): CliContext {
    return { cwd: dir, env: {}, stdout: () => {}, stderr: () => {} };
  }

  for (const value of ['mysql://db/x', 'sqlite://var/x.db', 'postgres://[broken']) {
    it(`refuses --user-store ${value} as a usage error`, async () => {
      const error = await serveCommand(['--manifest', manifestFile, '--user-store', value], context()).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toMatch(/--user-store must be sqlite:PATH/);
    });
  }

  it('keeps the default store under the registry root and serves it over stdio', async () => {
    fs.mkdirSync(path.join(dir, 'capabilities'));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: serveArgv(['--root', dir, '--manifest', manifestFile, '--principals', principalsFile]),
      env: { PATH: process.env['PATH'] ?? '', CAPREG_API_KEY: 'key-alice' },
      cwd: dir,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(transport);
    cleanups.push(() => client.close());
    const session = clientSession(client, () => client.close());
    const saved = await session.json('save_user_capability', { markdown: WEEKLY_DIGEST });
    expect(saved['success']).toBe(true);
    expect(userEntries(await session.json('list_capabilities')).map((e) => e.id)).toEqual([saved['capabilityId']]);
    expect(fs.existsSync(path.join(dir, '.capreg', 'user-capabilities.db'))).toBe(true);
  });

  it('serves the platform catalog when the user store cannot be opened', async () => {
    fs.writeFileSync(path.join(dir, 'not-a-folder'), '');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: serveArgv(['--manifest', manifestFile, '--principals', principalsFile, '--user-store', 'sqlite:not-a-folder/x.db']),
      env: { PATH: process.env['PATH'] ?? '', CAPREG_API_KEY: 'key-alice' },
      cwd: dir,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(transport);
    cleanups.push(() => client.close());
    const listing = structured(await client.callTool({ name: 'list_capabilities' }));
    expect((listing['capabilities'] as unknown[]).length).toBeGreaterThan(0);
    expect(listing['warning']).toMatch(/user-defined capabilities are unavailable/);
    const save = await client.callTool({ name: 'save_user_capability', arguments: { markdown: WEEKLY_DIGEST } });
    expect(save.isError).toBe(true);
    expect(structured(save)['code']).toBe('store-unavailable');
    expect(stderr).toMatch(/user store unavailable: SQLite database/);
  });
});

// The MCP Skills extension on `capreg serve`: raw JSON-RPC through the official SDK client, one test
// per server MUST of the extension's spec (docs/skills.md lists them), plus capreg's visibility,
// uniform error and re-authorization rules, over in-memory, HTTP and the spawned bin's stdio.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ClientRequest, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { validateMetadata } from 'skills-ref';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import * as z from 'zod';
import type { Handout } from '../../server/audit.js';
import { principalCaller } from '../../server/auth/api-key.js';
import { createServer } from '../../server/create-server.js';
import { ANONYMOUS, type Caller } from '../../server/identity.js';
import { SKILLS_PAGE_SIZE } from '../../server/skills/skills.js';
import { startHttpServer } from '../../server/transports/http.js';
import { SqliteUserStore } from '../../server/user-store/sqlite.js';
import { UserStoreError } from '../../server/user-store/store.js';
import { startHarness, WEEKLY_DIGEST, type Harness } from '../user-capabilities/harness.js';
import { STANDARD_CAPABILITIES, httpClient, serveArgv, structured, tempDir, type CapabilitySpec } from './helpers.js';

const resourceSchema = z.object({ uri: z.string(), digest: z.string(), size: z.number() }).strict();
const skillSchema = z.object({ uri: z.string(), frontmatter: z.record(z.string(), z.unknown()), resources: z.array(resourceSchema) }).strict();
const listSchema = z.object({
  resultType: z.literal('complete'),
  skills: z.array(skillSchema),
  nextCursor: z.string().optional(),
  ttlMs: z.number(),
  cacheScope: z.literal('private'),
});
const getSchema = z.object({ resultType: z.literal('complete'), skill: skillSchema, ttlMs: z.number(), cacheScope: z.literal('private') }).strict();
const readSchema = z.object({ contents: z.array(z.object({ uri: z.string(), mimeType: z.string(), text: z.string() })) });
type Skill = z.infer<typeof skillSchema>;

/** A client plus every raw JSON-RPC message the server sent it. */
interface Wire {
  client: Client;
  sent: JSONRPCMessage[];
  close(): Promise<void>;
}

const KEYS = { alice: 'key-alice', bob: 'key-bob', carol: 'key-carol' } as const;

/** The server's end of a linked pair, recording what the server sends. */
class TappedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  constructor(
    private readonly inner: InMemoryTransport,
    private readonly sent: JSONRPCMessage[],
  ) {}

  start(): Promise<void> {
    this.inner.onmessage = (message) => this.onmessage?.(message);
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => this.onerror?.(error);
    return this.inner.start();
  }

  send(message: JSONRPCMessage): Promise<void> {
    this.sent.push(message);
    return this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

async function wire(harness: Harness, key?: string, audit?: (handout: Handout) => void): Promise<Wire> {
  const runtime = harness.runtime;
  const caller = (): Caller => {
    const principal = key === undefined ? undefined : runtime.lastPrincipals().findByKey(key);
    return principal ? principalCaller(principal) : ANONYMOUS;
  };
  const { server, cleanup } = createServer({
    catalog: () => runtime.catalog(),
    caller,
    names: runtime.names,
    userCapabilities: runtime.userCapabilities,
    audit,
  });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const sent: JSONRPCMessage[] = [];
  await server.connect(new TappedTransport(serverTransport, sent));
  const client = new Client({ name: 'skills-test', version: '1.0.0' });
  await client.connect(clientTransport);
  return {
    client,
    sent,
    close: async () => {
      await client.close();
      await cleanup();
    },
  };
}

// The extension's methods are not in the SDK's request union; the wire format is plain JSON-RPC.
function raw(method: string, params: Record<string, unknown> = {}): ClientRequest {
  return { method, params } as unknown as ClientRequest;
}

async function listAll(client: Client): Promise<Skill[]> {
  const skills: Skill[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.request(raw('skills/list', cursor === undefined ? {} : { cursor }), listSchema);
    skills.push(...page.skills);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return skills;
}

async function read(client: Client, uri: string): Promise<string> {
  const result = await client.request(raw('resources/read', { uri }), readSchema);
  const text = result.contents[0]?.text;
  if (text === undefined) throw new Error('no text');
  return text;
}

/** The error body the server sent for the last request (without the JSON-RPC id), as sent. */
async function errorBody(connection: Wire, method: string, params: Record<string, unknown>): Promise<string> {
  await expect(connection.client.request(raw(method, params), z.object({}).passthrough())).rejects.toThrow();
  const last = connection.sent.at(-1) as { error?: unknown } | undefined;
  if (last?.error === undefined) throw new Error('no error sent');
  return JSON.stringify(last.error);
}

function frontmatterOf(text: string): Record<string, unknown> {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(text);
  if (!match) throw new Error('no frontmatter');
  return parseYaml(match[1] as string) as Record<string, unknown>;
}

function sha256(text: string): string {
  return `sha256:${createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex')}`;
}

const SCRATCH: string[] = [];
let harness: Harness;
const connections: Wire[] = [];

async function connect(key?: string, audit?: (handout: Handout) => void): Promise<Wire> {
  const connection = await wire(harness, key, audit);
  connections.push(connection);
  return connection;
}

async function listedIds(key?: string): Promise<string[]> {
  const connection = await connect(key);
  const listing = structured(await connection.client.callTool({ name: 'list_capabilities', arguments: {} }));
  return (listing['capabilities'] as { id: string }[]).map((entry) => entry.id);
}

beforeEach(async () => {
  const dir = tempDir('capreg-skills-db-');
  SCRATCH.push(dir);
  harness = await startHarness(() => Promise.resolve(new SqliteUserStore(path.join(dir, 'user.db'))));
});

afterEach(async () => {
  await Promise.all(connections.splice(0).map((connection) => connection.close()));
  await harness.close();
  for (const dir of SCRATCH.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('the Skills extension: the MUSTs of the spec that bind a server', () => {
  it('declares io.modelcontextprotocol/skills together with the resources capability', async () => {
    const { client } = await connect(KEYS.bob);
    const capabilities = client.getServerCapabilities();
    expect(capabilities?.extensions?.['io.modelcontextprotocol/skills']).toEqual({});
    expect(capabilities?.resources).toBeDefined();
  });

  it('implements skills/list with resultType "complete", ttlMs and cacheScope "private"', async () => {
    const { client } = await connect(KEYS.bob);
    const page = await client.request(raw('skills/list'), listSchema);
    expect(page.resultType).toBe('complete');
    expect(page.ttlMs).toBeGreaterThan(0);
    expect(page.cacheScope).toBe('private');
    expect(page.skills.length).toBeGreaterThan(0);
  });

  it('implements skills/get with resultType "complete", ttlMs, cacheScope and no cursor', async () => {
    const { client } = await connect(KEYS.bob);
    const result = await client.request(raw('skills/get', { uri: 'skill://work-reporting/SKILL.md' }), getSchema);
    expect(result.skill.uri).toBe('skill://work-reporting/SKILL.md');
    expect(result).not.toHaveProperty('nextCursor');
  });

  it('serves SKILL.md that begins with YAML frontmatter holding name and description, valid Agent Skills', async () => {
    const { client } = await connect(KEYS.bob);
    for (const skill of await listAll(client)) {
      const text = await read(client, skill.uri);
      expect(text.startsWith('---\n')).toBe(true);
      const frontmatter = frontmatterOf(text);
      expect(typeof frontmatter['name']).toBe('string');
      expect(typeof frontmatter['description']).toBe('string');
      // The reference validator, with the directory name the URI gives.
      expect(validateMetadata(frontmatter, `/x/${String(frontmatter['name'])}`)).toEqual([]);
    }
  });

  it('ends every skill URI in the frontmatter name, which satisfies the naming rules', async () => {
    const { client } = await connect(KEYS.bob);
    for (const skill of await listAll(client)) {
      const segments = skill.uri.replace(/^skill:\/\//, '').split('/');
      expect(segments.at(-1)).toBe('SKILL.md');
      expect(segments.at(-2)).toBe(skill.frontmatter['name']);
      expect(validateMetadata({ name: skill.frontmatter['name'], description: 'x' })).toEqual([]);
    }
  });

  it('gives a frontmatter identical in content to the frontmatter of the SKILL.md it describes', async () => {
    const { client } = await connect(KEYS.bob);
    for (const skill of await listAll(client)) expect(frontmatterOf(await read(client, skill.uri))).toEqual(skill.frontmatter);
  });

  it('lists complete resources: SKILL.md itself, within the skill, with the digest and size of the bytes read', async () => {
    const { client } = await connect(KEYS.bob);
    for (const skill of await listAll(client)) {
      expect(skill.resources.map((resource) => resource.uri)).toEqual([skill.uri]);
      const text = await read(client, skill.uri);
      const [resource] = skill.resources;
      expect(resource?.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(resource?.digest).toBe(sha256(text));
      expect(resource?.size).toBe(Buffer.byteLength(text, 'utf8'));
      // Within the spec's per-skill limits (512 files, 16 MiB).
      expect(skill.resources.length).toBeLessThanOrEqual(512);
      expect(resource?.size).toBeLessThanOrEqual(16 * 1024 * 1024);
    }
  });

  it('pages with cursor and nextCursor, never splitting an entry, and refuses a made-up cursor with -32602', async () => {
    const specs: CapabilitySpec[] = Array.from({ length: SKILLS_PAGE_SIZE + 7 }, (_, index) => ({ id: `cap-${String(index).padStart(4, '0')}` }));
    await harness.reloadManifest(specs);
    const connection = await connect();
    const first = await connection.client.request(raw('skills/list'), listSchema);
    expect(first.skills).toHaveLength(SKILLS_PAGE_SIZE);
    expect(first.nextCursor).toBeDefined();
    const all = await listAll(connection.client);
    expect(all.map((skill) => skill.frontmatter['name'])).toEqual(specs.map((spec) => spec.id));
    for (const cursor of ['nope', 'b' + 'x'.repeat(40), Buffer.from('o999999').toString('base64url')]) {
      const body = JSON.parse(await errorBody(connection, 'skills/list', { cursor })) as { code: number };
      expect(body.code).toBe(-32602);
    }
  });

  it('answers skills/get for every skill it serves, and -32602 for a URI that names none', async () => {
    const connection = await connect(KEYS.bob);
    for (const skill of await listAll(connection.client)) {
      const got = await connection.client.request(raw('skills/get', { uri: skill.uri }), getSchema);
      expect(got.skill).toEqual(skill);
    }
    expect(JSON.parse(await errorBody(connection, 'skills/get', { uri: 'skill://nothing-here/SKILL.md' }))).toMatchObject({ code: -32602 });
  });

  it('answers resources/read of a skill file it does not serve with -32602', async () => {
    const connection = await connect(KEYS.bob);
    const body = JSON.parse(await errorBody(connection, 'resources/read', { uri: 'skill://work-reporting/references/GUIDE.md' })) as { code: number };
    expect(body.code).toBe(-32602);
  });
});

describe('the Skills extension: capreg visibility and the uniform error', () => {
  it('lists exactly the capabilities list_capabilities shows, per caller', async () => {
    for (const key of [undefined, KEYS.alice, KEYS.bob, KEYS.carol]) {
      const connection = await connect(key);
      const skills = await listAll(connection.client);
      expect(skills.map((skill) => skill.frontmatter['name'])).toEqual(await listedIds(key));
    }
  });

  it('answers unknown, forbidden, malformed, traversing and non-string URIs with byte-identical -32602 bodies', async () => {
    const connection = await connect(KEYS.alice);
    // personal-automation needs automation, which alice lacks.
    const uris: unknown[] = [
      'skill://no-such-skill/SKILL.md',
      'skill://personal-automation/SKILL.md',
      'skill://work-reporting/../personal-automation/SKILL.md',
      'skill://%2e%2e/SKILL.md',
      'skill://Work-Reporting/SKILL.md',
      'skill://work-reporting/SKILL.md?x=1',
      'skill://user/user-aaaaaaaaaaaaaaaa/SKILL.md',
      'skill:/work-reporting/SKILL.md',
      'not a uri',
      42,
    ];
    const bodies = new Set<string>();
    for (const uri of uris) {
      bodies.add(await errorBody(connection, 'skills/get', { uri }));
      bodies.add(await errorBody(connection, 'resources/read', { uri }));
    }
    bodies.add(await errorBody(connection, 'skills/get', {}));
    bodies.add(await errorBody(connection, 'resources/read', {}));
    expect([...bodies]).toEqual(['{"code":-32602,"message":"MCP error -32602: capability not found or not accessible"}']);
    // The same bytes as a capability:// read of a forbidden capability.
    expect(await errorBody(connection, 'resources/read', { uri: 'capability://personal-automation' })).toBe([...bodies][0]);
  });

  it('re-authorizes every read: a narrowed scope or a reload changes what is served at once', async () => {
    const connection = await connect(KEYS.bob);
    const before = await listAll(connection.client);
    expect(before.map((skill) => skill.frontmatter['name'])).toContain('personal-automation');
    await harness.reloadPrincipals([{ id: 'bob', key: KEYS.bob, scopes: ['reports:read'] }]);
    expect(await errorBody(connection, 'resources/read', { uri: 'skill://personal-automation/SKILL.md' })).toContain('-32602');
    expect((await listAll(connection.client)).map((skill) => skill.frontmatter['name'])).toEqual(['open-help', 'work-reporting']);
    const digest = (await connection.client.request(raw('skills/get', { uri: 'skill://open-help/SKILL.md' }), getSchema)).skill.resources[0]?.digest;
    await harness.reloadManifest(STANDARD_CAPABILITIES.map((spec) => (spec.id === 'open-help' ? { ...spec, description: 'Changed help.' } : spec)));
    const after = await connection.client.request(raw('skills/get', { uri: 'skill://open-help/SKILL.md' }), getSchema);
    expect(after.skill.resources[0]?.digest).not.toBe(digest);
    expect(after.skill.resources[0]?.digest).toBe(sha256(await read(connection.client, 'skill://open-help/SKILL.md')));
  });

  it('serves a user capability to its owner only, hides it when a dependency is lost, and names linked skills', async () => {
    const owner = await connect(KEYS.alice);
    const saved = structured(await owner.client.callTool({ name: 'save_user_capability', arguments: { markdown: WEEKLY_DIGEST } }));
    const id = saved['capabilityId'] as string;
    const uri = `skill://user/${id.replace('user:', 'user-')}/SKILL.md`;
    const mine = await listAll(owner.client);
    const skill = mine.find((candidate) => candidate.uri === uri);
    expect(skill?.frontmatter['metadata']).toMatchObject({ 'capreg-id': id, 'user-defined': 'true', dependencies: 'calendar-digest work-reporting' });
    const text = await read(owner.client, uri);
    expect(skill?.resources[0]?.digest).toBe(sha256(text));
    expect(validateMetadata(frontmatterOf(text), `/x/${id.replace('user:', 'user-')}`)).toEqual([]);
    expect(text).toContain('load the skill `calendar-digest` (`skill://calendar-digest/SKILL.md`)');
    expect(text).not.toContain('get_capability_protocol');
    const other = await connect(KEYS.bob);
    const uniform = await errorBody(other, 'skills/get', { uri: 'skill://no-such-skill/SKILL.md' });
    expect(await errorBody(other, 'skills/get', { uri })).toBe(uniform);
    expect(await errorBody(other, 'resources/read', { uri })).toBe(uniform);
    // Losing calendar:read hides calendar-digest, and with it the user skill that links to it.
    await harness.reloadPrincipals([{ id: 'alice', key: KEYS.alice, scopes: ['reports:read', 'user-capabilities:write'] }]);
    expect((await listAll(owner.client)).map((entry) => entry.uri)).not.toContain(uri);
    expect(await errorBody(owner, 'skills/get', { uri })).toBe(uniform);
  });
});

describe('the Skills extension: a user skill that cannot be served now', () => {
  it('is left out of the listing, as in an outage, while the platform skills keep serving, and skills/get says why', async () => {
    // The owner's summaries are listed, then the store stops answering before the capability loads.
    class FailingGets extends SqliteUserStore {
      failing = false;
      override get(id: string): ReturnType<SqliteUserStore['get']> {
        return this.failing ? Promise.reject(new UserStoreError('store-unavailable', 'connection lost')) : super.get(id);
      }
    }
    const dir = tempDir('capreg-skills-db-');
    SCRATCH.push(dir);
    const store = new FailingGets(path.join(dir, 'user.db'));
    await harness.close();
    harness = await startHarness(() => Promise.resolve(store));
    const owner = await connect(KEYS.alice);
    const saved = structured(await owner.client.callTool({ name: 'save_user_capability', arguments: { markdown: WEEKLY_DIGEST } }));
    const uri = `skill://user/${(saved['capabilityId'] as string).replace('user:', 'user-')}/SKILL.md`;
    const platform = (await listAll(owner.client)).filter((skill) => skill.uri !== uri);
    store.failing = true;
    expect(await listAll(owner.client)).toEqual(platform);
    expect(JSON.parse(await errorBody(owner, 'skills/get', { uri }))).toMatchObject({ code: -32603 });
  });
});

describe('the Skills extension: audit', () => {
  it('records each skill handed out and each refusal, with the digest served and no other detail', async () => {
    const handouts: Handout[] = [];
    const connection = await connect(KEYS.alice, (handout) => handouts.push(handout));
    const text = await read(connection.client, 'skill://work-reporting/SKILL.md');
    await errorBody(connection, 'skills/get', { uri: 'skill://personal-automation/SKILL.md' });
    expect(handouts).toEqual([
      {
        via: 'resources/read',
        capabilityId: 'work-reporting',
        outcome: 'served',
        revision: harness.runtime.catalog().revision,
        protocolVersion: '1.0.0',
        digest: sha256(text),
      },
      { via: 'skills/get', capabilityId: 'skill://personal-automation/SKILL.md', outcome: 'uniform-error', revision: harness.runtime.catalog().revision },
    ]);
  });

  it('refuses and records a deeply nested or missing URI like any other, by its type only', async () => {
    const handouts: Handout[] = [];
    const connection = await connect(KEYS.alice, (handout) => handouts.push(handout));
    let deep: unknown = [];
    for (let depth = 0; depth < 10_000; depth++) deep = [deep];
    const uniform = await errorBody(connection, 'skills/get', { uri: 'skill://no-such-skill/SKILL.md' });
    expect(await errorBody(connection, 'skills/get', { uri: deep })).toBe(uniform);
    expect(await errorBody(connection, 'skills/get', { uri: { a: 'skill://work-reporting/SKILL.md' } })).toBe(uniform);
    expect(await errorBody(connection, 'skills/get', {})).toBe(uniform);
    expect(handouts.map((handout) => [handout.via, handout.capabilityId, handout.outcome])).toEqual([
      ['skills/get', 'skill://no-such-skill/SKILL.md', 'uniform-error'],
      ['skills/get', '<array>', 'uniform-error'],
      ['skills/get', '<object>', 'uniform-error'],
      ['skills/get', '<missing>', 'uniform-error'],
    ]);
  });
});

describe('the Skills extension over HTTP and the spawned stdio bin', () => {
  it('lists, gets and reads over Streamable HTTP with the caller of the bearer token', async () => {
    const http = await startHttpServer(harness.runtime, { port: 0 });
    const client = await httpClient(http.url, KEYS.carol);
    try {
      expect(client.getServerCapabilities()?.extensions?.['io.modelcontextprotocol/skills']).toEqual({});
      const skills = await listAll(client);
      expect(skills.map((skill) => skill.frontmatter['name'])).toEqual(['calendar-digest', 'open-help', 'work-reporting']);
      for (const skill of skills) expect(skill.resources[0]?.digest).toBe(sha256(await read(client, skill.uri)));
      await expect(client.request(raw('skills/get', { uri: 'skill://personal-automation/SKILL.md' }), getSchema)).rejects.toMatchObject({ code: -32602 });
    } finally {
      await client.close();
      await http.close();
    }
  });

  it('serves the extension from the real bin over stdio, with nothing alarming on stderr', async () => {
    const dir = harness.dir;
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: serveArgv(['--manifest', path.join(dir, 'manifest.json'), '--principals', path.join(dir, 'principals.yaml')]),
      env: { PATH: process.env['PATH'] ?? '', CAPREG_API_KEY: KEYS.alice },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'skills-stdio', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect(client.getServerCapabilities()?.extensions?.['io.modelcontextprotocol/skills']).toEqual({});
      const skills = await listAll(client);
      expect(skills.map((skill) => skill.frontmatter['name'])).toEqual(['calendar-digest', 'open-help', 'work-reporting']);
      const got = await client.request(raw('skills/get', { uri: 'skill://work-reporting/SKILL.md' }), getSchema);
      expect(got.skill.resources[0]?.digest).toBe(sha256(await read(client, got.skill.uri)));
      await expect(client.request(raw('resources/read', { uri: 'skill://personal-automation/SKILL.md' }), readSchema)).rejects.toMatchObject({ code: -32602 });
    } finally {
      await client.close();
    }
    expect(stderr).not.toMatch(/error|exception/i);
  });
});

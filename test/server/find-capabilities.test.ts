// find_capabilities through the SDK client: the tool and its prefix, entries with tags and
// lifecyclePhase, bounded and strict input, visibility as list_capabilities (user capabilities for
// their owner), and answers that capabilities the caller cannot see do not change (fast-check).
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestOf } from '../../compiler/canonical.js';
import { toolNames } from '../../compiler/contract.js';
import { manifestIntegrity } from '../../compiler/manifest.js';
import type { Manifest, ManifestCapability, Toolsets } from '../../compiler/types.js';
import { Catalog } from '../../server/catalog.js';
import { authenticatedCaller, type Caller } from '../../server/identity.js';
import { Grants } from '../../server/permissions.js';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { SqliteUserStore } from '../../server/user-store/sqlite.js';
import { MAX_QUERY_CHARS } from '../../server/tools/find-capabilities.js';
import { WEEKLY_DIGEST, startHarness, type Harness } from '../user-capabilities/harness.js';
import { inMemoryClient, makeCapability, structured, tempDir, writeManifest } from './helpers.js';
import { runs } from '../support/property.js';

interface Facts {
  id: string;
  name: string;
  description: string;
  whenToUse: string[];
  requiredToolsets?: string[];
  lifecyclePhase?: string;
  tags?: string[];
}

function capability(facts: Facts): ManifestCapability {
  const base = makeCapability({ id: facts.id, requiredToolsets: facts.requiredToolsets ?? [] });
  const { digest: _old, ...rest } = {
    ...base,
    name: facts.name,
    description: facts.description,
    whenToUse: facts.whenToUse,
    ...(facts.lifecyclePhase !== undefined ? { lifecyclePhase: facts.lifecyclePhase } : {}),
    ...(facts.tags !== undefined ? { tags: facts.tags } : {}),
  };
  return { ...rest, digest: digestOf(rest) };
}

function manifestOf(facts: Facts[]): Manifest {
  const capabilities = facts.map(capability).sort((a, b) => (a.id < b.id ? -1 : 1));
  const toolsets: Toolsets = {
    reports: { description: 'Reports', tools: { submit_report: { action: 'write', description: 'Submit a report' } } },
    ops: { description: 'Operations', tools: { page_oncall: { action: 'write', description: 'Page the on-call engineer' } } },
    secret: { description: 'Secret', tools: { open_vault: { action: 'read', description: 'Open the vault' } } },
  };
  const body = { schemaVersion: 1, generator: 'capreg-test', revision: digestOf({ capabilities, toolsets }), source: null, toolsets, capabilities };
  return { ...body, integrity: manifestIntegrity(body) };
}

const VISIBLE: Facts[] = [
  {
    id: 'work-reporting',
    name: 'Work reporting',
    description: 'Write the weekly work report.',
    whenToUse: ['write my weekly report', 'summarize my week'],
    requiredToolsets: ['reports'],
    tags: ['productivity', 'reporting'],
  },
  {
    id: 'test-driven-development',
    name: 'Test-driven development',
    description: 'Write a failing test first.',
    whenToUse: ['implement a feature test first', 'fix a bug with a test'],
    lifecyclePhase: 'build',
    tags: ['engineering', 'testing'],
  },
  { id: 'open-help', name: 'Open help', description: 'Answer questions about the registry.', whenToUse: ['how do I use this'] },
];

const HIDDEN: Facts[] = [
  {
    id: 'incident-response',
    name: 'Incident response',
    description: 'Handle a production outage and write the incident report.',
    whenToUse: ['production is down', 'write the weekly incident report'],
    requiredToolsets: ['ops'],
    lifecyclePhase: 'ship',
    tags: ['engineering', 'reporting'],
  },
  {
    id: 'vault-access',
    name: 'Vault access',
    description: 'Test the vault report.',
    whenToUse: ['open the vault', 'weekly test report'],
    requiredToolsets: ['secret'],
    lifecyclePhase: 'build',
    tags: ['testing'],
  },
];

function callerWith(scopes: string[]): () => Caller {
  const caller = authenticatedCaller('tester', 'Tester', scopes, 'api-key');
  return () => caller;
}

let dir: string;
let runtime: Runtime;
let prefixed: Runtime;

beforeAll(async () => {
  dir = tempDir('capreg-find-');
  writeManifest(path.join(dir, 'manifest.json'), manifestOf([...VISIBLE, ...HIDDEN]));
  runtime = await startRuntime({ manifestFile: path.join(dir, 'manifest.json'), watch: false });
  prefixed = await startRuntime({ manifestFile: path.join(dir, 'manifest.json'), watch: false, toolPrefix: 'yi_' });
});

afterAll(async () => {
  await runtime.close();
  await prefixed.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('find_capabilities', () => {
  it('is registered for every session, with the prefix applied', async () => {
    const plain = await inMemoryClient(runtime);
    const withPrefix = await inMemoryClient(prefixed);
    try {
      expect((await plain.client.listTools()).tools.map((tool) => tool.name)).toContain('find_capabilities');
      const names = (await withPrefix.client.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain('yi_find_capabilities');
      expect(names).not.toContain('find_capabilities');
    } finally {
      await plain.close();
      await withPrefix.close();
    }
  });

  it('answers list entries (with tags and lifecyclePhase when set), best first, with score and matched fields', async () => {
    const { client, close } = await inMemoryClient(runtime, callerWith(['reports:read']));
    try {
      const listed = structured(await client.callTool({ name: 'list_capabilities', arguments: {} }));
      const entries = listed.capabilities as Record<string, unknown>[];
      const tdd = entries.find((entry) => entry.id === 'test-driven-development');
      expect(tdd).toMatchObject({ lifecyclePhase: 'build', tags: ['engineering', 'testing'] });
      expect(entries.find((entry) => entry.id === 'open-help')).not.toHaveProperty('tags');

      const found = structured(await client.callTool({ name: 'find_capabilities', arguments: { query: 'weekly report' } }));
      expect(found.catalogVersion).toBe(listed.catalogVersion);
      const hits = found.capabilities as Record<string, unknown>[];
      const { score, matched, ...entry } = hits[0] as Record<string, unknown>;
      expect(entry).toEqual(entries.find((each) => each.id === 'work-reporting'));
      expect(score).toBeGreaterThan(0);
      expect(matched).toEqual(expect.arrayContaining(['whenToUse', 'description']));
      // The hidden incident report matches the query better than anything, and is not there.
      expect(hits.map((hit) => hit.id)).not.toContain('incident-response');
    } finally {
      await close();
    }
  });

  it('narrows by lifecyclePhase and tags; a Chinese request finds an English capability', async () => {
    const { client, close } = await inMemoryClient(runtime, callerWith(['reports:read']));
    try {
      const byPhase = structured(await client.callTool({ name: 'find_capabilities', arguments: { lifecyclePhase: 'build' } }));
      expect((byPhase.capabilities as { id: string; matched: string[] }[]).map((hit) => [hit.id, hit.matched])).toEqual([
        ['test-driven-development', ['lifecyclePhase']],
      ]);
      const byTags = structured(await client.callTool({ name: 'find_capabilities', arguments: { tags: ['engineering', 'testing'], query: 'bug' } }));
      expect((byTags.capabilities as { id: string }[]).map((hit) => hit.id)).toEqual(['test-driven-development']);
      const chinese = structured(await client.callTool({ name: 'find_capabilities', arguments: { query: '帮我写本周的周报', limit: 1 } }));
      expect((chinese.capabilities as { id: string }[]).map((hit) => hit.id)).toEqual(['work-reporting']);
    } finally {
      await close();
    }
  });

  it('refuses input out of bounds or without a criterion, with a typed code or a validation error', async () => {
    const { client, close } = await inMemoryClient(runtime);
    try {
      const none = await client.callTool({ name: 'find_capabilities', arguments: { limit: 5 } });
      expect(none.isError).toBe(true);
      expect(structured(none)).toEqual({ success: false, error: 'give at least one of query, lifecyclePhase or tags', code: 'invalid-arguments' });
      for (const args of [
        { query: 'x'.repeat(MAX_QUERY_CHARS + 1) },
        { query: 'report', limit: 0 },
        { query: 'report', limit: 51 },
        { query: 'report', limit: 2.5 },
        { lifecyclePhase: 'deploy' },
        { tags: [] },
        { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) },
        { query: 'report', owner: 'alice' },
      ]) {
        const result = await client.callTool({ name: 'find_capabilities', arguments: args });
        expect(result.isError, JSON.stringify(args).slice(0, 80)).toBe(true);
      }
      const longest = await client.callTool({ name: 'find_capabilities', arguments: { query: 'report '.repeat(100).slice(0, MAX_QUERY_CHARS), limit: 50 } });
      expect(longest.isError).toBeFalsy();
    } finally {
      await close();
    }
  });
});

describe('find_capabilities does not depend on what the caller cannot see', () => {
  const WORDS = [
    'weekly',
    'report',
    'test',
    'bug',
    'incident',
    'production',
    'vault',
    'write',
    'feature',
    '周报',
    '测试',
    '故障',
    'reprot',
    'help',
    'summarize',
  ];
  const grants = new Grants(['reports:read']);
  const small = new Catalog(manifestOf(VISIBLE), toolNames(''));
  const large = new Catalog(manifestOf([...VISIBLE, ...HIDDEN]), toolNames(''));
  const answer = (catalog: Catalog, request: { query?: string; lifecyclePhase?: string; tags?: string[]; limit: number }, warning?: string): string => {
    const platform = catalog.visibleCapabilities(grants);
    const sent = catalog.search.answer({ catalogVersion: platform.catalogVersion, platform, user: [] }, request, warning);
    // The text is spliced from cached entry JSON: it must be the structured value's JSON, byte for byte.
    expect(sent.text).toBe(JSON.stringify(sent.structured));
    return sent.text;
  };

  it('gives byte-identical answers (results, order, scores) with or without hidden capabilities', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 5 }),
        fc.option(fc.constantFrom('build', 'ship'), { nil: undefined }),
        fc.option(fc.subarray(['engineering', 'testing', 'reporting', 'productivity'], { minLength: 1 }), { nil: undefined }),
        fc.integer({ min: 1, max: 50 }),
        fc.option(fc.constantFrom('the store is unavailable', 'quote " and \\ backslash'), { nil: undefined }),
        (words, lifecyclePhase, tags, limit, warning) => {
          const request = { query: words.join(' '), lifecyclePhase, tags, limit };
          expect(answer(large, request, warning)).toBe(answer(small, request, warning));
        },
      ),
      { numRuns: runs(300) },
    );
  });

  it('answers the same bytes through the tool for a caller who cannot see the difference', async () => {
    const smallDir = tempDir('capreg-find-small-');
    writeManifest(path.join(smallDir, 'manifest.json'), manifestOf(VISIBLE));
    const smallRuntime = await startRuntime({ manifestFile: path.join(smallDir, 'manifest.json'), watch: false });
    const a = await inMemoryClient(runtime, callerWith(['reports:read']));
    const b = await inMemoryClient(smallRuntime, callerWith(['reports:read']));
    try {
      for (const query of ['weekly report', 'write a test', '周报', 'incident report', 'vault']) {
        const content = (client: typeof a.client): Promise<unknown> =>
          client.callTool({ name: 'find_capabilities', arguments: { query } }).then((result) => result.content);
        expect(await content(a.client)).toEqual(await content(b.client));
      }
    } finally {
      await a.close();
      await b.close();
      await smallRuntime.close();
      fs.rmSync(smallDir, { recursive: true, force: true });
    }
  });
});

describe('find_capabilities and user capabilities', () => {
  let harness: Harness;
  let scratch: string;

  beforeAll(async () => {
    scratch = tempDir('capreg-find-user-');
    harness = await startHarness(() => Promise.resolve(new SqliteUserStore(path.join(scratch, 'user-capabilities.db'))));
  });

  afterAll(async () => {
    await harness.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('finds an owner’s own user capability for them, and for nobody else', async () => {
    const alice = await harness.session('key-alice');
    const bob = await harness.session('key-bob');
    const saved = await alice.json('save_user_capability', { markdown: WEEKLY_DIGEST });
    expect(saved.success).toBe(true);
    const mine = await alice.json('find_capabilities', { query: 'send my weekly digest' });
    const hits = mine.capabilities as Record<string, unknown>[];
    expect(hits[0]).toMatchObject({ id: saved.capabilityId, isUserDefined: true });
    expect(mine.catalogVersion).toBe((await alice.json('list_capabilities')).catalogVersion);
    const theirs = await bob.json('find_capabilities', { query: 'send my weekly digest' });
    expect((theirs.capabilities as { id: string }[]).map((hit) => hit.id)).not.toContain(saved.capabilityId);
  });
});

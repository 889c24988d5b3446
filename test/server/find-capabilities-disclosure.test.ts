// Progressive disclosure of list_capabilities and the thin skill's budget: below the catalog budget
// the answer is byte-identical to the full listing; above it the compact answer fits the budget
// (counted with compiler/tokens.ts) at 10, 100, 1,000 and 10,000 visible capabilities.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { digestOf } from '../../compiler/canonical.js';
import { toolNames } from '../../compiler/contract.js';
import { manifestIntegrity } from '../../compiler/manifest.js';
import { renderClientSkill } from '../../compiler/skill.js';
import { countTokens } from '../../compiler/tokens.js';
import type { Manifest, ManifestCapability } from '../../compiler/types.js';
import { Catalog } from '../../server/catalog.js';
import { ListingAnswers } from '../../server/listing-answers.js';
import { Grants } from '../../server/permissions.js';
import { startRuntime } from '../../server/runtime.js';
import type { UserCatalogEntry } from '../../server/user-capabilities.js';
import { TOOLSETS, inMemoryClient, structured, tempDir, writeManifest } from './helpers.js';

const PHASES = ['define', 'plan', 'build', 'verify', 'review', 'ship'];
const TAGS = ['reporting', 'engineering', 'testing', 'finance', 'support', 'security', 'data', 'hr', 'sales', 'ops'];

function generated(count: number, catalogBudget?: number): Manifest {
  const capabilities: ManifestCapability[] = [];
  for (let i = 0; i < count; i += 1) {
    const id = `cap-${String(i).padStart(5, '0')}`;
    const base = {
      id,
      name: `Capability ${i}`,
      description: `Handles request family ${i}: gathers the inputs, checks them and writes the result for the team.`,
      whenToUse: [`handle family ${i} requests`, `when someone asks about family ${i}`],
      requiredToolsets: [],
      optionalToolsets: [],
      protocolVersion: '1.0.0',
      protocolUpdated: '2025-01-01',
      references: [],
      ...(i % 7 === 0 ? {} : { lifecyclePhase: PHASES[i % PHASES.length] }),
      tags: [TAGS[i % TAGS.length] as string, `team-${i % 97}`],
      protocol: `---\nprotocol_version: 1.0.0\nprotocol_updated: 2025-01-01\n---\n# ${id}\n`,
    };
    capabilities.push({ ...base, digest: digestOf(base) });
  }
  const rules =
    catalogBudget === undefined
      ? {}
      : { rules: { 'token-budget': { level: 'warn' as const, options: { bodyWarn: 2000, bodyError: 5000, catalog: catalogBudget } } } };
  const body = {
    schemaVersion: 1,
    generator: 'capreg-test',
    revision: digestOf({ count, catalogBudget }),
    source: null,
    toolsets: TOOLSETS,
    capabilities,
    ...rules,
  };
  return { ...body, integrity: manifestIntegrity(body) };
}

const everything = new Grants([]);

describe('list_capabilities: progressive disclosure', () => {
  it.each([10, 100, 1_000, 10_000])('at %i visible capabilities the answer fits the budget, or is the full listing unchanged', (count) => {
    const catalog = new Catalog(generated(count), toolNames(''));
    const listing = catalog.visibleCapabilities(everything);
    const answer = catalog.answers.platform(listing);
    const full = JSON.stringify({ success: true, catalogVersion: listing.catalogVersion, capabilities: listing.capabilities });
    const fullTokens = countTokens(JSON.stringify(listing.capabilities));
    if (fullTokens <= 8_000) {
      expect(answer.text).toBe(full);
      expect(count).toBe(10);
      return;
    }
    expect(countTokens(answer.text)).toBeLessThanOrEqual(8_000);
    expect(JSON.parse(answer.text)).toEqual(answer.structured);
    const compact = answer.structured as {
      complete: boolean;
      findTool: string;
      total: number;
      note: string;
      capabilities: Record<string, unknown>[];
      overview: { lifecyclePhase: Record<string, number>; tags: Record<string, number> };
    };
    expect(compact.complete).toBe(false);
    expect(compact.findTool).toBe('find_capabilities');
    expect(compact.note).toContain('find_capabilities');
    expect(compact.total).toBe(count);
    expect(compact.capabilities.length).toBeGreaterThan(0);
    for (const entry of compact.capabilities) expect(entry).not.toHaveProperty('whenToUse');
    // Entries keep everything else of the listing's entry, in the listing's order.
    const { whenToUse: _triggers, ...first } = listing.capabilities[0] as unknown as Record<string, unknown>;
    expect(compact.capabilities[0]).toEqual(first);
    expect(Object.values(compact.overview.lifecyclePhase).reduce((a, b) => a + b, 0)).toBe(count);
    expect(compact.overview.tags.reporting).toBe(Math.ceil(count / TAGS.length));
  });

  it('takes the budget from the manifest (token-budget catalog) and puts an owner’s own entries first', () => {
    const catalog = new Catalog(generated(100, 600), toolNames('yi_'));
    const listing = catalog.visibleCapabilities(everything);
    const answer = catalog.answers.platform(listing);
    expect(countTokens(answer.text)).toBeLessThanOrEqual(600);
    expect(answer.structured.findTool).toBe('yi_find_capabilities');

    const answers = new ListingAnswers({ disclosure: { budget: 600, findTool: 'find_capabilities' } });
    const own: UserCatalogEntry = { ...(listing.capabilities[5] as UserCatalogEntry), id: 'user:zz1', isUserDefined: true };
    const owner = answers.caller({ platform: listing, user: [own], catalogVersion: 'sha256:owner' });
    expect(countTokens(owner.text)).toBeLessThanOrEqual(600);
    expect((owner.structured.capabilities as { id: string }[])[0]?.id).toBe('user:zz1');
    expect(owner.structured.total).toBe(101);
  });

  it('answers the compact form through the SDK client, schema-valid', async () => {
    const dir = tempDir('capreg-disclosure-');
    try {
      writeManifest(path.join(dir, 'manifest.json'), generated(1_000));
      const runtime = await startRuntime({ manifestFile: path.join(dir, 'manifest.json'), watch: false });
      const { client, close } = await inMemoryClient(runtime);
      try {
        const answer = structured(await client.callTool({ name: 'list_capabilities', arguments: {} }));
        expect(answer.complete).toBe(false);
        expect(answer.total).toBe(1_000);
        const found = structured(await client.callTool({ name: 'find_capabilities', arguments: { query: 'family 742 requests', limit: 3 } }));
        expect((found.capabilities as { id: string }[])[0]?.id).toBe('cap-00742');
      } finally {
        await close();
        await runtime.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the thin skill', () => {
  it.each(['', 'yi_'])('teaches list → find → get in 500–800 tokens with the prefix %j applied', (prefix) => {
    const skill = renderClientSkill({ toolPrefix: prefix });
    const tokens = countTokens(skill);
    expect(tokens).toBeGreaterThanOrEqual(500);
    expect(tokens).toBeLessThanOrEqual(800);
    const names = toolNames(prefix);
    const list = skill.indexOf(`\`${names.listCapabilities}\``);
    const find = skill.indexOf(`\`${names.findCapabilities}\``);
    const get = skill.indexOf(`\`${names.getCapabilityProtocol}\``);
    expect(list).toBeGreaterThan(0);
    expect(find).toBeGreaterThan(list);
    expect(get).toBeGreaterThan(find);
    expect(skill).toContain('complete');
  });
});

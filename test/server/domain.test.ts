// The SDK-free core: scopes, principals, catalog projections and the reloadable file.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../../server/catalog.js';
import { Grants, canUse, parseScope } from '../../server/permissions.js';
import { parsePrincipals } from '../../server/principals.js';
import { ReloadableFile, LoadError } from '../../server/reloadable.js';
import { servedManifestFromText } from '../../server/manifest-store.js';
import { toolNames } from '../../compiler/contract.js';
import { serializeManifest } from '../../compiler/manifest.js';
import { STANDARD_CAPABILITIES, makeManifest, principalsYaml, sha256Hex, tempDir } from './helpers.js';

describe('scopes', () => {
  it('parses <toolset>:<action> and nothing else', () => {
    expect(parseScope('reports:read')).toEqual({ toolset: 'reports', action: 'read' });
    expect(parseScope('work-logs:admin')).toEqual({ toolset: 'work-logs', action: 'admin' });
    for (const text of ['reports', 'reports:', ':read', 'reports:READ', 'reports:delete', 'a:b:read', ' reports:read', 'openid']) {
      expect(parseScope(text)).toBeUndefined();
    }
  });

  it('orders read < write < admin', () => {
    const grants = new Grants(['a:read', 'b:write', 'c:admin', 'c:read']);
    expect([grants.allows('a', 'read'), grants.allows('a', 'write')]).toEqual([true, false]);
    expect([grants.allows('b', 'read'), grants.allows('b', 'write'), grants.allows('b', 'admin')]).toEqual([true, true, false]);
    expect([grants.allows('c', 'read'), grants.allows('c', 'write'), grants.allows('c', 'admin')]).toEqual([true, true, true]);
    expect(grants.allows('__proto__', 'read')).toBe(false);
    expect(canUse(grants, ['a', 'c'])).toBe(true);
    expect(canUse(grants, ['a', 'd'])).toBe(false);
    expect(canUse(Grants.none, [])).toBe(true);
  });
});

describe('principals file', () => {
  it('finds a principal by its key and by nothing else', () => {
    const parsed = parsePrincipals(
      principalsYaml([
        { id: 'a', key: 'secret-a', scopes: ['x:read'] },
        { id: 'b', key: 'secret-b', scopes: [] },
      ]),
    );
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.registry.findByKey('secret-a')).toEqual({ id: 'a', name: 'a', scopes: ['x:read'] });
    expect(parsed.registry.findByKey('secret-b')?.id).toBe('b');
    expect(parsed.registry.findByKey(sha256Hex('secret-a'))).toBeUndefined();
    expect(parsed.registry.findByKey('')).toBeUndefined();
    expect(parsed.registry.findByKey('secret-a ')).toBeUndefined();
  });

  it('finds a key among 40,000 principals (the size the file is bounded for) without comparing it with each of them', () => {
    // Every request authenticates twice (headers, then body) and every refused one once: compared
    // with every entry, 40,000 principals made each lookup ~3 ms, so unauthenticated requests cost
    // the server 3 ms each and a valid key's ping went from ~260 to ~60 requests a second.
    const count = 40_000;
    const parsed = parsePrincipals(principalsYaml(Array.from({ length: count }, (_, i) => ({ id: `p${i}`, key: `key-${i}`, scopes: ['x:read'] }))));
    if (!parsed.ok) throw new Error(parsed.error);
    const { registry } = parsed;
    const started = performance.now();
    for (let i = 0; i < 2_000; i += 1) {
      expect(registry.findByKey(`key-${(i * 7919) % count}`)?.id).toBe(`p${(i * 7919) % count}`);
      expect(registry.findByKey(`not-a-key-${i}`)).toBeUndefined();
    }
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  const invalid: [string, string, RegExp][] = [
    ['not YAML', 'principals: [', /not valid YAML/],
    ['no list', 'people: []', /`principals` list/],
    ['a plaintext key', `principals:\n  - id: a\n    key: hunter2\n    keySha256: ${'a'.repeat(64)}\n    scopes: []`, /unknown field "key".*keySha256/],
    ['a short hash', 'principals:\n  - id: a\n    keySha256: abc\n    scopes: []', /64 lowercase hex/],
    ['an upper-case hash', `principals:\n  - id: a\n    keySha256: ${'A'.repeat(64)}\n    scopes: []`, /64 lowercase hex/],
    ['a bad scope', `principals:\n  - id: a\n    keySha256: ${'a'.repeat(64)}\n    scopes: [reports:owner]`, /"reports:owner"/],
    ['scopes missing', `principals:\n  - id: a\n    keySha256: ${'a'.repeat(64)}`, /scopes must be a list/],
    [
      'duplicate ids',
      `principals:\n  - {id: a, keySha256: ${'a'.repeat(64)}, scopes: []}\n  - {id: a, keySha256: ${'b'.repeat(64)}, scopes: []}`,
      /principals\[1\]\.id is the same as principals\[0\]\.id/,
    ],
    [
      'a shared key',
      `principals:\n  - {id: a, keySha256: ${'a'.repeat(64)}, scopes: []}\n  - {id: b, keySha256: ${'a'.repeat(64)}, scopes: []}`,
      /same as an earlier/,
    ],
    ['duplicate YAML keys', `principals:\n  - id: a\n    id: b\n    keySha256: ${'a'.repeat(64)}\n    scopes: []`, /not valid YAML/],
  ];
  for (const [label, text, message] of invalid) {
    it(`rejects ${label}`, () => {
      const parsed = parsePrincipals(text);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) {
        expect(parsed.error).toMatch(message);
        expect(parsed.error).not.toContain('hunter2');
      }
    });
  }

  it('accepts the demo file, and each documented demo key names its principal', () => {
    const file = path.resolve(import.meta.dirname, '../../examples/principals.demo.yaml');
    const parsed = parsePrincipals(fs.readFileSync(file, 'utf8'));
    if (!parsed.ok) throw new Error(parsed.error);
    for (const id of ['admin', 'reporter', 'engineer', 'viewer']) {
      expect(parsed.registry.findByKey(`capreg-demo-${id}`)?.id).toBe(`demo-${id}`);
    }
  });
});

describe('catalog', () => {
  const manifest = makeManifest(STANDARD_CAPABILITIES);

  it('looks up a projection per caller class instead of filtering again', () => {
    const catalog = new Catalog(manifest, toolNames(''));
    const first = catalog.visibleCapabilities(new Grants(['reports:read']));
    // Same deciding toolsets (scopes on unknown toolsets and higher actions do not matter).
    expect(catalog.visibleCapabilities(new Grants(['reports:admin', 'elsewhere:read']))).toBe(first);
    expect(catalog.visibleCapabilities(new Grants(['calendar:read']))).not.toBe(first);
    expect(first.capabilities.map((entry) => entry.id)).toEqual(['open-help', 'work-reporting']);
  });

  it('keeps catalogVersion stable across loads of the same manifest and changes it with what the caller sees', () => {
    const a = new Catalog(manifest, toolNames('')).visibleCapabilities(new Grants(['reports:read']));
    const b = new Catalog(manifest, toolNames('')).visibleCapabilities(new Grants(['reports:read']));
    expect(a.catalogVersion).toBe(b.catalogVersion);
    const prefixed = new Catalog(manifest, toolNames('x_')).visibleCapabilities(new Grants(['reports:read']));
    expect(prefixed.catalogVersion).not.toBe(a.catalogVersion);
    const changedHidden = makeManifest(STANDARD_CAPABILITIES.map((c) => (c.id === 'calendar-digest' ? { ...c, description: 'new' } : c)));
    expect(new Catalog(changedHidden, toolNames('')).visibleCapabilities(new Grants(['reports:read'])).catalogVersion).toBe(a.catalogVersion);
    const changedVisible = makeManifest(STANDARD_CAPABILITIES, { marker: 'v2' });
    expect(new Catalog(changedVisible, toolNames('')).visibleCapabilities(new Grants(['reports:read'])).catalogVersion).not.toBe(a.catalogVersion);
  });

  it('answers unknown, forbidden and non-string ids alike (undefined)', () => {
    const catalog = new Catalog(manifest, toolNames(''));
    const grants = new Grants(['calendar:read']);
    expect(catalog.accessibleCapability(grants, 'calendar-digest')?.id).toBe('calendar-digest');
    for (const id of ['work-reporting', 'nope', '__proto__', 'constructor', 42, null, undefined, ['open-help'], { id: 'open-help' }]) {
      expect(catalog.accessibleCapability(grants, id)).toBeUndefined();
    }
  });

  it('never serves a capability whose protocol is blank', () => {
    const blank = makeManifest([{ id: 'blank', protocol: '   \n' }, { id: 'fine' }]);
    const catalog = new Catalog(blank, toolNames(''));
    expect(catalog.size).toBe(1);
    expect(catalog.accessibleCapability(Grants.none, 'blank')).toBeUndefined();
    expect(catalog.visibleCapabilities(Grants.none).capabilities.map((entry) => entry.id)).toEqual(['fine']);
  });

  it('bounds the number of cached caller classes', () => {
    const many = makeManifest(
      Array.from({ length: 300 }, (_, i) => ({ id: `c${i}`, requiredToolsets: [`t${i}`] })),
      {
        toolsets: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`t${i}`, { description: '', tools: {} }])),
      },
    );
    const catalog = new Catalog(many, toolNames(''));
    const first = catalog.visibleCapabilities(new Grants(['t0:read']));
    for (let i = 1; i < 300; i += 1) catalog.visibleCapabilities(new Grants([`t${i}:read`]));
    // Evicted (least recently used), so computed again: equal content, a new object.
    const again = catalog.visibleCapabilities(new Grants(['t0:read']));
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });
});

describe('manifest errors', () => {
  it('never quote manifest content', () => {
    for (const text of ['secret protocol text', '{"a": "secret protocol" x}', '{"schemaVersion": 1, "protocol": "secret']) {
      const parsed = servedManifestFromText(text, toolNames(''));
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) {
        expect(parsed.error).toMatch(/^manifest is not valid JSON/);
        expect(parsed.error).not.toMatch(/secret|protocol/);
      }
    }
  });
});

describe('ReloadableFile', () => {
  it('refuses to open a bad file with a typed error', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'manifest.json');
    const open = (): Promise<unknown> => ReloadableFile.open({ file, label: 'manifest', parse: (text) => servedManifestFromText(text, toolNames('')) });
    await expect(open()).rejects.toMatchObject({ name: 'LoadError', code: 'unreadable' });
    fs.writeFileSync(file, '{');
    await expect(open()).rejects.toBeInstanceOf(LoadError);
    await expect(open()).rejects.toMatchObject({ code: 'invalid' });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('activates good versions in one step and keeps the last good one through a bad one', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'manifest.json');
    const v1 = makeManifest(STANDARD_CAPABILITIES, { marker: 'one' });
    const v2 = makeManifest(STANDARD_CAPABILITIES, { marker: 'two' });
    fs.writeFileSync(file, serializeManifest(v1));
    const store = await ReloadableFile.open({ file, label: 'manifest', parse: (text) => servedManifestFromText(text, toolNames('')) });
    const activations: string[] = [];
    store.onActivate((next, previous) => activations.push(`${previous.value.manifest.revision}->${next.value.manifest.revision}`));
    const held = store.snapshot;

    expect(await store.reload()).toBe('unchanged');
    fs.writeFileSync(file, serializeManifest(v2).slice(0, 100));
    expect(await store.reload()).toBe('rejected');
    expect(store.current.manifest.revision).toBe(v1.revision);
    expect(store.lastReloadError).toMatch(/manifest reload rejected.*not valid JSON/);
    expect(await store.reload()).toBe('unchanged');

    fs.writeFileSync(file, serializeManifest(v2));
    expect(await store.reload()).toBe('activated');
    expect(store.current.manifest.revision).toBe(v2.revision);
    expect(store.lastReloadError).toBeNull();
    expect(activations).toEqual([`${v1.revision}->${v2.revision}`]);
    // A reader holding the old snapshot still has a whole, consistent old version.
    expect(held.value.manifest.revision).toBe(v1.revision);
    expect(held.value.catalog.revision).toBe(v1.revision);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

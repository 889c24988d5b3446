// Hot reload, OPA style: a new manifest is verified off to the side and swapped in one step; a bad
// one is refused while the last good one keeps serving. And under load: 20 clients calling while
// the manifest is rewritten 50 times, every answer complete and from one revision.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manifestIntegrity, serializeManifest } from '../../compiler/manifest.js';
import type { Manifest } from '../../compiler/types.js';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { startHttpServer, type HttpServerHandle } from '../../server/transports/http.js';
import {
  PRINCIPALS,
  STANDARD_CAPABILITIES,
  eventually,
  httpClient,
  makeManifest,
  principalsYaml,
  structured,
  tempDir,
  writeAtomic,
  writeManifest,
  type CapabilitySpec,
} from './helpers.js';

interface Health {
  status: string;
  revision: string;
  capabilities: number;
  loadedAt: string;
  lastReloadError: string | null;
}

let dir: string;
let manifestFile: string;
let runtime: Runtime;
let http: HttpServerHandle;

async function health(): Promise<Health> {
  return (await (await fetch(`${http.url}/healthz`)).json()) as Health;
}

async function start(manifest: Manifest): Promise<void> {
  writeManifest(manifestFile, manifest);
  const principalsFile = path.join(dir, 'principals.yaml');
  writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
  runtime = await startRuntime({ manifestFile, principalsFile, debounceMs: 20 });
  http = await startHttpServer(runtime, { port: 0 });
}

beforeEach(() => {
  dir = tempDir();
  manifestFile = path.join(dir, 'manifest.json');
});

afterEach(async () => {
  await http?.close();
  await runtime?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('hot reload: good, bad, good', () => {
  const bad: { label: string; write: (good: Manifest) => void }[] = [
    { label: 'a half-written file', write: (good) => fs.writeFileSync(manifestFile, serializeManifest(good).slice(0, 300)) },
    { label: 'an empty file', write: () => fs.writeFileSync(manifestFile, '') },
    {
      label: 'a tampered file (integrity mismatch)',
      write: (good) => writeAtomic(manifestFile, serializeManifest(good).replace('Do not skip steps.', 'Skip every step.')),
    },
    { label: 'an unknown schemaVersion', write: (good) => writeAtomic(manifestFile, serializeManifest({ ...good, schemaVersion: 2 })) },
    {
      label: 'a capability without a protocol',
      write: (good) => {
        const text = serializeManifest(good);
        const data = JSON.parse(text) as { capabilities: Record<string, unknown>[] };
        delete data.capabilities[0]?.['protocol'];
        writeAtomic(manifestFile, JSON.stringify(data));
      },
    },
    { label: 'a deleted file', write: () => fs.rmSync(manifestFile) },
    // Integrity made to match: the build (with frontmatter-schema off) wrote such manifests, and the
    // server served them: every get_capability_protocol of it threw "Invalid time value" (audited as
    // served), and skills/list failed whole ("list.join is not a function").
    { label: 'a protocolUpdated that is not a date', write: (good) => writeWithField(good, 'protocolUpdated', 'next week') },
    { label: 'tags that are not a list', write: (good) => writeWithField(good, 'tags', 'weekly') },
  ];

  function writeWithField(good: Manifest, field: string, value: unknown): void {
    const { integrity: _stale, ...rest } = JSON.parse(serializeManifest(good)) as Manifest;
    const capability = rest.capabilities.find((entry) => entry.id === 'work-reporting') as unknown as Record<string, unknown>;
    capability[field] = value;
    writeAtomic(manifestFile, JSON.stringify({ ...rest, integrity: manifestIntegrity(rest) }));
  }

  for (const { label, write } of bad) {
    it(`keeps serving the old revision through ${label}`, async () => {
      const first = makeManifest(STANDARD_CAPABILITIES, { marker: 'generation-1' });
      await start(first);
      const client = await httpClient(http.url, 'key-alice-reports');
      const before = await health();
      expect(before).toMatchObject({ status: 'ok', revision: first.revision, lastReloadError: null });

      write(makeManifest(STANDARD_CAPABILITIES, { marker: 'generation-2' }));
      await eventually(async () => expect((await health()).lastReloadError).not.toBeNull());
      const during = await health();
      expect(during.status).toBe('degraded');
      expect(during.revision).toBe(first.revision);
      expect(during.loadedAt).toBe(before.loadedAt);
      expect(during.lastReloadError).not.toContain(dir);
      const protocol = structured(await client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'work-reporting' } }));
      expect(protocol['protocol']).toContain('generation-1');

      const third = makeManifest([...STANDARD_CAPABILITIES, { id: 'added-later' }], { marker: 'generation-3' });
      writeManifest(manifestFile, third);
      await eventually(async () => expect(await health()).toMatchObject({ status: 'ok', revision: third.revision, lastReloadError: null, capabilities: 5 }));
      const after = structured(await client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'work-reporting' } }));
      expect(after['protocol']).toContain('generation-3');
      await client.close();
    });
  }

  it('follows a symlink swap and an in-place rewrite', async () => {
    const releases = path.join(dir, 'releases');
    fs.mkdirSync(releases);
    const v1 = makeManifest(STANDARD_CAPABILITIES, { marker: 'v1' });
    const v2 = makeManifest(STANDARD_CAPABILITIES, { marker: 'v2' });
    const v3 = makeManifest(STANDARD_CAPABILITIES, { marker: 'v3' });
    fs.writeFileSync(path.join(releases, 'v1.json'), serializeManifest(v1));
    fs.writeFileSync(path.join(releases, 'v2.json'), serializeManifest(v2));
    fs.symlinkSync(path.join(releases, 'v1.json'), manifestFile);
    const principalsFile = path.join(dir, 'principals.yaml');
    writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
    runtime = await startRuntime({ manifestFile, principalsFile, debounceMs: 20 });
    http = await startHttpServer(runtime, { port: 0 });
    expect((await health()).revision).toBe(v1.revision);

    // Atomic symlink swap: a new link, renamed over the old one.
    fs.symlinkSync(path.join(releases, 'v2.json'), `${manifestFile}.next`);
    fs.renameSync(`${manifestFile}.next`, manifestFile);
    await eventually(async () => expect((await health()).revision).toBe(v2.revision));

    // The link's target rewritten where it lives.
    fs.writeFileSync(path.join(releases, 'v2.json'), serializeManifest(v3));
    await eventually(async () => expect((await health()).revision).toBe(v3.revision));
  });
  it('follows a Kubernetes-style ..data symlink swap', async () => {
    const v1 = makeManifest(STANDARD_CAPABILITIES, { marker: 'k1' });
    const v2 = makeManifest(STANDARD_CAPABILITIES, { marker: 'k2' });
    fs.mkdirSync(path.join(dir, '..v1'));
    fs.writeFileSync(path.join(dir, '..v1', 'manifest.json'), serializeManifest(v1));
    fs.symlinkSync('..v1', path.join(dir, '..data'));
    fs.symlinkSync(path.join('..data', 'manifest.json'), manifestFile);
    const principalsFile = path.join(dir, 'principals.yaml');
    writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
    runtime = await startRuntime({ manifestFile, principalsFile, debounceMs: 20 });
    http = await startHttpServer(runtime, { port: 0 });
    expect((await health()).revision).toBe(v1.revision);

    fs.mkdirSync(path.join(dir, '..v2'));
    fs.writeFileSync(path.join(dir, '..v2', 'manifest.json'), serializeManifest(v2));
    fs.symlinkSync('..v2', path.join(dir, '..data_tmp'));
    fs.renameSync(path.join(dir, '..data_tmp'), path.join(dir, '..data'));
    await eventually(async () => expect((await health()).revision).toBe(v2.revision));
  });
});

describe('a refusal that quotes names from the manifest', () => {
  // /healthz is probed every few seconds, unauthenticated: a toolset named with 1 MB of text made
  // each answer (and each log line) 1.2 MB, with the terminal escapes in it as they were.
  it('cuts them short and escapes control characters in lastReloadError', async () => {
    await start(makeManifest(STANDARD_CAPABILITIES));
    const name = 'k\u001b[31m'.repeat(200_000);
    for (const edit of [
      (manifest: Record<string, unknown>) => ((manifest['toolsets'] as Record<string, unknown>)[name] = { description: 5, tools: {} }),
      (manifest: Record<string, unknown>) => (manifest['rules'] = { [name]: { level: 'warn', options: {} } }),
    ]) {
      const { integrity: _stale, ...rest } = JSON.parse(serializeManifest(makeManifest(STANDARD_CAPABILITIES, { marker: 'next' }))) as Manifest;
      edit(rest);
      writeAtomic(manifestFile, JSON.stringify({ ...rest, integrity: manifestIntegrity(rest) }));
      expect(await runtime.manifests.reload()).toBe('rejected');
      const error = (await health()).lastReloadError ?? '';
      expect(error).toMatch(/manifest (does not match its schema: \/toolsets\/k\\u001b\[31mk|sets rule "k\\u001b\[31mk)/);
      expect(error).not.toContain('\u001b');
      expect(error.length).toBeLessThan(600);
    }
  });
});

describe('hot reload under load', () => {
  it('answers 20 concurrent clients completely and from one revision while the manifest is rewritten 50 times', async () => {
    const specs: CapabilitySpec[] = Array.from({ length: 30 }, (_, index) => ({
      id: `cap-${String(index).padStart(2, '0')}`,
      requiredToolsets: index % 3 === 0 ? ['reports'] : [],
    }));
    const generation = (n: number): Manifest => makeManifest(specs, { marker: `generation-${n}` });
    const generations = Array.from({ length: 51 }, (_, n) => generation(n));
    const revisions = new Map(generations.map((manifest, n) => [manifest.revision, n]));
    await start(generations[0] as Manifest);

    let writing = true;
    const seen = new Set<number>();
    const problems: string[] = [];
    let answers = 0;
    const clients = await Promise.all(Array.from({ length: 20 }, () => httpClient(http.url, 'key-alice-reports')));

    const worker = async (client: (typeof clients)[number], index: number): Promise<void> => {
      let round = 0;
      while (writing || round < 2) {
        round += 1;
        const listing = structured(await client.callTool({ name: 'list_capabilities' }));
        const entries = listing['capabilities'] as { id: string; description: string }[];
        const markers = new Set(entries.map((entry) => /generation-(\d+)/.exec(entry.description)?.[1]));
        if (entries.length !== 30) problems.push(`listing with ${entries.length} entries`);
        if (markers.size !== 1) problems.push(`listing mixing generations ${[...markers].join(',')}`);
        const id = `cap-${String((index + round) % 30).padStart(2, '0')}`;
        const protocol = structured(await client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: id } }));
        const text = protocol['protocol'] as string;
        const match = /generation-(\d+)/.exec(text);
        if (protocol['success'] !== true || !match || !text.startsWith('---\n') || !text.endsWith('\n')) {
          problems.push(`incomplete protocol answer for ${id}`);
        } else {
          seen.add(Number(match[1]));
        }
        answers += 2;
      }
    };

    const writer = async (): Promise<void> => {
      for (let n = 1; n <= 50; n += 1) {
        // Half the writes are atomic renames, half are plain rewrites that readers may catch half-done.
        if (n % 2 === 0) writeManifest(manifestFile, generations[n] as Manifest);
        else fs.writeFileSync(manifestFile, serializeManifest(generations[n] as Manifest));
        await new Promise((resolve) => setTimeout(resolve, 15));
      }
      await eventually(async () => expect((await health()).revision).toBe(generations[50]?.revision), 10_000);
      writing = false;
    };

    await Promise.all([writer(), ...clients.map((client, index) => worker(client, index))]);
    await Promise.all(clients.map((client) => client.close()));

    expect(problems).toEqual([]);
    expect(answers).toBeGreaterThan(200);
    // The reloads really happened while the clients were calling.
    expect(seen.size).toBeGreaterThan(2);
    expect(seen.has(50)).toBe(true);
    const final = await health();
    expect(revisions.get(final.revision)).toBe(50);
    expect(final.lastReloadError).toBeNull();
  }, 60_000);
});

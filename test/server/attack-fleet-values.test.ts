// A manifest within the size limit but made of tiny values (`{},{},…`): JSON.parse built them all
// before any check, holding the event loop; 85 million of them (256 MiB) ran the heap out and
// aborted the server after ~10 minutes. The values are counted on the text first and the file is
// refused at once, the last good revision serving. Found by a fleet attack pass.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { countJsonValues, MAX_MANIFEST_JSON_VALUES, serializeManifest } from '../../compiler/manifest.js';
import { PRINCIPALS, STANDARD_CAPABILITIES, makeManifest, principalsYaml, tempDir, writeAtomic, writeManifest } from './helpers.js';
import { startServe, type ServeProcess } from './reload-harness.js';

let dir: string;
let manifestFile: string;
let principalsFile: string;
let server: ServeProcess | undefined;

beforeEach(() => {
  dir = tempDir();
  manifestFile = path.join(dir, 'manifest.json');
  principalsFile = path.join(dir, 'principals.yaml');
  writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
});

afterEach(async () => {
  await server?.stop();
  server = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('countJsonValues', () => {
  it('counts values outside strings, whatever the strings hold', () => {
    expect(countJsonValues(String.raw`["a\"b,c{[", "d\\", 1, {"x": [2, true]}]`, 100)).toBe(8);
    expect(countJsonValues('{"a": "\\\\\\"", "b": 1}', 100)).toBe(3);
    const text = serializeManifest(makeManifest(STANDARD_CAPABILITIES));
    let walked = 0;
    const walk = (value: unknown): void => {
      walked += 1;
      if (value !== null && typeof value === 'object') for (const child of Object.values(value)) walk(child);
    };
    walk(JSON.parse(text));
    // Empty objects and arrays count one more than they hold.
    expect(countJsonValues(text, Infinity)).toBeGreaterThanOrEqual(walked);
    expect(countJsonValues(text, Infinity)).toBeLessThan(walked * 1.25);
    expect(countJsonValues('[0,0,0,0,0,0]', 3)).toBe(4);
  });
});

describe('a manifest of too many values', () => {
  it('is refused on reload at once, /healthz answering meanwhile, the good revision serving', async () => {
    const good = makeManifest(STANDARD_CAPABILITIES, { marker: 'generation-1' });
    writeManifest(manifestFile, good);
    server = await startServe(['--manifest', manifestFile, '--principals', principalsFile], dir);
    expect(await server.health()).toMatchObject({ status: 'ok', revision: good.revision });

    // ~18 MB: far under the size limit; parsing it held the event loop for seconds.
    writeAtomic(manifestFile, `{"schemaVersion": 1, "extra": [${'{},'.repeat(MAX_MANIFEST_JSON_VALUES + 1000)}{}]}`);
    let slowest = 0;
    const degraded = await server.healthUntil((health) => health.status === 'degraded', 20_000);
    for (let probe = 0; probe < 5; probe += 1) {
      const started = performance.now();
      await server.health();
      slowest = Math.max(slowest, performance.now() - started);
    }
    expect(degraded.revision).toBe(good.revision);
    expect(degraded.lastReloadError).toContain(`more than ${MAX_MANIFEST_JSON_VALUES} JSON values`);
    expect(slowest).toBeLessThan(1_000);
    expect(await server.protocol('key-alice-reports', 'work-reporting')).toContain('generation-1');
    expect(server.stderr()).toMatch(/manifest reload rejected.*JSON values/);

    const next = makeManifest(STANDARD_CAPABILITIES, { marker: 'generation-3' });
    writeManifest(manifestFile, next);
    expect(await server.healthUntil((health) => health.revision === next.revision)).toMatchObject({ status: 'ok', lastReloadError: null });
  }, 60_000);
});

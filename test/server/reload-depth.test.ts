// A manifest nested thousands of levels deep used to overflow the stack inside the integrity check
// during a reload; the rejection went unhandled and the server exited. It must be refused like any
// bad manifest: the last good revision keeps serving and /healthz says why. At start it is exit 2.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../compiler/canonical.js';
import { serializeManifest } from '../../compiler/manifest.js';
import type { Manifest } from '../../compiler/types.js';
import { PRINCIPALS, STANDARD_CAPABILITIES, makeManifest, principalsYaml, serveArgv, tempDir, writeAtomic, writeManifest } from './helpers.js';
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

/** JSON text of `levels` nested arrays and objects, built without recursion. */
function nestedJson(levels: number): string {
  let open = '';
  let close = '';
  for (let level = 0; level < levels; level += 1) {
    open += level % 2 === 0 ? '[' : '{"k":';
    close = (level % 2 === 0 ? ']' : '}') + close;
  }
  return `${open}"secret-leaf"${close}`;
}

/** A manifest's text with deep JSON put in one place (integrity left as it was: depth comes first). */
const deepVariants: { label: string; where: RegExp; text: (good: Manifest, levels: number) => string }[] = [
  {
    // A field the manifest schema does not type: just under the limit, the next check to fail is the integrity.
    label: 'a capability field',
    where: /under \/capabilities\/1/,
    text: (good, levels) => serializeManifest(good).replace('"id": "open-help"', `"nested": ${nestedJson(levels)}, "id": "open-help"`),
  },
  {
    label: 'a toolset',
    where: /under \/toolsets/,
    text: (good, levels) => serializeManifest(good).replace('"toolsets": {', `"toolsets": { "deep": ${nestedJson(levels)},`),
  },
  {
    label: 'an unknown top-level field',
    where: /under \/extra/,
    text: (good, levels) => serializeManifest(good).replace(/^\{/, `{"extra": ${nestedJson(levels)},`),
  },
];

describe('a too deeply nested manifest', () => {
  for (const { label, where, text } of deepVariants) {
    it(`in ${label} is refused on reload while the good revision serves, then a good one loads`, async () => {
      const good = makeManifest(STANDARD_CAPABILITIES, { marker: 'generation-1' });
      writeManifest(manifestFile, good);
      server = await startServe(['--manifest', manifestFile, '--principals', principalsFile], dir);
      expect(await server.health()).toMatchObject({ status: 'ok', revision: good.revision });

      writeAtomic(manifestFile, text(makeManifest(STANDARD_CAPABILITIES, { marker: 'generation-2' }), 20_000));
      const degraded = await server.healthUntil((health) => health.status === 'degraded');
      expect(degraded.revision).toBe(good.revision);
      expect(degraded.lastReloadError).toContain(`nests deeper than ${MAX_JSON_DEPTH} levels`);
      expect(degraded.lastReloadError).toMatch(where);
      expect(degraded.lastReloadError).not.toContain('secret-leaf');
      expect(degraded.lastReloadError).not.toContain(dir);
      expect(await server.protocol('key-alice-reports', 'work-reporting')).toContain('generation-1');
      expect(server.stderr()).toMatch(/manifest reload rejected.*nests deeper/);

      const next = makeManifest([...STANDARD_CAPABILITIES, { id: 'added-later' }], { marker: 'generation-3' });
      writeManifest(manifestFile, next);
      expect(await server.healthUntil((health) => health.revision === next.revision)).toMatchObject({ status: 'ok', lastReloadError: null, capabilities: 5 });
      expect(await server.protocol('key-alice-reports', 'work-reporting')).toContain('generation-3');
    });
  }

  it('just over the limit is refused too, and just under it is not a depth problem', async () => {
    const good = makeManifest(STANDARD_CAPABILITIES, { marker: 'generation-1' });
    writeManifest(manifestFile, good);
    server = await startServe(['--manifest', manifestFile, '--principals', principalsFile], dir);
    // The capability is level 3 (manifest, list, entry): the field may add MAX_JSON_DEPTH - 3 levels.
    writeAtomic(manifestFile, deepVariants[0]!.text(good, MAX_JSON_DEPTH - 2));
    expect((await server.healthUntil((health) => health.status === 'degraded')).lastReloadError).toContain('nests deeper');
    writeAtomic(manifestFile, deepVariants[0]!.text(good, MAX_JSON_DEPTH - 3));
    // Not too deep, so it gets as far as the integrity check (the test did not recompute it).
    expect((await server.healthUntil((health) => health.lastReloadError?.includes('integrity') === true)).revision).toBe(good.revision);
  });

  it('at start is exit 2 with a clear message', () => {
    writeFileDeep();
    const result = spawnSync(process.execPath, serveArgv(['--manifest', manifestFile, '--principals', principalsFile, '--http', '--port', '0']), {
      cwd: dir,
      env: { PATH: process.env['PATH'] ?? '' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`invalid manifest .*manifest nests deeper than ${MAX_JSON_DEPTH} levels \\(under /capabilities/1\\)`));
    expect(result.stderr).not.toMatch(/internal error|RangeError/);
  });
});

function writeFileDeep(): void {
  writeAtomic(manifestFile, deepVariants[0]!.text(makeManifest(STANDARD_CAPABILITIES), 50_000));
}

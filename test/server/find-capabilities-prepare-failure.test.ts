// CatalogSearch.prepare() runs in the background after each activation; a failure there (a
// capability whose analysis throws) must be logged, not left as an unhandled rejection, which ends
// the process: at start, or on a reload, for every caller at once.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serializeManifest } from '../../compiler/manifest.js';
import { CatalogSearch } from '../../server/catalog-search.js';
import { startRuntime } from '../../server/runtime.js';
import { makeManifest } from './helpers.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('prepare() failing', () => {
  it('is logged as a warning and the server keeps serving', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'capreg-prepare-'));
    const manifestFile = path.join(folder, 'manifest.json');
    fs.writeFileSync(manifestFile, serializeManifest(makeManifest([{ id: 'alpha', description: 'Writes the weekly report.' }])));
    const prepare = vi.spyOn(CatalogSearch.prototype, 'prepare').mockRejectedValue(new RangeError('Maximum call stack size exceeded'));
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    const lines: [string, string | undefined][] = [];
    const runtime = await startRuntime({ manifestFile, watch: false, log: (line, level) => lines.push([line, level]) });
    try {
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(prepare).toHaveBeenCalled();
      expect(unhandled).toEqual([]);
      expect(lines).toContainEqual(['capreg serve: preparing the search index failed: Maximum call stack size exceeded', 'warn']);
      expect(runtime.manifests.current.catalog.size).toBe(1);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await runtime.close();
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });
});

// A reload whose read timed out (a network mount that hung, a server stopped with SIGSTOP in the
// middle of a read) is refused, and then read again: the file did not change, so no event and no
// change of its identity would ever bring the new version in.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ReadLimits, ReadResult } from '../../server/read-file.js';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { PRINCIPALS, STANDARD_CAPABILITIES, eventually, makeManifest, principalsYaml, tempDir, writeAtomic, writeManifest } from './helpers.js';

/** Files whose reads time out until a given time, as readBounded reports it (a mount that hangs for a while). */
const hang = new Map<string, number>();

vi.mock('../../server/read-file.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../server/read-file.js')>();
  return {
    ...original,
    readBounded: (file: string, limits: ReadLimits): Promise<ReadResult> => {
      if (Date.now() < (hang.get(file) ?? 0)) return Promise.resolve({ ok: false, reason: `reading it took over ${limits.timeoutMs} ms`, identity: 'timeout' });
      return original.readBounded(file, limits);
    },
  };
});

let dir: string;
let runtime: Runtime | undefined;

afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
  hang.clear();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a reload whose read timed out', () => {
  it('is tried again until the file is read, and the new manifest is served', async () => {
    dir = tempDir();
    const manifestFile = path.join(dir, 'manifest.json');
    const first = makeManifest(STANDARD_CAPABILITIES, { marker: 'generation-1' });
    writeManifest(manifestFile, first);
    runtime = await startRuntime({ manifestFile, debounceMs: 20, pollMs: 100 });

    const second = makeManifest(STANDARD_CAPABILITIES, { marker: 'generation-2' });
    hang.set(manifestFile, Date.now() + 500);
    writeManifest(manifestFile, second);
    // The reloads during the hang were refused, and said so...
    await eventually(() => expect(runtime!.health().lastReloadError).toContain('took over'));
    // ...then, the file unchanged since, the safety net read it again.
    await eventually(() => expect(runtime!.health()).toMatchObject({ status: 'ok', revision: second.revision, lastReloadError: null }), 3_000);
  });

  it('applies to the principals file too', async () => {
    dir = tempDir();
    const manifestFile = path.join(dir, 'manifest.json');
    writeManifest(manifestFile, makeManifest(STANDARD_CAPABILITIES));
    const principalsFile = path.join(dir, 'principals.yaml');
    writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
    runtime = await startRuntime({ manifestFile, principalsFile, debounceMs: 20, pollMs: 100 });

    hang.set(principalsFile, Date.now() + 500);
    writeAtomic(principalsFile, principalsYaml(PRINCIPALS.slice(1)));
    await eventually(() => expect(runtime!.health().lastReloadError).toContain('took over'));
    await eventually(() => expect(runtime!.principalsStore!.current.size).toBe(PRINCIPALS.length - 1), 3_000);
    expect(runtime.health().lastReloadError).toBeNull();
  });
});

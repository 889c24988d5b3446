// Deploys replace files, folders and symlinks rather than editing files: `rm -rf dist && capreg
// build`, `mv dist.new dist`, a release symlink swapped, a principals folder recreated. Each must be
// picked up within a second or two (a revoked key on the very next call), and a path that turns
// into a FIFO, a folder or a huge file is refused with a reason without blocking later reloads.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serializeManifest } from '../../compiler/manifest.js';
import type { Manifest } from '../../compiler/types.js';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { PRINCIPALS, STANDARD_CAPABILITIES, eventually, makeManifest, principalsYaml, serveArgv, tempDir, writeAtomic, writeManifest } from './helpers.js';
import { startServe, type ServeProcess } from './reload-harness.js';

let dir: string;
let server: ServeProcess | undefined;
let runtime: Runtime | undefined;

beforeEach(() => {
  dir = tempDir();
});

afterEach(async () => {
  await server?.stop();
  await runtime?.close();
  server = undefined;
  runtime = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

const generation = (n: number): Manifest => makeManifest(STANDARD_CAPABILITIES, { marker: `generation-${n}` });

/** What `capreg build` leaves behind: a folder holding the manifest. */
function build(folder: string, manifest: Manifest): void {
  fs.mkdirSync(folder, { recursive: true });
  writeManifest(path.join(folder, 'manifest.json'), manifest);
}

function mkfifo(file: string): void {
  const result = spawnSync('mkfifo', [file]);
  if (result.status !== 0) throw new Error(`mkfifo failed: ${result.stderr.toString()}`);
}

async function serveDist(): Promise<{ dist: string; principalsFile: string }> {
  const dist = path.join(dir, 'dist');
  build(dist, generation(1));
  const principalsFile = path.join(dir, 'principals.yaml');
  writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
  server = await startServe(['--manifest', path.join(dist, 'manifest.json'), '--principals', principalsFile], dir);
  expect(await server.health()).toMatchObject({ status: 'ok', revision: generation(1).revision });
  return { dist, principalsFile };
}

describe('replaced folders and symlinks (spawned capreg serve --http)', () => {
  it('loads the manifest after `rm -rf dist` and a rebuild, twice', async () => {
    const { dist } = await serveDist();
    for (const n of [2, 3]) {
      fs.rmSync(dist, { recursive: true });
      // In between, the file is missing: refused with a reason, the last good revision serves.
      const missing = await server!.healthUntil((health) => health.status === 'degraded');
      expect(missing.lastReloadError).toMatch(/cannot read manifest: ENOENT/);
      expect(missing.revision).toBe(generation(n - 1).revision);
      build(dist, generation(n));
      expect(await server!.healthUntil((health) => health.revision === generation(n).revision)).toMatchObject({ status: 'ok', lastReloadError: null });
      expect(await server!.protocol('key-alice-reports', 'work-reporting')).toContain(`generation-${n}`);
    }
    expect(server!.stderr()).toMatch(/manifest reloaded revision \S+ from .*manifest\.json/);
  });

  it('loads the manifest after `mv dist.new dist`', async () => {
    const { dist } = await serveDist();
    for (const n of [2, 3]) {
      build(`${dist}.new`, generation(n));
      fs.rmSync(`${dist}.old`, { recursive: true, force: true });
      fs.renameSync(dist, `${dist}.old`);
      fs.renameSync(`${dist}.new`, dist);
      await server!.healthUntil((health) => health.revision === generation(n).revision && health.status === 'ok');
    }
  });

  it('follows a swapped symlink to the release folder, and a rebuilt release behind it', async () => {
    const releases = path.join(dir, 'releases');
    build(path.join(releases, 'one'), generation(1));
    fs.symlinkSync(path.join(releases, 'one'), path.join(dir, 'current'));
    const principalsFile = path.join(dir, 'principals.yaml');
    writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
    server = await startServe(['--manifest', path.join(dir, 'current', 'manifest.json'), '--principals', principalsFile], dir);

    build(path.join(releases, 'two'), generation(2));
    fs.symlinkSync(path.join(releases, 'two'), path.join(dir, 'current.next'));
    fs.renameSync(path.join(dir, 'current.next'), path.join(dir, 'current'));
    await server.healthUntil((health) => health.revision === generation(2).revision);

    // The folder the link points at is itself deleted and rebuilt.
    fs.rmSync(path.join(releases, 'two'), { recursive: true });
    build(path.join(releases, 'two'), generation(3));
    await server.healthUntil((health) => health.revision === generation(3).revision && health.status === 'ok');

    // A relative link one level further up (`releases` itself becomes a link).
    fs.renameSync(releases, path.join(dir, 'releases-a'));
    build(path.join(dir, 'releases-a', 'two'), generation(4));
    fs.symlinkSync('releases-a', releases);
    await server.healthUntil((health) => health.revision === generation(4).revision && health.status === 'ok');
  });

  it('applies a principals folder recreated without a key on the very next call', async () => {
    const auth = path.join(dir, 'auth');
    fs.mkdirSync(auth);
    const principalsFile = path.join(auth, 'principals.yaml');
    writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
    build(path.join(dir, 'dist'), generation(1));
    server = await startServe(['--manifest', path.join(dir, 'dist', 'manifest.json'), '--principals', principalsFile], dir);
    expect(await server.status('key-alice-reports')).toBe(200);

    const withoutAlice = PRINCIPALS.filter((principal) => principal.id !== 'alice');
    fs.rmSync(auth, { recursive: true });
    fs.mkdirSync(auth);
    fs.writeFileSync(principalsFile, principalsYaml([...withoutAlice, { id: 'dave', key: 'key-dave-new', scopes: ['reports:read'] }]));
    // No waiting for the watcher: the next call already sees the new file.
    expect(await server.status('key-alice-reports')).toBe(401);
    expect(await server.status('key-dave-new')).toBe(200);
    expect(await server.status('key-bob-all')).toBe(200);

    // And again, the folder renamed over: the old key of bob is gone too.
    const next = path.join(dir, 'auth.next');
    fs.mkdirSync(next);
    fs.writeFileSync(path.join(next, 'principals.yaml'), principalsYaml([{ id: 'dave', key: 'key-dave-new', scopes: ['reports:read'] }]));
    fs.rmSync(auth, { recursive: true });
    fs.renameSync(next, auth);
    expect(await server.status('key-bob-all')).toBe(401);
    expect(await server.status('key-dave-new')).toBe(200);

    // And once more, the folder replaced by a symlink to a release that lists only carol.
    const release = path.join(dir, 'auth-release');
    fs.mkdirSync(release);
    fs.writeFileSync(path.join(release, 'principals.yaml'), principalsYaml(PRINCIPALS.filter((principal) => principal.id === 'carol')));
    fs.symlinkSync(release, `${auth}.link`);
    fs.rmSync(auth, { recursive: true });
    fs.renameSync(`${auth}.link`, auth);
    expect(await server.status('key-dave-new')).toBe(401);
    expect(await server.status('key-carol-calendar')).toBe(200);
    expect((await server.health()).status).toBe('ok');
  });
});

describe('files that are not regular files, or too big', () => {
  it('refuses a manifest replaced by a FIFO without blocking, then loads a good one', async () => {
    const { dist } = await serveDist();
    const manifestFile = path.join(dist, 'manifest.json');
    fs.rmSync(manifestFile);
    mkfifo(manifestFile);
    const degraded = await server!.healthUntil((health) => health.lastReloadError?.includes('FIFO') === true);
    expect(degraded).toMatchObject({ status: 'degraded', revision: generation(1).revision });
    expect(degraded.lastReloadError).toMatch(
      /manifest reload rejected at \d{4}-\d\d-\d\dT[\d:.]+Z \(manifest\.json\): cannot read manifest: it is a FIFO, not a regular file/,
    );
    expect(degraded.lastReloadError).not.toContain(dir);
    expect(await server!.protocol('key-alice-reports', 'work-reporting')).toContain('generation-1');

    writeManifest(manifestFile, generation(2));
    expect(await server!.healthUntil((health) => health.revision === generation(2).revision)).toMatchObject({ status: 'ok', lastReloadError: null });
    expect(server!.stderr()).toMatch(/manifest reload rejected \(.*manifest\.json\): cannot read manifest: it is a FIFO/);
  });

  it('refuses a principals file replaced by a FIFO on the next call, keeping the last good principals', async () => {
    const { principalsFile } = await serveDist();
    fs.rmSync(principalsFile);
    mkfifo(principalsFile);
    expect(await server!.status('key-alice-reports')).toBe(200);
    const health = await server!.health();
    expect(health.status).toBe('degraded');
    expect(health.lastReloadError).toMatch(/principals file reload rejected .*\(principals\.yaml\): cannot read principals file: it is a FIFO/);
    writeAtomic(principalsFile, principalsYaml(PRINCIPALS.filter((principal) => principal.id !== 'alice')));
    expect(await server!.status('key-alice-reports')).toBe(401);
    expect((await server!.health()).status).toBe('ok');
  });

  it('exits 2 at start on a FIFO instead of hanging', () => {
    const principalsFile = path.join(dir, 'principals.yaml');
    writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
    const fifo = path.join(dir, 'fifo.json');
    mkfifo(fifo);
    const result = spawnSync(process.execPath, serveArgv(['--manifest', fifo, '--principals', principalsFile, '--http', '--port', '0']), {
      cwd: dir,
      env: { PATH: process.env['PATH'] ?? '' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/capreg serve: .*fifo\.json.* (a FIFO|not a file)/);
  });

  it('refuses to start on a FIFO, a folder or a device, with a typed error', async () => {
    const fifo = path.join(dir, 'fifo.json');
    mkfifo(fifo);
    const cases = [
      { manifestFile: fifo, reason: 'it is a FIFO, not a regular file' },
      { manifestFile: dir, reason: 'it is a directory, not a regular file' },
      { manifestFile: '/dev/zero', reason: 'it is a device, not a regular file' },
    ];
    for (const { manifestFile, reason } of cases) {
      await expect(startRuntime({ manifestFile, watch: false })).rejects.toMatchObject({
        name: 'LoadError',
        code: 'unreadable',
        message: `cannot read manifest ${manifestFile}: ${reason}`,
      });
    }
  });

  it('refuses a manifest over the size limit, and one that grew past it, and then loads a good one', async () => {
    const manifestFile = path.join(dir, 'manifest.json');
    writeManifest(manifestFile, generation(1));
    const maxBytes = serializeManifest(generation(1)).length + 1_000;
    runtime = await startRuntime({ manifestFile, debounceMs: 20, readLimits: { manifest: { maxBytes, timeoutMs: 5_000 } } });
    writeAtomic(manifestFile, `${serializeManifest(generation(2))}${' '.repeat(maxBytes)}`);
    await eventually(() => expect(runtime!.health().lastReloadError).toMatch(/cannot read manifest: it is \d+ bytes, over the limit of \d+/));
    expect(runtime.health()).toMatchObject({ status: 'degraded', revision: generation(1).revision });
    writeManifest(manifestFile, generation(3));
    await eventually(() => expect(runtime!.health()).toMatchObject({ status: 'ok', revision: generation(3).revision }));
  });

  it('serves a manifest the size of a 10,000-capability registry (~72 MB) with the default limits', async () => {
    const manifestFile = path.join(dir, 'manifest.json');
    // JSON allows whitespace after the value: the bytes of a large registry without building one.
    writeAtomic(manifestFile, `${serializeManifest(generation(1))}${' '.repeat(72 * 1024 * 1024)}`);
    runtime = await startRuntime({ manifestFile, watch: false });
    expect(runtime.health()).toMatchObject({ status: 'ok', revision: generation(1).revision });
  });

  it('gives up on a read that takes longer than the time limit', async () => {
    const manifestFile = path.join(dir, 'manifest.json');
    writeManifest(manifestFile, generation(1));
    // With no time at all, the deadline has passed after the first chunk, whatever the disk's speed.
    await expect(startRuntime({ manifestFile, watch: false, readLimits: { manifest: { maxBytes: 1 << 26, timeoutMs: 0 } } })).rejects.toMatchObject({
      name: 'LoadError',
      message: expect.stringMatching(/cannot read manifest .*: reading it took over 0 ms/) as unknown,
    });
  });
});

describe('the watch alone, without its stat safety net', () => {
  it('re-arms on replaced folders and symlinks anywhere on the path', async () => {
    // A Kubernetes-style layout: dist -> ..data/dist, ..data -> ..v1; each step is replaced in turn.
    const v1 = path.join(dir, '..v1');
    build(path.join(v1, 'dist'), generation(1));
    fs.symlinkSync('..v1', path.join(dir, '..data'));
    fs.symlinkSync(path.join('..data', 'dist'), path.join(dir, 'dist'));
    const manifestFile = path.join(dir, 'dist', 'manifest.json');
    runtime = await startRuntime({ manifestFile, debounceMs: 20, pollMs: 3_600_000 });
    const revision = (n: number) => () => expect(runtime!.health()).toMatchObject({ revision: generation(n).revision, status: 'ok' });

    fs.rmSync(path.join(v1, 'dist'), { recursive: true });
    build(path.join(v1, 'dist'), generation(2));
    await eventually(revision(2));

    build(path.join(dir, '..v2', 'dist'), generation(3));
    fs.symlinkSync('..v2', path.join(dir, '..data_tmp'));
    fs.renameSync(path.join(dir, '..data_tmp'), path.join(dir, '..data'));
    await eventually(revision(3));

    build(path.join(dir, 'plain'), generation(4));
    fs.rmSync(path.join(dir, 'dist'));
    fs.renameSync(path.join(dir, 'plain'), path.join(dir, 'dist'));
    await eventually(revision(4));

    fs.writeFileSync(manifestFile, serializeManifest(generation(5)));
    await eventually(revision(5));
  });
});

describe('the stat safety net', () => {
  it('notices a change no folder event reports (a write through a hard link in another folder)', async () => {
    const served = path.join(dir, 'served');
    const elsewhere = path.join(dir, 'elsewhere');
    build(served, generation(1));
    fs.mkdirSync(elsewhere);
    const manifestFile = path.join(served, 'manifest.json');
    fs.linkSync(manifestFile, path.join(elsewhere, 'manifest.json'));
    runtime = await startRuntime({ manifestFile, debounceMs: 20, pollMs: 100 });
    fs.writeFileSync(path.join(elsewhere, 'manifest.json'), serializeManifest(makeManifest([...STANDARD_CAPABILITIES, { id: 'via-link' }])));
    await eventually(() => expect(runtime!.health()).toMatchObject({ status: 'ok', capabilities: 5 }));
  });
});

import fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeStaleTemporaries, STALE_TEMPORARY_MS, temporaryPath, writeFileAtomic } from '../../server/atomic-write.js';
import { cleanProtocol, runBin, tempDir, tempRegistry } from './helpers.js';

describe('writeFileAtomic', () => {
  it('creates the folder and writes the file', async () => {
    const target = path.join(tempDir(), 'a/b/manifest.json');
    await writeFileAtomic(target, '{"x":1}\n');
    expect(fs.readFileSync(target, 'utf8')).toBe('{"x":1}\n');
  });

  it('replaces an existing file whole', async () => {
    const target = path.join(tempDir(), 'manifest.json');
    fs.writeFileSync(target, 'old content that is longer than the new one');
    await writeFileAtomic(target, 'new');
    expect(fs.readFileSync(target, 'utf8')).toBe('new');
    expect(fs.readdirSync(path.dirname(target))).toEqual(['manifest.json']);
  });

  it('leaves no temporary file behind when it fails', async () => {
    const dir = tempDir();
    const target = path.join(dir, 'manifest.json');
    fs.mkdirSync(path.join(target, 'in-the-way'), { recursive: true }); // a folder where the file should go
    await expect(writeFileAtomic(target, 'new')).rejects.toThrow();
    expect(fs.readdirSync(dir)).toEqual(['manifest.json']);
    expect(fs.statSync(target).isDirectory()).toBe(true);
  });
});

describe('cache writes go through writeFileAtomic', () => {
  it('a build whose cache files cannot be replaced still succeeds and leaves no temporary file in .capreg/cache', () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 20; i += 1) files[`capabilities/cap-${i}/PROTOCOL.md`] = cleanProtocol(`cap-${i}`);
    const root = tempRegistry(files);
    const cache = path.join(root, '.capreg', 'cache');
    // Folders where the build cache and every parse-cache shard would go: each rename fails.
    fs.mkdirSync(path.join(cache, 'build.json', 'in-the-way'), { recursive: true });
    for (let shard = 0; shard < 16; shard += 1) fs.mkdirSync(path.join(cache, 'documents', `${shard}.bin`, 'in-the-way'), { recursive: true });
    const result = runBin(['build'], { cwd: root });
    expect(result.stderr).toMatch(/^capreg build: wrote dist\/manifest\.json \(20 capabilities/);
    expect(result.code).toBe(0);
    const left = (fs.readdirSync(cache, { recursive: true }) as string[]).filter(
      (entry) => !entry.endsWith('in-the-way') && !/^(?:build\.json|documents|documents\/\d+\.bin)$/.test(entry),
    );
    expect(left).toEqual([]);
  });
});

describe('what an interrupted build left behind', () => {
  it('the next build removes the temporary files of writers that no longer run, and keeps those of a running one', () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 20; i += 1) files[`capabilities/cap-${i}/PROTOCOL.md`] = cleanProtocol(`cap-${i}`);
    const root = tempRegistry(files);
    // A build killed (Ctrl-C, SIGKILL) between writing and renaming: its pid runs no more.
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    const documents = path.join(root, '.capreg', 'cache', 'documents');
    const dist = path.join(root, 'dist');
    const left = [
      path.join(documents, `.3.bin.${dead}.0123abcd.tmp`),
      path.join(documents, `.15.bin.${dead}.89abcdef.tmp`),
      path.join(root, '.capreg', 'cache', `.build.json.${dead}.00000000.tmp`),
      path.join(dist, `.manifest.json.${dead}.deadbeef.tmp`),
      path.join(dist, 'skill', `.SKILL.md.${dead}.feedf00d.tmp`),
    ];
    const running = path.join(documents, `.3.bin.${process.pid}.0123abcd.tmp`);
    const unrelated = path.join(dist, `.notes.${dead}.0123abcd.tmp`);
    for (const file of [...left, running, unrelated]) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, 'x'.repeat(1000));
    }
    const result = runBin(['build'], { cwd: root });
    expect(result.code).toBe(0);
    for (const file of left) expect(fs.existsSync(file), file).toBe(false);
    expect(fs.existsSync(running)).toBe(true);
    expect(fs.existsSync(unrelated)).toBe(true);
  });
});

describe('whose temporary files are stale: the host that wrote them, its process, their age', () => {
  it("on this host a dead writer's file goes at once and a running one's stays; another host's goes once untouched for an hour", async () => {
    const folder = tempDir();
    const target = path.join(folder, 'manifest.json');
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    // This host's tag, as this process names its own temporaries.
    const tag = /\.\d+@([0-9a-f]{8})\.[0-9a-f]{8}\.tmp$/.exec(temporaryPath(target))![1]!;
    const other = tag === '0badf00d' ? '0badcafe' : '0badf00d';
    const hoursAgo = (file: string): void => {
      const then = new Date(Date.now() - STALE_TEMPORARY_MS - 60_000);
      fs.utimesSync(file, then, then);
    };
    const files = {
      deadHere: `.manifest.json.${dead}@${tag}.00000001.tmp`,
      runningHere: `.manifest.json.${process.pid}@${tag}.00000002.tmp`,
      // A running writer's file untouched for hours (a machine suspended mid-build) is still its own.
      runningOldHere: `.manifest.json.${process.pid}@${tag}.00000005.tmp`,
      // Another host (replicas sharing a network folder), boot or container: its pid means nothing here.
      deadElsewhere: `.manifest.json.${dead}@${other}.00000003.tmp`,
      oldElsewhere: `.manifest.json.${process.pid}@${other}.00000004.tmp`,
      // Named as capreg did before it named the host: taken as this host's.
      deadUntagged: `.manifest.json.${dead}.00000006.tmp`,
      runningUntagged: `.manifest.json.${process.pid}.00000007.tmp`,
      anotherTarget: `.notes.json.${dead}@${tag}.00000008.tmp`,
    };
    for (const name of Object.values(files)) fs.writeFileSync(path.join(folder, name), 'x');
    hoursAgo(path.join(folder, files.oldElsewhere));
    hoursAgo(path.join(folder, files.runningOldHere));
    await removeStaleTemporaries([target]);
    expect(fs.readdirSync(folder).sort()).toEqual(
      [files.runningHere, files.runningOldHere, files.deadElsewhere, files.runningUntagged, files.anotherTarget].sort(),
    );
  });

  it('the files its writers leave are the ones it recognizes', async () => {
    const folder = tempDir();
    const target = path.join(folder, 'shard.bin');
    const running = temporaryPath(target);
    expect(path.dirname(running)).toBe(folder);
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    const killed = running.replace(`.${process.pid}@`, `.${dead}@`);
    for (const file of [running, killed]) fs.writeFileSync(file, 'x');
    await removeStaleTemporaries([target], Date.now() + 10 * STALE_TEMPORARY_MS);
    expect(fs.readdirSync(folder)).toEqual([path.basename(running)]);
  });
});

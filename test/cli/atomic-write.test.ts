import fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../server/atomic-write.js';
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

import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../cli/atomic-write.js';
import { tempDir } from './helpers.js';

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

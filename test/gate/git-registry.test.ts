// Reading a registry from Git: the same RegistryInput the disk reader gives for the same tree,
// including refused files (binary, over the size limit), dot files, links and a registry root
// below the repository's top.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GitRegistryError, readGitRegistry } from '../../cli/git-registry.js';
import { readRegistry } from '../../cli/read-registry.js';
import { commitAll, createBaseRepository, git, initRepository, read, tempDir, write } from './fixture.js';

const created: string[] = [];
afterAll(() => {
  for (const dir of created) fs.rmSync(dir, { recursive: true, force: true });
});

function repository(registryDir = ''): string {
  const dir = createBaseRepository(registryDir);
  created.push(dir);
  return dir;
}

describe('readGitRegistry', () => {
  it('gives what the disk reader gives for a committed tree, without touching the working tree', async () => {
    const dir = repository();
    write(dir, 'capabilities/notes/references/logo.png', '\u0000PNG');
    write(dir, 'capabilities/broken/PROTOCOL.md', 'bad \u0000 bytes');
    write(dir, 'capabilities/.drafts/PROTOCOL.md', 'not part of the registry');
    write(dir, 'capabilities/empty/README.md', 'a folder without PROTOCOL.md');
    fs.symlinkSync('../notes/PROTOCOL.md', path.join(dir, 'capabilities/empty/linked.md'));
    commitAll(dir, 'odd files');
    git(dir, 'tag', 'odd');
    write(dir, 'capabilities/notes/PROTOCOL.md', 'uncommitted'); // must not leak into the Git read

    const fromGit = await readGitRegistry(dir, 'odd', { maxFileBytes: 1024 * 1024 });
    expect(read(dir, 'capabilities/notes/PROTOCOL.md')).toBe('uncommitted');
    write(dir, 'capabilities/notes/PROTOCOL.md', git(dir, 'show', 'odd:capabilities/notes/PROTOCOL.md'));
    const fromDisk = readRegistry(dir, { maxFileBytes: 1024 * 1024 });
    expect(fromGit.commit).toBe(git(dir, 'rev-parse', 'odd').trim());
    expect(fromGit.input).toEqual(fromDisk);
    expect(fromGit.input.files.find((file) => file.path === 'capabilities/broken/PROTOCOL.md')?.problem).toMatch(/binary/);
    expect(fromGit.input.foldersWithoutProtocol).toEqual(['capabilities/empty']);
  });

  it('refuses a folder nested deeper than the limit as the disk reader does', async () => {
    const dir = repository();
    const levels = (count: number): string => Array<string>(count).fill('d').join('/');
    write(dir, `capabilities/notes/${levels(15)}/at-limit.md`, 'read\n');
    write(dir, `capabilities/notes/${levels(16)}/too-deep.md`, 'not read\n');
    write(dir, `capabilities/hidden/${levels(20)}/PROTOCOL.md`, 'not read\n');
    commitAll(dir, 'deep folders');
    const fromGit = await readGitRegistry(dir, 'HEAD', { maxFileBytes: 1024 * 1024 });
    const fromDisk = readRegistry(dir, { maxFileBytes: 1024 * 1024 });
    expect(fromGit.input).toEqual(fromDisk);
    expect(fromGit.input.files.filter((file) => file.problem?.includes('levels deep')).map((file) => file.path)).toEqual([
      `capabilities/hidden/${levels(16)}`,
      `capabilities/notes/${levels(16)}`,
    ]);
    expect(fromGit.input.allPaths).toContain(`capabilities/notes/${levels(15)}/at-limit.md`);
    expect(fromGit.input.foldersWithoutProtocol).toEqual(['capabilities/hidden']);
  });

  it("refuses a file over the size limit with the disk reader's message", async () => {
    const dir = repository();
    const fromGit = await readGitRegistry(dir, 'base', { maxFileBytes: 64 });
    const fromDisk = readRegistry(dir, { maxFileBytes: 64 });
    expect(fromGit.input.files).toEqual(fromDisk.files);
    expect(fromGit.input.files.every((file) => file.problem?.includes('over the 64 bytes limit'))).toBe(true);
  });

  it('reads a registry in a subfolder of the repository with paths relative to the registry root', async () => {
    const dir = repository('packages/registry');
    const { input } = await readGitRegistry(path.join(dir, 'packages/registry'), 'base', { maxFileBytes: 1024 * 1024 });
    expect(input.files.map((file) => file.path)).toEqual([
      'capabilities/archive/PROTOCOL.md',
      'capabilities/notes/PROTOCOL.md',
      'capabilities/reports/PROTOCOL.md',
      'capabilities/toolsets.yaml',
    ]);
  });

  it('gives an empty registry for a commit that had no capabilities/ yet', async () => {
    const dir = tempDir();
    created.push(dir);
    initRepository(dir);
    write(dir, 'README.md', 'nothing yet\n');
    commitAll(dir, 'first');
    fs.mkdirSync(path.join(dir, 'capabilities'));
    const { input } = await readGitRegistry(dir, 'HEAD', { maxFileBytes: 1024 });
    expect(input).toEqual({ files: [], allPaths: [], foldersWithoutProtocol: [] });
  });

  it('refuses option-like refs', async () => {
    const dir = repository();
    await expect(readGitRegistry(dir, '--output=/tmp/x', { maxFileBytes: 1024 })).rejects.toMatchObject({ code: 'bad-ref' });
    await expect(readGitRegistry(dir, 'nope', { maxFileBytes: 1024 })).rejects.toBeInstanceOf(GitRegistryError);
  });
});

// Reading a registry from Git: the same RegistryInput the disk reader gives for the same tree,
// including refused files (binary, over the size limit), dot files, links and a registry root
// below the repository's top; refs that name no single commit, blobs over the limit that must not
// be read, and trees Git itself would never write.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { GitRegistryError, openGitBase, readGitRegistry } from '../../cli/git-registry.js';
import { UsageError } from '../../cli/context.js';
import { readRegistry } from '../../cli/read-registry.js';
import { commitAll, createBaseRepository, git, initRepository, read, REPORTS_FILE, runCli, tempDir, write } from './fixture.js';

const created: string[] = [];
afterAll(() => {
  for (const dir of created) fs.rmSync(dir, { recursive: true, force: true });
});

function repository(registryDir = ''): string {
  const dir = createBaseRepository(registryDir);
  created.push(dir);
  return dir;
}

/**
 * A loose blob whose header says `size` bytes but that stores only a few: its size is known without
 * reading it, and reading it fails or gives the wrong bytes. The gate must never read it.
 */
function unreadableBlob(dir: string, size: number): string {
  const header = Buffer.from(`blob ${size}\0`);
  const oid = createHash('sha1')
    .update(Buffer.concat([header, Buffer.alloc(size, 'a')]))
    .digest('hex');
  const file = path.join(dir, '.git/objects', oid.slice(0, 2), oid.slice(2));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, deflateSync(Buffer.concat([header, Buffer.from('short')])));
  return oid;
}

/** Commit `tree` (a tree id) on top of HEAD without touching the index or the working tree, tagged `tag`. */
function commitTree(dir: string, tree: string, tag: string): void {
  const commit = git(dir, 'commit-tree', tree, '-p', 'HEAD', '-m', tag).trim();
  git(dir, 'tag', tag, commit);
}

/** The message of the GitRegistryError reading `ref` fails with, after checking its code. */
async function failure(dir: string, ref: string, code: string): Promise<string> {
  const error = await readGitRegistry(dir, ref, { maxFileBytes: 1024 }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error, ref).toBeInstanceOf(GitRegistryError);
  expect((error as GitRegistryError).code, ref).toBe(code);
  return (error as GitRegistryError).message;
}

/** `git mktree` input for a tree: its entries as `ls-tree` prints them. */
function treeLines(dir: string, treeish: string): string[] {
  return git(dir, 'ls-tree', treeish).split('\n').filter(Boolean);
}

function mktree(dir: string, lines: string[]): string {
  return execFileSync('git', ['mktree'], { cwd: dir, input: `${lines.join('\n')}\n`, encoding: 'utf8' }).trim();
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

  it('follows a link as the disk reader does: inside the root and out of hidden folders, so a change behind it is gated', async () => {
    const dir = repository();
    // reports' protocol lives in docs/ and capabilities/ links to it.
    write(dir, 'docs/reports.md', read(dir, REPORTS_FILE));
    fs.rmSync(path.join(dir, REPORTS_FILE));
    fs.symlinkSync('../../docs/reports.md', path.join(dir, REPORTS_FILE));
    write(dir, '.hidden/notes.md', read(dir, 'capabilities/notes/PROTOCOL.md'));
    fs.rmSync(path.join(dir, 'capabilities/notes/PROTOCOL.md'));
    fs.symlinkSync('../../.hidden/notes.md', path.join(dir, 'capabilities/notes/PROTOCOL.md'));
    commitAll(dir, 'protocols behind links');
    git(dir, 'tag', 'linked');

    const { input } = await readGitRegistry(dir, 'linked', { maxFileBytes: 1024 * 1024 });
    const fromDisk = readRegistry(dir, { maxFileBytes: 1024 * 1024 });
    const byPath = (files: typeof input.files, file: string): (typeof input.files)[number] | undefined => files.find((entry) => entry.path === file);
    expect(byPath(input.files, REPORTS_FILE)).toEqual(byPath(fromDisk.files, REPORTS_FILE));
    expect(byPath(input.files, REPORTS_FILE)?.content).toContain('id: reports');
    expect(byPath(input.files, 'capabilities/notes/PROTOCOL.md')?.problem).toMatch(/symbolic link at linked .*; refused/);
    expect(byPath(fromDisk.files, 'capabilities/notes/PROTOCOL.md')?.problem).toMatch(/hidden file or folder \(\.hidden\/notes\.md\); refused/);

    // The protocol changed behind the link without a version bump: the gate sees it (it used to see
    // reports as added, and pass).
    fs.rmSync(path.join(dir, 'capabilities/notes/PROTOCOL.md'));
    fs.rmSync(path.join(dir, '.hidden'), { recursive: true });
    commitAll(dir, 'notes removed');
    git(dir, 'tag', 'base-linked');
    write(dir, 'docs/reports.md', read(dir, 'docs/reports.md').replace('  - log my work\n', ''));
    const result = await runCli(['check', '--against', 'base-linked', '--format', 'json'], dir);
    expect(result.code).toBe(1);
    expect((JSON.parse(result.stdout) as { diagnostics: { ruleId: string; file: string }[] }).diagnostics).toContainEqual(
      expect.objectContaining({ ruleId: 'version-bump', file: REPORTS_FILE }),
    );
  });

  it("follows a capability folder that is a link, as the disk reader does, so the capability's change is gated", async () => {
    const dir = repository();
    fs.mkdirSync(path.join(dir, 'shared'));
    fs.renameSync(path.join(dir, 'capabilities/notes'), path.join(dir, 'shared/notes'));
    write(dir, 'shared/notes/references/.draft.md', 'hidden, as on disk\n');
    write(dir, 'shared/notes/references/guide.md', 'a reference\n');
    fs.symlinkSync('../shared/notes', path.join(dir, 'capabilities/notes'));
    commitAll(dir, 'notes kept in shared/');
    git(dir, 'tag', 'folder-link');

    const { input } = await readGitRegistry(dir, 'folder-link', { maxFileBytes: 1024 * 1024 });
    expect(input).toEqual(readRegistry(dir, { maxFileBytes: 1024 * 1024 }));
    expect(input.allPaths).toContain('capabilities/notes/references/guide.md');
    expect(input.files.map((file) => file.path)).toContain('capabilities/notes/PROTOCOL.md');

    // Its protocol changed behind the link without a version bump: the gate sees it (it used to
    // count notes as added, and pass).
    const notes = path.join(dir, 'shared/notes/PROTOCOL.md');
    fs.writeFileSync(notes, fs.readFileSync(notes, 'utf8').replace('  - take a note\n', ''));
    const result = await runCli(['check', '--against', 'folder-link', '--format', 'json'], dir);
    expect(result.code).toBe(1);
    expect((JSON.parse(result.stdout) as { diagnostics: { ruleId: string; file: string }[] }).diagnostics).toContainEqual(
      expect.objectContaining({ ruleId: 'version-bump', file: 'capabilities/notes/PROTOCOL.md' }),
    );
  });

  it('reads a link as the system resolves it, or refuses it: never another file than the disk reads', async () => {
    const dir = repository();
    const notesText = read(dir, 'capabilities/notes/PROTOCOL.md');
    const decoy = notesText.replace('take a note', 'take a decoy note');
    // notes -> ../shared/l/../notes, where shared/l -> deep: the system goes to shared/deep/notes, text joining to shared/notes.
    fs.mkdirSync(path.join(dir, 'shared/deep'), { recursive: true });
    fs.renameSync(path.join(dir, 'capabilities/notes'), path.join(dir, 'shared/deep/notes'));
    write(dir, 'shared/notes/PROTOCOL.md', decoy);
    fs.symlinkSync('deep', path.join(dir, 'shared/l'));
    fs.symlinkSync('../shared/l/../notes', path.join(dir, 'capabilities/notes'));
    // archive -> ../shared/deep/archive, whose PROTOCOL.md -> ../P.md: shared/deep/P.md, not capabilities/P.md.
    fs.mkdirSync(path.join(dir, 'shared/deep/archive'));
    fs.renameSync(path.join(dir, 'capabilities/archive/PROTOCOL.md'), path.join(dir, 'shared/deep/P.md'));
    fs.symlinkSync('../P.md', path.join(dir, 'shared/deep/archive/PROTOCOL.md'));
    fs.rmSync(path.join(dir, 'capabilities/archive'), { recursive: true });
    fs.symlinkSync('../shared/deep/archive', path.join(dir, 'capabilities/archive'));
    write(dir, 'capabilities/P.md', 'decoy\n');
    // moved -> reports/sub: a folder of capabilities/ itself, walked on disk under whichever path comes first.
    write(dir, 'capabilities/reports/sub/PROTOCOL.md', read(dir, REPORTS_FILE).replace('id: reports', 'id: moved'));
    fs.symlinkSync('reports/sub', path.join(dir, 'capabilities/moved'));
    commitAll(dir, 'tricky-links');
    const { input } = await readGitRegistry(dir, 'HEAD', { maxFileBytes: 1024 * 1024 });
    const problem = (file: string): string | undefined => input.files.find((entry) => entry.path === file)?.problem;
    expect(problem('capabilities/notes/PROTOCOL.md')).toMatch(/^capabilities\/notes is a symbolic link at HEAD that Git cannot follow/);
    expect(input.files.find((entry) => entry.path === 'capabilities/archive/PROTOCOL.md')?.content).toBe(read(dir, 'shared/deep/P.md'));
    expect(problem('capabilities/moved/PROTOCOL.md')).toMatch(/^capabilities\/moved is a symbolic link at HEAD that Git cannot follow/);
    // Through the gate: an unbumped change behind the first link fails (not compared), rather than passing as unchanged.
    fs.writeFileSync(path.join(dir, 'shared/deep/notes/PROTOCOL.md'), notesText.replace('take a note', 'take one note'));
    const result = await runCli(['check', '--against', 'HEAD', '--format', 'json'], dir);
    expect(result.code).toBe(1);
    const { gate } = JSON.parse(result.stdout) as { gate: { changes: { id: string; verdict: string }[] } };
    expect(gate.changes.find((change) => change.id === 'notes')?.verdict).toBe('fail');
  });

  it('follows a folder link written with a trailing slash, and refuses one Git cannot follow rather than missing the capability', async () => {
    const dir = repository();
    fs.mkdirSync(path.join(dir, 'shared'));
    fs.renameSync(path.join(dir, 'capabilities/notes'), path.join(dir, 'shared/notes'));
    fs.symlinkSync('../shared/notes/', path.join(dir, 'capabilities/notes'));
    // archive behind a folder that is itself a link: the disk follows both, Git lists neither.
    fs.mkdirSync(path.join(dir, 'real'));
    fs.renameSync(path.join(dir, 'capabilities/archive'), path.join(dir, 'real/archive'));
    fs.symlinkSync('real', path.join(dir, 'linked'));
    fs.symlinkSync('../linked/archive', path.join(dir, 'capabilities/archive'));
    commitAll(dir, 'links');
    git(dir, 'tag', 'links');

    const { input } = await readGitRegistry(dir, 'links', { maxFileBytes: 1024 * 1024 });
    expect(input.files.find((file) => file.path === 'capabilities/notes/PROTOCOL.md')?.content).toBe(read(dir, 'shared/notes/PROTOCOL.md'));
    expect(input.files.find((file) => file.path === 'capabilities/archive/PROTOCOL.md')).toEqual({
      path: 'capabilities/archive/PROTOCOL.md',
      problem:
        'capabilities/archive is a symbolic link at links that Git cannot follow to a folder inside the registry root (its target is a link, lies behind one, is missing, hidden, outside the root or inside capabilities/, or it goes up with `..` after a name); refused',
    });

    // A change behind either link, unbumped, fails the check: notes by its version, archive as not compared.
    const notes = path.join(dir, 'shared/notes/PROTOCOL.md');
    fs.writeFileSync(notes, fs.readFileSync(notes, 'utf8').replace('  - take a note\n', ''));
    const result = await runCli(['check', '--against', 'links', '--format', 'json'], dir);
    expect(result.code).toBe(1);
    const diagnostics = (JSON.parse(result.stdout) as { diagnostics: { ruleId: string; file: string; message: string }[] }).diagnostics;
    expect(diagnostics).toContainEqual(expect.objectContaining({ ruleId: 'version-bump', file: 'capabilities/notes/PROTOCOL.md' }));
    expect(diagnostics).toContainEqual(
      expect.objectContaining({
        ruleId: 'registry-files',
        file: 'capabilities/archive/PROTOCOL.md',
        message: expect.stringMatching(/^at links: capabilities\/archive is a symbolic link/) as unknown,
      }),
    );
  });

  it('refuses a base whose capabilities/ is itself a link, rather than seeing no capability in it', async () => {
    const dir = repository();
    fs.renameSync(path.join(dir, 'capabilities'), path.join(dir, 'registry'));
    fs.symlinkSync('registry', path.join(dir, 'capabilities'));
    commitAll(dir, 'capabilities/ is a link');
    const failure = await readGitRegistry(dir, 'HEAD', { maxFileBytes: 1024 * 1024 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GitRegistryError);
    expect((failure as GitRegistryError).code).toBe('bad-tree');
    expect((failure as GitRegistryError).message).toMatch(
      /^capabilities\/ at "HEAD" \([0-9a-f]{12}\) is a symbolic link, which the gate does not follow in Git; make capabilities\/ a folder/,
    );
  });

  it('refuses a base with a submodule where capabilities are, directly or behind a folder link, rather than seeing no capability there', async () => {
    const dir = repository();
    // A capability kept in a repository of its own, added as a submodule: Git stores only its commit.
    const vendor = tempDir();
    created.push(vendor);
    initRepository(vendor);
    write(vendor, 'PROTOCOL.md', read(dir, 'capabilities/notes/PROTOCOL.md'));
    commitAll(vendor, 'the vendored capability');
    git(dir, 'rm', '-rq', 'capabilities/notes');
    const addSubmodule = (at: string): void => {
      execFileSync('git', ['-c', 'protocol.file.allow=always', 'submodule', '--quiet', 'add', vendor, at], { cwd: dir, stdio: 'pipe' });
    };
    addSubmodule('capabilities/notes');
    commitAll(dir, 'notes as a submodule');
    git(dir, 'tag', 'submodule');
    // On disk the checked-out submodule is a folder like any other, so lint and build serve it.
    expect(readRegistry(dir, { maxFileBytes: 1024 * 1024 }).files.map((file) => file.path)).toContain('capabilities/notes/PROTOCOL.md');
    const failure = await readGitRegistry(dir, 'submodule', { maxFileBytes: 1024 * 1024 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GitRegistryError);
    expect((failure as GitRegistryError).code).toBe('bad-tree');
    expect((failure as GitRegistryError).message).toMatch(
      /^capabilities\/notes at "submodule" \([0-9a-f]{12}\) is a Git submodule: its files are in another repository/,
    );
    // The gate through the CLI: exit 2 with that message, whatever the change (here, none).
    const result = await runCli(['check', '--against', 'submodule'], dir);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain('capabilities/notes at "submodule"');

    // The submodule moved out of capabilities/, a folder link to it in its place.
    git(dir, 'mv', 'capabilities/notes', 'vendored-notes');
    fs.symlinkSync('../vendored-notes', path.join(dir, 'capabilities/notes'));
    commitAll(dir, 'notes behind a folder link');
    const linked = await readGitRegistry(dir, 'HEAD', { maxFileBytes: 1024 * 1024 }).catch((error: unknown) => error);
    expect((linked as GitRegistryError).message).toMatch(/^vendored-notes at "HEAD" \([0-9a-f]{12}\) is a Git submodule/);
  });

  it("refuses a file over the size limit with the disk reader's message", async () => {
    const dir = repository();
    const fromGit = await readGitRegistry(dir, 'base', { maxFileBytes: 64 });
    const fromDisk = readRegistry(dir, { maxFileBytes: 64 });
    expect(fromGit.input.files).toEqual(fromDisk.files);
    expect(fromGit.input.files.every((file) => file.problem?.includes('over the 64 bytes limit'))).toBe(true);
  });

  it("keeps the disk reader's limits on files and text, counted before any blob is read", async () => {
    const dir = repository();
    const files = git(dir, 'ls-tree', '-r', '--name-only', 'base', 'capabilities').trim().split('\n').length;
    const atLimit = await readGitRegistry(dir, 'base', { maxFileBytes: 1024 * 1024, maxFiles: files });
    expect(atLimit.input).toEqual(readRegistry(dir, { maxFileBytes: 1024 * 1024, maxFiles: files }));
    const over = await readGitRegistry(dir, 'base', { maxFileBytes: 1024 * 1024, maxFiles: files - 1 }).catch((error: unknown) => error);
    expect(over).toBeInstanceOf(UsageError);
    expect((over as Error).message).toMatch(
      new RegExp(`^capabilities/ at base holds more than ${files - 1} files, over limits\\.maxFiles in capreg\\.config\\.yaml`),
    );
    // A blob that cannot be read: a read would fail as git-failed, so the limit is crossed from its size alone.
    git(dir, 'update-index', '--add', '--cacheinfo', `100644,${unreadableBlob(dir, 5000)},capabilities/huge/PROTOCOL.md`);
    commitTree(dir, git(dir, 'write-tree').trim(), 'huge');
    const tooMuch = await readGitRegistry(dir, 'huge', { maxFileBytes: 8192, maxTotalBytes: 5000 }).catch((error: unknown) => error);
    expect(tooMuch).toBeInstanceOf(UsageError);
    expect((tooMuch as Error).message).toMatch(
      /^the protocols, toolsets and evals files under capabilities\/ at huge come to more than 4\.9 KiB, over limits\.maxTotalBytes/,
    );
    // Through the command: exit 2 with the one message, and no internal error.
    write(dir, 'capreg.config.yaml', `limits:\n  maxFiles: ${files - 1}\n`);
    const result = await runCli(['check', '--against', 'base'], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^capreg check: capabilities\/ (at base )?holds more than \d+ files, over limits\.maxFiles/);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it("counts folders against the file limit as the disk reader does, from Git's listing", async () => {
    const dir = repository();
    // Deep folders, each holding no more than the next one: fewer files than folders, as Git can hold them.
    write(dir, 'capabilities/alpha/references/a/b/c/d/e/notes.md', 'notes\n');
    commitAll(dir, 'deep');
    git(dir, 'tag', 'deep');
    const listed = (...flags: string[]): number =>
      git(dir, 'ls-tree', '-r', ...flags, '--name-only', 'deep', 'capabilities')
        .trim()
        .split('\n')
        // The folders under capabilities/, not capabilities/ itself, as the disk reader counts them.
        .filter((name) => name !== 'capabilities' && !name.split('/').some((segment) => segment.startsWith('.'))).length;
    const [folders, files] = [listed('-d'), listed()];
    expect(folders).toBeGreaterThan(files);
    const limits = { maxFileBytes: 1024 * 1024, maxFiles: folders };
    expect((await readGitRegistry(dir, 'deep', limits)).input).toEqual(readRegistry(dir, limits));
    const over = await readGitRegistry(dir, 'deep', { ...limits, maxFiles: folders - 1 }).catch((error: unknown) => error);
    expect(over).toBeInstanceOf(UsageError);
    expect((over as Error).message).toMatch(new RegExp(`^capabilities/ at deep holds more than ${folders - 1} folders, over limits\\.maxFiles`));
    expect(() => readRegistry(dir, { ...limits, maxFiles: folders - 1 })).toThrow(new RegExp(`^capabilities/ holds more than ${folders - 1} folders`));
  });

  it('refuses a file over the size limit without reading it, a link too long to be one likewise', async () => {
    const dir = repository();
    const big = unreadableBlob(dir, 5000);
    const longLink = unreadableBlob(dir, 5000);
    git(dir, 'update-index', '--add', '--cacheinfo', `100644,${big},capabilities/huge/PROTOCOL.md`);
    git(dir, 'update-index', '--add', '--cacheinfo', `120000,${longLink},capabilities/linked/PROTOCOL.md`);
    commitTree(dir, git(dir, 'write-tree').trim(), 'huge');
    const { input } = await readGitRegistry(dir, 'huge', { maxFileBytes: 1024 });
    expect(input.files.find((file) => file.path === 'capabilities/huge/PROTOCOL.md')).toEqual({
      path: 'capabilities/huge/PROTOCOL.md',
      problem: 'file is 4.9 KiB, over the 1.0 KiB limit (limits.maxFileBytes in capreg.config.yaml); split it or move material into references/',
    });
    expect(input.files.find((file) => file.path === 'capabilities/linked/PROTOCOL.md')?.problem).toMatch(/symbolic link at huge points outside/);
    expect(input.files.find((file) => file.path === 'capabilities/notes/PROTOCOL.md')?.content).toBe(read(dir, 'capabilities/notes/PROTOCOL.md'));
  });

  it('fails on a blob git cannot read in full instead of taking the wrong bytes', async () => {
    const dir = repository();
    // Read last, so that nothing after it shows that the stream came out short.
    git(dir, 'update-index', '--add', '--cacheinfo', `100644,${unreadableBlob(dir, 500)},capabilities/zzz/PROTOCOL.md`);
    commitTree(dir, git(dir, 'write-tree').trim(), 'corrupt');
    expect(await failure(dir, 'corrupt', 'git-failed')).toMatch(
      /^git cat-file cannot read object [0-9a-f]{40} in full: the repository may be corrupt; run `git fsck`$/,
    );
  });

  it('refuses two file names that are not UTF-8 and read the same, saying so rather than calling the commit crafted', async () => {
    const dir = repository();
    // Latin-1 names, as an old archive unpacks them (café, cafè): Git writes them as they are.
    for (const byte of [0xe9, 0xe8]) {
      fs.writeFileSync(Buffer.concat([Buffer.from(path.join(dir, 'capabilities/archive/references/caf')), Buffer.from([byte]), Buffer.from('.md')]), 'x\n');
    }
    commitAll(dir, 'latin-1 names');
    git(dir, 'tag', 'latin-1');
    const message =
      'the tree of "latin-1" (' +
      git(dir, 'rev-parse', 'latin-1').slice(0, 12) +
      ') holds two names that are not valid UTF-8 and read the same, "capabilities/archive/references/caf\uFFFD.md" (their bad bytes shown as \uFFFD), which the gate cannot tell apart; rename them in UTF-8';
    // It said "lists … twice, which Git never writes (`git fsck` reports it): the commit was crafted or is corrupt".
    expect(await failure(dir, 'latin-1', 'bad-tree')).toBe(message);
    expect(git(dir, 'fsck', '--no-progress')).toBe('');
  });

  it('refuses a tree that lists one name twice, as Git never writes it', async () => {
    const dir = repository();
    const capabilities = treeLines(dir, 'base:capabilities');
    const notes = capabilities.find((line) => line.endsWith('\tnotes'))!;
    const crafted = mktree(dir, [
      ...treeLines(dir, 'base').filter((line) => !line.endsWith('\tcapabilities')),
      `040000 tree ${mktree(dir, [...capabilities, notes])}\tcapabilities`,
    ]);
    commitTree(dir, crafted, 'crafted');
    expect(await failure(dir, 'crafted', 'bad-tree')).toMatch(
      /^the tree of "crafted" \([0-9a-f]{12}\) lists "capabilities\/notes" twice, which Git never writes/,
    );
    const result = await runCli(['check', '--against', 'crafted'], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toMatch(/internal error/);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('stops listing a tree at the file or folder limit, and refuses a crafted tree of other entries or an entry too long for any path', async () => {
    const dir = repository();
    const blob = git(dir, 'hash-object', '-w', path.join(dir, REPORTS_FILE)).trim();
    const withCapabilities = (tree: string): string =>
      mktree(dir, [...treeLines(dir, 'base').filter((line) => !line.endsWith('\tcapabilities')), `040000 tree ${tree}\tcapabilities`]);
    // 20,000 files under one folder (one blob under many names): refused as over maxFiles.
    const many = mktree(
      dir,
      Array.from({ length: 20_000 }, (_, i) => `100644 blob ${blob}\tf${i}.md`),
    );
    commitTree(dir, withCapabilities(mktree(dir, [`040000 tree ${many}\tbulk`])), 'many');
    const over = await readGitRegistry(dir, 'many', { maxFileBytes: 1024, maxFiles: 10 }).catch((error: unknown) => error);
    expect(over).toBeInstanceOf(UsageError);
    expect((over as Error).message).toMatch(/^capabilities\/ at many holds more than 10 files, over limits\.maxFiles/);
    // Folders that hold no file, which Git never writes: more than the files allowed could need.
    const empty = git(dir, 'hash-object', '-t', 'tree', '-w', '/dev/null').trim();
    commitTree(
      dir,
      withCapabilities(
        mktree(
          dir,
          Array.from({ length: 40 }, (_, i) => `040000 tree ${empty}\td${i}`),
        ),
      ),
      'hollow',
    );
    // Folders count against the file limit on their own, as on disk.
    const hollow = await readGitRegistry(dir, 'hollow', { maxFileBytes: 1024, maxFiles: 1 }).catch((error: unknown) => error);
    expect(hollow).toBeInstanceOf(UsageError);
    expect((hollow as Error).message).toMatch(/^capabilities\/ at hollow holds more than 1 folders, over limits\.maxFiles/);
    // With the default limits the same tree is an empty registry.
    expect((await readGitRegistry(dir, 'hollow', { maxFileBytes: 1024 })).input.files).toEqual([]);
    // Entries that are neither (submodules): refused at the first, before they could fill memory.
    commitTree(
      dir,
      withCapabilities(
        mktree(
          dir,
          Array.from({ length: 40 }, (_, i) => `160000 commit ${'1'.repeat(40)}\tm${i}`),
        ),
      ),
      'modules',
    );
    const modules = await readGitRegistry(dir, 'modules', { maxFileBytes: 1024, maxFiles: 1 }).catch((error: unknown) => error);
    expect(modules).toBeInstanceOf(GitRegistryError);
    expect((modules as GitRegistryError).code).toBe('bad-tree');
    expect((modules as Error).message).toMatch(/^capabilities\/m0 at "modules" \([0-9a-f]{12}\) is a Git submodule/);
    // A name of 70,000 characters.
    commitTree(dir, withCapabilities(mktree(dir, [`100644 blob ${blob}\t${'n'.repeat(70_000)}`])), 'long-name');
    expect(await failure(dir, 'long-name', 'bad-tree')).toBe(
      'git ls-tree gave an entry over 64 KiB long, a path no file system holds: the commit was crafted or is corrupt; compare with another commit',
    );
  });

  it('holds folder links to the file limit: a large target is refused without being listed whole, and links do not multiply a folder', async () => {
    const dir = repository();
    const blob = git(dir, 'hash-object', '-w', path.join(dir, REPORTS_FILE)).trim();
    const link = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: dir, input: '../shared', encoding: 'utf8' }).trim();
    const withTrees = (shared: string, links: number): string => {
      const capabilities = mktree(dir, [
        ...treeLines(dir, 'base:capabilities'),
        ...Array.from({ length: links }, (_, i) => `120000 blob ${link}\tl${String(i).padStart(3, '0')}`),
      ]);
      return mktree(dir, [
        ...treeLines(dir, 'base').filter((line) => !line.endsWith('\tcapabilities')),
        `040000 tree ${capabilities}\tcapabilities`,
        `040000 tree ${shared}\tshared`,
      ]);
    };
    const folder = (files: number): string =>
      mktree(
        dir,
        Array.from({ length: files }, (_, i) => `100644 blob ${blob}\tf${i}.md`),
      );
    const own = git(dir, 'ls-tree', '-r', '--name-only', 'base', 'capabilities').trim().split('\n').length;
    // One link to a folder of 20,000 files.
    commitTree(dir, withTrees(folder(20_000), 1), 'large');
    const large = await readGitRegistry(dir, 'large', { maxFileBytes: 1024, maxFiles: 50 }).catch((error: unknown) => error);
    expect(large).toBeInstanceOf(UsageError);
    expect((large as Error).message).toMatch(/^capabilities\/ at large holds more than 50 files, over limits\.maxFiles/);
    // 40 links to one folder of 40 files: walked once, under the first link, as on disk; not 1,600 files.
    commitTree(dir, withTrees(folder(40), 40), 'many-links');
    const { input } = await readGitRegistry(dir, 'many-links', { maxFileBytes: 1024, maxFiles: own + 40 + 40 });
    expect(input.allPaths.filter((file) => /^capabilities\/l\d{3}\/f\d+\.md$/.test(file))).toEqual(
      Array.from({ length: 40 }, (_, i) => `capabilities/l000/f${i}.md`).sort(),
    );
    expect(own).toBeLessThan(50);
  });

  it('reads folder links as the disk reader walks them, and counts them alike against the limits', async () => {
    const P = 'x\n';
    const cases: { name: string; files: Record<string, string>; links: Record<string, string> }[] = [
      // Hidden files in a target are neither read nor counted.
      {
        name: 'hidden',
        files: {
          'shared/PROTOCOL.md': P,
          'shared/evals.yaml': 'cases: []\n',
          ...Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`shared/.cache/c${i}`, P])),
        },
        links: { 'capabilities/x': '../shared' },
      },
      // A folder is walked once, under the first link to it (in name order).
      { name: 'twice', files: { 'shared/PROTOCOL.md': P, 'shared/evals.yaml': P }, links: { 'capabilities/y': '../shared', 'capabilities/x': '../shared' } },
      // Nested targets, either way round; targets that share a prefix.
      {
        name: 'nested',
        files: { 'shared/PROTOCOL.md': P, 'shared/sub/PROTOCOL.md': P, 'shared/sub/n.md': P },
        links: { 'capabilities/x': '../shared', 'capabilities/y': '../shared/sub' },
      },
      {
        name: 'nested-late',
        files: { 'shared/PROTOCOL.md': P, 'shared/sub/PROTOCOL.md': P, 'shared/sub/n.md': P },
        links: { 'capabilities/x': '../shared/sub', 'capabilities/y': '../shared' },
      },
      {
        name: 'prefixes',
        files: { 'shared/PROTOCOL.md': P, 'shared-2/PROTOCOL.md': P, 'shared-2/evals.yaml': P, 'shared.x/PROTOCOL.md': P },
        links: { 'capabilities/x': '../shared', 'capabilities/y': '../shared-2', 'capabilities/z': '../shared.x' },
      },
      // Folders inside a target count, as deep as the disk reader walks.
      { name: 'deep', files: { 'shared/a/b/c/d/PROTOCOL.md': P }, links: { 'capabilities/x': '../shared' } },
    ];
    for (const { name, files, links } of cases) {
      const dir = tempDir();
      created.push(dir);
      for (const [file, text] of Object.entries(files)) write(dir, file, text);
      fs.mkdirSync(path.join(dir, 'capabilities'), { recursive: true });
      for (const [link, target] of Object.entries(links)) fs.symlinkSync(target, path.join(dir, link));
      initRepository(dir);
      commitAll(dir, name);
      // The smallest maxFiles the disk reader takes: the Git reader takes it too, with the same input, and refuses one less.
      let limit = 1;
      while (
        limit < 100 &&
        (() => {
          try {
            readRegistry(dir, { maxFileBytes: 1024, maxFiles: limit });
            return false;
          } catch {
            return true;
          }
        })()
      )
        limit += 1;
      expect((await readGitRegistry(dir, 'HEAD', { maxFileBytes: 1024, maxFiles: limit })).input, name).toEqual(
        readRegistry(dir, { maxFileBytes: 1024, maxFiles: limit }),
      );
      const onDisk = (() => {
        try {
          readRegistry(dir, { maxFileBytes: 1024, maxFiles: limit - 1 });
          return 'read';
        } catch (error) {
          return (error as Error).message;
        }
      })();
      const fromGit = await readGitRegistry(dir, 'HEAD', { maxFileBytes: 1024, maxFiles: limit - 1 }).then(
        () => 'read',
        (error: unknown) => (error as Error).message,
      );
      expect(fromGit.replace(' at HEAD', ''), name).toBe(onDisk);
    }
  });

  it('refuses a ref that names no single commit, saying what to pass instead', async () => {
    const dir = repository();
    write(dir, 'capabilities/notes/PROTOCOL.md', 'changed\n');
    commitAll(dir, 'second');
    const refused = (ref: string): Promise<string> => failure(dir, ref, 'bad-ref');
    // A range resolves to several commits; the first line git prints is HEAD, which would compare the tree with itself.
    for (const ref of ['base...HEAD', 'base..HEAD']) {
      expect(await refused(ref)).toBe(
        `--against "${ref}" names a range of commits; the gate compares with one commit, so pass one ref, e.g. --against base, or the merge base: --against "$(git merge-base base HEAD)"`,
      );
    }
    for (const ref of ['HEAD^!', 'HEAD^@', '^base']) expect(await refused(ref)).toMatch(/names a set of commits; .* pass one ref, e\.g\. .*git merge-base/);
    expect(await refused('base^{tree}')).toBe('--against "base^{tree}" names a Git tree, not a commit; pass a branch, a tag or a commit id');
    // An annotated tag of a tree is a tag, but not one the gate can compare with.
    git(dir, 'tag', '-a', '-m', 'a tree', 'tree-tag', 'base^{tree}');
    expect(await refused('tree-tag')).toBe('--against "tree-tag" names a Git tag of a tree, not of a commit; pass a branch, a tag of a commit or a commit id');
    expect(await refused('main@{upstream}')).toBe(
      `--against "main@{upstream}" names no commit: no upstream configured for branch 'main'; pass a branch, a tag or a commit id`,
    );
    await expect(readGitRegistry(dir, 'base', { maxFileBytes: 1024 })).resolves.toMatchObject({ commit: git(dir, 'rev-parse', 'base').trim() });
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

  it('never takes a registry subfolder made to look like a Git directory for the repository: no base of its refs, no program of its config', async () => {
    const dir = repository('registry');
    const root = path.join(dir, 'registry');
    // An unbumped change, and in the same commit a repository of the author's whose "base" holds it already.
    write(root, REPORTS_FILE, `${read(root, REPORTS_FILE)}\nAn unbumped sentence.\n`);
    const decoy = tempDir();
    created.push(decoy);
    initRepository(decoy);
    fs.cpSync(path.join(root, 'capabilities'), path.join(decoy, 'capabilities'), { recursive: true });
    commitAll(decoy, 'decoy base');
    git(decoy, 'tag', 'base');
    for (const entry of ['HEAD', 'objects', 'refs']) fs.cpSync(path.join(decoy, '.git', entry), path.join(root, entry), { recursive: true });
    const ran = path.join(decoy, 'ran');
    write(root, 'config', `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = "echo ran > '${ran}'; false"\n`);
    commitAll(dir, 'a git directory in the registry folder');

    const result = await runCli(['check', '--against', 'base'], root);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^capreg check: git takes a folder at or above .*registry for a Git directory \(cannot use bare repository .*safe\.bareRepository.*remove them from the registry/,
    );
    expect(fs.existsSync(ran)).toBe(false);
  });

  it('does not call git silent when it was this thread that did not read: output or an end waiting to be read counts (--git-timeout)', async () => {
    const dir = repository();
    const base = await openGitBase(dir, 'HEAD', dir, { idleMs: 300 });
    const reading = base.read({ maxFileBytes: 1024 * 1024 });
    // git has started listing the tree; this thread is then busy (compiling the new tree, in check) for longer than the timeout.
    const busyUntil = performance.now() + 1000;
    while (performance.now() < busyUntil);
    const { files } = await reading;
    expect(files.map((file) => file.path)).toContain('capabilities/notes/PROTOCOL.md');
    // A git that writes nothing and ends while this thread is busy: its end is news too.
    const asking = base.tracksCache();
    const busyAgain = performance.now() + 1000;
    while (performance.now() < busyAgain);
    expect(await asking).toBe(false);
  });

  it('takes the answer of a git that ended while a process it started holds its pipes (an fsmonitor hook here), once they are idle (--git-timeout)', async () => {
    const dir = repository();
    // The hook leaves a process behind that holds git's stderr, as a daemon that keeps it would.
    git(dir, 'config', 'core.fsmonitor', "sh -c 'sleep 4 >&2 &'; true");
    const base = await openGitBase(dir, 'HEAD', dir, { idleMs: 300 });
    const started = performance.now();
    expect(await base.tracksCache()).toBe(false);
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('refuses option-like refs', async () => {
    const dir = repository();
    await expect(readGitRegistry(dir, '--output=/tmp/x', { maxFileBytes: 1024 })).rejects.toMatchObject({ code: 'bad-ref' });
    await expect(readGitRegistry(dir, 'nope', { maxFileBytes: 1024 })).rejects.toBeInstanceOf(GitRegistryError);
  });
});

// `capreg build` end to end: a deterministic manifest, nothing written on a lint error, atomic
// writes, SOURCE_DATE_EPOCH, --out, and `source` from Git.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../compiler/manifest.js';
import type { Manifest } from '../../compiler/types.js';
import { gitSource, sourceWarning } from '../../cli/git-source.js';
import { cleanProtocol, run, tempDir, tempRegistry, writeFiles } from './helpers.js';

const ALPHA = 'capabilities/alpha/PROTOCOL.md';
const BETA = 'capabilities/beta/PROTOCOL.md';

function registry(extra: Record<string, string | null> = {}): string {
  return tempRegistry({
    [ALPHA]: cleanProtocol('alpha', {
      body: 'Ask first, then record the alpha entry.\n\n- Never guess an alpha value.\n\nFor reminders, load [beta](capability:beta).\n',
    }),
    [BETA]: cleanProtocol('beta'),
    ...extra,
  });
}

const manifestPath = (root: string, out = 'dist'): string => path.join(root, out, 'manifest.json');
const readManifestText = (root: string, out?: string): string => fs.readFileSync(manifestPath(root, out), 'utf8');

function readManifest(root: string, out?: string): Manifest {
  const parsed = parseManifest(readManifestText(root, out));
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.manifest;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();
}

describe('capreg build: the manifest', () => {
  it('writes dist/manifest.json that passes parseManifest, with the SPEC fields', async () => {
    const root = registry();
    const result = await run(['build'], { cwd: root });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^capreg build: wrote dist\/manifest\.json \(2 capabilities, revision sha256:[0-9a-f]{12}…\)\n$/);
    const manifest = readManifest(root);
    expect(manifest.schemaVersion).toBe(1);
    expect(manifest.revision).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(manifest.integrity).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(manifest.source).toBeNull();
    expect(manifest.builtAt).toBeUndefined();
    expect(Object.keys(manifest.toolsets)).toEqual(['work-logs']);
    expect(manifest.capabilities.map((c) => c.id)).toEqual(['alpha', 'beta']);
    const alpha = manifest.capabilities[0]!;
    expect(alpha).toMatchObject({
      id: 'alpha',
      name: 'alpha name',
      description: 'Keeps alpha entries for the user.',
      whenToUse: ['keep a alpha entry'],
      requiredToolsets: [],
      optionalToolsets: [],
      protocolVersion: '1.0.0',
      protocolUpdated: '2026-11-29',
      references: ['beta'],
    });
    expect(alpha.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(alpha.protocol).toMatch(/^---\nprotocol_version: 1\.0\.0\nprotocol_updated: 2026-11-29\n---\n\n# alpha\n/);
    expect(alpha.protocol).toContain('call `get_capability_protocol` with `{"capabilityId": "beta"}`');
    expect(alpha.protocol).not.toContain('capability:beta');
  });

  it('reports an output folder that cannot be written as exit 2 with a message, not a crash', async () => {
    const root = registry();
    writeFiles(root, { blocker: 'a file where the output folder should be' });
    const result = await run(['build', '--out', 'blocker/dist', '--no-cache'], { cwd: root });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('cannot write the build output in');
    expect(result.stderr).not.toContain('internal error');
  });

  it('is byte-identical across two builds, with and without the cache, and from another folder', async () => {
    const root = registry();
    expect((await run(['build'], { cwd: root })).code).toBe(0);
    const first = readManifestText(root);
    expect((await run(['build'], { cwd: root })).code).toBe(0); // from the parse cache
    expect(readManifestText(root)).toBe(first);
    expect((await run(['build', '--no-cache'], { cwd: root })).code).toBe(0);
    expect(readManifestText(root)).toBe(first);

    // The same tree at another path: no absolute path or time leaks into the bytes.
    const copy = tempDir();
    fs.cpSync(path.join(root, 'capabilities'), path.join(copy, 'capabilities'), { recursive: true });
    expect((await run(['build', '--no-cache'], { cwd: copy })).code).toBe(0);
    expect(readManifestText(copy)).toBe(first);
  });

  it('is the same for CRLF line endings and a BOM', async () => {
    const root = registry();
    await run(['build'], { cwd: root });
    const lf = readManifestText(root);
    const crlf = registry();
    for (const file of [ALPHA, BETA]) {
      const target = path.join(crlf, file);
      fs.writeFileSync(target, `\uFEFF${fs.readFileSync(target, 'utf8').replace(/\n/g, '\r\n')}`);
    }
    await run(['build'], { cwd: crlf });
    expect(readManifest(crlf).revision).toBe((JSON.parse(lf) as Manifest).revision);
  });

  it('changes revision, integrity and the digest of the changed capability only when a protocol changes', async () => {
    const root = registry();
    await run(['build'], { cwd: root });
    const before = readManifest(root);
    const betaFile = path.join(root, BETA);
    fs.writeFileSync(betaFile, fs.readFileSync(betaFile, 'utf8').replace('repeat it back', 'read it back'));
    expect((await run(['build'], { cwd: root })).code).toBe(0);
    const after = readManifest(root);
    expect(after.revision).not.toBe(before.revision);
    expect(after.integrity).not.toBe(before.integrity);
    expect(after.capabilities[0]!.digest).toBe(before.capabilities[0]!.digest);
    expect(after.capabilities[1]!.digest).not.toBe(before.capabilities[1]!.digest);
  });

  it('changes the revision when only toolsets.yaml changes', async () => {
    const root = registry();
    await run(['build'], { cwd: root });
    const before = readManifest(root);
    fs.appendFileSync(path.join(root, 'capabilities/toolsets.yaml'), 'calendar:\n  description: Events.\n  tools: {}\n');
    await run(['build'], { cwd: root });
    expect(readManifest(root).revision).not.toBe(before.revision);
  });

  it('sets builtAt from SOURCE_DATE_EPOCH, and refuses one that is not a number', async () => {
    const root = registry();
    expect((await run(['build'], { cwd: root, env: { SOURCE_DATE_EPOCH: '1795953600' } })).code).toBe(0);
    const manifest = readManifest(root);
    expect(manifest.builtAt).toBe('2026-11-29T12:00:00.000Z');
    const bad = await run(['build'], { cwd: root, env: { SOURCE_DATE_EPOCH: '2026-11-29' } });
    expect(bad).toEqual({ code: 2, stdout: '', stderr: 'capreg build: SOURCE_DATE_EPOCH must be a whole number of seconds, not "2026-11-29"\n' });
  });

  it('--out writes to a folder relative to the working directory', async () => {
    const root = registry({ 'docs/x.md': 'x' });
    const result = await run(['build', '--out', 'site'], { cwd: path.join(root, 'docs') });
    expect(result.code).toBe(0);
    expect(readManifest(path.join(root, 'docs'), 'site').capabilities).toHaveLength(2);
    expect(fs.existsSync(path.join(root, 'dist'))).toBe(false);
    const absolute = path.join(tempDir(), 'out');
    expect((await run(['build', '--out', absolute], { cwd: root })).code).toBe(0);
    expect(fs.existsSync(path.join(absolute, 'manifest.json'))).toBe(true);
  });

  it('--out inside capabilities/ is a usage error: the build would read its own outputs (and --watch rebuild for ever)', async () => {
    const root = registry();
    for (const out of ['capabilities', 'capabilities/alpha/references']) {
      expect(await run(['build', '--out', out, '--watch'], { cwd: root })).toEqual({
        code: 2,
        stdout: '',
        stderr: `capreg build: --out ${out}: the output folder must not be inside capabilities/, which the build reads; use dist/ or a folder outside the registry's capabilities\n`,
      });
    }
    // Through a link that leads into capabilities/: inside it all the same.
    fs.symlinkSync(path.join(root, 'capabilities'), path.join(root, 'caplink'));
    expect((await run(['build', '--out', 'caplink/alpha/out'], { cwd: root })).code).toBe(2);
    expect(fs.readdirSync(path.join(root, 'capabilities/alpha'))).toEqual(['PROTOCOL.md']);
  });

  it('never writes through a link inside the registry root that leads out of it (a committed dist/ or dist/skill/)', async () => {
    const outside = tempDir();
    for (const link of ['dist', 'dist/skill']) {
      const root = registry();
      fs.mkdirSync(path.dirname(path.join(root, link)), { recursive: true });
      fs.symlinkSync(outside, path.join(root, link));
      const result = await run(['build', '--no-cache'], { cwd: root });
      expect(result).toEqual({
        code: 2,
        stdout: '',
        stderr: `capreg build: --out dist: the build writes through ${link}: symbolic link points outside the registry root (to ${outside}); refused: put the folder itself inside the registry\n`,
      });
      expect(fs.readdirSync(outside)).toEqual([]);
    }
    // A link that stays inside the root is followed, as the registry reader follows one.
    const root = registry();
    fs.mkdirSync(path.join(root, 'site'));
    fs.symlinkSync('site', path.join(root, 'dist'));
    expect((await run(['build', '--no-cache'], { cwd: root })).code).toBe(0);
    expect(fs.existsSync(path.join(root, 'site/manifest.json'))).toBe(true);
  });

  it('--format json prints one JSON object on stdout, the progress note on stderr', async () => {
    const root = registry();
    const result = await run(['build', '--format', 'json'], { cwd: root });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ diagnostics: [], errorCount: 0, warningCount: 0 });
    expect(result.stderr).toMatch(/^capreg build: wrote /);
  });

  it('writes the manifest again when dist/ was removed since the last build', async () => {
    const root = registry();
    expect((await run(['build'], { cwd: root })).code).toBe(0);
    const first = readManifestText(root);
    fs.rmSync(path.join(root, 'dist'), { recursive: true });
    expect((await run(['build'], { cwd: root })).code).toBe(0);
    expect(readManifestText(root)).toBe(first);
  });

  it('leaves no temporary files next to the manifest', async () => {
    const root = registry();
    await run(['build'], { cwd: root });
    await run(['build'], { cwd: root });
    expect(fs.readdirSync(path.join(root, 'dist')).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});

describe('capreg build: nothing written on error', () => {
  it('a lint error writes nothing and leaves an existing manifest byte for byte', async () => {
    const root = registry();
    expect((await run(['build'], { cwd: root })).code).toBe(0);
    const before = fs.readFileSync(manifestPath(root));
    const mtime = fs.statSync(manifestPath(root)).mtimeMs;
    const skill = fs.readFileSync(path.join(root, 'dist/skill/SKILL.md'));

    fs.writeFileSync(path.join(root, BETA), cleanProtocol('beta', { version: 'latest' }));
    const result = await run(['build'], { cwd: root });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('`protocol_version` "latest" has the wrong form');
    expect(result.stderr).toBe('capreg build: 1 error(s); nothing written\n');
    expect(fs.readFileSync(manifestPath(root)).equals(before)).toBe(true);
    expect(fs.statSync(manifestPath(root)).mtimeMs).toBe(mtime);
    expect(fs.readFileSync(path.join(root, 'dist/skill/SKILL.md')).equals(skill)).toBe(true);
    expect(fs.readdirSync(path.join(root, 'dist')).sort()).toEqual(['manifest.json', 'skill']);
  });

  it('a lint error in a fresh registry creates no dist/ at all', async () => {
    const root = registry({ [BETA]: cleanProtocol('beta', { version: '^1.0.0' }) });
    expect((await run(['build'], { cwd: root })).code).toBe(1);
    expect(fs.existsSync(path.join(root, 'dist'))).toBe(false);
  });

  it('too many warnings (--max-warnings) writes nothing', async () => {
    const root = registry({ 'capreg.config.yaml': 'rules:\n  markdown-syntax: warn\n' });
    fs.appendFileSync(path.join(root, BETA), '\n```\nunclosed\n');
    const result = await run(['build', '--max-warnings', '0'], { cwd: root });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('capreg build: too many warnings; nothing written\n');
    expect(fs.existsSync(path.join(root, 'dist'))).toBe(false);
    // Warnings alone do not stop a build.
    expect((await run(['build'], { cwd: root })).code).toBe(0);
  });

  it('a broken capreg.config.yaml is exit 2 and writes nothing', async () => {
    const root = registry({ 'capreg.config.yaml': 'rules: [\n' });
    const result = await run(['build'], { cwd: root });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^capreg build: invalid configuration: capreg\.config\.yaml:2:1: /);
    expect(fs.existsSync(path.join(root, 'dist'))).toBe(false);
  });

  // Found by an attack pass: with these rules off, lint passed and the build wrote a manifest with
  // `protocol_version: undefined` in its protocol, or one capability twice, which serve and export refuse.
  it('a manifest its readers would refuse (rules that keep capabilities whole turned off) is exit 2 and writes nothing', async () => {
    const config = 'rules:\n  frontmatter-schema: off\n  negative-rules: off\n  id-matches-folder: off\n';
    const broken = registry({ 'capreg.config.yaml': config, 'capabilities/gamma/PROTOCOL.md': '---\nid: gamma\nname: 5\n---\n\n# Gamma\n' });
    const refused = await run(['build', '--no-cache'], { cwd: broken });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("/capabilities/2 must have required property 'description', from capabilities/gamma/PROTOCOL.md), so nothing was written");
    expect(fs.existsSync(path.join(broken, 'dist'))).toBe(false);

    // Frontmatter that is no mapping made the build crash (internal error, stack trace).
    const notMapping = registry({ 'capreg.config.yaml': config, 'capabilities/gamma/PROTOCOL.md': '---\n- a list\n---\n\n# Gamma\n' });
    const listed = await run(['build', '--no-cache'], { cwd: notMapping });
    expect(listed.code).toBe(2);
    expect(listed.stderr).toContain("must have required property 'id', from capabilities/gamma/PROTOCOL.md), so nothing was written");

    const twice = registry({ 'capreg.config.yaml': config, 'capabilities/gamma/PROTOCOL.md': cleanProtocol('beta') });
    const duplicate = await run(['build', '--no-cache'], { cwd: twice });
    expect(duplicate.code).toBe(2);
    expect(duplicate.stderr).toContain('manifest lists capability "beta" twice, from capabilities/');
    expect(fs.existsSync(path.join(twice, 'dist'))).toBe(false);

    // A date that is none, tags that are no list: written, then served broken (every protocol call
    // of it threw "Invalid time value", skills/list failed whole).
    for (const [field, line, message] of [
      ['protocol_updated', 'protocol_updated: next week', '/capabilities/2/protocolUpdated must match pattern'],
      ['tags', 'tags: weekly', '/capabilities/2/tags must be array'],
    ] as const) {
      const text = cleanProtocol('gamma').replace(field === 'tags' ? /^(id: gamma)$/m : /^protocol_updated: .*$/m, field === 'tags' ? `$1\n${line}` : line);
      const wrong = registry({ 'capreg.config.yaml': config, 'capabilities/gamma/PROTOCOL.md': text });
      const refusedField = await run(['build', '--no-cache'], { cwd: wrong });
      expect(refusedField.code).toBe(2);
      expect(refusedField.stderr).toContain(message);
      expect(fs.existsSync(path.join(wrong, 'dist'))).toBe(false);
    }
  });
});

describe('capreg build: source from Git', () => {
  it('is null outside a Git work tree', async () => {
    const root = registry();
    const result = await run(['build'], { cwd: root });
    expect(readManifest(root).source).toBeNull();
    expect(result.stderr).not.toMatch(/warning/);
  });

  it('records the commit, and dirty when capabilities/ has uncommitted changes', async () => {
    const root = registry();
    git(root, 'init', '-q');
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'registry');
    const head = git(root, 'rev-parse', 'HEAD');

    expect((await run(['build'], { cwd: root })).code).toBe(0);
    expect(readManifest(root).source).toEqual({ commit: head, dirty: false });

    // Build output and files outside the registry do not make it dirty.
    writeFiles(root, { 'README.md': 'notes\n' });
    expect((await run(['build'], { cwd: root })).code).toBe(0);
    expect(readManifest(root).source).toEqual({ commit: head, dirty: false });

    fs.appendFileSync(path.join(root, BETA), '\nAsk again when unsure.\n');
    expect((await run(['build'], { cwd: root })).code).toBe(0);
    expect(readManifest(root).source).toEqual({ commit: head, dirty: true });

    // An untracked new capability is a change too.
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'more');
    writeFiles(root, { 'capabilities/gamma/PROTOCOL.md': cleanProtocol('gamma') });
    expect((await run(['build'], { cwd: root })).code).toBe(0);
    expect(readManifest(root).source).toEqual({ commit: git(root, 'rev-parse', 'HEAD'), dirty: true });
  });

  it('is null with a warning when Git refuses the repository, not null without a word', async () => {
    const root = registry();
    git(root, 'init', '-q');
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'registry');
    // What Git says for a repository it will not read ("dubious ownership" needs another owner).
    fs.appendFileSync(path.join(root, '.git/config'), '[core\n');
    const result = await run(['build'], { cwd: root });
    expect(result.code).toBe(0);
    expect(readManifest(root).source).toBeNull();
    expect(result.stderr).toMatch(
      /^capreg build: warning: the manifest has no source \(commit\): git failed: fatal: bad config line \d+ in file \.git\/config; fix the repository/,
    );
    // Said on a build answered from the cache too.
    const again = await run(['build'], { cwd: root });
    expect(again.stderr).toMatch(/^capreg build: warning: the manifest has no source/);
    expect(again.stderr).toMatch(/is up to date/);
  });

  it('is null with a warning that says so when git gives no answer within its time (a hook that hangs)', async () => {
    const root = registry();
    git(root, 'init', '-q');
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'registry');
    // `git status` runs the fsmonitor hook first, and waits for it.
    git(root, 'config', 'core.fsmonitor', 'sleep 10; false');
    const started = performance.now();
    const { source, problem } = await gitSource(root, 500);
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(source).toBeNull();
    expect(problem).toBe('git gave no output for 0.5 s and was stopped: another git process may hold a lock, or a hook hangs');
    expect(sourceWarning('capreg build', problem!)).toBe(
      'capreg build: warning: the manifest has no source (commit): git gave no output for 0.5 s and was stopped: another git process may hold a lock, or a hook hangs\n',
    );
    // The same repository with a hook that answers: a commit.
    git(root, 'config', 'core.fsmonitor', 'false');
    expect(await gitSource(root, 5_000)).toEqual({ source: { commit: git(root, 'rev-parse', 'HEAD'), dirty: false } });
  });

  it('runs no program of a registry subfolder made to look like a Git directory (its config is not read)', async () => {
    const top = tempDir();
    git(top, 'init', '-q');
    const root = path.join(top, 'registry');
    fs.cpSync(registry(), root, { recursive: true });
    // What a pull request can commit: git, run in registry/, would take it for the repository.
    const ran = path.join(top, 'ran');
    writeFiles(root, {
      HEAD: 'ref: refs/heads/main\n',
      'objects/info/.keep': '',
      'refs/heads/.keep': '',
      config: `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = "echo ran > '${ran}'; false"\n`,
    });
    const result = await run(['build', '--no-cache'], { cwd: root });
    expect(result.code).toBe(0);
    expect(fs.existsSync(ran)).toBe(false);
    expect(readManifest(root).source).toBeNull();
    expect(result.stderr).toMatch(/^capreg build: warning: the manifest has no source \(commit\): git failed: fatal: cannot use bare repository/);
  });

  it('has a null commit in a repository without commits', async () => {
    const root = registry();
    git(root, 'init', '-q');
    expect((await run(['build'], { cwd: root })).code).toBe(0);
    expect(readManifest(root).source).toEqual({ commit: null, dirty: true });
  });

  it('works for a registry in a subfolder of the repository', async () => {
    const repo = tempDir();
    git(repo, 'init', '-q');
    const root = path.join(repo, 'registry');
    fs.mkdirSync(root);
    fs.cpSync(path.join(registry(), 'capabilities'), path.join(root, 'capabilities'), { recursive: true });
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'registry');
    expect((await run(['build'], { cwd: root })).code).toBe(0);
    expect(readManifest(root).source).toEqual({ commit: git(repo, 'rev-parse', 'HEAD'), dirty: false });
  });
});

// capreg export --format agent-skills: folders that pass the reference validator (skills-ref),
// filtered like the server, within the format's budgets, byte-identical on rebuild, replaced in one
// step, and a Claude Code marketplace whose version follows the manifest revision.
import fs from 'node:fs';
import path from 'node:path';
import { validate } from 'skills-ref';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { makeManifest, principalsYaml, STANDARD_CAPABILITIES, writeManifest, type CapabilitySpec } from '../server/helpers.js';
import { REPO_ROOT, run, runBin, tempDir } from './helpers.js';

const scratch: string[] = [];
function scratchDir(): string {
  const dir = tempDir('capreg-export-');
  scratch.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
});

/** Every file under `dir`, relative path → bytes. */
function tree(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    files.set(path.relative(dir, file), fs.readFileSync(file, 'latin1'));
  }
  return files;
}

function manifestFile(specs: CapabilitySpec[]): string {
  const file = path.join(scratchDir(), 'manifest.json');
  writeManifest(file, makeManifest(specs));
  return file;
}

function skillFolders(out: string): string[] {
  return fs
    .readdirSync(out, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
    .map((entry) => entry.name)
    .sort();
}

/** A folder exported once from the standard capabilities, and the same export run again into it. */
async function exportedOnce(): Promise<{ out: string; exportAgain: () => ReturnType<typeof run> }> {
  const dir = scratchDir();
  const out = path.join(dir, 'skills');
  const manifest = manifestFile(STANDARD_CAPABILITIES);
  const exportAgain = (): ReturnType<typeof run> => run(['export', '--format', 'agent-skills', '--manifest', manifest, '--out', out], { cwd: dir });
  expect((await exportAgain()).code).toBe(0);
  return { out, exportAgain };
}

describe('capreg export of the bundled registry (the real bin)', () => {
  let manifest: string;
  beforeAll(() => {
    const dist = scratchDir();
    const built = runBin(['build', '--root', REPO_ROOT, '--out', dist, '--no-cache'], { cwd: REPO_ROOT });
    expect(built.code, built.stderr).toBe(0);
    manifest = path.join(dist, 'manifest.json');
  });

  it('writes one folder per capability, each valid for the reference validator, exit 0', async () => {
    const out = path.join(scratchDir(), 'skills');
    const result = runBin(['export', '--format', 'agent-skills', '--manifest', manifest, '--out', out], { cwd: REPO_ROOT });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^capreg export: wrote 3 skills to .* \(revision sha256:[0-9a-f]{64}\)\n$/);
    expect(skillFolders(out)).toEqual(['personal-automation', 'test-driven-development', 'work-reporting']);
    for (const name of skillFolders(out)) expect(await validate(path.join(out, name)), name).toEqual([]);
  });

  it('rewrites catalog links to name the skill to load, and keeps capreg facts in metadata', () => {
    const out = path.join(scratchDir(), 'skills');
    expect(runBin(['export', '--format', 'agent-skills', '--manifest', manifest, '--out', out], { cwd: REPO_ROOT }).code).toBe(0);
    const text = fs.readFileSync(path.join(out, 'work-reporting', 'SKILL.md'), 'utf8');
    expect(text).toContain('load the skill `personal-automation` and follow it');
    expect(text).not.toContain('get_capability_protocol');
    const frontmatter = parseYaml(/^---\n([\s\S]*?)\n---\n/.exec(text)?.[1] ?? '') as { metadata: Record<string, string> };
    expect(frontmatter.metadata).toMatchObject({ 'capreg-id': 'work-reporting', 'required-toolsets': 'work-logs', dependencies: 'personal-automation' });
    expect(frontmatter.metadata['version']).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('is deterministic: two exports of one manifest are byte-identical', () => {
    const [a, b] = [path.join(scratchDir(), 'a'), path.join(scratchDir(), 'b')];
    for (const out of [a, b])
      expect(runBin(['export', '--format', 'agent-skills', '--manifest', manifest, '--out', out, '--marketplace'], { cwd: REPO_ROOT }).code).toBe(0);
    expect(tree(a)).toEqual(tree(b));
  });
});

describe('capreg export: who sees what', () => {
  it('--scopes exports only what those scopes may see', async () => {
    const out = path.join(scratchDir(), 'skills');
    const result = await run(
      ['export', '--format', 'agent-skills', '--manifest', manifestFile(STANDARD_CAPABILITIES), '--out', out, '--scopes', 'reports:read'],
      { cwd: scratchDir() },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(skillFolders(out)).toEqual(['open-help', 'work-reporting']);
  });

  it('--scopes with a scope that is not <toolset>:<action>, or none, is a usage error and an earlier export stays', async () => {
    const dir = scratchDir();
    const manifest = manifestFile(STANDARD_CAPABILITIES);
    const out = path.join(dir, 'skills');
    expect((await run(['export', '--format', 'agent-skills', '--manifest', manifest, '--out', out, '--scopes', 'reports:read'], { cwd: dir })).code).toBe(0);
    // Each was skipped without a word: the export was replaced by fewer skills (none for the last two), exit 0.
    for (const [scopes, message] of [
      ['reports:read,calendar', '--scopes has "calendar"; expected "<toolset>:<action>" with action read, write or admin'],
      ['reports:raed', '--scopes has "reports:raed"; expected "<toolset>:<action>" with action read, write or admin'],
      ['', '--scopes needs at least one scope, "<toolset>:<action>" with action read, write or admin, comma-separated'],
    ]) {
      const result = await run(['export', '--format', 'agent-skills', '--manifest', manifest, '--out', out, '--scopes', scopes!], { cwd: dir });
      expect(result.stderr).toBe(`capreg export: ${message}\n`);
      expect(result.code).toBe(2);
      expect(skillFolders(out)).toEqual(['open-help', 'work-reporting']);
    }
  });

  it("--principals FILE --as ID exports that principal's view; an unknown id is a usage error", async () => {
    const dir = scratchDir();
    const principals = path.join(dir, 'principals.yaml');
    fs.writeFileSync(principals, principalsYaml([{ id: 'carol', key: 'k', scopes: ['calendar:read', 'automation:read'] }]));
    const manifest = manifestFile(STANDARD_CAPABILITIES);
    const out = path.join(dir, 'skills');
    const result = await run(['export', '--format', 'agent-skills', '--manifest', manifest, '--out', out, '--principals', principals, '--as', 'carol'], {
      cwd: dir,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(skillFolders(out)).toEqual(['calendar-digest', 'open-help', 'personal-automation']);
    const unknown = await run(
      ['export', '--format', 'agent-skills', '--manifest', manifest, '--out', path.join(dir, 'x'), '--principals', principals, '--as', 'mallory'],
      { cwd: dir },
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no principal with id "mallory"');
    expect(fs.existsSync(path.join(dir, 'x'))).toBe(false);
  });
});

describe('capreg export: budgets and atomicity', () => {
  const long: CapabilitySpec = {
    id: 'long-one',
    protocol: `---\nprotocol_version: 1.0.0\nprotocol_updated: 2025-01-01\n---\n# Long\n\n${Array.from({ length: 520 }, (_, i) => `${i + 1}. Step ${i + 1}.`).join('\n')}\n`,
  };

  it('names the skill over the line budget, exits 1 and writes nothing, an earlier export untouched', async () => {
    const dir = scratchDir();
    const out = path.join(dir, 'skills');
    expect((await run(['export', '--format', 'agent-skills', '--manifest', manifestFile(STANDARD_CAPABILITIES), '--out', out], { cwd: dir })).code).toBe(0);
    const before = tree(out);
    const result = await run(['export', '--format', 'agent-skills', '--manifest', manifestFile([...STANDARD_CAPABILITIES, long]), '--out', out], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('capreg export: long-one: the body is 522 lines; Agent Skills bodies stay under 500');
    expect(result.stderr).toContain('nothing was written');
    expect(tree(out)).toEqual(before);
    expect(fs.readdirSync(dir).filter((name) => name.endsWith('.tmp') || name.endsWith('.old'))).toEqual([]);
  });

  it('replaces an earlier export in one step (a removed capability is gone) but never a foreign folder', async () => {
    const dir = scratchDir();
    const out = path.join(dir, 'skills');
    expect((await run(['export', '--format', 'agent-skills', '--manifest', manifestFile(STANDARD_CAPABILITIES), '--out', out], { cwd: dir })).code).toBe(0);
    const fewer = STANDARD_CAPABILITIES.filter((spec) => spec.id !== 'calendar-digest');
    expect((await run(['export', '--format', 'agent-skills', '--manifest', manifestFile(fewer), '--out', out], { cwd: dir })).code).toBe(0);
    expect(skillFolders(out)).toEqual(['open-help', 'personal-automation', 'work-reporting']);
    const foreign = path.join(dir, 'mine');
    fs.mkdirSync(foreign);
    fs.writeFileSync(path.join(foreign, 'notes.txt'), 'keep me');
    const refused = await run(['export', '--format', 'agent-skills', '--manifest', manifestFile(fewer), '--out', foreign], { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('is not an earlier export');
    expect(fs.readdirSync(foreign)).toEqual(['notes.txt']);
  });

  it("never replaces an earlier export that holds a file no export wrote (a skill of the user's own), and says which", async () => {
    // docs/skills.md points Claude Code at `--out .claude/skills`, where a project keeps its own skills too.
    const { out, exportAgain } = await exportedOnce();
    expect((await exportAgain()).code).toBe(0);
    const exported = tree(out);
    for (const added of ['my-skill/SKILL.md', 'work-reporting/references/notes.md']) {
      fs.mkdirSync(path.dirname(path.join(out, added)), { recursive: true });
      fs.writeFileSync(path.join(out, added), 'keep me\n');
      // It was deleted with the earlier export, exit 0.
      const refused = await exportAgain();
      expect(refused.stderr).toBe(
        `capreg export: ${out} is an earlier export, but holds ${added}, which no export wrote, and replacing the folder would delete it; move it out of ${out}, or pick another --out\n`,
      );
      expect(refused.code).toBe(2);
      expect(tree(out)).toEqual(new Map([...exported, [added, 'keep me\n']]));
      fs.rmSync(path.join(out, added));
    }
    expect((await exportAgain()).code).toBe(0);
    expect(tree(out)).toEqual(exported);
  });

  it('replaces an export by an earlier capreg (its marker lists no files) that holds only what this export writes, and says why it refuses one that holds more', async () => {
    // Before 74c10f2 the marker held the revision alone: every export a user upgraded with was refused
    // as holding open-help/SKILL.md "which no export wrote", though an export wrote it.
    const { out, exportAgain } = await exportedOnce();
    const exported = tree(out);
    const marker = path.join(out, '.capreg-export');
    const olderMarker = `${fs.readFileSync(marker, 'utf8').split('\n')[0]}\n`;
    fs.writeFileSync(marker, olderMarker);
    const upgraded = await exportAgain();
    expect(upgraded.stderr).not.toContain('no export wrote');
    expect(upgraded.code).toBe(0);
    expect(tree(out)).toEqual(exported);

    fs.writeFileSync(marker, olderMarker);
    fs.mkdirSync(path.join(out, 'my-skill'));
    fs.writeFileSync(path.join(out, 'my-skill', 'SKILL.md'), 'keep me\n');
    const refused = await exportAgain();
    expect(refused.stderr).toBe(
      `capreg export: ${out} is an export by an earlier capreg, whose ${'.capreg-export'} does not list the files it wrote, and it holds my-skill/SKILL.md, which this export does not write; replacing the folder would delete it: move it out of ${out}, or pick another --out\n`,
    );
    expect(refused.code).toBe(2);
    expect(fs.readFileSync(path.join(out, 'my-skill', 'SKILL.md'), 'utf8')).toBe('keep me\n');
  });

  it('reads a marker whose lines end in CRLF (an export committed to Git and checked out with core.autocrlf)', async () => {
    const { out, exportAgain } = await exportedOnce();
    const exported = tree(out);
    const marker = path.join(out, '.capreg-export');
    fs.writeFileSync(marker, fs.readFileSync(marker, 'utf8').replace(/\n/g, '\r\n'));
    const again = await exportAgain();
    expect(again.stderr).not.toContain('no export wrote');
    expect(again.code).toBe(0);
    expect(tree(out)).toEqual(exported);
  });

  it("refuses the registry's default manifest when it is a link out of the registry root, without quoting what it points to", async () => {
    const dir = scratchDir();
    const root = path.join(dir, 'registry');
    fs.mkdirSync(path.join(root, 'capabilities'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'secret'), 'TOKEN=0123456789abcdef\n');
    // What a pull request can commit: dist/manifest.json -> a file outside the registry.
    fs.mkdirSync(path.join(root, 'dist'));
    fs.symlinkSync(path.join(dir, 'secret'), path.join(root, 'dist/manifest.json'));
    const refused = await run(['export', '--format', 'agent-skills', '--out', path.join(dir, 'skills')], { cwd: root });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('dist/manifest.json: symbolic link points outside the registry root');
    expect(refused.stderr).not.toContain('TOKEN');
    expect(fs.existsSync(path.join(dir, 'skills'))).toBe(false);
  });

  it('refuses a missing or unknown --format with exit 2', async () => {
    const dir = scratchDir();
    const missing = await run(['export', '--out', path.join(dir, 'o'), '--manifest', manifestFile(STANDARD_CAPABILITIES)], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--format is required');
    const unknown = await run(['export', '--format', 'zip', '--out', path.join(dir, 'o'), '--manifest', manifestFile(STANDARD_CAPABILITIES)], { cwd: dir });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown --format "zip"');
  });
});

describe('capreg export --marketplace', () => {
  function version(out: string): string {
    const marketplace = JSON.parse(fs.readFileSync(path.join(out, '.claude-plugin', 'marketplace.json'), 'utf8')) as {
      plugins: { version: string; skills: string[] }[];
    };
    return marketplace.plugins[0]?.version ?? '';
  }

  it('writes a marketplace whose plugin version follows the manifest revision exactly', async () => {
    const dir = scratchDir();
    const file = manifestFile(STANDARD_CAPABILITIES);
    const revision = (JSON.parse(fs.readFileSync(file, 'utf8')) as { revision: string }).revision;
    const [a, b, c] = ['a', 'b', 'c'].map((name) => path.join(dir, name)) as [string, string, string];
    for (const out of [a, b])
      expect((await run(['export', '--format', 'agent-skills', '--manifest', file, '--out', out, '--marketplace'], { cwd: dir })).code).toBe(0);
    expect(version(a)).toBe(`0.0.0-${revision.slice('sha256:'.length, 'sha256:'.length + 16)}`);
    expect(version(b)).toBe(version(a));
    const changed = manifestFile(STANDARD_CAPABILITIES.map((spec) => (spec.id === 'open-help' ? { ...spec, description: 'Changed.' } : spec)));
    expect((await run(['export', '--format', 'agent-skills', '--manifest', changed, '--out', c, '--marketplace'], { cwd: dir })).code).toBe(0);
    expect(version(c)).not.toBe(version(a));
    const plugin = (JSON.parse(fs.readFileSync(path.join(a, '.claude-plugin', 'marketplace.json'), 'utf8')) as { plugins: { skills: string[] }[] }).plugins[0];
    expect([...(plugin?.skills ?? [])].sort()).toEqual(skillFolders(a).map((name) => `./${name}`));
  });
});

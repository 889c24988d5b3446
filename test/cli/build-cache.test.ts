// The whole-build cache (cli/build-cache.ts): a rebuild with nothing changed prints the last
// build's diagnostics and writes nothing; anything the build reads or writes that changed makes it
// build again.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCacheFile, registryFingerprint } from '../../cli/build-cache.js';
import { BUILD_OUTPUTS } from '../../cli/build-outputs.js';
import { MANIFEST_SIGNATURE_SUFFIX } from '../../server/signature.js';
import { cleanProtocol, run, runBin, writeFiles, BUILD_CACHE } from './helpers.js';

const { ALPHA, BETA, UP_TO_DATE, WROTE, registry } = BUILD_CACHE;

const manifest = (root: string): string => fs.readFileSync(path.join(root, 'dist', 'manifest.json'), 'utf8');

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd });
}

describe('capreg build: the build cache', () => {
  it("names the signature as the server finds it: the manifest's name with the signature suffix", () => {
    expect(BUILD_OUTPUTS.signature).toBe(`${BUILD_OUTPUTS.manifest}${MANIFEST_SIGNATURE_SUFFIX}`);
  });

  it('answers a rebuild with nothing changed from the cache, with the same output and exit code', async () => {
    const root = registry({ [BETA]: cleanProtocol('beta', { body: 'Mention alpha here.\n\n- Never guess.\n' }) });
    const first = await run(['build'], { cwd: root });
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(WROTE);
    const bytes = manifest(root);
    const mtime = fs.statSync(path.join(root, 'dist', 'manifest.json')).mtimeMs;
    const second = await run(['build'], { cwd: root });
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(second.stderr).toMatch(UP_TO_DATE);
    expect(manifest(root)).toBe(bytes);
    expect(fs.statSync(path.join(root, 'dist', 'manifest.json')).mtimeMs).toBe(mtime);
    // Other formats and --max-warnings apply to the cached diagnostics.
    const json = await run(['build', '--format', 'json'], { cwd: root });
    expect(JSON.parse(json.stdout)).toMatchObject({ errorCount: 0 });
    expect(json.stderr).toMatch(UP_TO_DATE);
    const warnings = (JSON.parse(json.stdout) as { warningCount: number }).warningCount;
    if (warnings > 0) {
      const strict = await run(['build', '--max-warnings', '0'], { cwd: root });
      expect(strict.code).toBe(1);
      expect(strict.stderr).toMatch(/too many warnings; nothing written/);
    }
  });

  it('a rebuild with nothing changed loads neither the compiler, the tokenizer nor ajv (through the real executable)', () => {
    const root = registry();
    expect(runBin(['build'], { cwd: root }).code).toBe(0);
    // In this process an import of the tokenizer, ajv, the parser or MiniSearch fails.
    const hooks = `export async function resolve(specifier, context, next) { if (/^(gpt-tokenizer|ajv|unified|minisearch)(\\/|$)/.test(specifier)) throw new Error('loaded ' + specifier); return next(specifier, context); }`;
    const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
    const nodeOptions = ['--import', `data:text/javascript,${encodeURIComponent(register)}`];
    const again = runBin(['build'], { cwd: root, nodeOptions });
    expect(again.stderr).toMatch(UP_TO_DATE);
    expect(again.code).toBe(0);
    // The hook does refuse them: a build that has to compile fails on the first.
    writeFiles(root, { [ALPHA]: `${cleanProtocol('alpha')}\nOne more line.\n` });
    expect(runBin(['build'], { cwd: root, nodeOptions }).stderr).toMatch(/loaded (gpt-tokenizer|ajv|unified|minisearch)/);
  });

  it('builds again when a protocol, toolsets.yaml, the config or the set of files changes', async () => {
    const root = registry();
    expect((await run(['build'], { cwd: root })).stderr).toMatch(WROTE);
    const changes: (() => void)[] = [
      () => fs.appendFileSync(path.join(root, ALPHA), '\nAsk before you record anything else.\n'),
      () => fs.appendFileSync(path.join(root, 'capabilities/toolsets.yaml'), '\n# a comment\n'),
      () => writeFiles(root, { 'capreg.config.yaml': 'rules:\n  duplicate-content: off\n' }),
      () => writeFiles(root, { 'capabilities/alpha/references/notes.md': 'notes\n' }),
      () => fs.rmSync(path.join(root, 'capabilities/alpha/references'), { recursive: true }),
    ];
    for (const change of changes) {
      change();
      const rebuilt = await run(['build'], { cwd: root });
      expect(rebuilt.code).toBe(0);
      expect(rebuilt.stderr).toMatch(WROTE);
      expect((await run(['build'], { cwd: root })).stderr).toMatch(UP_TO_DATE);
    }
  });

  it('ignores dot-files, as the registry reader does', async () => {
    const root = registry();
    await run(['build'], { cwd: root });
    writeFiles(root, { 'capabilities/alpha/.PROTOCOL.md.swp': 'editor state' });
    expect((await run(['build'], { cwd: root })).stderr).toMatch(UP_TO_DATE);
  });

  it('builds again when an output was changed or removed, or the build options differ', async () => {
    const root = registry();
    await run(['build'], { cwd: root });
    const bytes = manifest(root);
    fs.writeFileSync(path.join(root, 'dist', 'manifest.json'), '{}');
    expect((await run(['build'], { cwd: root })).stderr).toMatch(WROTE);
    expect(manifest(root)).toBe(bytes);
    fs.rmSync(path.join(root, 'dist', 'skill', 'SKILL.md'));
    expect((await run(['build'], { cwd: root })).stderr).toMatch(WROTE);
    expect(fs.existsSync(path.join(root, 'dist', 'skill', 'SKILL.md'))).toBe(true);
    expect((await run(['build', '--tool-prefix', 'yi_'], { cwd: root })).stderr).toMatch(WROTE);
    expect((await run(['build', '--tool-prefix', 'yi_'], { cwd: root })).stderr).toMatch(UP_TO_DATE);
    expect((await run(['build'], { cwd: root, env: { SOURCE_DATE_EPOCH: '1700000000' } })).stderr).toMatch(WROTE);
    expect((JSON.parse(manifest(root)) as { builtAt: string }).builtAt).toBe('2023-11-14T22:13:20.000Z');
    expect((await run(['build', '--out', 'other'], { cwd: root })).stderr).toMatch(/wrote other\/manifest\.json/);
  });

  it('replays a failed build: same diagnostics, exit 1, nothing written', async () => {
    const root = registry({ [BETA]: cleanProtocol('beta').replace('id: beta', 'id: not-beta') });
    const first = await run(['build'], { cwd: root });
    expect(first.code).toBe(1);
    const second = await run(['build'], { cwd: root });
    expect(second).toEqual(first);
    expect(fs.existsSync(path.join(root, 'dist'))).toBe(false);
  });

  it('is not used with --no-cache, and not for a registry with a symbolic link', async () => {
    const root = registry();
    await run(['build'], { cwd: root });
    expect((await run(['build', '--no-cache'], { cwd: root })).stderr).toMatch(WROTE);
    fs.symlinkSync(path.join(root, 'capabilities/alpha/PROTOCOL.md'), path.join(root, 'capabilities/alpha/LINK.md'));
    expect(registryFingerprint(root)).toBeUndefined();
    expect((await run(['build'], { cwd: root })).stderr).toMatch(WROTE);
    expect((await run(['build'], { cwd: root })).stderr).toMatch(WROTE);
  });

  it('is not used when capabilities/ itself is a link: the reader judges where it leads, every time', async () => {
    const root = registry();
    await run(['build'], { cwd: root });
    // A link to a hidden folder in the root, which the reader refuses.
    fs.renameSync(path.join(root, 'capabilities'), path.join(root, '.kept'));
    fs.symlinkSync('.kept', path.join(root, 'capabilities'));
    expect(registryFingerprint(root)).toBeUndefined();
    const refused = await run(['build'], { cwd: root });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/capabilities\/: symbolic link points to a hidden/);
    expect(await run(['build', '--no-cache'], { cwd: root })).toEqual(refused);
  });

  it('is not used while a configuration is saved under a name capreg refuses, which stops every build', async () => {
    const root = registry();
    await run(['build'], { cwd: root });
    for (const name of ['capreg.config.yml', 'capreg.config.json', 'capreg.yaml', 'capreg.yml']) {
      fs.writeFileSync(path.join(root, name), 'rules: {}\n');
      expect(registryFingerprint(root)).toBeUndefined();
      const refused = await run(['build'], { cwd: root });
      expect(refused).toEqual({
        code: 2,
        stdout: '',
        stderr: `capreg build: ${name} is not read: capreg reads its configuration from capreg.config.yaml; rename it, or remove it\n`,
      });
      fs.rmSync(path.join(root, name));
    }
    expect((await run(['build'], { cwd: root })).code).toBe(0);
  });

  it('builds again after a commit (the manifest records the commit)', async () => {
    const root = registry();
    git(root, 'init', '-q');
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'one');
    expect((await run(['build'], { cwd: root })).stderr).toMatch(WROTE);
    expect((await run(['build'], { cwd: root })).stderr).toMatch(UP_TO_DATE);
    git(root, 'commit', '-q', '--allow-empty', '-m', 'two');
    expect((await run(['build'], { cwd: root })).stderr).toMatch(WROTE);
    const source = (JSON.parse(manifest(root)) as { source: { commit: string } }).source;
    expect(source.commit).toMatch(/^[0-9a-f]{40}$/);
  });

  it('survives a corrupt cache file', async () => {
    const root = registry();
    await run(['build'], { cwd: root });
    fs.writeFileSync(buildCacheFile(root), '{not json');
    expect((await run(['build'], { cwd: root })).stderr).toMatch(WROTE);
    expect((await run(['build'], { cwd: root })).stderr).toMatch(UP_TO_DATE);
  });
});

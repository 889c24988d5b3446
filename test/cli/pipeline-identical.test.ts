// The build pipeline's outputs do not depend on how the work is spread: the real bin with one parse
// worker or several (`--jobs`), with the parse cache cold, warm or off, writes the same manifest
// bytes and reports the same diagnostics (file, line, column, rule, message, order) as the
// in-process CLI, which parses inline. On the bundled registry and on a generated one with problems
// planted in it; the generated registry's revision is pinned, so a change of any served byte fails.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { threadCount } from '../../cli/parse-workers.js';
import { REPO_ROOT, run, runBin, tempDir } from './helpers.js';

interface Generator {
  generateRegistry: (dir: string, options: { count: number; evals?: boolean }) => Promise<{ ids: string[] }>;
}
const GENERATOR = pathToFileURL(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bench/generate-registry.mjs')).href;
const COUNT = 160;
/** The revision of the generated registry's manifest (toolsets and every capability's digest). */
const GENERATED_REVISION = 'sha256:a50999156263db93cd42590631a480f6f06a6412f8ab907e2d96e97b3174be91';

const manifestOf = (root: string): string => fs.readFileSync(path.join(root, 'dist/manifest.json'), 'utf8');

/** A copy of `root`'s registry files in a fresh folder (no cache, no output). */
function copyRegistry(root: string): string {
  const copy = tempDir('capreg-pipeline-');
  fs.cpSync(path.join(root, 'capabilities'), path.join(copy, 'capabilities'), { recursive: true });
  if (fs.existsSync(path.join(root, 'capreg.config.yaml'))) fs.copyFileSync(path.join(root, 'capreg.config.yaml'), path.join(copy, 'capreg.config.yaml'));
  return copy;
}

let generated: string;
let planted: string;

beforeAll(async () => {
  const { generateRegistry } = (await import(GENERATOR)) as Generator;
  generated = tempDir('capreg-generated-');
  const { ids } = await generateRegistry(generated, { count: COUNT });
  // The same registry with problems planted in a few protocols, and the GFM constructs the
  // parser's fast paths are about (strikethrough, footnotes, task lists, autolink literals).
  planted = copyRegistry(generated);
  const protocol = (id: string): string => path.join(planted, 'capabilities', id, 'PROTOCOL.md');
  const first = fs.readFileSync(protocol(ids[0]!), 'utf8');
  // The first paragraph under the title: copied into another protocol, a duplicate.
  const shared = /\n# [^\n]+\n\n([^]+?)\n\n/.exec(first)?.[1];
  expect(shared).toBeDefined();
  fs.appendFileSync(protocol(ids[1]!), `\n${shared}\n\n| Tool | Use |\n| --- | --- |\n| \`no_such_tool\` | x |\n`);
  fs.appendFileSync(protocol(ids[2]!), '\n- [ ] check ~~twice~~ first[^1]\n\n[^1]: see www.example.com or ops@example.com\n\n```sh\nnever closed\n');
  fs.appendFileSync(protocol(ids[3]!), '\nSee [the other one](capability:no-such-capability).\n');
  fs.writeFileSync(protocol(ids[4]!), fs.readFileSync(protocol(ids[4]!), 'utf8').replace(/^requiredToolsets:.*$/m, 'requiredToolsets: [missing-toolset]'));
}, 60_000);

describe('the same outputs however the parse is spread', () => {
  it('--jobs is validated', async () => {
    for (const value of ['0', 'x', '257', '1.5', '']) {
      const result = await run(['lint', '--jobs', value], { cwd: tempDir() });
      expect(result).toEqual({ code: 2, stdout: '', stderr: `capreg lint: --jobs must be a whole number from 1 to 256, not "${value}"\n` });
    }
    expect((await run(['build', '-j', '0'], { cwd: tempDir() })).stderr).toContain('--jobs must be a whole number from 1 to 256, not "0"');
  });

  it('threadCount: at most --jobs workers, one per 64 files', () => {
    expect(threadCount(1000, 1)).toBe(1);
    expect(threadCount(1000, 3)).toBe(3);
    expect(threadCount(100, 8)).toBe(2);
    expect(threadCount(1, 8)).toBe(1);
  });

  it.each([
    ['the bundled registry', (): string => copyRegistry(REPO_ROOT), undefined],
    ['a generated registry', (): string => copyRegistry(generated), GENERATED_REVISION],
  ])(
    '%s: the manifest bytes with 1 or 2 workers, the cache cold, warm or off, are those of the inline parse',
    async (_name, make, revision) => {
      const root = make();
      expect((await run(['build', '--no-cache'], { cwd: root })).code).toBe(0);
      const inline = manifestOf(root);
      if (revision !== undefined) expect((JSON.parse(inline) as { revision: string }).revision).toBe(revision);
      for (const argv of [
        ['build', '--no-cache', '--jobs', '1'],
        ['build', '--no-cache', '--jobs', '2'],
        ['build', '--jobs', '2'], // parse cache cold
        ['build', '--jobs', '1', '--no-cache'],
      ]) {
        fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true });
        const result = runBin(argv, { cwd: root });
        expect(result.code, `${argv.join(' ')}: ${result.stderr}`).toBe(0);
        expect(manifestOf(root), argv.join(' ')).toBe(inline);
      }
      // Parse cache warm (the build cache is keyed on the outputs too: removing them makes it build).
      fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true });
      expect(runBin(['build', '--jobs', '2'], { cwd: root }).code).toBe(0);
      expect(manifestOf(root)).toBe(inline);
    },
    120_000,
  );

  it('a registry with problems: the same diagnostics, in the same order, with 1 or 2 workers, cached or not', async () => {
    const inline = await run(['lint', '--format', 'json', '--no-cache'], { cwd: planted });
    expect(inline.code).toBe(1);
    const report = JSON.parse(inline.stdout) as { diagnostics: { ruleId: string }[] };
    expect(new Set(report.diagnostics.map((d) => d.ruleId))).toEqual(
      new Set(['catalog-references', 'duplicate-content', 'markdown-syntax', 'toolset-exists', 'tools-table']),
    );
    for (const argv of [
      ['--no-cache', '--jobs', '1'],
      ['--no-cache', '--jobs', '2'],
      ['--jobs', '2'],
      ['--jobs', '1'],
    ]) {
      const result = runBin(['lint', '--format', 'json', ...argv], { cwd: planted });
      expect(result.stdout, argv.join(' ')).toBe(inline.stdout);
      expect(result.code).toBe(1);
    }
  }, 120_000);
});

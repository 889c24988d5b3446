// Through the real executable (bin/capreg.js over the lib/ that globalSetup compiled): exit codes,
// stdout and stderr as a shell or CI sees them.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanProtocol, REPO_ROOT, run, runBin, tempRegistry } from './helpers.js';

const ALPHA = 'capabilities/alpha/PROTOCOL.md';

describe('bin/capreg.js', () => {
  it('lints a clean registry: exit 0, no output', () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha') });
    expect(runBin(['lint'], { cwd: root })).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('prints its version', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(runBin(['--version'], { cwd: REPO_ROOT })).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });

  it('reports problems with exit 1, as stylish text by default', () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha', { version: 'latest' }), 'capabilities/empty/.keep': '' });
    const result = runBin(['lint'], { cwd: root });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(
      [
        'capabilities/alpha/PROTOCOL.md',
        '  8:19  error  `protocol_version` "latest" has the wrong form: use a semantic version MAJOR.MINOR.PATCH such as "1.2.0" (no ranges, no "latest", no "v" prefix, at most 15 digits a part)  frontmatter-schema',
        '',
        'capabilities/empty',
        '  1:1  error  folder capabilities/empty has no PROTOCOL.md; add one (`capreg new <id>` scaffolds it) or remove the folder  registry-files',
        '',
        '✖ 2 problems (2 errors, 0 warnings)',
        '',
      ].join('\n'),
    );
  });

  it('prints GitHub annotations with --format github', () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha', { version: 'latest' }) });
    const result = runBin(['lint', '--format', 'github'], { cwd: root });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(
      '::error file=capabilities/alpha/PROTOCOL.md,line=8,col=19,endLine=8,endColumn=25,title=frontmatter-schema::`protocol_version` "latest" has the wrong form: use a semantic version MAJOR.MINOR.PATCH such as "1.2.0" (no ranges, no "latest", no "v" prefix, at most 15 digits a part)\n',
    );
  });

  it('exits 2 for a broken capreg.config.yaml, with the position, and prints nothing on stdout', () => {
    const root = tempRegistry({ 'capreg.config.yaml': 'limits:\n  maxFileBytes: lots\n', [ALPHA]: cleanProtocol('alpha') });
    expect(runBin(['lint'], { cwd: root })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'capreg lint: invalid configuration: capreg.config.yaml:2:17: `limits.maxFileBytes` must be a whole number of bytes from 1 to 67108864\n',
    });
  });

  it('exits 2 for an unknown --format', () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha') });
    const result = runBin(['build', '--format', 'junit'], { cwd: root });
    expect(result).toEqual({ code: 2, stdout: '', stderr: 'capreg build: unknown --format "junit"; expected one of stylish, json, github, sarif\n' });
  });

  it('reports a body nested too deeply to parse instead of crashing', () => {
    // A small stack makes the parser's recursion give out at a few hundred levels instead of thousands.
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha', { body: `Never guess.\n\n${'>'.repeat(1500)} deep\n` }) });
    const result = runBin(['lint', '--format', 'json', '--no-cache'], { cwd: root, nodeOptions: ['--stack-size=200'] });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as { diagnostics: { file: string; line: number; column: number; ruleId: string; message: string }[] };
    expect(report.diagnostics.filter((d) => d.ruleId === 'markdown-syntax')).toEqual([
      expect.objectContaining({
        file: ALPHA,
        line: 15,
        column: 1,
        message: 'the Markdown body nests too deeply to be parsed (over 100 nested quotes or list levels); flatten it',
      }),
    ]);
  });

  it('builds the same bytes as the in-process CLI, with worker parsing, cached or not', async () => {
    // Enough capabilities for the parse to be spread over worker threads.
    const files: Record<string, string> = {};
    for (let i = 0; i < 150; i += 1) files[`capabilities/cap-${String(i).padStart(3, '0')}/PROTOCOL.md`] = cleanProtocol(`cap-${String(i).padStart(3, '0')}`);
    const root = tempRegistry(files);
    const read = (): string => fs.readFileSync(path.join(root, 'dist/manifest.json'), 'utf8');

    const cold = runBin(['build'], { cwd: root });
    expect(cold.stderr).toMatch(/^capreg build: wrote dist\/manifest\.json \(150 capabilities, /);
    expect(cold.code).toBe(0);
    const first = read();
    expect(runBin(['build'], { cwd: root }).code).toBe(0);
    expect(read()).toBe(first);
    expect(runBin(['build', '--no-cache'], { cwd: root }).code).toBe(0);
    expect(read()).toBe(first);
    expect((await run(['build', '--no-cache'], { cwd: root })).code).toBe(0);
    expect(read()).toBe(first);
  });
});

// Through the real executable (bin/capreg.js over the lib/ that globalSetup compiled): exit codes,
// stdout and stderr as a shell or CI sees them.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, cleanProtocol, REPO_ROOT, run, runBin, tempRegistry, type RunResult } from './helpers.js';

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

  it('refuses an argument after --version, as every command refuses one it does not take', () => {
    expect(runBin(['--version', 'extra'], { cwd: REPO_ROOT })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'capreg --version: unexpected argument "extra": usage: capreg --version\n',
    });
    expect(runBin(['-v', '--help'], { cwd: REPO_ROOT })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'capreg -v: unexpected argument "--help": usage: capreg --version\n',
    });
  });

  it('reads every whole-number flag strictly: no exponent, hex or value past its range', () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha') });
    const refused = (command: string, flag: string, range: string, value: string) => ({
      code: 2,
      stdout: '',
      stderr: `capreg ${command}: ${flag} must be a whole number from ${range}, not "${value}"\n`,
    });
    expect(runBin(['build', '--max-warnings', '1e3'], { cwd: root })).toEqual(refused('build', '--max-warnings', '0 to 1000000000', '1e3'));
    expect(runBin(['check', '--against', 'HEAD', '--max-warnings', '0x10'], { cwd: root })).toEqual(
      refused('check', '--max-warnings', '0 to 1000000000', '0x10'),
    );
    expect(runBin(['lint', '--jobs', '1e1'], { cwd: root })).toEqual(refused('lint', '--jobs', '1 to 256', '1e1'));
    expect(fs.existsSync(path.join(root, 'dist'))).toBe(false);
  });

  // Up to year 9999: 8640000000000 (the last second a Date holds) made `new` write
  // `protocol_updated: +275760-09`, a scaffold that fails lint (found by an attack pass).
  it('refuses a SOURCE_DATE_EPOCH past year 9999 instead of crashing or writing a date that is no YYYY-MM-DD', () => {
    const root = tempRegistry();
    const refused = (epoch: string): RunResult => ({
      code: 2,
      stdout: '',
      stderr: `capreg new: SOURCE_DATE_EPOCH ${epoch} is past the last second of year 9999 (253402300799), the last date written YYYY-MM-DD\n`,
    });
    for (const epoch of ['99999999999999999999', '8640000000000', '253402300800']) {
      expect(runBin(['new', 'first'], { cwd: root, env: { SOURCE_DATE_EPOCH: epoch } })).toEqual(refused(epoch));
    }
    expect(runBin(['new', 'first'], { cwd: root, env: { SOURCE_DATE_EPOCH: '253402300799' } }).code).toBe(0);
    expect(fs.readFileSync(path.join(root, 'capabilities/first/PROTOCOL.md'), 'utf8')).toContain('\nprotocol_updated: 9999-12-31\n');
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

  it('says once on stderr that standard output was closed, and exits 2, instead of a stack trace (`capreg lint | head`)', async () => {
    // 300 problems: a report far larger than what one write can hand a pipe.
    const root = tempRegistry(Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`capabilities/empty-${i}/.keep`, ''])));
    // The reader closes the pipe before the first write: what `head` does once it has its lines.
    const child = spawn(process.execPath, [BIN, 'lint', '--no-cache'], { cwd: root, env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect({ code, stderr }).toEqual({ code: 2, stderr: 'capreg: cannot write to standard output (EPIPE); the rest of the output is dropped\n' });
  });

  it.runIf(fs.existsSync('/dev/full'))('a build whose report cannot be written still writes its outputs, and exits 2', () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha') });
    const full = fs.openSync('/dev/full', 'w');
    try {
      const result = spawnSync(process.execPath, [BIN, 'build', '--format', 'json'], {
        cwd: root,
        env: { PATH: process.env.PATH },
        stdio: ['ignore', full, 'pipe'],
        encoding: 'utf8',
      });
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(
        /^capreg: cannot write to standard output \(ENOSPC\); the rest of the output is dropped\ncapreg build: wrote dist\/manifest\.json /,
      );
    } finally {
      fs.closeSync(full);
    }
    expect(fs.existsSync(path.join(root, 'dist/manifest.json'))).toBe(true);
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

// `capreg new <id>`: a scaffold that lints with zero diagnostics under the real rule set, and clear
// usage errors for an id that exists or is malformed.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { portableSchemaPath } from '../../cli/commands/new.js';
import { BIN, TOOLSETS_YAML, cleanProtocol, lintJson, run, runBin, tempDir, tempRegistry, type JsonReport } from './helpers.js';

describe('capreg new', () => {
  it('scaffolds a capability that lints with zero diagnostics', async () => {
    const root = tempRegistry({ 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha') });
    const created = await run(['new', 'expense-notes'], { cwd: root, env: { SOURCE_DATE_EPOCH: '1795953600' } });
    expect(created).toEqual({ code: 0, stdout: 'created capabilities/expense-notes/PROTOCOL.md\nnext: fill it in, then run `capreg lint`\n', stderr: '' });
    const text = fs.readFileSync(path.join(root, 'capabilities/expense-notes/PROTOCOL.md'), 'utf8');
    // This temporary registry has no copy of capreg's schema it could name for everyone: no comment line.
    expect(text).toMatch(/^---\nid: expense-notes\nname: Expense Notes\n/);
    expect(text).toContain('protocol_updated: 2026-11-29\n');

    const lint = await lintJson(root);
    expect(lint.report).toEqual({ diagnostics: [], errorCount: 0, warningCount: 0 });
    expect(lint.code).toBe(0);
  });

  it('two scaffolds side by side still lint clean (no duplicate content, no ambiguous triggers)', async () => {
    const root = tempRegistry();
    expect((await run(['new', 'first-thing'], { cwd: root })).code).toBe(0);
    expect((await run(['new', 'second-thing'], { cwd: root })).code).toBe(0);
    expect((await lintJson(root)).report.diagnostics).toEqual([]);
  });

  it('quotes an id or name YAML would read as a number, a boolean or null, so the scaffold still lints clean', () => {
    const root = tempRegistry();
    const ids = ['1', '12', '1e3', '1e-3', '0x1f', '0o7', 'null', 'true', 'false'];
    for (const id of ids) expect(runBin(['new', id], { cwd: root }).code).toBe(0);
    expect(fs.readFileSync(path.join(root, 'capabilities/1e3/PROTOCOL.md'), 'utf8')).toContain('\nid: "1e3"\nname: "1e3"\n');
    expect(fs.readFileSync(path.join(root, 'capabilities/null/PROTOCOL.md'), 'utf8')).toContain('\nid: "null"\nname: "Null"\n');
    const lint = runBin(['lint', '--format', 'json', '--no-cache'], { cwd: root });
    expect({ code: lint.code, stderr: lint.stderr, diagnostics: (JSON.parse(lint.stdout) as JsonReport).diagnostics }).toEqual({
      code: 0,
      stderr: '',
      diagnostics: [],
    });
  });

  it('in a registry without toolsets.yaml, also writes an empty one so the scaffold passes', async () => {
    const root = tempRegistry({ 'capabilities/toolsets.yaml': null });
    const created = await run(['new', 'first'], { cwd: root });
    expect(created.stdout).toBe(
      'created capabilities/first/PROTOCOL.md\ncreated capabilities/toolsets.yaml (no toolsets yet)\nnext: fill it in, then run `capreg lint`\n',
    );
    const lint = await lintJson(root);
    expect({ code: lint.code, diagnostics: lint.report.diagnostics }).toEqual({ code: 0, diagnostics: [] });
  });

  it('writes no toolsets.yaml into a registry that keeps its toolsets in capabilities/toolsets/*.yaml', async () => {
    const root = tempRegistry({ 'capabilities/toolsets.yaml': null, 'capabilities/toolsets/work.yaml': TOOLSETS_YAML });
    const created = await run(['new', 'first'], { cwd: root });
    expect(created.stdout).toBe('created capabilities/first/PROTOCOL.md\nnext: fill it in, then run `capreg lint`\n');
    expect(fs.existsSync(path.join(root, 'capabilities/toolsets.yaml'))).toBe(false);
    const lint = await lintJson(root);
    expect({ code: lint.code, diagnostics: lint.report.diagnostics }).toEqual({ code: 0, diagnostics: [] });
  });

  it('leaves an existing toolsets.yaml alone', async () => {
    const root = tempRegistry();
    const before = fs.readFileSync(path.join(root, 'capabilities/toolsets.yaml'), 'utf8');
    await run(['new', 'first'], { cwd: root });
    expect(fs.readFileSync(path.join(root, 'capabilities/toolsets.yaml'), 'utf8')).toBe(before);
  });

  it('builds: the scaffold reaches the manifest', async () => {
    const root = tempRegistry();
    await run(['new', 'first'], { cwd: root });
    const build = await run(['build', '--no-cache'], { cwd: root });
    expect(build.code).toBe(0);
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'dist/manifest.json'), 'utf8')) as { capabilities: { id: string }[] };
    expect(manifest.capabilities.map((c) => c.id)).toEqual(['first']);
  });

  it('works from a nested folder and with --root', async () => {
    const root = tempRegistry({ 'docs/notes.md': 'x' });
    expect((await run(['new', 'from-docs'], { cwd: path.join(root, 'docs') })).code).toBe(0);
    expect(fs.existsSync(path.join(root, 'capabilities/from-docs/PROTOCOL.md'))).toBe(true);
    expect((await run(['new', 'from-root', '--root', root], { cwd: path.dirname(root) })).code).toBe(0);
    expect(fs.existsSync(path.join(root, 'capabilities/from-root/PROTOCOL.md'))).toBe(true);
  });

  it('refuses an id that exists, and leaves its file untouched', async () => {
    const root = tempRegistry({ 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha') });
    const result = await run(['new', 'alpha'], { cwd: root });
    expect(result).toEqual({ code: 2, stdout: '', stderr: 'capreg new: capabilities/alpha/PROTOCOL.md already exists\n' });
    expect(fs.readFileSync(path.join(root, 'capabilities/alpha/PROTOCOL.md'), 'utf8')).toBe(cleanProtocol('alpha'));
  });

  it('refuses a malformed id and creates nothing', async () => {
    const root = tempRegistry();
    for (const id of ['Expense', 'expense_notes', '-x', 'a--b', 'x-', '../escape', 'a/b', 'a'.repeat(65), '']) {
      const result = await run(['new', '--', id], { cwd: root });
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        `capreg new: "${id}" is not a valid capability id: use lowercase letters and digits in words joined by single hyphens, at most 64 characters\n`,
      );
    }
    expect(fs.readdirSync(path.join(root, 'capabilities'))).toEqual(['toolsets.yaml']);
    expect(fs.existsSync(path.join(root, 'escape'))).toBe(false);
  });

  it('refuses the id of the split toolsets folder', async () => {
    const root = tempRegistry();
    const result = await run(['new', 'toolsets'], { cwd: root });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: 'capreg new: "toolsets" cannot be a capability id: capabilities/toolsets/ holds split toolsets files; choose another id\n',
    });
    expect(fs.readdirSync(path.join(root, 'capabilities'))).toEqual(['toolsets.yaml']);
  });

  it('takes exactly one id', async () => {
    const root = tempRegistry();
    for (const argv of [['new'], ['new', 'a', 'b']]) {
      expect(await run(argv, { cwd: root })).toEqual({ code: 2, stdout: '', stderr: 'capreg new: usage: capreg new <id> [--root DIR]\n' });
    }
  });

  it('refuses a SOURCE_DATE_EPOCH that is not a number instead of crashing', async () => {
    const root = tempRegistry();
    const result = await run(['new', 'first'], { cwd: root, env: { SOURCE_DATE_EPOCH: 'yesterday' } });
    expect(result).toEqual({ code: 2, stdout: '', stderr: 'capreg new: SOURCE_DATE_EPOCH must be a whole number of seconds, not "yesterday"\n' });
  });

  it('refuses what is in the way of the folder with a one-line usage error (a file, a FIFO, a broken link)', () => {
    const root = tempRegistry({ 'capabilities/afile': 'x' });
    expect(spawnSync('mkfifo', [path.join(root, 'capabilities/apipe')]).status).toBe(0);
    fs.symlinkSync(path.join(root, 'missing'), path.join(root, 'capabilities/gone'));
    const refused = (id: string, why: string) => ({ code: 2, stdout: '', stderr: `capreg new: capabilities/${id} ${why}; remove it or choose another id\n` });
    expect(runBin(['new', 'afile'], { cwd: root })).toEqual(refused('afile', 'exists and is not a folder (a file)'));
    expect(runBin(['new', 'apipe'], { cwd: root })).toEqual(refused('apipe', 'exists and is not a folder (a FIFO)'));
    expect(runBin(['new', 'gone'], { cwd: root })).toEqual(refused('gone', 'is a broken symbolic link: its target does not exist'));
    expect(fs.readFileSync(path.join(root, 'capabilities/afile'), 'utf8')).toBe('x');
    expect(fs.existsSync(path.join(root, 'missing'))).toBe(false);
  });

  it('refuses a folder link that leaves the root or leads into a hidden folder, and writes nothing there; follows one inside', () => {
    const root = tempRegistry({ '.git/hooks/keep': '', 'shared/alpha/notes.md': 'x', 'capabilities/linked/keep': '' });
    const outside = tempDir();
    fs.symlinkSync(outside, path.join(root, 'capabilities/out'));
    fs.symlinkSync(path.join(root, 'shared/alpha'), path.join(root, 'capabilities/alpha'));
    // Nor is a link named PROTOCOL.md written through.
    fs.symlinkSync(path.join(outside, 'PROTOCOL.md'), path.join(root, 'capabilities/linked/PROTOCOL.md'));
    fs.symlinkSync(path.join(root, '.git/hooks'), path.join(root, 'capabilities/hooks'));
    expect(runBin(['new', 'out'], { cwd: root })).toEqual({
      code: 2,
      stdout: '',
      stderr: `capreg new: capabilities/out: symbolic link points outside the registry root (to ${outside}); refused: put the folder itself inside the registry\n`,
    });
    expect(runBin(['new', 'hooks'], { cwd: root })).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'capreg new: capabilities/hooks: symbolic link points to a hidden file or folder (.git/hooks); refused: put the folder itself inside the registry\n',
    });
    expect(runBin(['new', 'linked'], { cwd: root })).toEqual({ code: 2, stdout: '', stderr: 'capreg new: capabilities/linked/PROTOCOL.md already exists\n' });
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.readdirSync(path.join(root, '.git/hooks'))).toEqual(['keep']);
    expect(runBin(['new', 'alpha'], { cwd: root }).code).toBe(0);
    expect(fs.existsSync(path.join(root, 'shared/alpha/PROTOCOL.md'))).toBe(true);
  });

  it('refuses capabilities/ itself as a link out of the root', () => {
    const root = tempDir();
    const outside = tempDir();
    fs.symlinkSync(outside, path.join(root, 'capabilities'));
    expect(runBin(['new', 'first'], { cwd: root })).toEqual({
      code: 2,
      stdout: '',
      stderr: `capreg new: capabilities/: symbolic link points outside the registry root (to ${outside}); refused: put the folder itself inside the registry\n`,
    });
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it('says why a folder cannot be made, without a stack trace', (context) => {
    const root = tempRegistry();
    // Permissions do not hold back root: run as nobody then, which needs a checkout nobody may read
    // (one cloned into `mktemp -d` is its owner's alone).
    const asUser = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    if (spawnSync(process.execPath, [BIN, '--version'], { env: { PATH: process.env.PATH }, ...asUser }).status !== 0) {
      context.skip('this checkout cannot be read by the user nobody, which the test runs as');
    }
    fs.chmodSync(root, 0o755);
    fs.chmodSync(path.join(root, 'capabilities'), 0o555);
    const result = spawnSync(process.execPath, [BIN, 'new', 'first'], { cwd: root, env: { PATH: process.env.PATH }, encoding: 'utf8', ...asUser });
    expect({ code: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 2,
      stdout: '',
      stderr: 'capreg new: cannot create capabilities/first/: EACCES\n',
    });
  });
});

describe('the schema path of the scaffold (portableSchemaPath)', () => {
  const root = path.join(path.sep, 'work', 'registry');
  const folder = path.join(root, 'capabilities', 'alpha');
  const at = (...parts: string[]) => path.join(path.sep, ...parts);

  it("names a schema inside the registry root (capreg's own repository)", () => {
    expect(portableSchemaPath(root, folder, path.join(root, 'compiler/schema/capability.schema.json'))).toBe('../../compiler/schema/capability.schema.json');
  });

  it('names a schema in node_modules of the root or of a folder above it (a workspace)', () => {
    expect(portableSchemaPath(root, folder, at('work', 'registry', 'node_modules', 'capreg', 'lib', 's.json'))).toBe('../../node_modules/capreg/lib/s.json');
    expect(portableSchemaPath(root, folder, at('work', 'node_modules', 'capreg', 'lib', 's.json'))).toBe('../../../node_modules/capreg/lib/s.json');
    expect(portableSchemaPath(root, folder, at('node_modules', 'capreg', 's.json'))).toBe('../../../../node_modules/capreg/s.json');
  });

  it("names nothing else: a global install, npx's cache, a folder that only begins like node_modules", () => {
    expect(portableSchemaPath(root, folder, at('usr', 'lib', 'node_modules', 'capreg', 's.json'))).toBeUndefined();
    expect(portableSchemaPath(root, folder, at('root', '.npm', '_npx', 'a1', 'node_modules', 'capreg', 's.json'))).toBeUndefined();
    expect(portableSchemaPath(root, folder, at('work', 'node_modules-old', 'capreg', 's.json'))).toBeUndefined();
    expect(portableSchemaPath(root, folder, at('work', 'registry-other', 'compiler', 's.json'))).toBeUndefined();
  });
});

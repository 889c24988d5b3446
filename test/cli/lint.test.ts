// `capreg lint` end to end on real folders: every bad input of the compiler issue reaches the user
// as a diagnostic with file and position (or a usage error, exit 2), and nothing crashes.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readSourceFile, sizeProblem } from '../../cli/read-registry.js';
import { REPO_ROOT, cleanProtocol, described, lintJson, run, runBin, tempDir, tempRegistry, type JsonReport } from './helpers.js';

const ALPHA = 'capabilities/alpha/PROTOCOL.md';

describe('capreg lint: a clean registry', () => {
  it('prints nothing and exits 0', async () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha'), 'capabilities/beta/PROTOCOL.md': cleanProtocol('beta') });
    expect(await run(['lint'], { cwd: root })).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('prints exactly one JSON object of the SPEC shape with --format json', async () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha', { version: 'latest' }) });
    const result = await run(['lint', '--format', 'json'], { cwd: root });
    expect(result.code).toBe(1);
    expect(result.stdout.endsWith('}\n')).toBe(true);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    const report = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(Object.keys(report)).toEqual(['diagnostics', 'errorCount', 'warningCount']);
    expect(report).toEqual({
      diagnostics: [
        {
          file: ALPHA,
          line: 8,
          column: 19,
          endLine: 8,
          endColumn: 25,
          severity: 'error',
          ruleId: 'frontmatter-schema',
          message: expect.stringContaining('`protocol_version` "latest" has the wrong form') as unknown,
          capabilityId: 'alpha',
        },
      ],
      errorCount: 1,
      warningCount: 0,
    });
  });
});

describe('capreg lint: bad input', () => {
  it('a folder without PROTOCOL.md', async () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha'), 'capabilities/drafts/notes.md': 'Notes.\n' });
    const { code, report, stderr } = await lintJson(root);
    expect(described(report)).toEqual([
      'capabilities/drafts:1:1 registry-files folder capabilities/drafts has no PROTOCOL.md; add one (`capreg new <id>` scaffolds it) or remove the folder',
    ]);
    expect({ code, stderr }).toEqual({ code: 1, stderr: '' });
  });

  it('a binary file, at its first NUL byte', async () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha'), 'capabilities/beta/PROTOCOL.md': Buffer.from('---\nid: beta\nx: a\0b\n') });
    const { code, report } = await lintJson(root);
    expect(described(report)).toEqual(['capabilities/beta/PROTOCOL.md:3:5 registry-files file is binary (NUL byte at offset 17); it must be UTF-8 text']);
    expect(code).toBe(1);
  });

  it('a file that is not UTF-8, at its first bad byte', async () => {
    const latin1 = Buffer.concat([Buffer.from('---\nid: beta\nname: Caf'), Buffer.from([0xe9]), Buffer.from('\n---\n')]);
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha'), 'capabilities/beta/PROTOCOL.md': latin1 });
    const { code, report } = await lintJson(root);
    expect(described(report)).toEqual([
      'capabilities/beta/PROTOCOL.md:3:10 registry-files file is not valid UTF-8 text: byte 0xE9 at offset 22 is not UTF-8 (was it saved as Latin-1 or Windows-1252?); save it as UTF-8',
    ]);
    expect(code).toBe(1);
  });

  it('a file over the size limit set in capreg.config.yaml', async () => {
    const root = tempRegistry({
      'capreg.config.yaml': 'limits:\n  maxFileBytes: 2048\n',
      [ALPHA]: cleanProtocol('alpha'),
      'capabilities/beta/PROTOCOL.md': cleanProtocol('beta', { body: `Never guess.\n\n${'Long text. '.repeat(300)}\n` }),
    });
    const { code, report } = await lintJson(root);
    expect(described(report)).toEqual([
      'capabilities/beta/PROTOCOL.md:1:1 registry-files file is 3.4 KiB, over the 2.0 KiB limit (limits.maxFileBytes in capreg.config.yaml); split it or move material into references/',
    ]);
    expect(code).toBe(1);
  });

  it('a toolsets.yaml over the size limit is refused once, not also reported as missing', async () => {
    const root = tempRegistry({
      'capreg.config.yaml': 'limits: { maxFileBytes: 600 }\n',
      [ALPHA]: cleanProtocol('alpha'),
      'capabilities/toolsets.yaml': `# ${'x'.repeat(700)}\n{}\n`,
    });
    const { report } = await lintJson(root);
    expect(described(report)).toEqual([
      'capabilities/toolsets.yaml:1:1 registry-files file is 706 bytes, over the 600 bytes limit (limits.maxFileBytes in capreg.config.yaml); split its toolsets over files in capabilities/toolsets/',
    ]);
  });

  it('says what to do about a file over the size limit by what the file is, in bytes when rounding would hide the difference', () => {
    const limit = 1024 * 1024;
    expect(sizeProblem(2 * limit, limit, 'capabilities/alpha/PROTOCOL.md')).toBe(
      'file is 2.0 MiB, over the 1.0 MiB limit (limits.maxFileBytes in capreg.config.yaml); split it or move material into references/',
    );
    expect(sizeProblem(1_100_800, limit, 'capabilities/toolsets/work.yaml')).toBe(
      'file is 1100800 bytes, over the 1048576-byte limit (limits.maxFileBytes in capreg.config.yaml); split its toolsets over files in capabilities/toolsets/',
    );
    expect(sizeProblem(2 * limit, limit, 'capabilities/alpha/evals.yaml')).toMatch(/; keep fewer or shorter requests$/);
  });

  it('symbolic links that point outside the root are refused and never read', async () => {
    const outside = tempDir('capreg-outside-');
    fs.writeFileSync(path.join(outside, 'PROTOCOL.md'), cleanProtocol('beta', { body: 'Never read SECRET-OUTSIDE.\n' }));
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha') });
    fs.mkdirSync(path.join(root, 'capabilities/beta'));
    fs.symlinkSync(path.join(outside, 'PROTOCOL.md'), path.join(root, 'capabilities/beta/PROTOCOL.md'));
    fs.symlinkSync(outside, path.join(root, 'capabilities/gamma'));
    const { code, report, stdout } = await lintJson(root);
    expect(described(report)).toEqual([
      `capabilities/beta/PROTOCOL.md:1:1 registry-files symbolic link points outside the registry root (to ${path.join(outside, 'PROTOCOL.md')}); refused: put the file itself inside the registry`,
      `capabilities/gamma:1:1 registry-files symbolic link points outside the registry root (to ${outside}); refused: put the file itself inside the registry`,
    ]);
    expect(stdout).not.toContain('SECRET-OUTSIDE');
    expect(code).toBe(1);

    // Nothing of it reaches a manifest either: the build refuses.
    const build = await run(['build', '--no-cache'], { cwd: root });
    expect(build.code).toBe(1);
    expect(fs.existsSync(path.join(root, 'dist'))).toBe(false);
  });

  it('a link into a hidden folder of the root (.git/config holds CI tokens) is refused and never read', async () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha'), '.git/config': '[http]\n\textraheader = AUTHORIZATION: basic SECRET-TOKEN\n' });
    fs.rmSync(path.join(root, 'capabilities/toolsets.yaml'), { force: true });
    fs.symlinkSync('../.git/config', path.join(root, 'capabilities/toolsets.yaml'));
    fs.mkdirSync(path.join(root, 'capabilities/beta'));
    fs.symlinkSync('../../.git/config', path.join(root, 'capabilities/beta/PROTOCOL.md'));
    const { code, report, stdout } = await lintJson(root);
    expect(described(report)).toEqual([
      'capabilities/beta/PROTOCOL.md:1:1 registry-files symbolic link points to a hidden file or folder (.git/config); refused: put the file itself inside the registry',
      'capabilities/toolsets.yaml:1:1 registry-files symbolic link points to a hidden file or folder (.git/config); refused: put the file itself inside the registry',
    ]);
    expect(stdout).not.toContain('SECRET-TOKEN');
    expect(code).toBe(1);
  });

  it('capabilities/ as a link out of the root is a usage error, and nothing outside is read', async () => {
    const outside = tempDir('capreg-outside-');
    fs.mkdirSync(path.join(outside, 'alpha'));
    fs.writeFileSync(path.join(outside, 'alpha/PROTOCOL.md'), cleanProtocol('alpha', { body: 'Never read SECRET-OUTSIDE.\n' }));
    const root = tempDir();
    fs.symlinkSync(outside, path.join(root, 'capabilities'));
    for (const command of ['lint', 'build']) {
      const result = await run([command, '--no-cache'], { cwd: root });
      expect(result).toEqual({
        code: 2,
        stdout: '',
        stderr: `capreg ${command}: capabilities/: symbolic link points outside the registry root (to ${fs.realpathSync(outside)}); refused: put the folder itself inside the registry\n`,
      });
    }
    expect(fs.existsSync(path.join(root, 'dist'))).toBe(false);
  });

  it('capreg.config.yaml is read only as a regular file inside the root, never through a link out of it or into a hidden folder', async () => {
    const outside = tempDir('capreg-outside-');
    fs.writeFileSync(path.join(outside, 'secret'), 'root:SECRET-HASH:20228:0:99999:7:::\n');
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha'), '.git/config': 'SECRET-TOKEN: x\n' });
    const config = path.join(root, 'capreg.config.yaml');
    const cases: [() => void, string][] = [
      [
        () => fs.symlinkSync(path.join(outside, 'secret'), config),
        `capreg.config.yaml: symbolic link points outside the registry root (to ${fs.realpathSync(outside)}/secret); refused`,
      ],
      [() => fs.symlinkSync('.git/config', config), 'capreg.config.yaml: symbolic link points to a hidden file or folder (.git/config); refused'],
      // A FIFO would block the read for ever.
      [() => execFileSync('mkfifo', [config]), 'capreg.config.yaml is not a regular file; it must be a UTF-8 text file'],
      [
        () => fs.writeFileSync(config, `# ${'x'.repeat(1024 * 1024)}\n`),
        'capreg.config.yaml is 1048579 bytes, over the 1048576 bytes a configuration file may have',
      ],
      [() => fs.writeFileSync(config, Buffer.from([0x72, 0x75, 0x6c, 0x65, 0x73, 0x3a, 0xe9, 0x0a])), 'capreg.config.yaml: file is not valid UTF-8 text'],
    ];
    for (const [make, message] of cases) {
      fs.rmSync(config, { force: true });
      make();
      const result = await run(['lint'], { cwd: root });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(message);
      expect(result.stderr).not.toContain('SECRET');
    }
    // A link to a file inside the root is read as before.
    fs.rmSync(config);
    fs.writeFileSync(path.join(root, 'shared.yaml'), 'rules:\n  negative-rules: off\n');
    fs.symlinkSync('shared.yaml', config);
    expect((await run(['lint'], { cwd: root })).code).toBe(0);
  });

  it('refuses a configuration saved under a name capreg does not read, rather than lint without it', async () => {
    for (const name of ['capreg.config.yml', 'capreg.config.json', 'capreg.yaml', 'capreg.yml']) {
      // It would refuse every file if it were read.
      const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha'), [name]: 'limits:\n  maxFileBytes: 10\n' });
      expect(await run(['lint'], { cwd: root })).toMatchObject({
        code: 2,
        stdout: '',
        stderr: `capreg lint: ${name} is not read: capreg reads its configuration from capreg.config.yaml; rename it, or remove it\n`,
      });
    }
  });

  it('a symbolic link inside the root is followed', async () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha'), 'shared/beta.md': cleanProtocol('beta') });
    fs.mkdirSync(path.join(root, 'capabilities/beta'));
    fs.symlinkSync(path.join(root, 'shared/beta.md'), path.join(root, 'capabilities/beta/PROTOCOL.md'));
    const { code, report } = await lintJson(root);
    expect({ code, diagnostics: described(report) }).toEqual({ code: 0, diagnostics: [] });
  });

  it('a broken symbolic link', async () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha') });
    fs.mkdirSync(path.join(root, 'capabilities/beta'));
    fs.symlinkSync(path.join(root, 'nowhere.md'), path.join(root, 'capabilities/beta/PROTOCOL.md'));
    const { report } = await lintJson(root);
    expect(described(report)).toEqual([
      'capabilities/beta/PROTOCOL.md:1:1 registry-files symbolic link is broken: its target does not exist; replace the link with the file',
    ]);
  });

  it('a capability folder that is a broken or looping link is an error, not a capability quietly gone', async () => {
    // Found by an attack pass: read from Git, such a link was refused; read from disk, it was skipped.
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha') });
    fs.symlinkSync('nowhere', path.join(root, 'capabilities/beta'));
    fs.symlinkSync('gamma', path.join(root, 'capabilities/gamma'));
    const { code, report } = await lintJson(root);
    expect(code).toBe(1);
    expect(described(report)).toEqual([
      'capabilities/beta:1:1 registry-files symbolic link is broken: its target does not exist; replace the link with the folder',
      'capabilities/gamma:1:1 registry-files symbolic link loops (it leads back to itself); replace the link with the folder',
    ]);
  });

  it('a FIFO named PROTOCOL.md is refused instead of blocking the read', async () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha') });
    fs.mkdirSync(path.join(root, 'capabilities/beta'));
    execFileSync('mkfifo', [path.join(root, 'capabilities/beta/PROTOCOL.md')]);
    const { report } = await lintJson(root);
    expect(described(report)).toEqual(['capabilities/beta/PROTOCOL.md:1:1 registry-files not a regular file; it must be a UTF-8 text file']);
  });

  it('a FIFO swapped in for a file between its stat and its read is refused too, not waited on', () => {
    // Under --watch, a FIFO renamed over PROTOCOL.md right after the stat froze the process (SIGTERM
    // included). The child makes that swap happen every time: its statSync puts the FIFO in place.
    const file = path.join(tempDir(), 'PROTOCOL.md');
    fs.writeFileSync(file, cleanProtocol('beta'));
    const said = withFifoSwap(file, 'statSync', 'read-registry.js', "readSourceFile(file, 'capabilities/beta/PROTOCOL.md', { maxFileBytes: 1024 * 1024 })");
    expect(said).toEqual({ path: 'capabilities/beta/PROTOCOL.md', problem: 'not a regular file; it must be a UTF-8 text file' });
  });

  it('a FIFO swapped in for capreg.config.yaml after its checks is refused too, not waited on', () => {
    const root = tempDir();
    const file = path.join(root, 'capreg.config.yaml');
    fs.writeFileSync(file, 'limits:\n  maxFiles: 10\n');
    const said = withFifoSwap(file, 'lstat', 'load-config.js', 'await loadConfig(path.dirname(file)).then(() => "loaded", (error) => error.message)');
    expect(said).toBe('capreg.config.yaml: not a regular file; it must be a UTF-8 text file');
  });

  it('a file over the size limit is refused at its size; one at the limit is read whole', () => {
    const file = path.join(tempDir(), 'PROTOCOL.md');
    fs.writeFileSync(file, 'x'.repeat(2048));
    expect(readSourceFile(file, 'capabilities/beta/PROTOCOL.md', { maxFileBytes: 1024 }).problem).toMatch(/^file is 2\.0 KiB, over the 1\.0 KiB limit/);
    expect(readSourceFile(file, 'capabilities/beta/PROTOCOL.md', { maxFileBytes: 2048 })).toEqual({
      path: 'capabilities/beta/PROTOCOL.md',
      content: 'x'.repeat(2048),
    });
  });

  it('a folder nested deeper than the limit is refused, not walked; one at the limit is read', async () => {
    const notes = `./${Array<string>(15).fill('n').join('/')}/notes.md`;
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha', { body: `Never guess.\n\nSee [the notes](${notes}).\n` }) });
    // capabilities/alpha is level 1; 15 more levels reach the limit (16), the next one is over it.
    const atLimit = path.join(root, 'capabilities/alpha', ...Array<string>(15).fill('n'));
    fs.mkdirSync(atLimit, { recursive: true });
    fs.writeFileSync(path.join(atLimit, 'notes.md'), 'notes\n');
    fs.mkdirSync(path.join(atLimit, 'deeper', ...Array<string>(40).fill('d')), { recursive: true });
    const { code, report } = await lintJson(root);
    expect(described(report)).toEqual([
      'capabilities/alpha/n/n/n/n/n/n/n/n/n/n/n/n/n/n/n/deeper:1:1 registry-files folder is 17 levels deep under capabilities/, over the limit of 16; nothing in it is read: move its files up',
    ]);
    expect(code).toBe(1);
  });

  it('a folder whose path is too long for the file system is refused with the reason, not an internal error', async () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha') });
    // 16 levels of 255-character names, within the depth limit, pass the file system's 4,096
    // bytes for a path. No call can name such a path: two chains of 8 levels are made apart, and
    // the second is moved into the first.
    const name = 'n'.repeat(255);
    const chain = Array<string>(8).fill(name);
    const upper = path.join(root, 'capabilities', ...chain);
    fs.mkdirSync(upper, { recursive: true });
    const aside = tempDir();
    fs.mkdirSync(path.join(aside, ...chain), { recursive: true });
    fs.renameSync(path.join(aside, name), path.join(upper, name));
    try {
      const { code, report } = await lintJson(root);
      const unreadable = described(report).filter((line) => line.includes('cannot be read'));
      expect(unreadable).toEqual([
        expect.stringMatching(/^capabilities(\/n{255})+:1:1 registry-files folder cannot be read \(ENAMETOOLONG\); make it readable or remove it$/),
      ]);
      expect(code).toBe(1);
    } finally {
      // Moved back, so that the temporary folders can be removed by their paths.
      fs.renameSync(path.join(upper, name), path.join(aside, name));
    }
  });

  it('a folder whose name is not UTF-8 is refused as such, not as a folder that does not exist', async () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha') });
    // "café" saved by a Latin-1 system: 0xE9 alone is not UTF-8.
    fs.mkdirSync(Buffer.concat([Buffer.from(`${root}/capabilities/caf`), Buffer.from([0xe9])]));
    const { code, report } = await lintJson(root);
    expect(described(report)).toContainEqual(
      'capabilities/caf\uFFFD:1:1 registry-files folder name is not valid UTF-8 (its bad bytes show as \uFFFD); rename it in UTF-8',
    );
    expect(code).toBe(1);
  });

  it('state names, retiredTools entries and markers too long or too many for one regular expression are refused, not an internal error', async () => {
    const withFrontmatter = (extra: string): string => cleanProtocol('alpha').replace('requiredToolsets: []', `requiredToolsets: []\n${extra}`);
    const long = 'A'.repeat(70_000);
    const cases: [string, string[]][] = [
      [`states: [${long}]`, ['frontmatter-schema']],
      [`retiredTools: [${long.toLowerCase()}]`, ['frontmatter-schema']],
      [`states: [${Array.from({ length: 17_000 }, (_, i) => `S${i}`).join(', ')}]`, ['frontmatter-schema']],
    ];
    for (const [extra, rules] of cases) {
      const { code, stderr, report } = await lintJson(tempRegistry({ [ALPHA]: withFrontmatter(extra) }));
      expect(stderr, extra.slice(0, 40)).toBe('');
      expect(code).toBe(1);
      expect([...new Set(report.diagnostics.map((d) => d.ruleId))]).toEqual(rules);
    }
    // 5 tools × 256 states (each within the toolsets schema) are more than one capability's entries are checked against.
    const tools = Array.from(
      { length: 5 },
      (_, t) => `    tool_${t}: { description: Tool ${t}., states: [${Array.from({ length: 256 }, (_, i) => `T${t}S${i}`).join(', ')}] }`,
    );
    const toolsets = `work-logs:\n  description: Work log entries and reports.\n  tools:\n    work_log_record: { action: write, description: Record an entry. }\n${tools.join('\n')}\n`;
    const many = await lintJson(
      tempRegistry({
        'capabilities/toolsets.yaml': toolsets,
        [ALPHA]: cleanProtocol('alpha').replace('requiredToolsets: []', 'requiredToolsets: [work-logs]\nstates: [DONE]'),
      }),
    );
    expect(many.stderr).toBe('');
    expect(described(many.report).filter((line) => line.includes('state-machine'))).toEqual([
      expect.stringMatching(
        /^capabilities\/alpha\/PROTOCOL\.md:\d+:1 state-machine this capability has 1281 states \(in `states` and of the tools of its toolsets\), more than the 1024 this rule checks/,
      ),
    ]);
    const markers = await run(['lint'], {
      cwd: tempRegistry({
        'capreg.config.yaml': `rules:\n  negative-rules: [error, { markers: ["${'x'.repeat(70_000)}"] }]\n`,
        [ALPHA]: cleanProtocol('alpha'),
      }),
    });
    expect(markers.code).toBe(2);
    expect(markers.stderr).toMatch(/^capreg lint: invalid configuration: capreg\.config\.yaml:2:\d+: rule "negative-rules": /);
    expect(markers.stderr.length).toBeLessThan(1_000);
  });

  it('an unclosed code fence', async () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha', { body: 'Never guess.\n\n```sh\ncapreg lint\n\n## Rules\n' }) });
    const { code, report } = await lintJson(root);
    expect(described(report)).toEqual([
      `${ALPHA}:15:1 markdown-syntax code fence opened with \`\`\` on line 15 is never closed, so the text after it is read as code, not as instructions; close it with a \`\`\` line`,
    ]);
    expect(code).toBe(1);
  });

  it('an empty registry', async () => {
    const root = tempRegistry();
    const { code, report } = await lintJson(root);
    expect(described(report)).toEqual([
      'capabilities:1:1 registry-files the registry has no capabilities: add capabilities/<id>/PROTOCOL.md (`capreg new <id>` scaffolds one)',
    ]);
    expect(code).toBe(1);
  });

  it('every frontmatter problem of the issue, all in one run, each at its YAML node', async () => {
    const fm = (id: string, lines: string): string =>
      `---\nid: ${id}\nname: N\ndescription: D.\nwhenToUse: [use ${id}]\nrequiredToolsets: []\nprotocol_version: 1.0.0\nprotocol_updated: 2026-11-29\n${lines}---\nNever guess in ${id}.\n`;
    const root = tempRegistry({
      'capabilities/malformed/PROTOCOL.md': fm('malformed', 'tags: [a, b\n'),
      'capabilities/duplicate/PROTOCOL.md': fm('duplicate', 'name: Again\n'),
      'capabilities/tabs/PROTOCOL.md': fm('tabs', 'metadata:\n\towner: me\n'),
      'capabilities/bare/PROTOCOL.md': '# No frontmatter\n\nNever guess.\n',
      'capabilities/typo/PROTOCOL.md': fm('typo', 'whenToUes: [x]\n'),
      'capabilities/bomb/PROTOCOL.md': fm(
        'bomb',
        'a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n',
      ),
      'capabilities/proto/PROTOCOL.md': fm('proto', '__proto__:\n  polluted: yes\nconstructor: x\n'),
      'capabilities/crlf/PROTOCOL.md': fm('crlf', 'colour: blue\n').replace(/\n/g, '\r\n'),
    });
    const { code, stderr, report } = await lintJson(root);
    expect(described(report).filter((line) => line.includes(' frontmatter-schema '))).toEqual([
      'capabilities/bare/PROTOCOL.md:1:1 frontmatter-schema no YAML frontmatter: a PROTOCOL.md must start with a `---` line, the frontmatter fields, and a closing `---` line',
      'capabilities/bomb/PROTOCOL.md:10:8 frontmatter-schema YAML aliases expand too much (over 100 alias expansions); write the values out instead of anchors',
      'capabilities/crlf/PROTOCOL.md:9:1 frontmatter-schema unknown field "colour"',
      'capabilities/duplicate/PROTOCOL.md:9:1 frontmatter-schema duplicate key "name": a key may appear only once in a mapping',
      'capabilities/malformed/PROTOCOL.md:9:12 frontmatter-schema invalid YAML: flow sequence in block collection must be sufficiently indented and end with a ]',
      'capabilities/proto/PROTOCOL.md:9:1 frontmatter-schema key "__proto__" is not allowed: it could change object prototypes; rename it',
      'capabilities/proto/PROTOCOL.md:11:1 frontmatter-schema key "constructor" is not allowed: it could change object prototypes; rename it',
      'capabilities/tabs/PROTOCOL.md:10:1 frontmatter-schema invalid YAML: tab characters are not allowed for indentation in YAML; indent with spaces',
      'capabilities/typo/PROTOCOL.md:9:1 frontmatter-schema unknown field "whenToUes"; did you mean "whenToUse"?',
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect({ code, stderr }).toEqual({ code: 1, stderr: '' });
  });
});

describe("capreg lint: the registry's size (limits.maxFiles, limits.maxTotalBytes)", () => {
  /** Two capabilities, a reference, a data file and the toolsets: 5 files; hidden ones do not count. */
  function sized(limits: string): string {
    return tempRegistry({
      'capreg.config.yaml': `limits:\n${limits}`,
      [ALPHA]: cleanProtocol('alpha'),
      'capabilities/beta/PROTOCOL.md': cleanProtocol('beta'),
      'capabilities/beta/references/notes.md': 'notes\n',
      'capabilities/beta/references/data.bin': new Uint8Array(4096),
      'capabilities/beta/.DS_Store': 'x',
    });
  }
  const textBytes = (root: string): number =>
    ['capabilities/toolsets.yaml', ALPHA, 'capabilities/beta/PROTOCOL.md'].reduce((sum, file) => sum + fs.statSync(path.join(root, file)).size, 0);

  it('a registry at the file limit is checked; one file more and nothing is, exit 2', async () => {
    expect((await run(['lint', '--no-cache'], { cwd: sized('  maxFiles: 5\n') })).code).toBe(0);
    const result = await run(['lint', '--no-cache'], { cwd: sized('  maxFiles: 4\n') });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'capreg lint: capabilities/ holds more than 4 files, over limits.maxFiles in capreg.config.yaml; nothing was checked: ' +
        'move what no capability needs out of capabilities/, or raise the limit (at most 1000000)\n',
    });
  });

  it('folders count on their own: at the limit the registry is checked; one more (an empty one) and nothing is, exit 2', async () => {
    // alpha, beta, beta/references: 3 folders (and 5 files).
    const root = sized('  maxFiles: 6\n');
    fs.mkdirSync(path.join(root, 'capabilities/beta/references/empty'));
    fs.mkdirSync(path.join(root, 'capabilities/.hidden'));
    expect((await run(['lint', '--no-cache'], { cwd: root })).code).toBe(0);
    fs.writeFileSync(path.join(root, 'capreg.config.yaml'), 'limits:\n  maxFiles: 5\n');
    for (const name of ['one', 'two']) fs.mkdirSync(path.join(root, `capabilities/beta/references/empty/${name}`));
    const result = await run(['lint', '--no-cache'], { cwd: root });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'capreg lint: capabilities/ holds more than 5 folders, over limits.maxFiles in capreg.config.yaml (which bounds folders as well as files); ' +
        'nothing was checked: remove the folders no capability needs, or raise the limit\n',
    });
  });

  it('text at the byte limit is checked; one byte more and nothing is (the data file does not count), exit 2', async () => {
    const root = sized('  maxTotalBytes: 1\n');
    const total = textBytes(root);
    fs.writeFileSync(path.join(root, 'capreg.config.yaml'), `limits:\n  maxTotalBytes: ${total}\n`);
    expect((await run(['build', '--no-cache'], { cwd: root })).code).toBe(0);
    fs.writeFileSync(path.join(root, 'capreg.config.yaml'), `limits:\n  maxTotalBytes: ${total - 1}\n`);
    const result = await run(['build', '--no-cache'], { cwd: root });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        `capreg build: the protocols, toolsets and evals files under capabilities/ come to more than ${total - 1} bytes, over limits.maxTotalBytes in capreg.config.yaml; ` +
        'nothing was checked: split the registry, or raise the limit (at most 1.0 GiB)\n',
    });
  });

  it('a limit over its ceiling is an invalid configuration', async () => {
    const result = await run(['lint'], { cwd: sized('  maxTotalBytes: 1073741825\n') });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'capreg lint: invalid configuration: capreg.config.yaml:2:18: `limits.maxTotalBytes` must be a whole number of bytes from 1 to 1073741824\n',
    );
  });
});

describe('capreg lint: configuration and usage errors exit 2', () => {
  it('a broken capreg.config.yaml names the file, line and column', async () => {
    const root = tempRegistry({ 'capreg.config.yaml': 'rules:\n  id-matches-folder: [warn\n', [ALPHA]: cleanProtocol('alpha') });
    const result = await run(['lint'], { cwd: root });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^capreg lint: invalid configuration: capreg\.config\.yaml:3:1: invalid YAML: /);
  });

  it('an unknown rule in capreg.config.yaml, with "did you mean"', async () => {
    const root = tempRegistry({ 'capreg.config.yaml': 'rules:\n  id-matches-foldr: warn\n', [ALPHA]: cleanProtocol('alpha') });
    const result = await run(['lint'], { cwd: root });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: 'capreg lint: invalid configuration: capreg.config.yaml:2:3: unknown rule "id-matches-foldr"; did you mean "id-matches-folder"?\n',
    });
  });

  it('an unknown --format', async () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha') });
    const result = await run(['lint', '--format', 'xml'], { cwd: root });
    expect(result).toEqual({ code: 2, stdout: '', stderr: 'capreg lint: unknown --format "xml"; expected one of stylish, json, github, sarif\n' });
  });

  it('an unknown flag', async () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha') });
    const result = await run(['lint', '--fix'], { cwd: root });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^capreg lint: unknown option --fix/);
  });

  it('an unknown command, and no command at all', async () => {
    const cwd = tempDir();
    const unknown = await run(['lnt'], { cwd });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^capreg: unknown command "lnt"; did you mean "lint"\?\n\nusage: capreg <command>/);
    const none = await run([], { cwd });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^usage: capreg <command>/);
    const help = await run(['--help'], { cwd });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: capreg <command>/);
  });
});

describe('capreg lint --max-warnings', () => {
  // markdown-syntax set to warn turns the unclosed fence into one warning.
  const files = {
    'capreg.config.yaml': 'rules:\n  markdown-syntax: warn\n',
    [ALPHA]: cleanProtocol('alpha', { body: 'Never guess.\n\n```\nunclosed\n' }),
  };

  it('warnings alone exit 0', async () => {
    const result = await run(['lint'], { cwd: tempRegistry(files) });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('✖ 1 problem (0 errors, 1 warning)');
  });

  it('exit 0 at the limit, 1 over it, with a note on stderr', async () => {
    const root = tempRegistry(files);
    expect((await run(['lint', '--max-warnings', '1'], { cwd: root })).code).toBe(0);
    const over = await run(['lint', '--max-warnings', '0'], { cwd: root });
    expect(over.code).toBe(1);
    expect(over.stderr).toBe('capreg: too many warnings (1, --max-warnings 0)\n');
  });

  it('a value that is not a whole number is a usage error', async () => {
    const root = tempRegistry(files);
    for (const value of ['-1', 'many', '1.5', '1e3', '0x10', ' 5', '99999999999999999999', '1000000001']) {
      const result = await run(['lint', `--max-warnings=${value}`], { cwd: root });
      expect(result).toEqual({ code: 2, stdout: '', stderr: `capreg lint: --max-warnings must be a whole number from 0 to 1000000000, not "${value}"\n` });
    }
  });
});

describe('capreg lint: where the registry is', () => {
  it('walks up from a nested working directory', async () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha', { version: 'latest' }), 'docs/deep/er/x.md': 'x' });
    const result = await run(['lint', '--format', 'json'], { cwd: path.join(root, 'docs/deep/er') });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ diagnostics: [{ file: ALPHA, ruleId: 'frontmatter-schema' }] });
  });

  it('walks up from inside capabilities/ to the root, not to capabilities/', async () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha') });
    const result = await run(['lint'], { cwd: path.join(root, 'capabilities/alpha') });
    expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('stops at the first folder with capreg.config.yaml', async () => {
    const outer = tempRegistry({ [ALPHA]: cleanProtocol('alpha') });
    fs.mkdirSync(path.join(outer, 'nested/capabilities'), { recursive: true });
    fs.writeFileSync(path.join(outer, 'nested/capreg.config.yaml'), 'rules: {}\n');
    const { report } = await (async () => {
      const result = await run(['lint', '--format', 'json'], { cwd: path.join(outer, 'nested') });
      return { report: JSON.parse(result.stdout) as { diagnostics: { file: string; ruleId: string }[] } };
    })();
    // The nested registry is empty (and has no toolsets.yaml): its own problems, not the outer registry's.
    expect(report.diagnostics.map((d) => `${d.file} ${d.ruleId}`)).toEqual(['capabilities registry-files', 'capabilities/toolsets.yaml toolsets-schema']);
  });

  it('--root, relative to the working directory', async () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha', { version: 'latest' }) });
    const elsewhere = tempDir();
    const result = await run(['lint', '--root', path.relative(elsewhere, root), '--format', 'json'], { cwd: elsewhere });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ diagnostics: [{ file: ALPHA }] });
  });

  it('--root that is not a registry, and no registry anywhere up, are usage errors', async () => {
    const empty = tempDir();
    const notRegistry = await run(['lint', '--root', empty], { cwd: empty });
    expect(notRegistry.code).toBe(2);
    expect(notRegistry.stderr).toContain('has no capabilities/ folder');
    const missing = await run(['lint', '--root', path.join(empty, 'nope')], { cwd: empty });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no such directory');
    const nowhere = await run(['lint'], { cwd: empty });
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain('no registry found');
  });
});

describe('capreg lint: text of only spaces', () => {
  it('refuses a blank state of a tool in toolsets.yaml (state-machine skipped it, and the build served it)', () => {
    const toolsets =
      'work-logs:\n  description: Work log entries.\n  tools:\n    work_log_record: { action: write, description: Record an entry., states: ["  "] }\n';
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha'), 'capabilities/toolsets.yaml': toolsets });
    const result = runBin(['build', '--no-cache'], { cwd: root });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      '4:79  error  `work-logs.tools.work_log_record.states.0` "  " has the wrong form: it is blank; write the state\'s name, e.g. "PENDING", or remove the item  toolsets-schema',
    );
    expect(fs.existsSync(path.join(root, 'dist/manifest.json'))).toBe(false);
  });

  it('refuses a blank name, description or state as it refuses an empty one (a blank state was never checked against the body)', () => {
    const protocol = (replace: [string, string]): string =>
      cleanProtocol('alpha')
        .replace('requiredToolsets: []', 'requiredToolsets: []\nstates: [DONE]\ntags: [notes]')
        .replace(...replace);
    const cases: [string, string][] = [
      ['name: alpha name', 'name: "   "'],
      ['description: Keeps alpha entries for the user.', 'description: "\\t"'],
      ['states: [DONE]', 'states: [DONE, "  "]'],
    ];
    const body = '\n- **DONE**: the entry is saved; do not save it again.\n';
    const clean = runBin(['lint', '--no-cache'], { cwd: tempRegistry({ [ALPHA]: protocol(['', '']) + body }) });
    expect(clean).toEqual({ code: 0, stdout: '', stderr: '' });
    for (const [field, blank] of cases) {
      const result = runBin(['lint', '--format', 'json', '--no-cache'], { cwd: tempRegistry({ [ALPHA]: protocol([field, blank]) + body }) });
      expect({ code: result.code, stderr: result.stderr }, blank).toEqual({ code: 1, stderr: '' });
      const messages = (JSON.parse(result.stdout) as JsonReport).diagnostics.map((d) => `${d.ruleId} ${d.message}`);
      expect(messages, blank).toEqual([expect.stringMatching(/^frontmatter-schema `(name|description|states\.1)` ".*" has the wrong form: it is blank; /)]);
    }
  });

  it('takes a tag of one word of 1-100 characters; refuses a blank tag, a tag with a space in it (skill metadata lists tags separated by spaces) and a longer one', () => {
    const protocol = (tags: string): string => cleanProtocol('alpha').replace('requiredToolsets: []', `requiredToolsets: []\ntags: ${tags}`);
    const clean = runBin(['lint', '--no-cache'], { cwd: tempRegistry({ [ALPHA]: protocol(`[notes, 日报, ${'t'.repeat(100)}]`) }) });
    expect(clean).toEqual({ code: 0, stdout: '', stderr: '' });
    const oneWord = 'a tag is one word without spaces (skill metadata lists tags separated by spaces): join words with hyphens, e.g. "customer-support"';
    const cases: [string, string][] = [
      ['[notes, "\u3000"]', `\`tags.1\` "\u3000" has the wrong form: ${oneWord}`],
      ['[notes, customer support]', `\`tags.1\` "customer support" has the wrong form: ${oneWord}`],
      ['[notes, "tab\\tbed"]', `\`tags.1\` "tab\\tbed" has the wrong form: ${oneWord}`],
      [`[${'t'.repeat(101)}]`, '`tags.0` is too long (101 characters, at most 100)'],
    ];
    for (const [tags, message] of cases) {
      const result = runBin(['lint', '--format', 'json', '--no-cache'], { cwd: tempRegistry({ [ALPHA]: protocol(tags) }) });
      expect({ code: result.code, stderr: result.stderr }, tags).toEqual({ code: 1, stderr: '' });
      expect(
        (JSON.parse(result.stdout) as JsonReport).diagnostics.map((d) => `${d.ruleId} ${d.message}`),
        tags,
      ).toEqual([`frontmatter-schema ${message}`]);
    }
  });
});

describe('capreg lint: an inputSchema whose $refs loop', () => {
  it('says the references loop, not that the call stack ran out', () => {
    const loop = 'inputSchema: {type: object, $defs: {a: {$ref: "#/$defs/b"}, b: {$ref: "#/$defs/a"}}, properties: {x: {$ref: "#/$defs/a"}}}';
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha').replace('requiredToolsets: []', `requiredToolsets: []\n${loop}`) });
    const result = runBin(['lint', '--format', 'json', '--no-cache'], { cwd: root });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 1, stderr: '' });
    expect((JSON.parse(result.stdout) as JsonReport).diagnostics.map((d) => `${d.line}:${d.column} ${d.ruleId} ${d.message}`)).toEqual([
      '8:14 frontmatter-schema `inputSchema` is not a valid JSON Schema: its `$ref`s lead round in a loop (or nest too deep) and never reach a schema; make each `$ref` end at a schema with a type or properties',
    ]);
  });
});

/**
 * What `call` gives (its JSON on the child's stdout) in a child process whose `patched` (fs.statSync
 * or fs/promises' lstat) replaces `file` with a FIFO right after it looked at it. A read that waits
 * on the FIFO never ends: the child is killed, and the status shows it.
 */
function withFifoSwap(file: string, patched: 'statSync' | 'lstat', module: string, call: string): unknown {
  const script = [
    "import fs from 'node:fs';",
    "import fsp from 'node:fs/promises';",
    "import path from 'node:path';",
    "import { execFileSync } from 'node:child_process';",
    "import { syncBuiltinESMExports } from 'node:module';",
    'const file = process.argv[2];',
    "const swap = (target) => { if (target === file) { fs.rmSync(file); execFileSync('mkfifo', [file]); } };",
    patched === 'statSync'
      ? 'const real = fs.statSync; fs.statSync = (target, ...rest) => { const info = real(target, ...rest); swap(target); return info; };'
      : 'const real = fsp.lstat; fsp.lstat = async (target, ...rest) => { const info = await real(target, ...rest); swap(target); return info; };',
    'syncBuiltinESMExports();',
    `const { readSourceFile, loadConfig } = { ...(await import(${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'lib/cli', module)).href)})) };`,
    `console.log(JSON.stringify(${call}));`,
  ].join('\n');
  const probe = path.join(tempDir(), 'swap.mjs');
  fs.writeFileSync(probe, script);
  const child = spawnSync(process.execPath, [probe, file], { encoding: 'utf8', timeout: 10_000 });
  expect({ status: child.status, stderr: child.stderr }).toEqual({ status: 0, stderr: '' });
  expect(fs.statSync(file).isFIFO()).toBe(true);
  return JSON.parse(child.stdout);
}

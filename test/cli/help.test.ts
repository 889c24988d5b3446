// Help and flag parsing come from one table (cli/command-table.ts): every command answers --help,
// -h and `capreg help <command>` with its flags; unknown or repeated flags are refused with a pointer
// to --help; docs/cli.md lists exactly the flags the parser accepts; no documented client
// configuration starts capreg through `npx`.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS, GLOBAL_FLAGS, type CommandName, type FlagSpec } from '../../cli/command-table.js';
import { REPO_ROOT, run, runBin, tempDir, tempRegistry } from './helpers.js';

const NAMES = Object.keys(COMMANDS) as CommandName[];

function flagsOf(name: CommandName): [string, FlagSpec][] {
  return Object.entries<FlagSpec>(COMMANDS[name].flags);
}

describe('--help', () => {
  for (const name of NAMES) {
    it(`capreg ${name} --help, -h and capreg help ${name} print the same usage with every flag`, () => {
      const cwd = tempDir();
      const long = runBin([name, '--help'], { cwd });
      expect(long.stderr).toBe('');
      expect(long.code).toBe(0);
      expect(long.stdout).toMatch(new RegExp(`^usage: capreg ${name}`));
      for (const [flag, spec] of [...flagsOf(name), ...Object.entries(GLOBAL_FLAGS)]) {
        expect(long.stdout).toMatch(new RegExp(`^  ${spec.short ? `-${spec.short}, ` : ''}--${flag}\\b`, 'm'));
      }
      expect(runBin([name, '-h'], { cwd })).toEqual(long);
      expect(runBin(['help', name], { cwd })).toEqual(long);
    });
  }

  it('answers --help even next to other flags, without running the command', async () => {
    const root = tempRegistry();
    const result = await run(['build', '--out', 'x', '--help'], { cwd: root });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('--tool-prefix P');
    expect(fs.existsSync(path.join(root, 'x'))).toBe(false);
  });

  it('capreg --help and capreg help list every command on stdout; bare capreg prints it on stderr with exit 2', async () => {
    const cwd = tempDir();
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const result = await run(argv, { cwd });
      expect(result.code).toBe(0);
      for (const name of NAMES) expect(result.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
    }
    const bare = await run([], { cwd });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('usage: capreg <command>');
  });

  it('refuses help for an unknown command with a suggestion', async () => {
    const result = await run(['help', 'serv'], { cwd: tempDir() });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^capreg: unknown command "serv"; did you mean "serve"\?/);
    expect((await run(['buidl'], { cwd: tempDir() })).stderr).toMatch(/^capreg: unknown command "buidl"; did you mean "build"\?/);
  });
});

describe('flag parsing', () => {
  it('refuses an unknown flag with did-you-mean and a pointer to --help (exit 2, nothing on stdout)', () => {
    const root = tempRegistry();
    expect(runBin(['build', '--tool-prefx', 'yi_'], { cwd: root })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'capreg build: unknown option --tool-prefx; did you mean "--tool-prefix"?; `capreg build --help` lists its flags\n',
    });
    expect(runBin(['serve', '--max-conections', '5'], { cwd: root }).stderr).toMatch(
      /^capreg serve: unknown option --max-conections.*`capreg serve --help` lists its flags\n$/,
    );
    expect(runBin(['lint', '-x'], { cwd: root })).toMatchObject({ code: 2, stderr: 'capreg lint: unknown option -x; `capreg lint --help` lists its flags\n' });
  });

  it('refuses a flag given twice instead of keeping the last value', async () => {
    const root = tempRegistry();
    const result = await run(['lint', '--format', 'json', '-f', 'sarif'], { cwd: root });
    expect(result).toEqual({ code: 2, stdout: '', stderr: 'capreg lint: --format is given more than once; `capreg lint --help` lists its flags\n' });
  });

  it('refuses a stray argument and a missing value', async () => {
    const root = tempRegistry();
    expect(await run(['lint', 'capabilities'], { cwd: root })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'capreg lint: unexpected argument "capabilities": capreg lint takes no arguments; `capreg lint --help` lists its flags\n',
    });
    const missing = await run(['build', '--out'], { cwd: root });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^capreg build: .*--out.*`capreg build --help` lists its flags\n$/);
  });
});

describe('docs/cli.md', () => {
  const text = fs.readFileSync(path.join(REPO_ROOT, 'docs/cli.md'), 'utf8');
  const sections = new Map(
    text
      .split(/^## /m)
      .slice(1)
      .map((section) => [section.slice(0, section.indexOf('\n')).trim(), section] as const),
  );
  /** Flags in a section's table rows, as `-s/--long` or `--long`. */
  const documented = (section: string): string[] =>
    [...section.matchAll(/^\| (?:`-(\w)`, )?`--([a-z][a-z-]*)[` ]/gm)].map((match) => `${match[1] ? `-${match[1]}/` : ''}--${match[2]}`).sort();
  const accepted = (flags: Record<string, FlagSpec>): string[] =>
    Object.entries(flags)
      .map(([name, spec]) => `${spec.short ? `-${spec.short}/` : ''}--${name}`)
      .sort();

  for (const name of NAMES) {
    it(`documents exactly the flags capreg ${name} accepts (add a row to docs/cli.md with each new flag)`, () => {
      const section = sections.get(`\`capreg ${name}\``);
      expect(section, `docs/cli.md needs a "## \`capreg ${name}\`" section`).toBeDefined();
      expect(documented(section!)).toEqual(accepted(COMMANDS[name].flags));
    });
  }

  it('documents the flags every command accepts', () => {
    expect(documented(sections.get('Every command') ?? '')).toEqual(accepted(GLOBAL_FLAGS));
  });
});

/** The contents of the fenced code blocks of a Markdown text. */
function codeBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  let current: string[] | undefined;
  for (const line of markdown.split('\n')) {
    if (line.trimStart().startsWith('```')) {
      if (current === undefined) current = [];
      else {
        blocks.push(current.join('\n'));
        current = undefined;
      }
    } else current?.push(line);
  }
  return blocks;
}

describe('client configurations in the docs', () => {
  const files = [
    path.join(REPO_ROOT, 'README.md'),
    ...fs
      .readdirSync(path.join(REPO_ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.md'))
      .map((file) => path.join(REPO_ROOT, 'docs', file)),
  ];

  it('never start capreg with npx, and start it with node and an absolute bin/capreg.js', () => {
    let stdioConfigs = 0;
    for (const file of files) {
      for (const block of codeBlocks(fs.readFileSync(file, 'utf8')).filter((b) => b.includes('mcpServers'))) {
        const where = `${path.relative(REPO_ROOT, file)}: ${block}`;
        expect(block, where).not.toMatch(/npx/);
        const config = JSON.parse(block) as { mcpServers: Record<string, { command?: string; args?: string[] }> };
        for (const server of Object.values(config.mcpServers)) {
          if (server.command === undefined) continue;
          stdioConfigs += 1;
          expect(server.command, where).toMatch(/^(node|\/.*\/node)$/);
          expect(server.args?.[0], where).toMatch(/^\/.*\/bin\/capreg\.js$/);
          expect(server.args, where).toContain('--root');
        }
      }
    }
    expect(stdioConfigs).toBeGreaterThan(0);
  });
});

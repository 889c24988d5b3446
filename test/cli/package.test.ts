// The package as npm publishes it (`npm pack`): what a user gets from `npm install capreg` or a
// tarball, run from its own folder with only its dependencies beside it. `package.json`'s `files`
// decides what is in it; `.gitignore` lists lib/, so without `files` the compiled code was left out.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { cleanProtocol, REPO_ROOT, tempDir, tempRegistry } from './helpers.js';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

let unpacked = '';
let listed: string[] = [];

beforeAll(() => {
  const destination = tempDir('capreg-pack-');
  // lib/ is what globalSetup compiled; `prepare` (which compiles it again) is what npm runs before a real pack.
  const output = execFileSync(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', destination], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  });
  const packed = (JSON.parse(output) as { filename: string; files: { path: string }[] }[])[0];
  if (packed === undefined) throw new Error(`npm pack printed no package: ${output}`);
  listed = packed.files.map((file) => file.path).sort();
  execFileSync('tar', ['-xzf', path.join(destination, packed.filename), '-C', destination]);
  unpacked = path.join(destination, 'package');
  // The dependencies npm would install beside it.
  fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(unpacked, 'node_modules'), 'dir');
}, 90_000);

function runPacked(argv: string[], cwd: string) {
  const result = spawnSync(process.execPath, [path.join(unpacked, 'bin', 'capreg.js'), ...argv], {
    cwd,
    env: { PATH: process.env.PATH },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('the published package', () => {
  it('holds the executable, the compiled code and its data files, and no sources or tests', () => {
    for (const file of [
      'bin/capreg.js',
      'lib/cli/main.js',
      'lib/cli/parse-worker.js',
      'lib/server/user-compile-worker.js',
      'lib/compiler/o200k-ranks.json',
      'lib/compiler/schema/capability.schema.json',
      'lib/package.json',
      'examples/principals.demo.yaml',
      'package.json',
      'README.md',
    ]) {
      expect(listed).toContain(file);
    }
    expect(listed.filter((file) => /\.(ts|map)$/.test(file) || /^(test|bench|cli|compiler|server|\.ci|\.github)\//.test(file))).toEqual([]);
  });

  it('runs from its own folder: version, lint and build of a registry', () => {
    const version = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    expect(runPacked(['--version'], unpacked)).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });

    const root = tempRegistry({
      'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'),
      'capabilities/beta/PROTOCOL.md': cleanProtocol('beta'),
    });
    expect(runPacked(['lint', '--no-cache'], root)).toEqual({ code: 0, stdout: '', stderr: '' });
    const built = runPacked(['build'], root);
    expect(built.code).toBe(0);
    expect(built.stderr).toMatch(/^capreg build: wrote dist\/manifest\.json \(2 capabilities, revision sha256:[0-9a-f]{12}…\)\n$/);
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'dist', 'manifest.json'), 'utf8')) as { capabilities: { id: string }[] };
    expect(manifest.capabilities.map((capability) => capability.id)).toEqual(['alpha', 'beta']);
  });

  it('serves MCP over stdio from its own folder, and exits 0 when its input ends', async () => {
    const root = tempRegistry({ 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha') });
    expect(runPacked(['build'], root).code).toBe(0);
    const child = spawn(
      process.execPath,
      [path.join(unpacked, 'bin', 'capreg.js'), 'serve', '--principals', path.join(unpacked, 'examples', 'principals.demo.yaml')],
      {
        cwd: root,
        env: { PATH: process.env.PATH, CAPREG_API_KEY: 'capreg-demo-author' },
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'package-test', version: '1.0.0' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_capabilities', arguments: {} } });
    await vi.waitFor(() => expect(stdout).toContain('"id":2'), { timeout: 20_000 });
    expect(stderr).toMatch(/^capreg serve: 1 capabilities, revision sha256:[0-9a-f]{64}, on stdio\n$/);
    type Message = { id?: number; result?: { structuredContent?: { capabilities: { id: string }[] } } };
    const answer = stdout
      .trim()
      .split('\n')
      .map((line): Message => JSON.parse(line) as Message)
      .find((message) => message.id === 2);
    expect(answer?.result?.structuredContent?.capabilities.map((capability) => capability.id)).toEqual(['alpha']);

    child.stdin.end();
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/^capreg serve: 1 capabilities, revision sha256:[0-9a-f]{64}, on stdio\n$/);
  }, 30_000);

  it('scaffolds with `new` a frontmatter that names the schema it ships, when installed as a dependency', () => {
    const root = tempRegistry();
    const installed = path.join(root, 'node_modules', 'capreg');
    fs.cpSync(unpacked, installed, { recursive: true, verbatimSymlinks: true });
    const created = spawnSync(process.execPath, [path.join(installed, 'bin', 'capreg.js'), 'new', 'expense-notes'], {
      cwd: root,
      env: { PATH: process.env.PATH },
      encoding: 'utf8',
    });
    expect(created.status).toBe(0);
    const text = fs.readFileSync(path.join(root, 'capabilities/expense-notes/PROTOCOL.md'), 'utf8');
    const schema = /^---\n# yaml-language-server: \$schema=(\S+)\n/.exec(text)?.[1];
    expect(schema).toBe('../../node_modules/capreg/lib/compiler/schema/capability.schema.json');
    expect(fs.existsSync(path.join(root, 'capabilities/expense-notes', schema!))).toBe(true);
    // Run from its unpacked folder, outside the registry (as from a global install), it leaves the line out.
    expect(runPacked(['new', 'other-notes'], root).code).toBe(0);
    expect(fs.readFileSync(path.join(root, 'capabilities/other-notes/PROTOCOL.md'), 'utf8')).toMatch(/^---\nid: other-notes\n/);
  });
});

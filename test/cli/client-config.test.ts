// A newcomer's path end to end, through the real bin started from a folder that is not the registry:
// relative command-line paths resolve against the working directory (defaults against the root),
// `serve --http` prints a stdio client configuration with node and absolute paths (never npx) and a
// real demo key, and that configuration, started from `/` like a desktop client does, serves the
// catalog and lets the demo author save a user capability.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT, runBin, tempDir } from './helpers.js';

const DEMO_PRINCIPALS = path.join(REPO_ROOT, 'examples/principals.demo.yaml');

const USER_CAPABILITY = `---
name: Friday summary
description: Records what I did this week and reports it.
whenToUse:
  - summarise my week
uses: [work-reporting]
toolBindings:
  - step: record
    capability: work-reporting
    tools: [work_log_record]
---

1. Load [work reporting](capability:work-reporting) and record this week's entries.

Never record an entry I did not confirm.
`;

interface StdioConfig {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** Start `serve --http`, wait for the printed configurations, stop it; the stdio one, parsed. */
async function printedStdioConfig(argv: string[], cwd: string): Promise<{ stderr: string; config: StdioConfig }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--http', '--port', '0', ...argv], {
    cwd,
    env: { PATH: process.env['PATH'] ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  const block = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /over stdio[^\n]*\n(\{\n[\s\S]*?\n\})\n/.exec(stderr);
      if (match) resolve(match[1]!);
    });
    child.once('exit', () => reject(new Error(`exited early: ${stderr}`)));
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  expect(await exit).toBe(0);
  const parsed = JSON.parse(block) as { mcpServers: { capreg: StdioConfig } };
  return { stderr, config: parsed.mcpServers.capreg };
}

describe('paths and the printed client configuration', () => {
  it('resolves command-line paths from the working directory and prints a stdio configuration that works from /', { timeout: 60_000 }, async () => {
    const root = tempDir('capreg-registry-');
    fs.cpSync(path.join(REPO_ROOT, 'capabilities'), path.join(root, 'capabilities'), { recursive: true });
    const work = tempDir('capreg-cwd-');
    // --root and --out relative to the working directory, not to the registry.
    const built = runBin(['build', '--root', path.relative(work, root), '--out', 'out'], { cwd: work });
    expect(built.stderr).toMatch(/^capreg build: wrote .*manifest\.json/);
    expect(built.code).toBe(0);
    expect(fs.existsSync(path.join(work, 'out/manifest.json'))).toBe(true);
    expect(fs.existsSync(path.join(root, 'out'))).toBe(false);
    fs.mkdirSync(path.join(root, 'dist'));
    fs.copyFileSync(path.join(work, 'out/manifest.json'), path.join(root, 'dist/manifest.json'));

    const { stderr, config } = await printedStdioConfig(
      ['--root', path.relative(work, root), '--principals', path.relative(work, DEMO_PRINCIPALS), '--user-store', 'sqlite:store/user.db'],
      work,
    );
    expect(stderr).not.toMatch(/npx/);
    expect(config).toEqual({
      command: process.execPath,
      args: [BIN, 'serve', '--root', root, '--principals', DEMO_PRINCIPALS, '--user-store', `sqlite:${path.join(work, 'store/user.db')}`],
      env: { CAPREG_API_KEY: 'capreg-demo-author' },
    });
    expect(stderr).toContain('"Authorization": "Bearer capreg-demo-author"');
    expect(stderr).toMatch(/capreg-demo-author is a public demo key/);
    expect(stderr).toMatch(/A real key is .*sha256sum/);
    // The explicit relative store path starts from the working directory.
    expect(fs.existsSync(path.join(work, 'store/user.db'))).toBe(true);
    expect(fs.existsSync(path.join(root, 'store'))).toBe(false);

    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args,
      env: { ...config.env, PATH: process.env['PATH'] ?? '' },
      cwd: '/',
      stderr: 'pipe',
    });
    const client = new Client({ name: 'newcomer', version: '1.0.0' });
    await client.connect(transport);
    try {
      const listed = (await client.callTool({ name: 'list_capabilities', arguments: {} })).structuredContent as { capabilities: { id: string }[] };
      expect(listed.capabilities.map((entry) => entry.id).sort()).toEqual(['personal-automation', 'test-driven-development', 'work-reporting']);
      const saved = await client.callTool({ name: 'save_user_capability', arguments: { markdown: USER_CAPABILITY } });
      expect(saved.isError ?? false).toBe(false);
      expect(saved.structuredContent).toMatchObject({ success: true, capabilityId: expect.stringMatching(/^user:/) as unknown });
    } finally {
      await client.close();
    }
  });

  it('names the flag and the file when a command-line path is missing, from another folder', () => {
    const root = tempDir('capreg-registry-');
    fs.cpSync(path.join(REPO_ROOT, 'capabilities'), path.join(root, 'capabilities'), { recursive: true });
    const work = tempDir('capreg-cwd-');
    expect(runBin(['build', '--root', root], { cwd: work }).code).toBe(0);
    // principals.yaml exists in the root but not in the working directory: the flag's path is the cwd's.
    fs.copyFileSync(DEMO_PRINCIPALS, path.join(root, 'principals.yaml'));
    const result = runBin(['serve', '--root', root, '--principals', 'principals.yaml'], { cwd: work });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: `capreg serve: --principals principals.yaml: no such file: ${path.join(work, 'principals.yaml')} (a relative path on the command line starts from the working directory, ${work})\n`,
    });
  });
});

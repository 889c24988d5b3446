// `capreg new` loads none of the compiler (the first run in a cold checkout paid for the parser, the
// tokenizer and Git), and `build --watch` stamps its status lines with the local time.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, cleanProtocol, tempDir, tempRegistry } from './helpers.js';

describe('capreg new', () => {
  it('loads no package and none of the parser, rules or caches', () => {
    const root = tempRegistry();
    const log = path.join(tempDir(), 'loaded.txt');
    const hooks = path.join(tempDir(), 'hooks.mjs');
    fs.writeFileSync(
      hooks,
      `import { appendFileSync } from 'node:fs';\nexport async function resolve(specifier, context, next) {\n  const result = await next(specifier, context);\n  appendFileSync(${JSON.stringify(log)}, result.url + '\\n');\n  return result;\n}\n`,
    );
    const register = `import { register } from 'node:module'; register(${JSON.stringify(new URL(`file://${hooks}`).href)});`;
    const started = performance.now();
    const result = spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, BIN, 'new', 'expense-notes'], {
      cwd: root,
      env: { PATH: process.env['PATH'] },
      encoding: 'utf8',
      timeout: 60_000,
    });
    const elapsed = performance.now() - started;
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const loaded = fs
      .readFileSync(log, 'utf8')
      .split('\n')
      .filter((url) => url.startsWith('file:'));
    expect(loaded.some((url) => url.endsWith('/cli/commands/new.js'))).toBe(true);
    expect(loaded.filter((url) => url.includes('/node_modules/'))).toEqual([]);
    expect(loaded.filter((url) => /\/compiler\/(parse|compile|lint|toolsets)\.js$|\/cli\/(parse-cache|build-cache|code-fingerprint)\.js$/.test(url))).toEqual(
      [],
    );
    // Generous: a node start-up is ~0.1 s; loading the compiler took several times more.
    expect(elapsed).toBeLessThan(10_000);
  });
});

describe('capreg build --watch', () => {
  it('starts every status line with the local time and exits 0 on SIGTERM', { timeout: 60_000 }, async () => {
    const root = tempRegistry({ 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha') });
    // A zone far from UTC, so a UTC clock would show another hour.
    const timeZone = 'Pacific/Kiritimati';
    const hour = (): string => new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', hourCycle: 'h23' }).format(new Date());
    const before = hour();
    const child = spawn(process.execPath, [BIN, 'build', '--watch'], {
      cwd: root,
      env: { PATH: process.env['PATH'] ?? '', TZ: timeZone },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    const waitFor = (pattern: RegExp): Promise<void> =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (pattern.test(stderr)) {
            child.stderr.off('data', check);
            resolve();
          }
        };
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          check();
        });
        child.once('exit', () => reject(new Error(`exited early: ${stderr}`)));
        check();
      });
    await waitFor(/watching for changes/);
    fs.writeFileSync(path.join(root, 'capabilities/alpha/PROTOCOL.md'), cleanProtocol('alpha', { version: '1.0.1' }));
    await waitFor(/watching for changes[\s\S]*wrote[\s\S]*watching for changes/);
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    const after = hour();
    const lines = stderr.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(4);
    for (const line of lines) {
      expect(line).toMatch(/^(\d\d):\d\d:\d\d capreg build: /);
      expect([before, after]).toContain(line.slice(0, 2));
    }
  });
});

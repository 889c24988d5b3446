// The real `capreg serve --http` as a child process, for the reload tests: start it, read its
// /healthz, wait for a revision, call a tool, and stop it, checking that it exited cleanly.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { expect } from 'vitest';
import { eventually, httpClient, serveArgv, structured } from './helpers.js';

export interface Health {
  status: string;
  revision: string;
  capabilities: number;
  loadedAt: string;
  lastReloadError: string | null;
}

export interface ServeProcess {
  url: string;
  stderr(): string;
  health(): Promise<Health>;
  /** Poll /healthz until `check` passes (at most `timeoutMs`), and return the last report. */
  healthUntil(check: (health: Health) => boolean, timeoutMs?: number): Promise<Health>;
  /** The protocol text `get_capability_protocol` answers for `id`, as the key's holder. */
  protocol(key: string, id: string): Promise<string>;
  /** The HTTP status of an authenticated `tools/list` call. */
  status(key: string): Promise<number>;
  /** SIGTERM, then expect exit code 0 and no crash on stderr. */
  stop(): Promise<void>;
}

export async function startServe(args: string[], cwd: string): Promise<ServeProcess> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, serveArgv([...args, '--http', '--port', '0']), {
    cwd,
    env: { PATH: process.env['PATH'] ?? '' },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await Promise.race([
    new Promise<string>((resolve) => {
      const look = (): void => {
        const match = /on (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(stderr);
        if (match) resolve(match[1] as string);
      };
      child.stderr.on('data', look);
    }),
    exited.then((code) => {
      throw new Error(`capreg serve exited early (${code}): ${stderr}`);
    }),
  ]);
  const health = async (): Promise<Health> => (await (await fetch(`${url}/healthz`)).json()) as Health;
  return {
    url,
    stderr: () => stderr,
    health,
    healthUntil: (check, timeoutMs = 5_000) =>
      eventually(async () => {
        const report = await health();
        if (!check(report)) throw new Error(`/healthz did not get there: ${JSON.stringify(report)}`);
        return report;
      }, timeoutMs),
    protocol: async (key, id) => {
      const client = await httpClient(url, key);
      try {
        const result = structured(await client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: id } }));
        return String(result['protocol']);
      } finally {
        await client.close();
      }
    },
    status: async (key) => {
      const response = await fetch(`${url}/mcp`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      await response.arrayBuffer();
      return response.status;
    },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      // Never leave a server behind, even one that hangs on the way out.
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(killer);
      expect(code).toBe(0);
      expect(stderr).not.toMatch(/internal error|Unhandled|RangeError|Maximum call stack/);
    },
  };
}

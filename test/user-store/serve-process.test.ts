// The real `bin/capreg.js serve --http` with a SQLite user store, while another process tampers
// with the database's files: a truncated `-shm` (SIGBUS for a memory-mapped WAL index), a deleted
// database, a restore, and a kill -9. The process survives everything but the kill, the Git catalog
// keeps serving, /healthz says what the store is doing, and every acknowledged save is there after
// the restart.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { STANDARD_CAPABILITIES, httpClient, makeManifest, principalsYaml, serveArgv, tempDir, writeAtomic, writeManifest } from '../server/helpers.js';
import { clientSession, PRINCIPALS, userEntries, WEEKLY_DIGEST, type Session } from '../user-capabilities/harness.js';

const children: ChildProcessWithoutNullStreams[] = [];
const sessions: Session[] = [];
let dir: string | undefined;

afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close().catch(() => undefined);
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

interface Served {
  child: ChildProcessWithoutNullStreams;
  url: string;
  stderr: () => string;
}

async function serve(args: string[]): Promise<Served> {
  const child = spawn(process.execPath, serveArgv(args), { cwd: dir, env: { PATH: process.env['PATH'] ?? '' } });
  children.push(child);
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /on (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(stderr);
      if (match) resolve(match[1] as string);
    });
    child.once('exit', (code, signal) => reject(new Error(`exited early (${code ?? signal}): ${stderr}`)));
  });
  return { child, url, stderr: () => stderr };
}

async function as(url: string, key: string): Promise<Session> {
  const client = await httpClient(url, key);
  const session = clientSession(client, () => client.close());
  sessions.push(session);
  return session;
}

async function health(url: string): Promise<Record<string, unknown>> {
  return (await (await fetch(`${url}/healthz`)).json()) as Record<string, unknown>;
}

describe('capreg serve with a SQLite user store whose files change underneath', () => {
  it('survives a truncated -shm and a deleted database, keeps serving the catalog, and loses no acknowledged save', async () => {
    dir = tempDir('capreg-serve-store-');
    const manifestFile = path.join(dir, 'manifest.json');
    const principalsFile = path.join(dir, 'principals.yaml');
    const db = path.join(dir, 'store', 'user-capabilities.db');
    writeManifest(manifestFile, makeManifest(STANDARD_CAPABILITIES));
    writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
    const args = ['--manifest', manifestFile, '--principals', principalsFile, '--http', '--port', '0', '--user-store', `sqlite:${db}`];

    const first = await serve(args);
    let alice = await as(first.url, 'key-alice');
    const save = async (): Promise<Record<string, unknown>> => alice.json('save_user_capability', { markdown: WEEKLY_DIGEST });
    const acknowledged: string[] = [];
    const a = await save();
    expect(a).toMatchObject({ success: true });
    acknowledged.push(a['capabilityId'] as string);

    // Another process truncates the shared-memory index, as a WAL database would have one.
    for (const suffix of ['-shm', '-wal']) if (fs.existsSync(`${db}${suffix}`)) fs.truncateSync(`${db}${suffix}`, 0);
    const b = await save();
    expect(b).toMatchObject({ success: true });
    acknowledged.push(b['capabilityId'] as string);
    expect(
      userEntries(await alice.json('list_capabilities'))
        .map((e) => e.id)
        .sort(),
    ).toEqual([...acknowledged].sort());
    expect(await health(first.url)).toMatchObject({ status: 'ok', userStore: { status: 'ok' } });

    // The database vanishes: saves are refused, the Git catalog keeps serving, health says why.
    fs.copyFileSync(db, `${db}.backup`);
    fs.rmSync(db);
    const refused = await alice.call('save_user_capability', { markdown: WEEKLY_DIGEST });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('store-unavailable');
    const listing = await alice.json('list_capabilities');
    expect((listing['capabilities'] as unknown[]).length).toBeGreaterThan(0);
    expect(listing['warning']).toMatch(/unavailable/);
    const degraded = await health(first.url);
    expect(degraded).toMatchObject({ status: 'degraded', userStore: { status: 'unavailable', reason: 'database-missing' } });
    expect(JSON.stringify(degraded)).not.toContain(dir);
    expect(fs.existsSync(db)).toBe(false);

    // Restored: saves work again, into the restored file.
    fs.copyFileSync(`${db}.backup`, db);
    const d = await save();
    expect(d).toMatchObject({ success: true });
    acknowledged.push(d['capabilityId'] as string);
    expect(first.child.exitCode).toBeNull();
    expect(first.child.signalCode).toBeNull();
    expect(first.stderr()).toContain('user-defined capabilities are unavailable');
    expect(first.stderr()).toContain('the user store answers again');

    // kill -9 right after the acknowledgements, then a restart finds every one of them.
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    const second = await serve(args);
    alice = await as(second.url, 'key-alice');
    expect(
      userEntries(await alice.json('list_capabilities'))
        .map((e) => e.id)
        .sort(),
    ).toEqual([...acknowledged].sort());
    expect(second.stderr()).not.toMatch(/unavailable|Error/);
  }, 60_000);
});

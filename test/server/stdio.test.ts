// `capreg serve` over stdio in a child process: the key from CAPREG_API_KEY, resolved through the
// principals file at every call; list_changed notifications when what the caller sees changes.
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  PRINCIPALS,
  STANDARD_CAPABILITIES,
  eventually,
  ids,
  makeManifest,
  principalsYaml,
  serveArgv,
  structured,
  tempDir,
  writeAtomic,
  writeManifest,
} from './helpers.js';

let dir: string;
let manifestFile: string;
let principalsFile: string;
const open: Client[] = [];

beforeEach(() => {
  dir = tempDir();
  manifestFile = path.join(dir, 'manifest.json');
  principalsFile = path.join(dir, 'principals.yaml');
  writeManifest(manifestFile, makeManifest(STANDARD_CAPABILITIES));
  writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
});

afterEach(async () => {
  for (const client of open.splice(0)) await client.close().catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
});

async function spawnClient(
  env: Record<string, string>,
  extraArgs: string[] = [],
): Promise<{ client: Client; stderr: () => string; notifications: () => number }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: serveArgv(['--manifest', manifestFile, '--principals', principalsFile, ...extraArgs]),
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'stdio-test', version: '1.0.0' });
  let notifications = 0;
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    notifications += 1;
  });
  await client.connect(transport);
  open.push(client);
  return { client, stderr: () => stderr, notifications: () => notifications };
}

describe('capreg serve over stdio', () => {
  it('serves an unauthenticated session without CAPREG_API_KEY', async () => {
    const { client } = await spawnClient({});
    expect(ids(structured(await client.callTool({ name: 'list_capabilities' })))).toEqual(['open-help']);
    expect(structured(await client.callTool({ name: 'get_current_user' }))).toMatchObject({ authenticated: false });
  });

  it('treats an unknown key as unauthenticated', async () => {
    const { client, stderr } = await spawnClient({ CAPREG_API_KEY: 'wrong-key' });
    expect(ids(structured(await client.callTool({ name: 'list_capabilities' })))).toEqual(['open-help']);
    expect(stderr()).not.toContain('wrong-key');
  });

  it('applies a narrowed scope and a revoked key on the next call, and notifies list_changed', async () => {
    const { client, notifications, stderr } = await spawnClient({ CAPREG_API_KEY: 'key-bob-all' }, ['--tool-prefix', 'yi_']);
    expect(ids(structured(await client.callTool({ name: 'yi_list_capabilities' })))).toEqual([
      'calendar-digest',
      'open-help',
      'personal-automation',
      'work-reporting',
    ]);
    expect(notifications()).toBe(0);

    writeAtomic(principalsFile, principalsYaml(PRINCIPALS.map((p) => (p.id === 'bob' ? { ...p, scopes: ['calendar:read'] } : p))));
    await eventually(() => expect(notifications()).toBe(1));
    expect(ids(structured(await client.callTool({ name: 'yi_list_capabilities' })))).toEqual(['calendar-digest', 'open-help']);
    const forbidden = await client.callTool({ name: 'yi_get_capability_protocol', arguments: { capabilityId: 'work-reporting' } });
    expect(forbidden.isError).toBe(true);

    writeAtomic(principalsFile, principalsYaml(PRINCIPALS.filter((p) => p.id !== 'bob')));
    await eventually(() => expect(notifications()).toBe(2));
    expect(ids(structured(await client.callTool({ name: 'yi_list_capabilities' })))).toEqual(['open-help']);
    expect(structured(await client.callTool({ name: 'yi_get_current_user' }))).toMatchObject({ authenticated: false, id: null });
    const resources = await client.listResources();
    expect(resources.resources.map((resource) => resource.uri)).toEqual(['capability://open-help']);
    expect(stderr()).not.toContain('key-bob-all');
  });

  it('notifies list_changed on a manifest reload that changes what the caller sees, not on one that does not', async () => {
    const { client, notifications, stderr } = await spawnClient({ CAPREG_API_KEY: 'key-alice-reports' });
    expect(ids(structured(await client.callTool({ name: 'list_capabilities' })))).toEqual(['open-help', 'work-reporting']);

    // Only a capability alice cannot see changes: her catalog is the same, so no notification.
    const hiddenChange = makeManifest(STANDARD_CAPABILITIES.map((c) => (c.id === 'calendar-digest' ? { ...c, description: 'Changed.' } : c)));
    writeManifest(manifestFile, hiddenChange);
    await eventually(() => expect(stderr()).toContain(`manifest reloaded revision ${hiddenChange.revision}`));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(notifications()).toBe(0);

    writeManifest(manifestFile, makeManifest([...STANDARD_CAPABILITIES, { id: 'new-report', requiredToolsets: ['reports'] }]));
    await eventually(() => expect(notifications()).toBe(1));
    expect(ids(structured(await client.callTool({ name: 'list_capabilities' })))).toEqual(['new-report', 'open-help', 'work-reporting']);
  });
});

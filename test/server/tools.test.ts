// The three tools and the capability resources over the real SDK Client, in memory.
import fs from 'node:fs';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS, authenticatedCaller, type Caller } from '../../server/identity.js';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { STANDARD_CAPABILITIES, ids, inMemoryClient, makeManifest, structured, tempDir, writeManifest } from './helpers.js';

const UNIFORM = '{"success":false,"error":"capability not found or not accessible"}';

function callerWith(scopes: string[]): () => Caller {
  const caller = authenticatedCaller('tester', 'Tester', scopes, 'api-key');
  return () => caller;
}

let dir: string;
let runtime: Runtime;
let prefixed: Runtime;

beforeAll(async () => {
  dir = tempDir();
  const manifest = makeManifest([
    ...STANDARD_CAPABILITIES,
    {
      id: 'linked',
      requiredToolsets: [],
      protocol:
        '---\nprotocol_version: 1.0.0\nprotocol_updated: 2025-01-01\n---\nFirst call `get_capability_protocol` with `{"capabilityId":"open-help"}` (capability `open-help`). Never guess.\n',
    },
  ]);
  writeManifest(path.join(dir, 'manifest.json'), manifest);
  runtime = await startRuntime({ manifestFile: path.join(dir, 'manifest.json'), watch: false });
  prefixed = await startRuntime({ manifestFile: path.join(dir, 'manifest.json'), watch: false, toolPrefix: 'yi_' });
});

afterAll(async () => {
  await runtime.close();
  await prefixed.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('list_capabilities', () => {
  const cases: { scopes: string[] | null; visible: string[] }[] = [
    { scopes: null, visible: ['linked', 'open-help'] },
    { scopes: [], visible: ['linked', 'open-help'] },
    { scopes: ['reports:read'], visible: ['linked', 'open-help', 'work-reporting'] },
    { scopes: ['reports:admin'], visible: ['linked', 'open-help', 'work-reporting'] },
    { scopes: ['calendar:read'], visible: ['calendar-digest', 'linked', 'open-help'] },
    // Every required toolset is needed: automation alone does not make personal-automation visible.
    { scopes: ['automation:admin'], visible: ['linked', 'open-help'] },
    { scopes: ['automation:write', 'calendar:read'], visible: ['calendar-digest', 'linked', 'open-help', 'personal-automation'] },
    // Malformed scopes grant nothing.
    { scopes: ['reports', 'reports:*', '*:read', 'reports:owner', 'REPORTS:read'], visible: ['linked', 'open-help'] },
  ];
  for (const { scopes, visible } of cases) {
    it(`shows exactly ${visible.join(', ')} for scopes ${JSON.stringify(scopes)}`, async () => {
      const { client, close } = await inMemoryClient(runtime, scopes === null ? () => ANONYMOUS : callerWith(scopes));
      const listing = structured(await client.callTool({ name: 'list_capabilities', arguments: {} }));
      expect(listing['success']).toBe(true);
      expect(ids(listing)).toEqual(visible);
      await close();
    });
  }

  it('answers entries with exactly the contract fields', async () => {
    const { client, close } = await inMemoryClient(runtime, callerWith(['reports:read']));
    const listing = structured(await client.callTool({ name: 'list_capabilities' }));
    const entry = (listing['capabilities'] as Record<string, unknown>[]).find((item) => item['id'] === 'work-reporting');
    expect(entry).toEqual({
      id: 'work-reporting',
      name: 'Capability work-reporting',
      description: 'Does work-reporting.',
      whenToUse: ['when work-reporting is needed'],
      protocolTool: 'get_capability_protocol',
      protocolInput: { capabilityId: 'work-reporting' },
      protocolVersion: '1.0.0',
    });
    expect(listing['catalogVersion']).toMatch(/^sha256:[0-9a-f]{64}$/);
    await close();
  });

  it('gives callers who see the same catalog the same catalogVersion, and others a different one', async () => {
    const version = async (scopes: string[]): Promise<unknown> => {
      const { client, close } = await inMemoryClient(runtime, callerWith(scopes));
      const listing = structured(await client.callTool({ name: 'list_capabilities' }));
      await close();
      return listing['catalogVersion'];
    };
    const reportsRead = await version(['reports:read']);
    expect(await version(['reports:write', 'unrelated:admin'])).toBe(reportsRead);
    expect(await version([])).not.toBe(reportsRead);
    expect(await version(['calendar:read'])).not.toBe(reportsRead);
  });

  it('has a strict empty input schema and rejects any argument', async () => {
    const { client, close } = await inMemoryClient(runtime);
    const tools = await client.listTools();
    const list = tools.tools.find((tool) => tool.name === 'list_capabilities');
    expect(list?.inputSchema).toMatchObject({ type: 'object', properties: {}, additionalProperties: false });
    expect(list?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    // Clients get the full entry schema even though the server skips re-validating its own entries.
    expect(list?.outputSchema).toMatchObject({
      properties: {
        capabilities: {
          type: 'array',
          items: {
            type: 'object',
            required: ['id', 'name', 'description', 'whenToUse', 'protocolTool', 'protocolInput', 'protocolVersion'],
            properties: { protocolInput: { type: 'object', properties: { capabilityId: { type: 'string' } } } },
          },
        },
      },
    });
    const result = (await client.callTool({ name: 'list_capabilities', arguments: { scope: 'admin' } })) as CallToolResult;
    expect(result.isError).toBe(true);
    await close();
  });
});

describe('get_capability_protocol', () => {
  it('returns the protocol of a visible capability', async () => {
    const { client, close } = await inMemoryClient(runtime, callerWith(['reports:read']));
    const answer = structured(await client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'work-reporting' } }));
    expect(answer).toMatchObject({ success: true, capabilityId: 'work-reporting', protocolVersion: '1.0.0', updatedAt: '2025-01-01T00:00:00.000Z' });
    expect(answer['protocol']).toContain('# work-reporting');
    await close();
  });

  it('answers an unknown id and a forbidden id with the same bytes', async () => {
    const { client, close } = await inMemoryClient(runtime, callerWith(['calendar:read']));
    const missing = (await client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'no-such-thing' } })) as CallToolResult;
    const forbidden = (await client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'work-reporting' } })) as CallToolResult;
    expect(missing.isError).toBe(true);
    expect(forbidden.isError).toBe(true);
    expect(JSON.stringify(missing)).toBe(JSON.stringify(forbidden));
    expect(missing.content).toEqual([{ type: 'text', text: UNIFORM }]);
    expect(missing.structuredContent).toEqual(JSON.parse(UNIFORM));
    await close();
  });

  const hostile: { label: string; value: unknown }[] = [
    { label: 'a number', value: 42 },
    { label: 'null', value: null },
    { label: 'an object', value: { id: 'open-help' } },
    { label: 'an array', value: ['open-help'] },
    { label: 'a 1 MB string', value: 'a'.repeat(1024 * 1024) },
    { label: 'a path', value: '../x' },
    { label: 'a deeper path', value: '../../work-reporting/PROTOCOL.md' },
    { label: '__proto__', value: '__proto__' },
    { label: 'constructor', value: 'constructor' },
    { label: 'toString', value: 'toString' },
    { label: 'an empty string', value: '' },
    { label: 'an id with a NUL byte', value: 'work-reporting\u0000' },
    { label: 'an upper-case id', value: 'OPEN-HELP' },
  ];
  for (const { label, value } of hostile) {
    it(`answers ${label} with the uniform error or a schema error that reveals nothing`, async () => {
      const { client, close } = await inMemoryClient(runtime, callerWith(['calendar:read']));
      const result = (await client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: value } })) as CallToolResult;
      expect(result.isError).toBe(true);
      const text = JSON.stringify(result);
      if (typeof value === 'string') {
        expect(result.content).toEqual([{ type: 'text', text: UNIFORM }]);
      } else {
        expect(text).toMatch(/Input validation error/);
      }
      for (const secret of ['work-reporting', 'personal-automation', 'calendar-digest', 'open-help', 'reports', 'Do not skip']) {
        expect(text).not.toContain(secret);
      }
      await close();
    });
  }

  it('refuses an argument bomb before validating it', async () => {
    const { client, close } = await inMemoryClient(runtime);
    const bomb = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]));
    const result = (await client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'open-help', ...bomb } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result)).toMatch(/maximum of 1024 elements/);
    await close();
  });

  it('rejects extra arguments and a missing capabilityId with a schema error', async () => {
    const { client, close } = await inMemoryClient(runtime);
    for (const args of [{}, { capabilityId: 'open-help', as: 'bob' }]) {
      const result = (await client.callTool({ name: 'get_capability_protocol', arguments: args })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result)).not.toContain('Do not skip');
    }
    await close();
  });
});

describe('get_current_user', () => {
  it('reports an unauthenticated session', async () => {
    const { client, close } = await inMemoryClient(runtime);
    const user = structured(await client.callTool({ name: 'get_current_user' }));
    expect(user).toMatchObject({ success: true, authenticated: false, id: null, name: null, scopes: [] });
    await close();
  });

  it('reports id, name and scopes from the credentials', async () => {
    const { client, close } = await inMemoryClient(runtime, () => authenticatedCaller('bob', 'Bob B.', ['reports:write'], 'api-key'));
    const user = structured(await client.callTool({ name: 'get_current_user' }));
    expect(user).toEqual({ success: true, authenticated: true, id: 'bob', name: 'Bob B.', scopes: ['reports:write'], authMethod: 'api-key' });
    await close();
  });
});

describe('--tool-prefix', () => {
  it('prefixes every tool, the protocolTool of entries, and the load instruction inside protocols', async () => {
    const { client, close } = await inMemoryClient(prefixed);
    const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
    expect(names).toEqual(['yi_find_capabilities', 'yi_get_capability_protocol', 'yi_get_current_user', 'yi_list_capabilities']);
    const listing = structured(await client.callTool({ name: 'yi_list_capabilities' }));
    for (const entry of listing['capabilities'] as { protocolTool: string }[]) expect(entry.protocolTool).toBe('yi_get_capability_protocol');
    const linked = structured(await client.callTool({ name: 'yi_get_capability_protocol', arguments: { capabilityId: 'linked' } }));
    expect(linked['protocol']).toContain('call `yi_get_capability_protocol` with');
    expect(linked['protocol']).not.toContain('call `get_capability_protocol` with');
    await close();
  });

  it('leaves protocols alone without a prefix', async () => {
    const { client, close } = await inMemoryClient(runtime);
    const linked = structured(await client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'linked' } }));
    expect(linked['protocol']).toContain('call `get_capability_protocol` with');
    await close();
  });
});

describe('capability resources', () => {
  it('lists and reads only the protocols the caller may use', async () => {
    const { client, close } = await inMemoryClient(runtime, callerWith(['reports:read']));
    const resources = await client.listResources();
    expect(resources.resources.map((resource) => resource.uri).sort()).toEqual([
      'capability://linked',
      'capability://open-help',
      'capability://work-reporting',
    ]);
    const read = await client.readResource({ uri: 'capability://work-reporting' });
    expect(read.contents[0]).toMatchObject({ uri: 'capability://work-reporting', mimeType: 'text/markdown' });
    expect((read.contents[0] as { text: string }).text).toContain('# work-reporting');

    const errors: string[] = [];
    for (const uri of ['capability://personal-automation', 'capability://nothing-here']) {
      await client.readResource({ uri }).then(
        () => errors.push('no error'),
        (error: Error) => errors.push(error.message),
      );
    }
    expect(errors[0]).toContain('capability not found or not accessible');
    expect(errors[0]).toBe(errors[1]);
    await close();
  });
});

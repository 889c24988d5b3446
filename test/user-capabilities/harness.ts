// A real runtime (manifest and principals files, a real user store) and SDK clients that act as a
// principal, for the user-capability tests. Each backend (SQLite, PostgreSQL) supplies the store.
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { principalCaller } from '../../server/auth/api-key.js';
import { createServer } from '../../server/create-server.js';
import { ANONYMOUS, type Caller } from '../../server/identity.js';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import type { UserCapabilityStore } from '../../server/user-store/store.js';
import {
  STANDARD_CAPABILITIES,
  makeManifest,
  principalsYaml,
  structured,
  tempDir,
  writeAtomic,
  writeManifest,
  type CapabilitySpec,
  type PrincipalSpec,
} from '../server/helpers.js';

/** One empty database per test; any number of stores (replicas) can be opened on it. */
export interface UserStoreBackend {
  open(options?: { maxPerOwner?: number }): Promise<UserCapabilityStore>;
  /** A store whose database cannot be reached. */
  openUnreachable(log: (line: string) => void): Promise<UserCapabilityStore>;
  dispose(): Promise<void>;
}

export const USER_SCOPE = 'user-capabilities:write';

export const PRINCIPALS: PrincipalSpec[] = [
  { id: 'alice', key: 'key-alice', scopes: ['reports:read', 'calendar:read', USER_SCOPE] },
  { id: 'bob', key: 'key-bob', scopes: ['reports:read', 'calendar:read', 'automation:read', USER_SCOPE] },
  { id: 'carol', key: 'key-carol', scopes: ['reports:read', 'calendar:read'] },
];

export const WEEKLY_DIGEST = `---
name: Weekly digest
description: Sends my weekly report with the calendar digest.
whenToUse:
  - send my weekly digest
uses: [work-reporting, calendar-digest, open-help]
toolBindings:
  - step: report
    capability: work-reporting
    tools: [submit_report]
---

1. Load [the calendar digest](capability:calendar-digest) and collect this week's events.
2. Load [reporting](capability:work-reporting) and submit the report.

Never submit a report without showing it to me first.
`;

export interface Session {
  client: Client;
  call(tool: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** The structured answer, with the text block checked to carry the same JSON. */
  json(tool: string, args?: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** The text block, byte for byte. */
  text(tool: string, args?: Record<string, unknown>): Promise<string>;
  close(this: void): Promise<void>;
}

export interface Harness {
  dir: string;
  runtime: Runtime;
  /** A session as the principal holding `key` at each call (like stdio: re-resolved every time). */
  session(key?: string): Promise<Session>;
  /** Rewrite the manifest and activate it, as a watched reload does. */
  reloadManifest(specs: CapabilitySpec[]): Promise<void>;
  reloadPrincipals(principals: PrincipalSpec[]): Promise<void>;
  close(): Promise<void>;
}

export async function startHarness(
  openStore: () => Promise<UserCapabilityStore>,
  options: { toolPrefix?: string; log?: (line: string) => void } = {},
): Promise<Harness> {
  const dir = tempDir('capreg-user-caps-');
  const manifestFile = path.join(dir, 'manifest.json');
  const principalsFile = path.join(dir, 'principals.yaml');
  writeManifest(manifestFile, makeManifest(STANDARD_CAPABILITIES));
  writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
  const runtime = await startRuntime({
    manifestFile,
    principalsFile,
    watch: false,
    openUserStore: openStore,
    ...(options.log ? { log: options.log } : {}),
    ...(options.toolPrefix !== undefined ? { toolPrefix: options.toolPrefix } : {}),
  });
  const sessions: Session[] = [];

  return {
    dir,
    runtime,
    async session(key) {
      const caller = (): Caller => {
        const principal = key === undefined ? undefined : runtime.lastPrincipals().findByKey(key);
        return principal ? principalCaller(principal) : ANONYMOUS;
      };
      const session = await connect(runtime, caller);
      sessions.push(session);
      return session;
    },
    async reloadManifest(specs) {
      writeManifest(manifestFile, makeManifest(specs));
      if ((await runtime.manifests.reload()) !== 'activated') throw new Error(`manifest not activated: ${runtime.manifests.lastReloadError}`);
    },
    async reloadPrincipals(principals) {
      writeAtomic(principalsFile, principalsYaml(principals));
      if ((await runtime.principalsStore!.reload()) !== 'activated') throw new Error('principals not activated');
    },
    async close() {
      await Promise.all(sessions.map((session) => session.close()));
      await runtime.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function connect(runtime: Runtime, caller: () => Caller): Promise<Session> {
  const { server, cleanup } = createServer({ catalog: runtime.catalog, caller, names: runtime.names, userCapabilities: runtime.userCapabilities });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: 'capreg-test', version: '1.0.0' });
  await client.connect(clientTransport);
  return clientSession(client, async () => {
    await client.close();
    await cleanup();
  });
}

export function clientSession(client: Client, close: () => Promise<void>): Session {
  const call = async (tool: string, args: Record<string, unknown> = {}): Promise<CallToolResult> =>
    (await client.callTool({ name: tool, arguments: args })) as CallToolResult;
  return {
    client,
    call,
    json: async (tool, args) => structured(await call(tool, args)),
    text: async (tool, args) => {
      const block = (await call(tool, args)).content[0];
      if (block?.type !== 'text') throw new Error('no text block');
      return block.text;
    },
    close,
  };
}

export const UNIFORM_ERROR_TEXT = '{"success":false,"error":"capability not found or not accessible"}';

export interface ListedEntry {
  id: string;
  name: string;
  protocolVersion: string;
  protocolTool: string;
  protocolInput: { capabilityId: string };
  isUserDefined?: boolean;
}

export function entries(listing: Record<string, unknown>): ListedEntry[] {
  return listing['capabilities'] as ListedEntry[];
}

export function userEntries(listing: Record<string, unknown>): ListedEntry[] {
  return entries(listing).filter((entry) => entry.isUserDefined === true);
}

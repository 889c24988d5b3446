// Fixtures for the server tests: valid manifests (real revision, digests and integrity), principals
// files with real key hashes, temp dirs, atomic writes, and SDK clients over each transport.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { SignJWT, type CryptoKey } from 'jose';
import { digestOf } from '../../compiler/canonical.js';
import { manifestIntegrity, serializeManifest } from '../../compiler/manifest.js';
import type { Manifest, ManifestCapability, Toolsets } from '../../compiler/types.js';
import { createServer } from '../../server/create-server.js';
import { ANONYMOUS, authenticatedCaller, type Caller } from '../../server/identity.js';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { startHttpServer, type HttpOptions, type HttpServerHandle } from '../../server/transports/http.js';

export interface CapabilitySpec {
  id: string;
  requiredToolsets?: string[];
  protocol?: string;
  protocolVersion?: string;
  description?: string;
}

export const TOOLSETS: Toolsets = {
  reports: { description: 'Work reports', tools: { submit_report: { action: 'write', description: 'Submit a report' } } },
  automation: { description: 'Automations', tools: { run_automation: { action: 'admin', description: 'Run an automation' } } },
  calendar: { description: 'Calendar', tools: { list_events: { action: 'read', description: 'List events' } } },
};

export function makeCapability(spec: CapabilitySpec, marker = ''): ManifestCapability {
  const protocolVersion = spec.protocolVersion ?? '1.0.0';
  const protocol =
    spec.protocol ?? `---\nprotocol_version: ${protocolVersion}\nprotocol_updated: 2025-01-01\n---\n# ${spec.id}\n\nDo not skip steps. ${marker}\n`;
  const base = {
    id: spec.id,
    name: `Capability ${spec.id}`,
    description: spec.description ?? `Does ${spec.id}. ${marker}`.trim(),
    whenToUse: [`when ${spec.id} is needed`],
    requiredToolsets: spec.requiredToolsets ?? [],
    optionalToolsets: [],
    protocolVersion,
    protocolUpdated: '2025-01-01',
    references: [],
    protocol,
  };
  return { ...base, digest: digestOf(base) };
}

export function makeManifest(specs: CapabilitySpec[], options: { marker?: string; toolsets?: Toolsets } = {}): Manifest {
  const capabilities = specs.map((spec) => makeCapability(spec, options.marker ?? '')).sort((a, b) => (a.id < b.id ? -1 : 1));
  const toolsets = options.toolsets ?? TOOLSETS;
  const body = {
    schemaVersion: 1,
    generator: 'capreg-test',
    revision: digestOf({ capabilities, toolsets }),
    source: null,
    toolsets,
    capabilities,
  };
  return { ...body, integrity: manifestIntegrity(body) };
}

export const STANDARD_CAPABILITIES: CapabilitySpec[] = [
  { id: 'open-help', requiredToolsets: [] },
  { id: 'work-reporting', requiredToolsets: ['reports'] },
  { id: 'personal-automation', requiredToolsets: ['automation', 'calendar'] },
  { id: 'calendar-digest', requiredToolsets: ['calendar'] },
];

export function tempDir(label = 'capreg-server-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), label));
}

/** Write like `capreg build` does: a temporary file, then a rename over the target. */
export function writeAtomic(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  fs.writeFileSync(temporary, text);
  fs.renameSync(temporary, file);
}

export function writeManifest(file: string, manifest: Manifest): void {
  writeAtomic(file, serializeManifest(manifest));
}

/** A runtime over STANDARD_CAPABILITIES and PRINCIPALS, files in a temp dir of their own, and an HTTP server for it on a free port. */
export interface StandardServer {
  dir: string;
  runtime: Runtime;
  http: HttpServerHandle;
  close(): Promise<void>;
}

export async function startStandardServer(options: HttpOptions = {}): Promise<StandardServer> {
  const dir = tempDir();
  const manifestFile = path.join(dir, 'manifest.json');
  const principalsFile = path.join(dir, 'principals.yaml');
  writeManifest(manifestFile, makeManifest(STANDARD_CAPABILITIES));
  writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
  const runtime = await startRuntime({ manifestFile, principalsFile, watch: false });
  const http = await startHttpServer(runtime, { port: 0, ...options });
  return {
    dir,
    runtime,
    http,
    async close() {
      await http.close();
      await runtime.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export interface PrincipalSpec {
  id: string;
  key: string;
  scopes: string[];
  name?: string;
}

export function principalsYaml(principals: PrincipalSpec[]): string {
  const lines = ['principals:'];
  for (const principal of principals) {
    lines.push(`  - id: ${JSON.stringify(principal.id)}`);
    lines.push(`    name: ${JSON.stringify(principal.name ?? principal.id)}`);
    lines.push(`    keySha256: ${sha256Hex(principal.key)}`);
    lines.push(`    scopes: ${JSON.stringify(principal.scopes)}`);
  }
  return `${lines.join('\n')}\n`;
}

export const PRINCIPALS: PrincipalSpec[] = [
  { id: 'alice', key: 'key-alice-reports', scopes: ['reports:read'] },
  { id: 'bob', key: 'key-bob-all', scopes: ['reports:write', 'automation:admin', 'calendar:read'] },
  { id: 'carol', key: 'key-carol-calendar', scopes: ['calendar:read', 'automation:read'] },
];

/** The `structuredContent` of a tool result, with the text block checked to carry the same JSON. */
export function structured(result: unknown): Record<string, unknown> {
  const call = result as CallToolResult;
  const text = call.content?.[0];
  if (!text || text.type !== 'text') throw new Error(`tool result has no text block: ${JSON.stringify(result)}`);
  if (call.structuredContent === undefined) throw new Error(`tool result has no structuredContent: ${JSON.stringify(result)}`);
  if (JSON.stringify(JSON.parse(text.text)) !== JSON.stringify(call.structuredContent)) {
    throw new Error('text block and structuredContent differ');
  }
  return call.structuredContent;
}

/** A client talking to an in-process server over linked in-memory transports. */
export async function inMemoryClient(runtime: Runtime, caller: () => Caller = () => ANONYMOUS): Promise<{ client: Client; close: () => Promise<void> }> {
  const { server, cleanup } = createServer({ catalog: runtime.catalog, caller, names: runtime.names });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: 'capreg-test', version: '1.0.0' });
  await client.connect(clientTransport);
  return {
    client,
    close: async () => {
      await client.close();
      await cleanup();
    },
  };
}

/** `initialize` as a raw JSON-RPC request. */
export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'raw', version: '1' },
  },
} as const;

export interface RawSession {
  /** Sends a request (`params` left out when undefined) and resolves with the answer exactly as sent. */
  ask: (method: string, params?: unknown) => Promise<JSONRPCMessage>;
  close: () => Promise<void>;
}

/** A raw JSON-RPC session, already initialized, with an in-process server over the in-memory transport. */
export async function rawSession(runtime: Runtime, scopes: string[]): Promise<RawSession> {
  const caller = authenticatedCaller('tester', 'Tester', scopes, 'api-key');
  const { server, cleanup } = createServer({
    catalog: runtime.catalog,
    caller: () => caller,
    names: runtime.names,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const waiting = new Map<number, (message: JSONRPCMessage) => void>();
  clientSide.onmessage = (message) => {
    const id = (message as { id?: number }).id;
    if (id !== undefined) waiting.get(id)?.(message);
  };
  await server.connect(serverSide);
  await clientSide.start();
  let next = 0;
  const ask = (method: string, params?: unknown): Promise<JSONRPCMessage> => {
    const id = next++;
    const answer = new Promise<JSONRPCMessage>((resolve) => waiting.set(id, resolve));
    void clientSide.send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) } as JSONRPCMessage);
    return answer;
  };
  await ask(INITIALIZE.method, INITIALIZE.params);
  return { ask, close: cleanup };
}

export async function httpClient(baseUrl: string, token?: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
    requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : {},
  });
  const client = new Client({ name: 'capreg-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** Poll until `check` passes or the time is up (for file-watcher driven changes). */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 5_000, intervalMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw lastError;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export function ids(listing: Record<string, unknown>): string[] {
  return (listing['capabilities'] as { id: string }[]).map((entry) => entry.id);
}

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

/** argv (after `node`) that runs the real, compiled `capreg serve`. */
export function serveArgv(args: string[]): string[] {
  return [path.join(REPO, 'bin/capreg.js'), 'serve', ...args];
}

/** An ES256 JWT for `sub` with `scopes`, valid for 5 minutes. */
export function signedJwt(privateKey: CryptoKey, claims: { sub: string; scopes: readonly string[]; issuer: string; audience: string }): Promise<string> {
  return new SignJWT({ sub: claims.sub, scope: claims.scopes.join(' ') })
    .setProtectedHeader({ alg: 'ES256' })
    .setIssuer(claims.issuer)
    .setAudience(claims.audience)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(privateKey);
}

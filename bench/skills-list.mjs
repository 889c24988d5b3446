#!/usr/bin/env node
// skills/list (MCP Skills extension, every page) next to list_capabilities, for a caller who sees
// 1,000 capabilities, through the SDK Client: over Streamable HTTP on loopback (the deployed path:
// JSON on the wire, a fresh MCP server per request), or in memory (objects passed as they are,
// so only the server's own work is measured).
//
//   npm run build:ts && node bench/skills-list.mjs [--transport http|memory] [--capabilities 1000]
//        [--calls 200] [--rounds 7]
//
// Both calls run against one runtime and one caller, interleaved in rounds; each round's figure is
// the mean latency per call, and the median over the rounds is printed for each, with the ratio.
// The first call of each (which renders the listing for this caller class) is printed apart.
import { setMaxListeners } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createHash } from 'node:crypto';
import * as z from 'zod';

// The HTTP client adds an abort listener per request on one long-lived signal: not a leak here.
setMaxListeners(0);

const lib = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../lib');
const { digestOf } = await import(path.join(lib, 'compiler/canonical.js'));
const { manifestIntegrity, serializeManifest } = await import(path.join(lib, 'compiler/manifest.js'));
const { createServer } = await import(path.join(lib, 'server/create-server.js'));
const { startRuntime } = await import(path.join(lib, 'server/runtime.js'));
const { authenticatedCaller } = await import(path.join(lib, 'server/identity.js'));
const { startHttpServer } = await import(path.join(lib, 'server/transports/http.js'));

const { values } = parseArgs({
  options: {
    transport: { type: 'string', default: 'http' },
    capabilities: { type: 'string', default: '1000' },
    calls: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '7' },
  },
});
const count = Number(values.capabilities);
const calls = Number(values.calls);
const rounds = Number(values.rounds);

function capability(index) {
  const id = `capability-${String(index).padStart(5, '0')}`;
  const steps = Array.from({ length: 30 }, (_, step) => `${step + 1}. Do step ${step + 1} of ${id} and check its result before going on.`).join('\n');
  const base = {
    id,
    name: `Capability ${index}`,
    description: `Handles the ${index}th kind of request end to end, with the checks the organization asks for.`,
    whenToUse: [`when request ${index} comes in`, `handle ${id}`],
    requiredToolsets: ['reports'],
    optionalToolsets: [],
    protocolVersion: '1.0.0',
    protocolUpdated: '2025-01-01',
    references: [],
    tags: ['bench'],
    protocol: `---\nprotocol_version: 1.0.0\nprotocol_updated: 2025-01-01\n---\n\n# ${id}\n\n${steps}\n`,
  };
  return { ...base, digest: digestOf(base) };
}

const toolsets = { reports: { description: 'Reports', tools: { submit_report: { action: 'write', description: 'Submit a report' } } } };
const capabilities = Array.from({ length: count }, (_, index) => capability(index));
const body = { schemaVersion: 1, generator: 'bench', revision: digestOf({ capabilities, toolsets }), source: null, toolsets, capabilities };
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capreg-bench-skills-'));
const manifestFile = path.join(dir, 'manifest.json');
fs.writeFileSync(manifestFile, serializeManifest({ ...body, integrity: manifestIntegrity(body) }));

const KEY = 'bench-key';
const principalsFile = path.join(dir, 'principals.yaml');
fs.writeFileSync(
  principalsFile,
  `principals:\n  - id: bench\n    name: Bench\n    keySha256: ${createHash('sha256').update(KEY).digest('hex')}\n    scopes: ["reports:read"]\n`,
);
const runtime = await startRuntime({ manifestFile, principalsFile, watch: false });
const client = new Client({ name: 'bench', version: '1.0.0' });
let stop;
if (values.transport === 'memory') {
  const caller = authenticatedCaller('bench', 'Bench', ['reports:read'], 'api-key');
  const { server, cleanup } = createServer({ catalog: () => runtime.catalog(), caller: () => caller, names: runtime.names });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  await client.connect(clientTransport);
  stop = cleanup;
} else {
  const http = await startHttpServer(runtime, { port: 0 });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${KEY}` } } }));
  stop = () => http.close();
}

const pageSchema = z.object({ skills: z.array(z.unknown()), nextCursor: z.string().optional() }).passthrough();

async function skillsList() {
  let listed = 0;
  let cursor;
  do {
    const page = await client.request({ method: 'skills/list', params: cursor === undefined ? {} : { cursor } }, pageSchema);
    listed += page.skills.length;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  if (listed !== count) throw new Error(`skills/list gave ${listed} skills, expected ${count}`);
}

async function listCapabilities() {
  const result = await client.callTool({ name: runtime.names.listCapabilities, arguments: {} });
  if (result.isError) throw new Error('list_capabilities failed');
}

async function timed(call) {
  const start = process.hrtime.bigint();
  await call();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** JSON bytes of one full listing by each method, to put the latencies in proportion. */
async function answerBytes() {
  let skills = 0;
  let cursor;
  do {
    const page = await client.request({ method: 'skills/list', params: cursor === undefined ? {} : { cursor } }, pageSchema);
    skills += Buffer.byteLength(JSON.stringify(page));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  const listed = await client.callTool({ name: runtime.names.listCapabilities, arguments: {} });
  return { skills, list: Buffer.byteLength(JSON.stringify(listed)), complete: listed.structuredContent?.complete !== false };
}

const firstSkills = await timed(skillsList);
const firstList = await timed(listCapabilities);
const perRound = { skills: [], list: [] };
for (let round = 0; round < rounds; round += 1) {
  for (const [key, call] of round % 2 === 0
    ? [
        ['skills', skillsList],
        ['list', listCapabilities],
      ]
    : [
        ['list', listCapabilities],
        ['skills', skillsList],
      ]) {
    let total = 0;
    for (let i = 0; i < calls; i += 1) total += await timed(call);
    perRound[key].push(total / calls);
  }
}
const bytes = await answerBytes();
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const skills = median(perRound.skills);
const list = median(perRound.list);
const pages = Math.ceil(count / 200);
console.log(
  `${values.transport}: caller sees ${count} capabilities; ${rounds} rounds x ${calls} calls each; node ${process.version}, ${os.cpus().length} cpus`,
);
console.log(`first call (renders this caller class): skills/list (${pages} pages) ${firstSkills.toFixed(1)} ms, list_capabilities ${firstList.toFixed(1)} ms`);
console.log(`skills/list, all ${pages} pages:  ${skills.toFixed(2)} ms per full listing (median of round means)`);
console.log(`list_capabilities (baseline):     ${list.toFixed(2)} ms per call`);
console.log(
  `answer size: skills/list ${(bytes.skills / 1024).toFixed(0)} KiB in all pages, list_capabilities ${(bytes.list / 1024).toFixed(0)} KiB (${bytes.complete ? 'full listing' : 'compact form, complete: false'})`,
);
console.log(`ratio skills/list / list_capabilities: ${(skills / list).toFixed(2)}x`);

await client.close();
await stop();
await runtime.close();
fs.rmSync(dir, { recursive: true, force: true });

#!/usr/bin/env node
// Server throughput, reload latency and heap, against a 1,000-capability manifest.
//
//   npm run build:ts && node --expose-gc bench/server-throughput.mjs [--requests N] [--seconds S] [--rounds R] [--concurrency C]
//
// Runs each server in its own child process (the load generator gets the other core): capreg's
// HTTP server, and a bare SDK stateless server with one trivial tool (same SDK, same per-request
// McpServer + StreamableHTTPServerTransport, shared validator). Both answer JSON-RPC `tools/call`
// over loopback HTTP with keep-alive at the same concurrency. Imports compiled code from lib/.
import { fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { httpLoad, toolCall } from './http-load.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const lib = path.resolve(here, '../lib');

const { values } = parseArgs({
  options: {
    role: { type: 'string' },
    manifest: { type: 'string' },
    principals: { type: 'string' },
    requests: { type: 'string', default: '20000' },
    seconds: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '16' },
    capabilities: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
  },
});

if (values.role) await runServer(values.role);
else await main();

// ---------------------------------------------------------------------------------------------
// Fixtures

async function buildManifest(count, marker) {
  const { digestOf } = await import(`${lib}/compiler/canonical.js`);
  const { manifestIntegrity, serializeManifest } = await import(`${lib}/compiler/manifest.js`);
  const toolsets = {};
  for (let t = 0; t < 10; t += 1) {
    toolsets[`toolset-${t}`] = {
      description: `Toolset ${t}`,
      tools: { [`tool_${t}_read`]: { action: 'read', description: 'Read things.' }, [`tool_${t}_write`]: { action: 'write', description: 'Write things.' } },
    };
  }
  const paragraph =
    'Follow each step in order and record what you did. Do not skip the verification step, and never report success before the tool confirms it. ';
  const capabilities = [];
  for (let i = 0; i < count; i += 1) {
    const id = `capability-${String(i).padStart(4, '0')}`;
    // About a tenth need no toolset; the rest need one or two of the ten toolsets.
    const required = i % 10 === 0 ? [] : i % 3 === 0 ? [`toolset-${i % 10}`, `toolset-${(i + 1) % 10}`] : [`toolset-${i % 10}`];
    const protocol =
      `---\nprotocol_version: 1.2.${i % 7}\nprotocol_updated: 2025-06-01\n---\n\n# ${id}\n\n${marker}\n\n` +
      `## Steps\n\n${Array.from({ length: 6 }, (_, s) => `${s + 1}. ${paragraph}`).join('\n')}\n\n` +
      `## Rules\n\n- Never call tools outside your toolsets.\n- Do not guess ids; load \`capability-0000\` (a separate capability: call \`get_capability_protocol\` with \`{"capabilityId": "capability-0000"}\` to load its protocol from the catalog).\n`;
    const base = {
      id,
      name: `Capability ${i}`,
      description: `Handles the ${id} workflow end to end, from intake to a verified result.`,
      whenToUse: [`when the user asks about ${id}`, `to run the ${id} workflow`],
      requiredToolsets: required,
      optionalToolsets: [],
      protocolVersion: `1.2.${i % 7}`,
      protocolUpdated: '2025-06-01',
      references: i === 0 ? [] : ['capability-0000'],
      protocol,
    };
    capabilities.push({ ...base, digest: digestOf(base) });
  }
  const body = { schemaVersion: 1, generator: 'bench', revision: digestOf({ capabilities, toolsets, marker }), source: null, toolsets, capabilities };
  const manifest = { ...body, integrity: manifestIntegrity(body) };
  return { manifest, text: serializeManifest(manifest) };
}

function sha256(text) {
  return createHash('sha256').update(text).digest('hex');
}

// ---------------------------------------------------------------------------------------------
// Servers (child processes)

async function runServer(role) {
  const gc = globalThis.gc ?? (() => {});
  const heap = () => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { AjvJsonSchemaValidator } = await import('@modelcontextprotocol/sdk/validation/ajv-provider.js');
  const { startRuntime } = await import(`${lib}/server/runtime.js`);
  const { startHttpServer } = await import(`${lib}/server/transports/http.js`);

  if (role === 'bare') {
    const validator = new AjvJsonSchemaValidator();
    const server = http.createServer(async (req, res) => {
      const mcp = new McpServer({ name: 'bare', version: '1.0.0' }, { jsonSchemaValidator: validator });
      mcp.registerTool('ping', { description: 'Trivial tool' }, () => ({ content: [{ type: 'text', text: 'pong' }] }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      // Parsed body handed in, as with express.json() in the SDK's examples (capreg does the same).
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      await mcp.connect(transport);
      await transport.handleRequest(req, res, JSON.parse(Buffer.concat(chunks).toString('utf8')));
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    process.send({ url: `http://127.0.0.1:${server.address().port}` });
    return;
  }

  // Started on a one-capability manifest; the parent asks for the heap before and after it swaps
  // in the large one, so the difference is what the manifest costs (not the SDK, Ajv or sockets).
  const runtime = await startRuntime({ manifestFile: values.manifest, principalsFile: values.principals, log: () => {} });
  const server = await startHttpServer(runtime, { port: 0 });
  process.on('message', (message) => {
    if (message === 'heap') process.send({ heap: heap() });
  });
  process.send({ url: server.url });
}

function startChild(role, extra = []) {
  const child = fork(fileURLToPath(import.meta.url), ['--role', role, ...extra], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const first = new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`${role} server exited with ${code}`)));
  });
  return { child, ready: first };
}

function ask(child, message) {
  return new Promise((resolve) => {
    child.once('message', resolve);
    child.send(message);
  });
}

// ---------------------------------------------------------------------------------------------
// Load

// ---------------------------------------------------------------------------------------------

async function main() {
  const requests = Number(values.requests);
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const count = Number(values.capabilities);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capreg-bench-'));
  const manifestFile = path.join(dir, 'manifest.json');
  const principalsFile = path.join(dir, 'principals.yaml');
  const { manifest, text } = await buildManifest(count, 'generation 0');
  const tiny = await buildManifest(1, 'tiny');
  fs.writeFileSync(manifestFile, tiny.text);
  const allScopes = Object.keys(manifest.toolsets).map((t) => `${t}:read`);
  fs.writeFileSync(
    principalsFile,
    [
      'principals:',
      `  - {id: everyone, name: Sees all, keySha256: ${sha256('bench-all')}, scopes: [${allScopes.join(', ')}]}`,
      `  - {id: narrow, name: Sees one toolset, keySha256: ${sha256('bench-narrow')}, scopes: [toolset-1:read]}`,
      '',
    ].join('\n'),
  );
  const visibleNarrow = manifest.capabilities.filter((c) => c.requiredToolsets.every((t) => t === 'toolset-1')).length;

  console.log(`capreg server benchmark — Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'})`);
  console.log(
    `manifest: ${count} capabilities, ${(text.length / 1024 / 1024).toFixed(2)} MiB; concurrency ${concurrency}; at most ${requests} requests or ${seconds} s per run\n`,
  );

  const options = { requests, seconds, concurrency };
  const ok = (text) => text.includes('"result"') && !text.includes('"isError":true');
  const warmed = new Set();
  const run = async (label, url, bodies, headers) => {
    if (!warmed.has(label)) {
      warmed.add(label);
      await httpLoad(url, bodies, headers, { ...options, requests: Math.min(2000, requests), seconds: 2, check: ok }); // warm-up (JIT)
    }
    const result = await httpLoad(url, bodies, headers, { ...options, check: ok });
    console.log(
      `${label.padEnd(52)} ${result.rps.toFixed(0).padStart(6)} req/s  (${result.requests} requests, ${result.failures} failed, ${result.seconds.toFixed(1)} s, answers of ${(result.bytes / 1024).toFixed(1)} KiB)`,
    );
    return result;
  };

  const bare = startChild('bare');
  const { url: bareUrl } = await bare.ready;
  const ours = startChild('ours', ['--manifest', manifestFile, '--principals', principalsFile]);
  const { url: oursUrl } = await ours.ready;
  const waitForRevision = async (revision) => {
    for (;;) {
      const health = await fetch(`${oursUrl}/healthz`).then((r) => r.json());
      if (health.revision === revision) return;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };
  // Warm the server up on the tiny manifest, then measure its heap, then swap in the real one.
  await httpLoad(
    oursUrl,
    [toolCall('list_capabilities', {})],
    { Authorization: 'Bearer bench-all' },
    { requests: 500, seconds: 5, concurrency, check: () => true },
  );
  const heapTiny = (await ask(ours.child, 'heap')).heap;
  fs.writeFileSync(`${manifestFile}.tmp`, text);
  fs.renameSync(`${manifestFile}.tmp`, manifestFile);
  await waitForRevision(manifest.revision);
  const heapAfterLoad = (await ask(ours.child, 'heap')).heap - heapTiny;

  const ids = manifest.capabilities.map((c) => c.id);
  const protocolBodies = Array.from({ length: 200 }, (_, i) => toolCall('get_capability_protocol', { capabilityId: ids[(i * 7) % ids.length] }, i + 1));
  const listBody = [toolCall('list_capabilities', {})];
  const bareBody = [toolCall('ping', {})];
  const all = { Authorization: 'Bearer bench-all' };
  const narrow = { Authorization: 'Bearer bench-narrow' };

  // Interleaved rounds, so that a noisy neighbour slows every scenario alike; the ratio of each
  // round is taken against the bare server's run in the same round, and the median is reported.
  const scenarios = [
    { key: 'bare', label: 'bare SDK server: trivial tool', url: bareUrl, bodies: bareBody, headers: {} },
    { key: 'get', label: 'capreg: get_capability_protocol', url: oursUrl, bodies: protocolBodies, headers: all },
    { key: 'listNarrow', label: `capreg: list_capabilities (caller sees ${visibleNarrow})`, url: oursUrl, bodies: listBody, headers: narrow },
    { key: 'listAll', label: `capreg: list_capabilities (caller sees all ${count})`, url: oursUrl, bodies: listBody, headers: all },
  ];
  const rounds = Number(values.rounds);
  const byKey = Object.fromEntries(scenarios.map((scenario) => [scenario.key, []]));
  for (let round = 1; round <= rounds; round += 1) {
    console.log(`round ${round}/${rounds}`);
    for (const scenario of scenarios) byKey[scenario.key].push(await run(`  ${scenario.label}`, scenario.url, scenario.bodies, scenario.headers));
  }
  const median = (numbers) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)];
  console.log(`\nmedian over ${rounds} rounds (ratio: to the bare server in the same round):`);
  for (const scenario of scenarios) {
    const rps = median(byKey[scenario.key].map((result) => result.rps));
    const ratio = median(byKey[scenario.key].map((result, round) => result.rps / byKey.bare[round].rps));
    console.log(`  ${scenario.label.padEnd(52)} ${rps.toFixed(0).padStart(6)} req/s  ${ratio.toFixed(2)}x`);
  }

  // Reload to serve: time from the atomic rename of a new manifest until /healthz reports it.
  const latencies = [];
  for (let n = 1; n <= 5; n += 1) {
    const next = await buildManifest(count, `generation ${n}`);
    const temporary = `${manifestFile}.tmp`;
    fs.writeFileSync(temporary, next.text);
    const written = performance.now();
    fs.renameSync(temporary, manifestFile);
    await waitForRevision(next.manifest.revision);
    latencies.push(performance.now() - written);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  latencies.sort((a, b) => a - b);
  console.log(`\nreload to serve (5 reloads of the ${count}-capability manifest): median ${latencies[2].toFixed(0)} ms, max ${latencies[4].toFixed(0)} ms`);

  const heapNow = (await ask(ours.child, 'heap')).heap - heapTiny;
  console.log(
    `heap for the loaded manifest: ${(heapAfterLoad / 1024 / 1024).toFixed(2)} MiB after load (${(heapAfterLoad / text.length).toFixed(2)}x the file), ` +
      `${(heapNow / 1024 / 1024).toFixed(2)} MiB after the load runs and 5 reloads, with the listing caches filled (${(heapNow / text.length).toFixed(2)}x)`,
  );

  bare.child.kill();
  ours.child.kill();
  fs.rmSync(dir, { recursive: true, force: true });
}

#!/usr/bin/env node
// Signed manifests, measured: the cost of signature verification when a 1,000-capability manifest
// is loaded (baseline: the same load unsigned, in the same run, interleaved), and poll-to-serve
// time for a manifest URL (a local HTTP server; publish → every poll → served).
//
//   npm run build:ts && node bench/signature.mjs [--capabilities N] [--rounds R] [--publishes P]
//
// Imports compiled code from lib/.
import { createHash } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const lib = path.resolve(here, '../lib');
const { values } = parseArgs({
  options: {
    capabilities: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '15' },
    publishes: { type: 'string', default: '5' },
  },
});

const { digestOf } = await import(`${lib}/compiler/canonical.js`);
const { manifestIntegrity, serializeManifest } = await import(`${lib}/compiler/manifest.js`);
const { toolNames } = await import(`${lib}/compiler/contract.js`);
const { servedManifestFromText } = await import(`${lib}/server/manifest-store.js`);
const { generateSigningKey, parseVerificationKeys, signDetached, verifyDetached } = await import(`${lib}/server/signature.js`);
const { startRuntime } = await import(`${lib}/server/runtime.js`);

/** Protocols of about 1.4 KB each, as in bench/server-throughput.mjs. */
function manifestText(count, marker) {
  const toolsets = { docs: { description: 'Docs', tools: { read_doc: { action: 'read', description: 'Read a doc.' } } } };
  const paragraph =
    'Follow each step in order and record what you did. Do not skip the verification step, and never report success before the tool confirms it. ';
  const capabilities = [];
  for (let i = 0; i < count; i += 1) {
    const id = `capability-${String(i).padStart(4, '0')}`;
    const protocol = `---\nprotocol_version: 1.0.0\nprotocol_updated: 2025-06-01\n---\n\n# ${id}\n\n${marker}\n\n${Array.from({ length: 8 }, (_, s) => `${s + 1}. ${paragraph}`).join('\n')}\n`;
    const base = {
      id,
      name: `Capability ${i}`,
      description: `Handles the ${id} workflow end to end.`,
      whenToUse: [`when the user asks about ${id}`],
      requiredToolsets: i % 2 ? ['docs'] : [],
      optionalToolsets: [],
      protocolVersion: '1.0.0',
      protocolUpdated: '2025-06-01',
      references: [],
      protocol,
    };
    capabilities.push({ ...base, digest: digestOf(base) });
  }
  const body = { schemaVersion: 1, generator: 'bench', revision: digestOf({ capabilities, toolsets, marker }), source: null, toolsets, capabilities };
  return serializeManifest({ ...body, integrity: manifestIntegrity(body) });
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const ms = (value) => `${value.toFixed(1)} ms`;

const count = Number(values.capabilities);
const generated = await generateSigningKey();
const key = { kid: generated.kid, privateJwk: generated.privateJwk };
const keys = parseVerificationKeys([{ label: 'bench', text: JSON.stringify(generated.publicJwks) }]);
const names = toolNames('');
const text = manifestText(count, 'v1');
const bytes = Buffer.from(text, 'utf8');
const signature = await signDetached(bytes, key);

// --- 1. Load: unsigned (parse, integrity, catalog) vs signed (verify over the bytes, then the same).
const unsigned = [];
const signed = [];
const verifyOnly = [];
for (let round = 0; round < Number(values.rounds) + 2; round += 1) {
  let start = performance.now();
  if (!servedManifestFromText(text, names).ok) throw new Error('unsigned load failed');
  const unsignedMs = performance.now() - start;
  start = performance.now();
  const verified = await verifyDetached(Buffer.from(text, 'utf8'), signature, keys);
  const verifyMs = performance.now() - start;
  if (!verified.ok || !servedManifestFromText(text, names).ok) throw new Error('signed load failed');
  const signedMs = performance.now() - start;
  if (round < 2) continue; // warm-up
  unsigned.push(unsignedMs);
  signed.push(signedMs);
  verifyOnly.push(verifyMs);
}
console.log(`manifest: ${count} capabilities, ${(bytes.length / 1024 / 1024).toFixed(2)} MiB; median of ${unsigned.length} rounds`);
console.log(`  load unsigned (baseline)     ${ms(median(unsigned))}`);
console.log(`  load signed (verify + load)  ${ms(median(signed))}`);
console.log(`  of which signature verify    ${ms(median(verifyOnly))}  (+${((median(signed) / median(unsigned) - 1) * 100).toFixed(0)}%)`);

// --- 2. Poll-to-serve: a local HTTP server, --poll-interval 1, publish at random moments.
let published = { manifest: text, signature };
let requestAt = 0;
const etag = (body) => `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
const server = http.createServer((request, response) => {
  const body = request.url === '/manifest.json' ? published.manifest : published.signature;
  const tag = etag(body);
  if (request.headers['if-none-match'] === tag) return response.writeHead(304, { etag: tag }).end();
  if (request.url === '/manifest.json') requestAt = performance.now();
  response.writeHead(200, { etag: tag }).end(body);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/manifest.json`;
const runtime = await startRuntime({ manifestFile: url, manifestSource: { keys, remote: { pollIntervalMs: 1000 } } });
const toServe = [];
const pollWork = [];
for (let i = 0; i < Number(values.publishes); i += 1) {
  await new Promise((resolve) => setTimeout(resolve, Math.random() * 1000));
  const next = manifestText(count, `v${i + 2}`);
  const revision = JSON.parse(next).revision;
  const activated = new Promise((resolve) => {
    const stop = runtime.onChange(() => {
      if (runtime.health().revision === revision) {
        stop();
        resolve(performance.now());
      }
    });
  });
  published = { manifest: next, signature: await signDetached(Buffer.from(next, 'utf8'), key) };
  const at = performance.now();
  const servedAt = await activated;
  toServe.push(servedAt - at);
  pollWork.push(servedAt - requestAt);
}
await runtime.close();
server.close();
console.log(`poll-to-serve, --poll-interval 1, ${toServe.length} publishes at random moments:`);
console.log(`  publish → served   median ${ms(median(toServe))}, max ${ms(Math.max(...toServe))} (bounded by the interval: each wait is 0.9–1.0 s)`);
console.log(`  poll's GET → served (fetch manifest + .sig, verify, parse, swap)   median ${ms(median(pollWork))}, max ${ms(Math.max(...pollWork))}`);

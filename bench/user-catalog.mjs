#!/usr/bin/env node
// list_capabilities for an owner of user-defined capabilities vs the Git-only catalog call, on a
// store holding 10,000 user capabilities across 1,000 owners (SPEC §8; target: within 1.2x).
//
//   npm run build:ts && node bench/user-catalog.mjs [--stores sqlite,postgres] [--capabilities 1000]
//        [--owners 1000] [--per-owner 10] [--seconds 2] [--rounds 7] [--concurrency 16] [--calls 100]
//
// PostgreSQL comes from --postgres URL or CAPREG_TEST_PG_URL (`.ci/postgres.sh` starts one); the
// bench works in a schema of its own and drops it at the end. For each store:
// - HTTP: a capreg server in a child process (the deployed path: a fresh MCP server per request),
//   loaded over loopback at the given concurrency. Scenarios in interleaved rounds: the Git-only
//   call (a caller with the same toolset scopes but no user-capabilities scope, so no store query),
//   the owner's call (the same platform listing plus their 10 user capabilities, one store query),
//   and a server started without any user store. The ratio of each round is Git-only rate / owner
//   rate (how much longer the owner's call takes), and the median over the rounds is reported.
// - stdio: `capreg serve --user-store …` in a child process per caller (CAPREG_API_KEY), the SDK
//   Client calling one at a time (no HTTP, no concurrency: the store query is the largest share it
//   can be), in interleaved blocks; median of the per-block ratios of mean latency.
// Every answer is checked (HTTP 200, a result, no isError; the owner's carries 10 user entries).
import { fork } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const lib = path.resolve(here, '../lib');

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    role: { type: 'string' },
    manifest: { type: 'string' },
    principals: { type: 'string' },
    store: { type: 'string' },
    schema: { type: 'string' },
    stores: { type: 'string', default: 'sqlite,postgres' },
    postgres: { type: 'string' },
    capabilities: { type: 'string', default: '1000' },
    owners: { type: 'string', default: '1000' },
    'per-owner': { type: 'string', default: '10' },
    seconds: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '7' },
    concurrency: { type: 'string', default: '16' },
    calls: { type: 'string', default: '100' },
  },
});

const OWNER = 'owner-0042';
const OWNER_KEY = 'bench-owner';
const GIT_ONLY_KEY = 'bench-git-only';

if (values.role) await runServer(values.role);
else await main();

// ---------------------------------------------------------------------------------------------
// Fixtures

/** The platform manifest of bench/server-throughput.mjs: `count` capabilities over 10 toolsets. */
async function buildManifest(count) {
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
    const required = i % 10 === 0 ? [] : i % 3 === 0 ? [`toolset-${i % 10}`, `toolset-${(i + 1) % 10}`] : [`toolset-${i % 10}`];
    const protocol =
      `---\nprotocol_version: 1.2.${i % 7}\nprotocol_updated: 2025-06-01\n---\n\n# ${id}\n\n` +
      `## Steps\n\n${Array.from({ length: 6 }, (_, s) => `${s + 1}. ${paragraph}${id} step ${s}.`).join('\n')}\n\n` +
      `## Rules\n\n- Never call tools outside your toolsets.\n`;
    const base = {
      id,
      name: `Capability ${i}`,
      description: `Handles the ${id} workflow end to end, from intake to a verified result.`,
      whenToUse: [`when the user asks about ${id}`, `to run the ${id} workflow`],
      requiredToolsets: required,
      optionalToolsets: [],
      protocolVersion: `1.2.${i % 7}`,
      protocolUpdated: '2025-06-01',
      references: [],
      protocol,
    };
    capabilities.push({ ...base, digest: digestOf(base) });
  }
  const body = { schemaVersion: 1, generator: 'bench', revision: digestOf({ capabilities, toolsets }), source: null, toolsets, capabilities };
  const manifest = { ...body, integrity: manifestIntegrity(body) };
  return { manifest, text: serializeManifest(manifest) };
}

/** A user capability drawing on two platform capabilities, compiled like a save would. */
async function userCapabilityData(manifest, index) {
  const { compileUserCapability } = await import(`${lib}/compiler/user/compile-user.js`);
  const markdown = `---
name: My workflow ${index}
description: Runs my weekly routine ${index} across two platform capabilities.
whenToUse:
  - run my weekly routine ${index}
uses: [capability-0000, capability-0001, capability-0002]
toolBindings:
  - step: record
    capability: capability-0001
    tools: [tool_1_write]
---

1. Load [the intake](capability:capability-0000) and collect this week's items.
2. Load [the records](capability:capability-0001) and record each item.
3. Show me the summary.

Never record an item twice.
`;
  const compiled = compileUserCapability(markdown, { capabilities: manifest.capabilities, toolsets: manifest.toolsets });
  if (!compiled.ok) throw new Error(`bench user capability does not compile: ${JSON.stringify(compiled.diagnostics)}`);
  const { name, description, whenToUse, uses, dependencies, toolBindings } = compiled.capability;
  return { markdown, name, description, whenToUse, uses, dependencies, toolBindings };
}

async function openStore(spec, schema) {
  if (spec.startsWith('sqlite:')) {
    const { SqliteUserStore } = await import(`${lib}/server/user-store/sqlite.js`);
    return new SqliteUserStore(spec.slice('sqlite:'.length));
  }
  const { PostgresUserStore } = await import(`${lib}/server/user-store/postgres.js`);
  return new PostgresUserStore(spec, { schema });
}

async function populate(store, manifest, owners, perOwner) {
  const data = await userCapabilityData(manifest, 0);
  // The owner as the server keys the API-key principal that later lists them.
  const { ownerKey } = await import(`${lib}/server/identity.js`);
  let next = 0;
  // Owners in parallel (creates of one owner serialise on their limit lock anyway).
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let o = next++; o < owners; o = next++) {
        const owner = ownerKey({ method: 'api-key' }, `owner-${String(o).padStart(4, '0')}`);
        for (let k = 0; k < perOwner; k += 1) {
          await store.create(owner, { ...data, name: `My workflow ${o}.${k}`, whenToUse: [`run my weekly routine ${o}.${k}`] });
        }
      }
    }),
  );
}

function sha256(text) {
  return createHash('sha256').update(text).digest('hex');
}

// ---------------------------------------------------------------------------------------------
// Servers (child processes)

async function runServer(role) {
  if (role === 'stdio') {
    // `capreg serve` itself, with the arguments after `--`.
    const { serveCommand } = await import(`${lib}/cli/commands/serve.js`);
    const { processContext } = await import(`${lib}/cli/context.js`);
    process.exitCode = await serveCommand(positionals, processContext());
    return;
  }
  const { startRuntime } = await import(`${lib}/server/runtime.js`);
  const { startHttpServer } = await import(`${lib}/server/transports/http.js`);
  const withStore = role === 'with-store';
  const runtime = await startRuntime({
    manifestFile: values.manifest,
    principalsFile: values.principals,
    watch: false,
    log: (line) => process.stderr.write(`${line}\n`),
    ...(withStore ? { openUserStore: () => openStore(values.store, values.schema) } : {}),
  });
  const server = await startHttpServer(runtime, { port: 0 });
  process.send({ url: server.url });
}

function startChild(role, extra) {
  const child = fork(fileURLToPath(import.meta.url), ['--role', role, ...extra], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`${role} server exited with ${code}`)));
  });
  return { child, ready };
}

// ---------------------------------------------------------------------------------------------
// Load

async function load(url, token, { seconds, concurrency, check }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const target = new URL('/mcp', url);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_capabilities', arguments: {} } });
  let done = 0;
  let failures = 0;
  let bytes = 0;
  const deadline = Date.now() + seconds * 1000;
  const one = () =>
    new Promise((resolve) => {
      const req = http.request(
        target,
        {
          method: 'POST',
          agent,
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            'Content-Length': Buffer.byteLength(body),
            Authorization: `Bearer ${token}`,
          },
        },
        (res) => {
          const chunks = [];
          res.on('data', (chunk) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString();
            bytes = text.length;
            if (res.statusCode !== 200 || !check(text)) failures += 1;
            resolve();
          });
        },
      );
      req.on('error', () => {
        failures += 1;
        resolve();
      });
      req.end(body);
    });
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        await one();
        done += 1;
      }
    }),
  );
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  return { requests: done, failures, rps: done / elapsed, bytes };
}

function median(numbers) {
  return [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)];
}

function countUserEntries(text) {
  return text.split('"isUserDefined":true').length - 1;
}

async function measureHttp(label, files, storeSpec, schema, perOwner) {
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const rounds = Number(values.rounds);
  const ok = (text) => text.includes('"result"') && !text.includes('"isError":true');
  const owns = (text) => ok(text) && countUserEntries(text) === perOwner;
  const none = (text) => ok(text) && countUserEntries(text) === 0;

  const withStore = startChild('with-store', [
    '--manifest',
    files.manifest,
    '--principals',
    files.principals,
    '--store',
    storeSpec,
    ...(schema ? ['--schema', schema] : []),
  ]);
  const withoutStore = startChild('without-store', ['--manifest', files.manifest, '--principals', files.principals]);
  const [{ url }, { url: bareUrl }] = await Promise.all([withStore.ready, withoutStore.ready]);

  const scenarios = [
    { key: 'git', label: 'Git-only call (no user-capabilities scope)', url, token: GIT_ONLY_KEY, check: none },
    { key: 'owner', label: `owner with ${perOwner} user capabilities`, url, token: OWNER_KEY, check: owns },
    { key: 'noStore', label: 'server without a user store (owner key)', url: bareUrl, token: OWNER_KEY, check: none },
  ];
  for (const scenario of scenarios) await load(scenario.url, scenario.token, { seconds: 1, concurrency, check: scenario.check }); // warm-up
  const results = Object.fromEntries(scenarios.map((s) => [s.key, []]));
  for (let round = 0; round < rounds; round += 1) {
    for (const scenario of scenarios) {
      const result = await load(scenario.url, scenario.token, { seconds, concurrency, check: scenario.check });
      if (result.failures > 0) throw new Error(`${label}: ${scenario.label}: ${result.failures} failed answers`);
      results[scenario.key].push(result);
    }
  }
  withStore.child.kill();
  withoutStore.child.kill();

  console.log(
    `  HTTP, concurrency ${concurrency}, ${rounds} interleaved rounds of ${seconds} s (median req/s; ratio = Git-only rate / this rate, same round):`,
  );
  for (const scenario of scenarios) {
    const rps = median(results[scenario.key].map((r) => r.rps));
    const ratio = median(results[scenario.key].map((r, i) => results.git[i].rps / r.rps));
    const kib = (results[scenario.key][0].bytes / 1024).toFixed(1);
    console.log(`    ${scenario.label.padEnd(46)} ${rps.toFixed(0).padStart(6)} req/s  ${ratio.toFixed(2)}x  (answers of ${kib} KiB)`);
  }
  return median(results.owner.map((r, i) => results.git[i].rps / r.rps));
}

/** `--user-store` for the serve command: PostgreSQL gets the bench schema through search_path. */
function userStoreFlag(storeSpec, schema) {
  if (!schema) return storeSpec;
  const url = new URL(storeSpec);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

async function measureStdio(files, storeSpec, schema, perOwner) {
  const connect = async (key) => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        fileURLToPath(import.meta.url),
        '--role',
        'stdio',
        '--',
        '--manifest',
        files.manifest,
        '--principals',
        files.principals,
        '--user-store',
        userStoreFlag(storeSpec, schema),
      ],
      env: { PATH: process.env.PATH ?? '', CAPREG_API_KEY: key },
      stderr: 'ignore',
    });
    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(transport);
    return client;
  };
  const git = await connect(GIT_ONLY_KEY);
  const owner = await connect(OWNER_KEY);
  const calls = Number(values.calls);
  const block = async (client, expected) => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i += 1) {
      const result = await client.callTool({ name: 'list_capabilities', arguments: {} });
      if (result.isError || result.structuredContent.capabilities.filter((e) => e.isUserDefined).length !== expected) throw new Error('wrong answer');
    }
    return Number(process.hrtime.bigint() - started) / 1e6 / calls;
  };
  await block(git, 0);
  await block(owner, perOwner);
  const gitTimes = [];
  const ownerTimes = [];
  for (let round = 0; round < Number(values.rounds); round += 1) {
    gitTimes.push(await block(git, 0));
    ownerTimes.push(await block(owner, perOwner));
  }
  await git.close();
  await owner.close();
  const ratio = median(ownerTimes.map((t, i) => t / gitTimes[i]));
  console.log(`  stdio (capreg serve per caller, one call at a time, ${Number(values.rounds)} interleaved blocks of ${calls} calls):`);
  console.log(`    ${'Git-only call'.padEnd(46)} ${median(gitTimes).toFixed(2).padStart(7)} ms/call`);
  console.log(`    ${`owner with ${perOwner} user capabilities`.padEnd(46)} ${median(ownerTimes).toFixed(2).padStart(7)} ms/call  ${ratio.toFixed(2)}x`);
  return ratio;
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const count = Number(values.capabilities);
  const owners = Number(values.owners);
  const perOwner = Number(values['per-owner']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capreg-bench-user-'));
  const files = { manifest: path.join(dir, 'manifest.json'), principals: path.join(dir, 'principals.yaml') };
  const { manifest, text } = await buildManifest(count);
  fs.writeFileSync(files.manifest, text);
  const toolsetScopes = Object.keys(manifest.toolsets).map((t) => `${t}:read`);
  fs.writeFileSync(
    files.principals,
    [
      'principals:',
      `  - {id: ${OWNER}, name: Owner, keySha256: ${sha256(OWNER_KEY)}, scopes: [${[...toolsetScopes, 'user-capabilities:write'].join(', ')}]}`,
      `  - {id: git-only, name: Git only, keySha256: ${sha256(GIT_ONLY_KEY)}, scopes: [${toolsetScopes.join(', ')}]}`,
      '',
    ].join('\n'),
  );

  const pgUrl = values.postgres ?? process.env.CAPREG_TEST_PG_URL;
  const stores = values.stores.split(',').map((s) => s.trim());
  console.log(
    `capreg user-catalog benchmark — Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(`platform manifest: ${count} capabilities (the caller sees all); user store: ${owners * perOwner} user capabilities across ${owners} owners\n`);

  const summary = [];
  for (const kind of stores) {
    let spec;
    let schema;
    if (kind === 'sqlite') spec = `sqlite:${path.join(dir, 'user-capabilities.db')}`;
    else if (kind === 'postgres') {
      if (!pgUrl) {
        console.log('postgres: skipped (no --postgres URL and no CAPREG_TEST_PG_URL; start one with `bash .ci/postgres.sh`)\n');
        continue;
      }
      spec = pgUrl;
      schema = `capreg_bench_${randomBytes(4).toString('hex')}`;
    } else throw new Error(`unknown store ${kind}`);

    const store = await openStore(spec, schema);
    const started = performance.now();
    await populate(store, manifest, owners, perOwner);
    const total = owners * perOwner;
    const counted = await store.countByOwner(`key:${OWNER}`);
    console.log(`${kind}: stored ${total} user capabilities in ${((performance.now() - started) / 1000).toFixed(1)} s (${OWNER} owns ${counted})`);
    try {
      const httpRatio = await measureHttp(kind, files, spec, schema, perOwner);
      const stdioRatio = await measureStdio(files, spec, schema, perOwner);
      summary.push({ kind, httpRatio, stdioRatio });
    } finally {
      if (schema) {
        const pg = (await import('pg')).default;
        const admin = new pg.Pool({ connectionString: spec, max: 1 });
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.end();
      }
      await store.close();
    }
    console.log('');
  }
  console.log('owner call / Git-only call (target <= 1.20x):');
  for (const { kind, httpRatio, stdioRatio } of summary) {
    console.log(`  ${kind.padEnd(9)} HTTP ${httpRatio.toFixed(2)}x   stdio ${stdioRatio.toFixed(2)}x`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

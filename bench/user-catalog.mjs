#!/usr/bin/env node
// list_capabilities for an owner of user-defined capabilities vs the Git-only catalog call, on a
// store holding 10,000 user capabilities across 1,000 owners (SPEC §8; target: within 1.2x).
//
//   npm run build:ts && node bench/user-catalog.mjs [--stores sqlite,postgres] [--capabilities 1000]
//        [--owners 1000] [--per-owner 10] [--seconds 2] [--rounds 7] [--concurrency 16] [--calls 100]
//        [--phase-timeout 600]
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
// The owner measured is owner-0042 (the last owner when there are fewer than 43).
//
// Progress goes to stderr as the bench runs; the table goes to stdout. Each phase (manifest, storing,
// a server starting, a load round, a stdio connection or block) has a time limit (--phase-timeout
// seconds; a load round gets --seconds plus 60 s) and fails with an error naming the phase. The
// server children are killed when the bench exits or fails, and exit by themselves when their
// parent goes away; their output is kept (the last 40 lines) and printed only if something fails.
import { fork } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { httpLoad, toolCall } from './http-load.mjs';

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
    'phase-timeout': { type: 'string', default: '600' },
  },
});

const OWNER_KEY = 'bench-owner';
const GIT_ONLY_KEY = 'bench-git-only';

/** A numeric option within [min, max] (integers unless `fraction`), or an error naming it. */
function numberOption(name, min, max, fraction = false) {
  const value = Number(values[name]);
  if (!Number.isFinite(value) || value < min || value > max || (!fraction && !Number.isInteger(value))) {
    throw new Error(`--${name} must be ${fraction ? 'a number' : 'an integer'} from ${min} to ${max}, got ${JSON.stringify(values[name])}`);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// Progress, time limits, children

const startedAt = performance.now();

function progress(message) {
  process.stderr.write(`[user-catalog ${((performance.now() - startedAt) / 1000).toFixed(1).padStart(6)} s] ${message}\n`);
}

/** `promise`, or a rejection naming `phase` if it has not settled within `seconds`. */
async function phase(name, seconds, run) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name}: no result within ${seconds} s (--phase-timeout)`)), seconds * 1000);
  });
  try {
    return await Promise.race([run(), limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** Every child process this bench started and has not seen exit: { label, pid, dumpOutput }. */
const children = new Set();

function killChildren() {
  for (const child of children) {
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  children.clear();
}

/** Keeps the last lines a child wrote (bounded), to print if something fails. */
function outputTail(label, max = 40) {
  const lines = [];
  let partial = '';
  return {
    add(chunk) {
      const parts = (partial + chunk.toString()).split('\n');
      partial = parts.pop() ?? '';
      if (partial.length > 10_000) partial = partial.slice(-10_000);
      for (const line of parts) {
        lines.push(line.length > 1000 ? `${line.slice(0, 1000)}…` : line);
        if (lines.length > max) lines.shift();
      }
    },
    dump() {
      if (partial) lines.push(partial.slice(-1000));
      if (lines.length === 0) return;
      process.stderr.write(`--- last output of ${label} ---\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
    },
  };
}

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
  let finished = 0;
  const step = Math.max(1, Math.ceil(owners / 10));
  // Owners in parallel (creates of one owner serialise on their limit lock anyway).
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let o = next++; o < owners; o = next++) {
        const owner = ownerKey({ method: 'api-key' }, `owner-${String(o).padStart(4, '0')}`);
        for (let k = 0; k < perOwner; k += 1) {
          await store.create(owner, { ...data, name: `My workflow ${o}.${k}`, whenToUse: [`run my weekly routine ${o}.${k}`] });
        }
        finished += 1;
        if (finished % step === 0 || finished === owners) progress(`  stored the capabilities of ${finished}/${owners} owners`);
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

/**
 * A server child. Its stdout and stderr are piped into a bounded tail (not inherited: a child that
 * somehow outlived the bench would otherwise hold the caller's pipe open). `ready` settles with the
 * URL it sends, or rejects if it exits first.
 */
function startChild(role, extra) {
  const child = fork(fileURLToPath(import.meta.url), ['--role', role, ...extra], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  const tail = outputTail(`the ${role} server (pid ${child.pid})`);
  child.stdout.on('data', tail.add);
  child.stderr.on('data', tail.add);
  const entry = { label: role, pid: child.pid, dumpOutput: tail.dump };
  children.add(entry);
  const ready = new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      children.delete(entry);
      tail.dump();
      reject(new Error(`the ${role} server exited (${signal ?? `code ${code}`}) before it was ready`));
    });
  });
  const stop = () => {
    children.delete(entry);
    child.removeAllListeners('exit');
    child.kill('SIGKILL');
  };
  return { ready, stop, dumpOutput: tail.dump };
}

// ---------------------------------------------------------------------------------------------
// Load

function median(numbers) {
  return [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)];
}

function countUserEntries(text) {
  return text.split('"isUserDefined":true').length - 1;
}

/** One load run of list_capabilities as `token`, within --seconds plus 60 s. */
function load(name, url, token, { seconds, concurrency, check }) {
  return phase(name, seconds + 60, () =>
    httpLoad(url, [toolCall('list_capabilities', {})], { Authorization: `Bearer ${token}` }, { seconds, concurrency, check }),
  );
}

async function measureHttp(label, files, storeSpec, schema, perOwner, limits) {
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
  try {
    return await measureHttpServers(label, withStore, withoutStore, { ...limits, owns, none, perOwner });
  } catch (error) {
    withStore.dumpOutput();
    withoutStore.dumpOutput();
    throw error;
  } finally {
    withStore.stop();
    withoutStore.stop();
  }
}

async function measureHttpServers(label, withStore, withoutStore, { seconds, concurrency, rounds, phaseTimeout, owns, none, perOwner }) {
  progress(`${label}: starting the HTTP servers (with and without the user store)`);
  const [{ url }, { url: bareUrl }] = await phase(`${label}: starting the HTTP servers`, phaseTimeout, () =>
    Promise.all([withStore.ready, withoutStore.ready]),
  );

  const scenarios = [
    { key: 'git', label: 'Git-only call (no user-capabilities scope)', url, token: GIT_ONLY_KEY, check: none },
    { key: 'owner', label: `owner with ${perOwner} user capabilities`, url, token: OWNER_KEY, check: owns },
    { key: 'noStore', label: 'server without a user store (owner key)', url: bareUrl, token: OWNER_KEY, check: none },
  ];
  progress(`${label}: HTTP warm-up (1 s per scenario)`);
  for (const scenario of scenarios) {
    const result = await load(`${label}: HTTP warm-up, ${scenario.label}`, scenario.url, scenario.token, { seconds: 1, concurrency, check: scenario.check });
    if (result.failures > 0) throw new Error(`${label}: HTTP warm-up, ${scenario.label}: ${result.failures} of ${result.requests} answers failed the check`);
  }
  const results = Object.fromEntries(scenarios.map((s) => [s.key, []]));
  for (let round = 0; round < rounds; round += 1) {
    for (const scenario of scenarios) {
      const name = `${label}: HTTP round ${round + 1}/${rounds}, ${scenario.label}`;
      const result = await load(name, scenario.url, scenario.token, { seconds, concurrency, check: scenario.check });
      if (result.failures > 0) throw new Error(`${name}: ${result.failures} of ${result.requests} answers failed the check`);
      results[scenario.key].push(result);
    }
    progress(`${label}: HTTP round ${round + 1}/${rounds}: ${scenarios.map((sc) => `${sc.key} ${results[sc.key][round].rps.toFixed(0)} req/s`).join(', ')}`);
  }

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

async function measureStdio(label, files, storeSpec, schema, perOwner, { rounds, calls, phaseTimeout }) {
  const clients = [];
  try {
    return await measureStdioClients(label, files, storeSpec, schema, perOwner, { rounds, calls, phaseTimeout, clients });
  } catch (error) {
    for (const { entry } of clients) entry.dumpOutput();
    throw error;
  } finally {
    for (const { client, entry } of clients) {
      children.delete(entry);
      await client.close().catch(() => {});
      try {
        process.kill(entry.pid, 'SIGKILL');
      } catch {
        // closed already
      }
    }
  }
}

async function measureStdioClients(label, files, storeSpec, schema, perOwner, { rounds, calls, phaseTimeout, clients }) {
  const connect = async (name, key) => {
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
      stderr: 'pipe',
    });
    const tail = outputTail(`capreg serve for the ${name} (stdio)`);
    transport.stderr?.on('data', tail.add);
    const client = new Client({ name: 'bench', version: '1.0.0' });
    progress(`${label}: stdio: starting capreg serve for the ${name}`);
    await phase(`${label}: stdio: connecting to capreg serve for the ${name}`, phaseTimeout, async () => {
      try {
        await client.connect(transport);
      } finally {
        if (transport.pid) {
          const entry = { label: `stdio ${name}`, pid: transport.pid, dumpOutput: tail.dump };
          children.add(entry);
          clients.push({ client, entry });
        }
      }
    });
    return client;
  };
  const git = await connect('Git-only caller', GIT_ONLY_KEY);
  const owner = await connect('owner', OWNER_KEY);
  const block = (name, client, expected) =>
    phase(`${label}: stdio: ${name}`, phaseTimeout, async () => {
      const started = process.hrtime.bigint();
      for (let i = 0; i < calls; i += 1) {
        const result = await client.callTool({ name: 'list_capabilities', arguments: {} });
        const found = result.isError ? 'an error' : `${result.structuredContent.capabilities.filter((e) => e.isUserDefined).length} user entries`;
        if (found !== `${expected} user entries`)
          throw new Error(`${label}: stdio: ${name}: call ${i + 1} answered ${found}, expected ${expected} user entries`);
      }
      return Number(process.hrtime.bigint() - started) / 1e6 / calls;
    });
  progress(`${label}: stdio warm-up (a block of ${calls} calls per caller)`);
  await block('warm-up, Git-only caller', git, 0);
  await block('warm-up, owner', owner, perOwner);
  const gitTimes = [];
  const ownerTimes = [];
  for (let round = 0; round < rounds; round += 1) {
    gitTimes.push(await block(`block ${round + 1}/${rounds}, Git-only caller`, git, 0));
    ownerTimes.push(await block(`block ${round + 1}/${rounds}, owner`, owner, perOwner));
    progress(`${label}: stdio block ${round + 1}/${rounds}: Git-only ${gitTimes[round].toFixed(2)} ms/call, owner ${ownerTimes[round].toFixed(2)} ms/call`);
  }
  const ratio = median(ownerTimes.map((t, i) => t / gitTimes[i]));
  console.log(`  stdio (capreg serve per caller, one call at a time, ${rounds} interleaved blocks of ${calls} calls):`);
  console.log(`    ${'Git-only call'.padEnd(46)} ${median(gitTimes).toFixed(2).padStart(7)} ms/call`);
  console.log(`    ${`owner with ${perOwner} user capabilities`.padEnd(46)} ${median(ownerTimes).toFixed(2).padStart(7)} ms/call  ${ratio.toFixed(2)}x`);
  return ratio;
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const count = numberOption('capabilities', 3, 100_000);
  const owners = numberOption('owners', 1, 100_000);
  const perOwner = numberOption('per-owner', 1, 1000);
  const limits = {
    seconds: numberOption('seconds', 0.1, 600, true),
    rounds: numberOption('rounds', 1, 100),
    concurrency: numberOption('concurrency', 1, 256),
    calls: numberOption('calls', 1, 100_000),
    phaseTimeout: numberOption('phase-timeout', 1, 86_400, true),
  };
  const stores = values.stores.split(',').map((s) => s.trim());
  for (const kind of stores)
    if (kind !== 'sqlite' && kind !== 'postgres') throw new Error(`--stores: unknown store ${JSON.stringify(kind)} (sqlite, postgres)`);
  // owner-0042 as before when it exists, else the last owner stored.
  const owner = `owner-${String(Math.min(42, owners - 1)).padStart(4, '0')}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capreg-bench-user-'));
  try {
    await runStores({ count, owners, perOwner, limits, stores, owner, dir });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function runStores({ count, owners, perOwner, limits, stores, owner, dir }) {
  const { phaseTimeout } = limits;
  const files = { manifest: path.join(dir, 'manifest.json'), principals: path.join(dir, 'principals.yaml') };
  progress(`building a platform manifest of ${count} capabilities`);
  const { manifest, text } = await phase('building the platform manifest', phaseTimeout, () => buildManifest(count));
  fs.writeFileSync(files.manifest, text);
  const toolsetScopes = Object.keys(manifest.toolsets).map((t) => `${t}:read`);
  fs.writeFileSync(
    files.principals,
    [
      'principals:',
      `  - {id: ${owner}, name: Owner, keySha256: ${sha256(OWNER_KEY)}, scopes: [${[...toolsetScopes, 'user-capabilities:write'].join(', ')}]}`,
      `  - {id: git-only, name: Git only, keySha256: ${sha256(GIT_ONLY_KEY)}, scopes: [${toolsetScopes.join(', ')}]}`,
      '',
    ].join('\n'),
  );

  const pgUrl = values.postgres ?? process.env.CAPREG_TEST_PG_URL;
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
    else {
      if (!pgUrl) {
        console.log('postgres: skipped (no --postgres URL and no CAPREG_TEST_PG_URL; start one with `bash .ci/postgres.sh`)\n');
        continue;
      }
      spec = pgUrl;
      schema = `capreg_bench_${randomBytes(4).toString('hex')}`;
    }

    progress(`${kind}: opening the store${schema ? ` (schema ${schema})` : ''}`);
    const store = await phase(`${kind}: opening the store`, phaseTimeout, () => openStore(spec, schema));
    try {
      const total = owners * perOwner;
      progress(`${kind}: storing ${total} user capabilities across ${owners} owners`);
      const started = performance.now();
      await phase(`${kind}: storing ${total} user capabilities`, phaseTimeout, () => populate(store, manifest, owners, perOwner));
      const counted = await phase(`${kind}: counting ${owner}'s capabilities`, phaseTimeout, () => store.countByOwner(`key:${owner}`));
      if (counted !== perOwner) throw new Error(`${kind}: ${owner} owns ${counted} user capabilities after storing, expected ${perOwner}`);
      console.log(`${kind}: stored ${total} user capabilities in ${((performance.now() - started) / 1000).toFixed(1)} s (${owner} owns ${counted})`);
      const httpRatio = await measureHttp(kind, files, spec, schema, perOwner, limits);
      const stdioRatio = await measureStdio(kind, files, spec, schema, perOwner, limits);
      summary.push({ kind, httpRatio, stdioRatio });
    } finally {
      await phase(`${kind}: closing the store`, 60, async () => {
        if (schema) {
          const pg = (await import('pg')).default;
          const admin = new pg.Pool({ connectionString: spec, max: 1 });
          try {
            await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
          } finally {
            await admin.end();
          }
        }
        await store.close();
      });
    }
    console.log('');
  }
  console.log('owner call / Git-only call (target <= 1.20x):');
  for (const { kind, httpRatio, stdioRatio } of summary) {
    console.log(`  ${kind.padEnd(9)} HTTP ${httpRatio.toFixed(2)}x   stdio ${stdioRatio.toFixed(2)}x`);
  }
  progress('done');
}

// ---------------------------------------------------------------------------------------------

if (values.role) {
  // A child exits when the bench that started it goes away (killed, crashed), so it never outlives it.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 500).unref();
  if (process.send) process.on('disconnect', () => process.exit(0));
  await runServer(values.role);
} else {
  process.on('exit', killChildren);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      progress(`${signal}: stopping the server children`);
      killChildren();
      process.exit(128 + os.constants.signals[signal]);
    });
  }
  try {
    await main();
  } catch (error) {
    process.stderr.write(`\nuser-catalog bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    for (const child of children) child.dumpOutput();
    killChildren();
    process.exit(1);
  }
}

#!/usr/bin/env node
// find_capabilities: routing quality on the development set, speed at 10,000 visible capabilities,
// and throughput over HTTP beside get_capability_protocol, each against a baseline in the same run.
//
//   npm run build:ts && node --expose-gc bench/find-capabilities.mjs [--quality-only] [--seconds S] [--concurrency C]
//
// 1. Quality: bench/routing-devset (34 capabilities, 157 requests, a third Chinese), then the held-out
//    set bench/routing-heldout (34 capabilities of another registry, 179 requests, a third Chinese,
//    written apart from the dictionary): recall@1/@3/@5 and MRR of the ranker (compiler/search/ranker.ts)
//    vs a plain TF-IDF cosine over the same fields (lower-cased words, Han characters one by one, no
//    stemming, stop words, bridge or weights) and vs Orama 3 (BM25, same field boosts; its own English
//    tokenizer, then fed our analyzed terms). SHOW_MISSES=1 lists the requests not ranked first.
// 2. In-process: index build (analysis + MiniSearch) for 10,000 capabilities as on the first search
//    after a reload, then p50/p99 of CatalogSearch.search over English and Chinese queries; heap.
// 3. HTTP at concurrency 16: find_capabilities vs get_capability_protocol against one capreg
//    server in a child process (the load generator keeps the other core). Imports compiled lib/.
import { fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
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
    'quality-only': { type: 'boolean', default: false },
    'in-process-only': { type: 'boolean', default: false },
    seconds: { type: 'string', default: '8' },
    concurrency: { type: 'string', default: '16' },
    capabilities: { type: 'string', default: '10000' },
    // The generator's median protocol (bench/generate-registry.mjs: ~4.4 KB, ~1,000 tokens); 0 for the old one-line body.
    'protocol-chars': { type: 'string', default: '4400' },
  },
});

const { analyze } = await import(`${lib}/compiler/search/analyze.js`);
const { CapabilityIndex } = await import(`${lib}/compiler/search/ranker.js`);
const { analyzeCapability } = await import(`${lib}/compiler/search/fields.js`);
const { MiniSearchReference } = await import(`${lib}/compiler/search/minisearch-reference.js`);

// ---------------------------------------------------------------------------------------------
// Quality

function metrics(rankings, requests) {
  const total = { n: 0, r1: 0, r3: 0, r5: 0, mrr: 0 };
  const byLang = {};
  requests.forEach(([, expected, , lang], i) => {
    const rank = rankings[i].indexOf(expected) + 1;
    for (const bucket of [total, (byLang[lang] ??= { n: 0, r1: 0, r3: 0, r5: 0, mrr: 0 })]) {
      bucket.n += 1;
      if (rank === 1) bucket.r1 += 1;
      if (rank >= 1 && rank <= 3) bucket.r3 += 1;
      if (rank >= 1 && rank <= 5) bucket.r5 += 1;
      if (rank >= 1) bucket.mrr += 1 / rank;
    }
  });
  const norm = (b) => ({ n: b.n, 'recall@1': b.r1 / b.n, 'recall@3': b.r3 / b.n, 'recall@5': b.r5 / b.n, MRR: b.mrr / b.n });
  return { all: norm(total), ...Object.fromEntries(Object.entries(byLang).map(([lang, b]) => [lang, norm(b)])) };
}

function fieldsText(capability) {
  return [capability.name, capability.description, capability.whenToUse.join(' '), (capability.tags ?? []).join(' '), capability.protocolText].join(' ');
}

/** The baseline: TF-IDF (log tf, smoothed idf) cosine over all fields as one text. */
function tfidfRanker(capabilities) {
  const plain = (text) =>
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/\p{Script=Han}|(?:(?!\p{Script=Han})[\p{L}\p{N}])+/gu) ?? [];
  const docs = capabilities.map((capability) => plain(fieldsText(capability)));
  const df = new Map();
  for (const terms of docs) for (const term of new Set(terms)) df.set(term, (df.get(term) ?? 0) + 1);
  const idf = (term) => Math.log((1 + docs.length) / (1 + (df.get(term) ?? 0))) + 1;
  const vector = (terms) => {
    const tf = new Map();
    for (const term of terms) tf.set(term, (tf.get(term) ?? 0) + 1);
    const v = new Map();
    let norm = 0;
    for (const [term, count] of tf) {
      const weight = (1 + Math.log(count)) * idf(term);
      v.set(term, weight);
      norm += weight * weight;
    }
    return { v, norm: Math.sqrt(norm) || 1 };
  };
  const vectors = docs.map(vector);
  return (query) => {
    const q = vector(plain(query));
    return vectors
      .map((d, i) => {
        let dot = 0;
        for (const [term, weight] of q.v) dot += weight * (d.v.get(term) ?? 0);
        return { id: capabilities[i].id, score: dot / (q.norm * d.norm) };
      })
      .filter((hit) => hit.score > 0)
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
      .map((hit) => hit.id);
  };
}

async function oramaRanker(capabilities, analyzed) {
  const { create, insertMultiple, search } = await import('@orama/orama');
  const schema = { id: 'string', name: 'string', description: 'string', whenToUse: 'string', tags: 'string', protocol: 'string' };
  const boost = { whenToUse: 3, name: 3, tags: 3, description: 2, protocol: 1 };
  const properties = Object.keys(boost);
  const rows = (source) =>
    source.map((capability) =>
      analyzed
        ? { id: capability.id, ...capability.fields }
        : {
            id: capability.id,
            name: capability.name,
            description: capability.description,
            whenToUse: capability.whenToUse.join('\n'),
            tags: (capability.tags ?? []).join(' '),
            protocol: capability.protocolText,
          },
    );
  const db = analyzed
    ? create({
        schema,
        components: { tokenizer: { language: 'english', normalizationCache: new Map(), tokenize: (raw) => (raw === '' ? [] : raw.split(' ')) } },
      })
    : create({ schema });
  await insertMultiple(db, rows(analyzed ? capabilities.map(analyzeCapability) : capabilities));
  return async (query) => {
    const term = analyzed ? analyze(query).join(' ') : query;
    const result = await search(db, { term, properties, boost, limit: 10, tolerance: analyzed ? 0 : 1 });
    return result.hits.map((hit) => hit.document.id);
  };
}

async function quality() {
  for (const [set, title] of [
    ['routing-devset', 'Routing quality'],
    ['routing-heldout', 'Routing quality, held-out set'],
  ])
    await qualityOf(set, title);
}

/** One routing set's table: `set` is a folder of bench/ with capabilities.json and requests.json. */
async function qualityOf(set, title) {
  const capabilities = JSON.parse(fs.readFileSync(path.join(here, set, 'capabilities.json'), 'utf8'));
  const { requests } = JSON.parse(fs.readFileSync(path.join(here, set, 'requests.json'), 'utf8'));
  const index = CapabilityIndex.of(capabilities.map(analyzeCapability));
  const ours = requests.map(([query]) => index.search({ query, limit: 10 }).map((hit) => hit.id));
  // The same ranking computed by MiniSearch itself (raw scores; the ranker rounds to six decimals, ties by id).
  const reference = new MiniSearchReference(capabilities.map(analyzeCapability));
  const byMiniSearch = requests.map(([query]) =>
    reference
      .search(query)
      .map((hit) => ({ id: hit.id, score: Number(hit.score.toFixed(6)) }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, 10)
      .map((hit) => hit.id),
  );
  const tfidf = tfidfRanker(capabilities);
  const baseline = requests.map(([query]) => tfidf(query));
  const rows = {
    'capreg (BM25 + analysis + bridge)': metrics(ours, requests),
    'the same, scored by MiniSearch itself': metrics(byMiniSearch, requests),
    'TF-IDF cosine (baseline)': metrics(baseline, requests),
  };
  const differing = requests.filter((_, i) => ours[i].join() !== byMiniSearch[i].join()).length;
  console.log(`\nRequests whose first 10 differ between capreg's ranker and MiniSearch's: ${differing} of ${requests.length}`);
  for (const analyzed of [false, true]) {
    try {
      const orama = await oramaRanker(capabilities, analyzed);
      const ranked = [];
      for (const [query] of requests) ranked.push(await orama(query));
      rows[analyzed ? 'Orama (our analyzed terms, no bridge)' : 'Orama (its own tokenizer)'] = metrics(ranked, requests);
    } catch (error) {
      console.error(`orama ${analyzed ? 'analyzed' : 'default'}: ${error.message}`);
    }
  }
  console.log(
    `\n${title} (bench/${set}): ${capabilities.length} capabilities, ${requests.length} requests (${requests.filter((r) => r[3] === 'zh').length} Chinese)\n`,
  );
  console.log('| ranker | recall@1 | recall@3 | recall@5 | MRR | en recall@3 | en recall@5 | zh recall@3 | zh recall@5 | zh MRR |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  const f = (x) => x.toFixed(3);
  for (const [name, m] of Object.entries(rows))
    console.log(
      `| ${name} | ${f(m.all['recall@1'])} | ${f(m.all['recall@3'])} | ${f(m.all['recall@5'])} | ${f(m.all.MRR)} | ${f(m.en['recall@3'])} | ${f(m.en['recall@5'])} | ${f(m.zh['recall@3'])} | ${f(m.zh['recall@5'])} | ${f(m.zh.MRR)} |`,
    );
  if (process.env.SHOW_MISSES) {
    requests.forEach(([query, expected], i) => {
      if (ours[i][0] !== expected) console.log(`miss: ${query} → ${ours[i].slice(0, 3).join(', ')} (want ${expected}, rank ${ours[i].indexOf(expected) + 1})`);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Speed

const VERBS = [
  'review',
  'deploy',
  'report',
  'migrate',
  'audit',
  'schedule',
  'analyze',
  'refund',
  'onboard',
  'rotate',
  'triage',
  'forecast',
  'translate',
  'publish',
  'archive',
];
const OBJECTS = [
  'invoice',
  'database',
  'release',
  'ticket',
  'budget',
  'calendar',
  'credential',
  'dashboard',
  'contract',
  'laptop',
  'campaign',
  'backlog',
  'incident',
  'schema',
  'survey',
  'payroll',
  'inventory',
  'certificate',
  'pipeline',
  'newsletter',
];
const ZH = ['周报', '发票', '数据库', '发布', '工单', '预算', '日程', '密钥', '合同', '电脑', '故障', '迁移', '报销', '审批', '面试'];

/** Numbered steps until the protocol is about `chars` long: what a served protocol weighs, not what it says. */
function protocolBody(verb, object, team, chars) {
  const lines = [];
  let length = 0;
  for (let step = 1; length < chars - 200; step += 1) {
    const line = `${step}. Before you ${verb} the ${object}, check what ${team} asked for in step ${step}, record what you find in the log, and stop and ask when an input is missing or looks wrong; never guess a value.`;
    lines.push(line);
    length += line.length + 1;
  }
  return lines.length === 0 ? '' : `\n## Procedure\n\n${lines.join('\n')}\n`;
}

async function buildManifest(count) {
  const { digestOf } = await import(`${lib}/compiler/canonical.js`);
  const { manifestIntegrity, serializeManifest } = await import(`${lib}/compiler/manifest.js`);
  const toolsets = { ops: { description: 'Operations', tools: { run_job: { action: 'read', description: 'Run a job and report its result' } } } };
  const capabilities = [];
  for (let i = 0; i < count; i += 1) {
    const id = `cap-${String(i).padStart(5, '0')}`;
    const verb = VERBS[i % VERBS.length];
    const object = OBJECTS[Math.floor(i / VERBS.length) % OBJECTS.length];
    const team = `team${i % 211}`;
    const zh = i % 3 === 0 ? [`${ZH[i % ZH.length]}${ZH[(i >> 2) % ZH.length]}处理`] : [];
    const protocol = `---\nprotocol_version: 1.0.0\nprotocol_updated: 2025-06-01\n---\n\n# ${verb} the ${object}\n\n## Steps\n\n| Tool | Use |\n| --- | --- |\n| \`run_job\` | run it |\n\nDo the ${verb} of the ${object} for ${team}.\n${protocolBody(verb, object, team, Number(values['protocol-chars']))}`;
    const base = {
      id,
      name: `${verb} ${object} for ${team}`,
      description: `Helps ${team} ${verb} the ${object} safely, with checks before and after.`,
      whenToUse: [`${verb} the ${object}`, `${team} needs to ${verb} a ${object}`, ...zh],
      requiredToolsets: [],
      optionalToolsets: [],
      protocolVersion: '1.0.0',
      protocolUpdated: '2025-06-01',
      references: [],
      lifecyclePhase: ['define', 'plan', 'build', 'verify', 'review', 'ship'][i % 6],
      tags: [object, team],
      protocol,
    };
    capabilities.push({ ...base, digest: digestOf(base) });
  }
  const body = { schemaVersion: 1, generator: 'bench', revision: digestOf({ count }), source: null, toolsets, capabilities };
  const manifest = { ...body, integrity: manifestIntegrity(body) };
  return { manifest, text: serializeManifest(manifest) };
}

const QUERIES = [
  'review the invoice for team12',
  'deploy a release',
  'migrate database schema safely',
  'need to rotate a credential',
  'forecast next budget',
  'triage an incident ticket',
  '帮我处理发票报销',
  '数据库迁移',
  '周报',
  'analyse the dashbord',
  'publish newsletter campaign',
  '故障工单处理',
];

function heap() {
  globalThis.gc?.();
  globalThis.gc?.();
  return process.memoryUsage().heapUsed;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function inProcess(count) {
  const { Catalog } = await import(`${lib}/server/catalog.js`);
  const { toolNames } = await import(`${lib}/compiler/contract.js`);
  const { Grants } = await import(`${lib}/server/permissions.js`);
  const { manifest } = await buildManifest(count);
  const before = heap();
  const catalog = new Catalog(manifest, toolNames(''));
  const platform = catalog.visibleCapabilities(new Grants([]));
  const scope = { catalogVersion: platform.catalogVersion, platform, user: [] };
  let started = process.hrtime.bigint();
  catalog.search.search(scope, { query: 'warm up', limit: 10 });
  const buildMs = Number(process.hrtime.bigint() - started) / 1e6;
  const after = heap();
  const times = [];
  // Each limit once per query: every search is computed, none answered from the answer cache.
  for (let round = 0; round < 50; round += 1) {
    for (const query of QUERIES) {
      started = process.hrtime.bigint();
      catalog.search.search(scope, { query, limit: round + 1 });
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  }
  // The baseline: the same queries scored by MiniSearch over the same analyzed capabilities (what
  // served find_capabilities before the typed-array ranker), best 10 by rounded score.
  const { protocolSearchText } = await import(`${lib}/compiler/search/ranker.js`);
  const { catalogEntry, PROTOCOL_TOOL } = await import(`${lib}/compiler/contract.js`);
  const analyzedAll = manifest.capabilities.map((capability) =>
    analyzeCapability({
      ...catalogEntry(capability, PROTOCOL_TOOL),
      protocolText: protocolSearchText(capability.protocol, (tool) => manifest.toolsets.ops.tools[tool]?.description),
    }),
  );
  const { Segment } = await import(`${lib}/compiler/search/postings.js`);
  started = process.hrtime.bigint();
  Segment.of(analyzedAll);
  const segmentMs = Number(process.hrtime.bigint() - started) / 1e6;
  started = process.hrtime.bigint();
  const reference = new MiniSearchReference(analyzedAll);
  const referenceBuildMs = Number(process.hrtime.bigint() - started) / 1e6;
  const referenceTimes = [];
  for (let round = 0; round < 10; round += 1) {
    for (const query of QUERIES) {
      started = process.hrtime.bigint();
      reference
        .search(query)
        .map((hit) => ({ id: hit.id, score: Number(hit.score.toFixed(6)) }))
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
        .slice(0, 10);
      referenceTimes.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  }
  referenceTimes.sort((a, b) => a - b);
  // The listing answer the same caller gets, for scale.
  started = process.hrtime.bigint();
  const listing = catalog.answers.platform(platform);
  const listMs = Number(process.hrtime.bigint() - started) / 1e6;
  // A reload as the server does it: prepare() analyzes in the background after activation (slices
  // of at most 10 ms) and builds the segment, so the first search pays only its caller's view.
  const reloaded = new Catalog(manifest, toolNames(''));
  let longestStall = 0;
  let last = performance.now();
  let ticking = true;
  const tick = () => {
    const now = performance.now();
    longestStall = Math.max(longestStall, now - last);
    last = now;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  started = process.hrtime.bigint();
  await reloaded.search.prepare();
  const prepareMs = Number(process.hrtime.bigint() - started) / 1e6;
  // Let the tick that was waiting behind prepare's last slice run, so that slice counts.
  await new Promise((resolve) => setImmediate(resolve));
  ticking = false;
  // Read now: a tick still queued would count the synchronous work below as a stall.
  const prepareStall = longestStall;
  const reloadedPlatform = reloaded.visibleCapabilities(new Grants([]));
  started = process.hrtime.bigint();
  reloaded.search.search({ catalogVersion: reloadedPlatform.catalogVersion, platform: reloadedPlatform, user: [] }, { query: 'warm up', limit: 10 });
  const preparedFirstMs = Number(process.hrtime.bigint() - started) / 1e6;
  // A reload that changes one capability: the runtime hands the previous catalog to prepare(), which
  // keeps the analysis of every unchanged capability and rebuilds the segment.
  const { digestOf } = await import(`${lib}/compiler/canonical.js`);
  const { manifestIntegrity } = await import(`${lib}/compiler/manifest.js`);
  const [first, ...others] = manifest.capabilities;
  const { digest: _digest, ...edited } = { ...first, description: `${first.description} Now also for the audit.` };
  const body = { ...manifest, capabilities: [{ ...edited, digest: digestOf(edited) }, ...others] };
  delete body.integrity;
  const next = new Catalog({ ...body, integrity: manifestIntegrity(body) }, toolNames(''));
  started = process.hrtime.bigint();
  const reprepared = await next.search.prepare(reloaded.search);
  const reloadPrepareMs = Number(process.hrtime.bigint() - started) / 1e6;
  times.sort((a, b) => a - b);
  console.log(`\nIn-process at ${count} visible capabilities (${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version})\n`);
  console.log('| measure | value |');
  console.log('| --- | --- |');
  console.log(`| index build on first search after reload (analysis + segment + view) | ${buildMs.toFixed(0)} ms |`);
  console.log(`| background analysis after activation, prepare() (longest event-loop stall) | ${prepareMs.toFixed(0)} ms (${prepareStall.toFixed(0)} ms) |`);
  console.log(`| the segment alone, built in one step (what a search that comes before prepare() pays) | ${segmentMs.toFixed(0)} ms |`);
  console.log(`| first search after prepare() (the caller's view) | ${preparedFirstMs.toFixed(0)} ms |`);
  console.log(
    `| reload changing one capability: prepare(previous) (${reprepared.kept} analyses kept, ${reprepared.analyzed} made) | ${reloadPrepareMs.toFixed(0)} ms |`,
  );
  console.log(`| heap of catalog + analyzed capabilities + one index | ${((after - before) / 1024 / 1024).toFixed(1)} MiB |`);
  console.log(
    `| find p50 / p99, uncached (${times.length} searches, ${QUERIES.length} queries en+zh) | ${percentile(times, 50).toFixed(2)} ms / ${percentile(times, 99).toFixed(2)} ms |`,
  );
  console.log(
    `| baseline: MiniSearch over the same capabilities, p50 / p99 (index build ${referenceBuildMs.toFixed(0)} ms) | ${percentile(referenceTimes, 50).toFixed(2)} ms / ${percentile(referenceTimes, 99).toFixed(2)} ms |`,
  );
  console.log(
    `| list_capabilities answer (compact: ${listing.structured.complete === false}) | ${listing.text.length} chars, built in ${listMs.toFixed(0)} ms |`,
  );
}

// ---------------------------------------------------------------------------------------------
// HTTP

async function runServer() {
  const { startRuntime } = await import(`${lib}/server/runtime.js`);
  const { startHttpServer } = await import(`${lib}/server/transports/http.js`);
  const runtime = await startRuntime({ manifestFile: values.manifest, principalsFile: values.principals, watch: false, log: () => {} });
  const server = await startHttpServer(runtime, { port: 0 });
  process.send({ url: server.url });
}

const BENCH_KEY = 'capreg-bench-find-key';
const BENCH_HEADERS = { Authorization: `Bearer ${BENCH_KEY}` };
const succeeded = (text) => text.includes('"success":true');

async function overHttp(count) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capreg-find-bench-'));
  const file = path.join(dir, 'manifest.json');
  fs.writeFileSync(file, (await buildManifest(count)).text);
  const principals = path.join(dir, 'principals.yaml');
  fs.writeFileSync(
    principals,
    `principals:\n  - id: bench\n    name: Bench\n    keySha256: ${createHash('sha256').update(BENCH_KEY).digest('hex')}\n    scopes: []\n`,
  );
  const child = fork(fileURLToPath(import.meta.url), ['--role', 'server', '--manifest', file, '--principals', principals], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const { url } = await new Promise((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    });
    const seconds = Number(values.seconds);
    const concurrency = Number(values.concurrency);
    const find = QUERIES.map((query, i) => toolCall('find_capabilities', { query, limit: 10 }, i + 1));
    const get = Array.from({ length: 50 }, (_, i) => toolCall('get_capability_protocol', { capabilityId: `cap-${String(i * 37).padStart(5, '0')}` }, i + 1));
    await httpLoad(url, find, BENCH_HEADERS, { check: succeeded, seconds: 1, concurrency }); // builds the index, warms the JIT
    await httpLoad(url, get, BENCH_HEADERS, { check: succeeded, seconds: 1, concurrency });
    // Every request a query not asked before: what a search costs when no answer is cached.
    const fresh = Array.from({ length: 200_000 }, (_, i) =>
      toolCall(
        'find_capabilities',
        { query: `${VERBS[i % VERBS.length]} the ${OBJECTS[(i >> 3) % OBJECTS.length]} for team${i % 997} #${i}`, limit: 10 },
        i + 1,
      ),
    );
    const rounds = [];
    for (let round = 0; round < 2; round += 1) {
      rounds.push({
        find: await httpLoad(url, find, BENCH_HEADERS, { check: succeeded, seconds, concurrency }),
        get: await httpLoad(url, get, BENCH_HEADERS, { check: succeeded, seconds, concurrency }),
        fresh: await httpLoad(url, fresh.slice(round * 100_000), BENCH_HEADERS, { check: succeeded, seconds, concurrency }),
      });
    }
    console.log(
      `\nHTTP at concurrency ${concurrency}, ${count} visible capabilities (protocols of ~${values['protocol-chars']} characters), ${seconds} s per run, server in a child process\n`,
    );
    console.log(
      '| round | find_capabilities req/s (12 repeated queries) | get_capability_protocol req/s | ratio | find, every query new, req/s | ratio | failures |',
    );
    console.log('| --- | --- | --- | --- | --- | --- | --- |');
    rounds.forEach(({ find: f, get: g, fresh: n }, i) =>
      console.log(
        `| ${i + 1} | ${f.rps.toFixed(0)} | ${g.rps.toFixed(0)} | ${(f.rps / g.rps).toFixed(2)}× | ${n.rps.toFixed(0)} | ${(n.rps / g.rps).toFixed(2)}× | ${f.failures + g.failures + n.failures} |`,
      ),
    );
  } finally {
    child.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  await quality();
  if (values['quality-only']) return;
  const count = Number(values.capabilities);
  await inProcess(count);
  if (values['in-process-only']) return;
  await overHttp(count);
}

if (values.role === 'server') await runServer();
else await main();

#!/usr/bin/env node
// Compiler benchmark: `capreg build` on a generated 1,000-capability registry, against the floor
// for any compile on this stack — a bare, single-threaded unified + remark-parse +
// remark-frontmatter parse of the same files (read + parse, nothing else).
//
//   npm run build:ts && node bench/build.mjs [--count 1000] [--runs 3] [--timeout 300] [--keep DIR] [--json]
//                                            [--against OTHER-CHECKOUT] [--registry DIR]
//
// --registry measures a copy of an existing registry (its capabilities/ and capreg.config.yaml)
// instead of a generated one: the shape of a real registry, not the generator's. The copy is what
// the rounds edit; the registry itself is only read.
//
// --against measures the builds of another checkout too (e.g. `git worktree add ../old <commit>`,
// `npm run build:ts` there), in the same rounds, on its own copy of the registry: before/after.
// One run, in this order (rounds interleaved so that a change in machine load hits every measure
// alike), each measure in a child process of its own, timed from spawn to exit:
//   baseline   node bench/build.mjs --baseline DIR (read + bare parse of every PROTOCOL.md, every tree kept)
//   cold       rm -rf DIR/.capreg/cache; node bin/capreg.js build --root DIR
//   no change  node bin/capreg.js build --root DIR            (cache warm, nothing changed)
//   one file   append a paragraph to one PROTOCOL.md; node bin/capreg.js build --root DIR
// Peak memory is the child's `process.resourceUsage().maxRSS` (the whole process: every worker
// thread included), reported by a preload module (`--import`) when the child exits; CPU is the
// child's user + system time. The table shows medians; ratios are against the baseline's median.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, readdir, readFile, rm, stat, writeFile, appendFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const bin = path.join(repo, 'bin', 'capreg.js');

const { values } = parseArgs({
  options: {
    baseline: { type: 'string' },
    count: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '3' },
    timeout: { type: 'string', default: '300' },
    keep: { type: 'string' },
    against: { type: 'string' },
    json: { type: 'boolean', default: false },
    registry: { type: 'string' },
  },
});

// ---------------------------------------------------------------------------------------------
// The baseline, in a child process of its own: read every PROTOCOL.md and parse it with a bare
// unified().use(remarkParse).use(remarkFrontmatter), keeping every tree (issue 13 defines it so).
// Each file is read with readFileSync: awaiting fs.promises.readFile between parses made the same
// loop ~1.7× slower on the 2-core machine (the parse itself slows down after each wait), and a
// baseline slowed down by its own reading would flatter every ratio against it.

async function baselineChild(root) {
  const [{ unified }, { default: remarkParse }, { default: remarkFrontmatter }] = await Promise.all([
    import('unified'),
    import('remark-parse'),
    import('remark-frontmatter'),
  ]);
  const start = performance.now();
  const processor = unified().use(remarkParse).use(remarkFrontmatter, ['yaml']);
  const dir = path.join(root, 'capabilities');
  const trees = [];
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    // capabilities/toolsets/ is the split toolsets layout, not a capability.
    if (!entry.isDirectory() || entry.name === 'toolsets') continue;
    const file = path.join(dir, entry.name, 'PROTOCOL.md');
    if (existsSync(file)) trees.push(processor.parse(readFileSync(file, 'utf8')));
  }
  process.stdout.write(`${JSON.stringify({ files: trees.length, inProcessMs: performance.now() - start })}\n`);
}

// ---------------------------------------------------------------------------------------------
// Child processes

/**
 * Reports each process's resource usage on fd 2 when it exits (loaded with --import, so also in
 * the process a command line starts itself again in: cli/respawn.ts), with its private memory
 * (Linux: /proc/self/smaps_rollup), the memory it does not share with the other process.
 */
const RUSAGE_PRELOAD = `data:text/javascript,${encodeURIComponent(
  "import{writeSync,readFileSync}from'node:fs';process.on('exit',()=>{const u=process.resourceUsage();let p=null;" +
    "try{p=[...readFileSync('/proc/self/smaps_rollup','utf8').matchAll(/^Private_(?:Clean|Dirty): +(\\d+) kB/gm)].reduce((s,m)=>s+Number(m[1]),0)}catch{}" +
    "writeSync(2,'\\n@@rusage '+JSON.stringify({maxRSS:u.maxRSS,privateKb:p,cpuMs:(u.userCPUTime+u.systemCPUTime)/1000,inProcessMs:performance.now()})+'\\n')})",
)}`;

/**
 * One command's usage from its processes' reports: CPU summed; memory the largest process's peak
 * plus the private memory of the others (a launcher's code pages are the child's too).
 */
function usageOf(reports) {
  if (reports.length === 0) return undefined;
  const largest = reports.reduce((a, b) => (b.maxRSS > a.maxRSS ? b : a));
  const others = reports.filter((report) => report !== largest);
  return {
    maxRSS: largest.maxRSS + others.reduce((sum, report) => sum + (report.privateKb ?? report.maxRSS), 0),
    cpuMs: reports.reduce((sum, report) => sum + report.cpuMs, 0),
    inProcessMs: Math.max(...reports.map((report) => report.inProcessMs)),
  };
}

function runChild(args, { timeoutMs, env = {} }) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, ['--import', RUSAGE_PRELOAD, ...args], {
      cwd: repo,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const wallMs = performance.now() - start;
      const usage = usageOf([...stderr.matchAll(/\n@@rusage (\{.*\})\n/g)].map((match) => JSON.parse(match[1])));
      stderr = stderr.replace(/\n@@rusage \{.*\}\n/g, '');
      if (signal) return reject(new Error(`${args.join(' ')}: killed by ${signal} after ${(wallMs / 1000).toFixed(1)} s (timeout ${timeoutMs / 1000} s)`));
      if (code !== 0 || !usage) return reject(new Error(`${args.join(' ')}: exit code ${code}\n${stderr}${stdout.slice(0, 2000)}`));
      resolve({ wallMs, cpuMs: usage.cpuMs, maxRssKb: usage.maxRSS, inProcessMs: usage.inProcessMs, stdout, stderr });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Statistics and output

const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

function table(rows, columns) {
  const widths = columns.map((column) => Math.max(column.length, ...rows.map((row) => String(row[column] ?? '').length)));
  const line = (cells) => `| ${cells.map((cell, i) => String(cell ?? '').padEnd(widths[i])).join(' | ')} |`;
  return [line(columns), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map((row) => line(columns.map((c) => row[c])))].join('\n');
}

// ---------------------------------------------------------------------------------------------
// The registry measured

/**
 * Copies the registry at `from` (its capabilities/ and capreg.config.yaml, nothing it built) to
 * `to`, and says what generateRegistry says of its own: the capability ids, sorted, and the bytes
 * of their PROTOCOL.md files.
 */
async function copyRegistry(from, to) {
  await cp(path.join(from, 'capabilities'), path.join(to, 'capabilities'), { recursive: true });
  if (existsSync(path.join(from, 'capreg.config.yaml'))) await cp(path.join(from, 'capreg.config.yaml'), path.join(to, 'capreg.config.yaml'));
  const ids = [];
  let bytes = 0;
  for (const entry of await readdir(path.join(to, 'capabilities'), { withFileTypes: true })) {
    const file = path.join(to, 'capabilities', entry.name, 'PROTOCOL.md');
    if (!entry.isDirectory() || entry.name === 'toolsets' || !existsSync(file)) continue;
    ids.push(entry.name);
    bytes += (await stat(file)).size;
  }
  ids.sort((a, b) => (a < b ? -1 : 1));
  if (ids.length === 0) throw new Error(`--registry: no capabilities/*/PROTOCOL.md under ${from}`);
  return { ids, bytes };
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const runs = Number(values.runs);
  const timeoutMs = Number(values.timeout) * 1000;
  const requested = Number(values.count);
  if (!Number.isInteger(requested) || requested < 1 || !Number.isInteger(runs) || runs < 1 || !(timeoutMs > 0)) {
    console.error('usage: node bench/build.mjs [--count N | --registry DIR] [--runs N] [--timeout SECONDS] [--keep DIR] [--against CHECKOUT] [--json]');
    process.exit(2);
  }
  if (!existsSync(path.join(repo, 'lib', 'cli', 'main.js'))) {
    console.error('bench/build.mjs: lib/ is missing; run `npm run build:ts` first');
    process.exit(2);
  }
  const { generateRegistry } = await import(pathToFileURL(path.join(here, 'generate-registry.mjs')).href);
  const root = values.keep ? path.resolve(values.keep) : await mkdtemp(path.join(os.tmpdir(), 'capreg-bench-'));
  const loadBefore = os.loadavg();
  const started = performance.now();
  const registry = values.registry ? path.resolve(values.registry) : undefined;
  /** The registry the rounds measure, written at `dir`: a copy of --registry, or a generated one. */
  const makeRegistry = (dir) => (registry ? copyRegistry(registry, dir) : generateRegistry(dir, { count: requested }));
  const summary = await makeRegistry(root);
  const count = summary.ids.length;
  const changedId = summary.ids[Math.floor(count / 2)];
  const changedFile = path.join(root, 'capabilities', changedId, 'PROTOCOL.md');
  const log = (text) => process.stderr.write(`${text}\n`);
  log(
    `bench: ${count} capabilities${registry ? ` (a copy of ${registry})` : ''}, ${(summary.bytes / 1024).toFixed(0)} KiB in ${root}; ${runs} round(s); node ${process.version}, ${os.availableParallelism()} cores, load ${loadBefore.map((l) => l.toFixed(1)).join(' ')}`,
  );

  /** cold / no change / one file of the checkout whose bin/capreg.js is `binPath`, on the registry at `registryRoot`. */
  const buildMeasures = (binPath, registryRoot) => {
    const changed = path.join(registryRoot, 'capabilities', changedId, 'PROTOCOL.md');
    let manifestAfterCold;
    const build = (label) => async () => {
      const result = await runChild([binPath, 'build', '--root', registryRoot], { timeoutMs });
      // A rebuild answered from the build cache says "is up to date" instead of "wrote".
      if (!/ wrote | is up to date/.test(result.stderr)) throw new Error(`${label}: the build did not succeed:\n${result.stderr}`);
      return result;
    };
    const manifest = () => readFile(path.join(registryRoot, 'dist', 'manifest.json'), 'utf8');
    return {
      cold: async () => {
        await writeFile(changed, original);
        await rm(path.join(registryRoot, '.capreg', 'cache'), { recursive: true, force: true });
        const result = await build('cold')();
        manifestAfterCold = await manifest();
        return result;
      },
      noChange: async () => {
        const result = await build('no change')();
        if ((await manifest()) !== manifestAfterCold) throw new Error('the no-change rebuild wrote a different manifest than the cold build');
        return result;
      },
      oneFile: async (round) => {
        await appendFile(changed, `\nRevision ${round} of desk ${Math.floor(count / 2)}: the benchmark appended this paragraph to change one file.\n`);
        return build('one file')();
      },
    };
  };
  const original = await readFile(changedFile, 'utf8');
  const measures = {
    baseline: async () => {
      const result = await runChild([fileURLToPath(import.meta.url), '--baseline', root], { timeoutMs });
      const report = JSON.parse(result.stdout);
      if (report.files !== count) throw new Error(`baseline parsed ${report.files} files, expected ${count}`);
      return { ...result, parseMs: report.inProcessMs };
    },
    ...buildMeasures(bin, root),
  };
  const againstRoot = values.against ? path.join(root, 'against') : undefined;
  if (values.against) {
    const againstBin = path.join(path.resolve(values.against), 'bin', 'capreg.js');
    if (!existsSync(againstBin)) throw new Error(`--against: no ${againstBin}`);
    await makeRegistry(againstRoot);
    for (const [key, measure] of Object.entries(buildMeasures(againstBin, againstRoot))) measures[`${key}Against`] = measure;
  }
  const results = Object.fromEntries(Object.keys(measures).map((key) => [key, []]));
  for (let round = 1; round <= runs; round += 1) {
    for (const [key, measure] of Object.entries(measures)) {
      const result = await measure(round);
      results[key].push(result);
      log(
        `  round ${round} ${key.padEnd(16)} ${result.wallMs.toFixed(0).padStart(7)} ms wall ${result.cpuMs.toFixed(0).padStart(7)} ms cpu ${(result.maxRssKb / 1024).toFixed(0).padStart(5)} MiB`,
      );
    }
  }
  await writeFile(changedFile, original);

  const base = {
    wall: median(results.baseline.map((r) => r.wallMs)),
    rss: median(results.baseline.map((r) => r.maxRssKb)),
  };
  const targets = { baseline: '', cold: '≤ 1.0×', noChange: '≤ 0.1×', oneFile: '' };
  const limits = { cold: 1.0, noChange: 0.1 };
  /** Peak RSS against the bare parse's (issue 13). */
  const RSS_LIMIT = 1.5;
  const names = {
    baseline: 'baseline: bare parse (read + remark-parse + frontmatter, 1 thread, trees kept)',
    cold: 'cold build (no cache)',
    noChange: 'rebuild, nothing changed',
    oneFile: 'rebuild, one file changed',
  };
  for (const key of ['cold', 'noChange', 'oneFile']) {
    names[`${key}Against`] = `${names[key]} — ${values.against}`;
    targets[`${key}Against`] = targets[key];
  }
  const baseCpu = median(results.baseline.map((r) => r.cpuMs));
  const rows = Object.keys(measures).map((key) => {
    const wall = median(results[key].map((r) => r.wallMs));
    const ratio = wall / base.wall;
    // Each round's measure against the same round's baseline: load that drifts during a run
    // (a shared machine) cancels out better than in the ratio of medians.
    const paired = median(results[key].map((r, round) => r.wallMs / results.baseline[round].wallMs));
    const cpu = median(results[key].map((r) => r.cpuMs));
    return {
      measure: names[key],
      'wall ms (median)': wall.toFixed(0),
      'runs (wall ms)': results[key].map((r) => r.wallMs.toFixed(0)).join(', '),
      'vs baseline': `${ratio.toFixed(2)}×`,
      'per round': `${paired.toFixed(2)}×`,
      'cpu ms (median)': cpu.toFixed(0),
      'cpu vs baseline': `${(cpu / baseCpu).toFixed(2)}×`,
      target: targets[key],
      ok: limits[key] === undefined ? '' : ratio <= limits[key] ? 'yes' : 'NO',
    };
  });
  const peak = Math.max(...['cold', 'noChange', 'oneFile'].map((key) => median(results[key].map((r) => r.maxRssKb))));
  const memoryRows = Object.keys(measures).map((key) => {
    const rss = median(results[key].map((r) => r.maxRssKb));
    // The round furthest from its own baseline: a median under the target can hide rounds over it.
    const worst = Math.max(...results[key].map((r, round) => r.maxRssKb / results.baseline[round].maxRssKb));
    return {
      measure: names[key],
      'peak RSS MiB (median)': (rss / 1024).toFixed(0),
      'runs (MiB)': results[key].map((r) => (r.maxRssKb / 1024).toFixed(0)).join(', '),
      'vs baseline': `${(rss / base.rss).toFixed(2)}×`,
      'worst round': `${worst.toFixed(2)}×`,
      target: key === 'baseline' ? '' : `≤ ${RSS_LIMIT.toFixed(1)}×`,
      ok: key === 'baseline' ? '' : rss / base.rss <= RSS_LIMIT ? 'yes' : 'NO',
    };
  });
  const loadAfter = os.loadavg();
  const baselineParse = median(results.baseline.map((r) => r.parseMs));
  const output = [
    '',
    `capreg build benchmark — ${count} capabilities${registry ? ` of ${registry}` : ''} (${(summary.bytes / 1024).toFixed(0)} KiB), ${runs} round(s), node ${process.version}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'cpu'}), load avg ${loadBefore[0].toFixed(1)} → ${loadAfter[0].toFixed(1)}`,
    `baseline in-process (read + parse only, without node start-up and imports): ${baselineParse.toFixed(0)} ms`,
    '',
    table(rows, ['measure', 'wall ms (median)', 'runs (wall ms)', 'vs baseline', 'per round', 'cpu ms (median)', 'cpu vs baseline', 'target', 'ok']),
    "(vs baseline: ratio of the medians; per round: median of each round's ratio to its own baseline; cpu: user + system time of the process, all threads)",
    '',
    table(memoryRows, ['measure', 'peak RSS MiB (median)', 'runs (MiB)', 'vs baseline', 'worst round', 'target', 'ok']),
    "(worst round: the highest of each round's peak against that round's baseline)",
    '',
    `total bench time ${((performance.now() - started) / 1000).toFixed(0)} s`,
  ].join('\n');
  console.log(output);
  if (values.json) {
    console.log(
      JSON.stringify({
        count,
        runs,
        node: process.version,
        cores: os.availableParallelism(),
        loadBefore,
        loadAfter,
        baselineParseMs: baselineParse,
        peakRssKb: peak,
        results: Object.fromEntries(Object.entries(results).map(([k, list]) => [k, list.map(({ stdout: _o, stderr: _e, ...rest }) => rest)])),
      }),
    );
  }
  if (!values.keep) await rm(root, { recursive: true, force: true });
}

if (values.baseline !== undefined) await baselineChild(values.baseline);
else await main();

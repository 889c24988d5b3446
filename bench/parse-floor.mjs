#!/usr/bin/env node
// The floor under a cold build: what the parser the design names costs on its own, and what two
// cores give, measured on an existing registry (e.g. one kept by `bench/build.mjs --keep DIR`).
//
//   npm run build:ts && node bench/parse-floor.mjs --root DIR [--rounds 2] [--only bare,parser]
//
// Each measure runs in a child process of its own and parses every capabilities/*/PROTOCOL.md
// (read with readFileSync first, not timed), rounds interleaved so that machine load hits each alike:
//   bare        unified + remark-parse + remark-frontmatter, trees kept (bench/build.mjs's baseline)
//   table       bare + the GFM table extension only
//   gfm         bare + remark-gfm
//   chosen      the parser a parse worker chooses for each text (remark-gfm, without autolink
//               literals where the body cannot hold one: compiler/parse-markdown.ts)
//   chosen−table  the same without GFM's table construct (its trees differ: tables stay
//               paragraphs), to show what the tables cost; the child also counts the table cells
//   parser      `chosen` with each tree dropped once parsed: the least a build must run, with no
//               code of capreg's around it
//   worker      what a parse worker does per file: parseUncounted (GFM parse, YAML frontmatter with
//               positions, blocks, links, tables) and v8.serialize
//   worker ×2   two `worker` children at once, each parsing every file: their mean time against one
//               alone is what two cores give (V8 collects garbage and compiles on threads of its own)
// Reported per measure: in-process time (the parse loop only), the child's whole-process wall time
// (start, imports and reads included, as bench/build.mjs times its baseline and a build) and its
// CPU (all its threads: V8's garbage collection and compilation included).
//
// The CPU budget: a cold build within 1.0× the bare parse's whole-process wall time W on C cores
// can spend at most C × W of CPU. `parser`'s CPU is a lower bound on any build's (every protocol
// must be parsed by it; threads add work, they take none away), so when it is over C × W the
// target cannot be met on this machine by anything around the parser.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { serialize } from 'node:v8';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const { values } = parseArgs({
  options: { root: { type: 'string' }, rounds: { type: 'string', default: '2' }, only: { type: 'string' }, child: { type: 'string' } },
});

/** Every PROTOCOL.md's path and text, in folder order. */
function protocols(root) {
  const dir = path.join(root, 'capabilities');
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== 'toolsets')
    .map((entry) => entry.name)
    .sort()
    .map((name) => ({ path: `capabilities/${name}/PROTOCOL.md`, content: readFileSync(path.join(dir, name, 'PROTOCOL.md'), 'utf8') }));
}

async function child(mode, root) {
  const [{ unified }, { default: remarkParse }, { default: remarkFrontmatter }, { default: remarkGfm }, { gfmTable }, { gfmTableFromMarkdown }] =
    await Promise.all([
      import('unified'),
      import('remark-parse'),
      import('remark-frontmatter'),
      import('remark-gfm'),
      import('micromark-extension-gfm-table'),
      import('mdast-util-gfm-table'),
    ]);
  const { parseUncounted, markdownParserFor, withoutConstructs } = await import(pathToFileURL(path.join(repo, 'lib/compiler/parse-markdown.js')).href);
  function tableOnly() {
    const data = this.data();
    (data.micromarkExtensions ??= []).push(gfmTable());
    (data.fromMarkdownExtensions ??= []).push(gfmTableFromMarkdown());
  }
  const bare = () => unified().use(remarkParse).use(remarkFrontmatter, ['yaml']);
  function withoutTables() {
    const data = this.data();
    const names = new Set(['table', 'wwwAutolink', 'protocolAutolink', 'emailAutolink']);
    data.micromarkExtensions = data.micromarkExtensions.map((extension) => withoutConstructs(extension, names));
    // As the worker's parser: without the autolink literals' transform either.
    data.fromMarkdownExtensions = data.fromMarkdownExtensions.map((extension) =>
      Array.isArray(extension) ? extension.filter((item) => !(item.enter && 'literalAutolink' in item.enter)) : extension,
    );
  }
  const processors = { bare: bare(), table: bare().use(tableOnly), gfm: bare().use(remarkGfm), 'chosen−table': bare().use(remarkGfm).use(withoutTables) };
  const files = protocols(root);
  const kept = [];
  const start = performance.now();
  for (const file of files) {
    if (mode === 'worker') serialize(parseUncounted(file.path, file.content));
    else if (mode === 'parser') markdownParserFor(file.content).parse(file.content);
    else if (mode === 'chosen') kept.push(markdownParserFor(file.content).parse(file.content));
    else kept.push(processors[mode].parse(file.content));
  }
  const ms = performance.now() - start;
  const cpu = process.cpuUsage();
  let cells = 0;
  const countCells = (node) => {
    if (node.type === 'tableCell') cells += 1;
    for (const child of node.children ?? []) countCells(child);
  };
  if (mode === 'chosen') kept.forEach(countCells);
  process.stdout.write(`${JSON.stringify({ files: kept.length || files.length, ms, cpuMs: (cpu.user + cpu.system) / 1000, cells })}\n`);
}

function run(mode, root) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const proc = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', mode, '--root', root], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk) => (out += chunk));
    proc.on('error', reject);
    proc.on('close', (code) =>
      code === 0 ? resolve({ ...JSON.parse(out), wallMs: performance.now() - started }) : reject(new Error(`${mode}: exit code ${code}`)),
    );
  });
}

const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

if (values.child) {
  await child(values.child, values.root);
} else {
  if (!values.root) {
    process.stderr.write('usage: node bench/parse-floor.mjs --root DIR [--rounds 2] [--only MODE,...]\n');
    process.exit(2);
  }
  const root = path.resolve(values.root);
  const known = ['bare', 'table', 'gfm', 'chosen', 'chosen−table', 'parser', 'worker', 'worker ×2'];
  const chosen = values.only === undefined ? known : values.only.split(',').map((mode) => mode.trim());
  const unknown = chosen.filter((mode) => !known.includes(mode));
  if (unknown.length > 0 || !chosen.includes('bare')) {
    process.stderr.write(
      `--only: ${unknown.length > 0 ? `unknown ${unknown.join(', ')}` : "bare is every ratio's base"}; one or more of ${known.join(', ')}\n`,
    );
    process.exit(2);
  }
  const modes = chosen.filter((mode) => mode !== 'worker ×2');
  const results = Object.fromEntries(chosen.map((mode) => [mode, []]));
  for (let round = 1; round <= Number(values.rounds); round += 1) {
    for (const mode of modes) {
      const result = await run(mode, root);
      results[mode].push(result);
      process.stderr.write(
        `  round ${round} ${mode.padEnd(12)} ${result.ms.toFixed(0).padStart(7)} ms  process ${result.wallMs.toFixed(0)} ms  cpu ${result.cpuMs.toFixed(0)} ms\n`,
      );
    }
    if (!chosen.includes('worker ×2')) continue;
    const pair = await Promise.all([run('worker', root), run('worker', root)]);
    results['worker ×2'].push({
      ms: (pair[0].ms + pair[1].ms) / 2,
      wallMs: Math.max(pair[0].wallMs, pair[1].wallMs),
      cpuMs: (pair[0].cpuMs + pair[1].cpuMs) / 2,
    });
    process.stderr.write(`  round ${round} worker ×2 ${pair.map((result) => result.ms.toFixed(0)).join(' and ')} ms\n`);
  }
  const middle = (mode, key) => median(results[mode].map((result) => result[key]));
  const bareMs = middle('bare', 'ms');
  const cells = results.chosen?.[0]?.cells;
  process.stdout.write(
    `\nparse floor — ${results.bare[0].files} protocols${cells === undefined ? '' : ` (${cells} table cells)`} in ${root}, ${values.rounds} round(s), node ${process.version}\n\n`,
  );
  process.stdout.write('| measure | in-process ms (median) | vs bare | whole process ms | CPU ms (median) |\n| --- | --- | --- | --- | --- |\n');
  for (const mode of chosen) {
    const ms = middle(mode, 'ms');
    process.stdout.write(
      `| ${mode} | ${ms.toFixed(0)} | ${(ms / bareMs).toFixed(2)}× | ${middle(mode, 'wallMs').toFixed(0)} | ${middle(mode, 'cpuMs').toFixed(0)} |\n`,
    );
  }
  if (results.parser !== undefined) {
    // Per round, so that one round's load meets both sides alike.
    const cores = availableParallelism();
    const shares = results.parser.map((parser, round) => parser.cpuMs / (cores * results.bare[round].wallMs));
    const share = median(shares);
    process.stdout.write(
      `\nCPU budget of a cold build at 1.0× on ${cores} core(s): ${cores} × the bare parse's ${middle('bare', 'wallMs').toFixed(0)} ms = ${(cores * middle('bare', 'wallMs')).toFixed(0)} ms;\n` +
        `the parser alone (trees dropped, no code of capreg's) used ${middle('parser', 'cpuMs').toFixed(0)} ms: ${shares.map((value) => value.toFixed(2)).join(', ')} of it per round.\n` +
        (share > 1
          ? `It is over the budget: no build that parses with it can be within 1.0× here; it would need ${(middle('parser', 'cpuMs') / middle('bare', 'wallMs')).toFixed(1)} cores kept busy.\n`
          : `It is within the budget: ${((1 - share) * 100).toFixed(0)} % of it is left for everything else.\n`),
    );
  }
  if (results.worker !== undefined && results['worker ×2'] !== undefined) {
    const alone = middle('worker', 'ms');
    const together = middle('worker ×2', 'ms');
    const throughput = (2 * alone) / together;
    process.stdout.write(
      `\ntwo at once: each took ${(together / alone).toFixed(2)}× as long as one alone, so two cores parse ${throughput.toFixed(2)}× as fast as one;\n` +
        `two parse workers need at least ${(alone / throughput).toFixed(0)} ms for what the bare parse does in ${bareMs.toFixed(0)} ms (${(alone / throughput / bareMs).toFixed(2)}×), before anything else.\n`,
    );
  }
}

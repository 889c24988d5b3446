#!/usr/bin/env node
// The floor under a cold build: what the parser the design names costs on its own, and what two
// cores give, measured on an existing registry (e.g. one kept by `bench/build.mjs --keep DIR`).
//
//   npm run build:ts && node bench/parse-floor.mjs --root DIR [--rounds 2]
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
//   worker      what a parse worker does per file: parseUncounted (GFM parse, YAML frontmatter with
//               positions, blocks, links, tables) and v8.serialize
//   worker ×2   two `worker` children at once, each parsing every file: their mean time against one
//               alone is what two cores give (V8 collects garbage and compiles on threads of its own)
// Reported per measure: in-process time (the parse loop only) and the child's CPU (all its threads).
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { serialize } from 'node:v8';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const { values } = parseArgs({ options: { root: { type: 'string' }, rounds: { type: 'string', default: '2' }, child: { type: 'string' } } });

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
    const proc = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', mode, '--root', root], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk) => (out += chunk));
    proc.on('error', reject);
    proc.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`${mode}: exit code ${code}`))));
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
    process.stderr.write('usage: node bench/parse-floor.mjs --root DIR [--rounds 2]\n');
    process.exit(2);
  }
  const root = path.resolve(values.root);
  const modes = ['bare', 'table', 'gfm', 'chosen', 'chosen−table', 'worker'];
  const results = Object.fromEntries([...modes, 'worker ×2'].map((mode) => [mode, []]));
  for (let round = 1; round <= Number(values.rounds); round += 1) {
    for (const mode of modes) {
      const result = await run(mode, root);
      results[mode].push(result);
      process.stderr.write(`  round ${round} ${mode.padEnd(12)} ${result.ms.toFixed(0).padStart(7)} ms  cpu ${result.cpuMs.toFixed(0)} ms\n`);
    }
    const pair = await Promise.all([run('worker', root), run('worker', root)]);
    results['worker ×2'].push({ ms: (pair[0].ms + pair[1].ms) / 2, cpuMs: (pair[0].cpuMs + pair[1].cpuMs) / 2 });
    process.stderr.write(`  round ${round} worker ×2 ${pair.map((result) => result.ms.toFixed(0)).join(' and ')} ms\n`);
  }
  const bareMs = median(results.bare.map((result) => result.ms));
  const files = results.bare[0].files;
  process.stdout.write(
    `\nparse floor — ${files} protocols (${results.chosen[0].cells} table cells) in ${root}, ${values.rounds} round(s), node ${process.version}\n\n`,
  );
  process.stdout.write('| measure | in-process ms (median) | vs bare | CPU ms (median) |\n| --- | --- | --- | --- |\n');
  for (const [mode, list] of Object.entries(results)) {
    const ms = median(list.map((result) => result.ms));
    process.stdout.write(`| ${mode} | ${ms.toFixed(0)} | ${(ms / bareMs).toFixed(2)}× | ${median(list.map((result) => result.cpuMs)).toFixed(0)} |\n`);
  }
  const alone = median(results.worker.map((result) => result.ms));
  const together = median(results['worker ×2'].map((result) => result.ms));
  const throughput = (2 * alone) / together;
  process.stdout.write(
    `\ntwo at once: each took ${(together / alone).toFixed(2)}× as long as one alone, so two cores parse ${throughput.toFixed(2)}× as fast as one;\n` +
      `two parse workers need at least ${(alone / throughput).toFixed(0)} ms for what the bare parse does in ${bareMs.toFixed(0)} ms (${(alone / throughput / bareMs).toFixed(2)}×), before anything else.\n`,
  );
}

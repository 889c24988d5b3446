#!/usr/bin/env node
// What routing costs the version gate: `capreg check --against base` on a generated registry with
// evals (bench/generate-registry.mjs: 3 shouldMatch + 1 shouldNotMatch requests per capability),
// committed in a temporary Git repository, with one capability changed in the working tree in
// one of two ways, rounds interleaved, parse cache warm for both (so the difference is routing):
//   wording   a sentence of the body reworded, patch bump: nothing search ranks on changed, so the
//             evals are skipped (the baseline: the gate as it was before routing)
//   trigger   a trigger added, minor bump: the evals run over both trees (two indexes, every
//             request searched twice)
//
//   npm run build:ts && node bench/gate-routing.mjs [--count 1000] [--runs 3]
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.join(here, '..', 'bin', 'capreg.js');
const { values } = parseArgs({ options: { count: { type: 'string', default: '1000' }, runs: { type: 'string', default: '3' } } });

function run(args, cwd) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, [bin, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr, wallMs: performance.now() - start }));
  });
}

const git = (cwd, ...args) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor((list.length - 1) / 2)];

const count = Number(values.count);
const runs = Number(values.runs);
if (!Number.isInteger(count) || count < 2 || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: node bench/gate-routing.mjs [--count N] [--runs N]');
  process.exit(2);
}
if (!existsSync(path.join(here, '..', 'lib', 'cli', 'main.js'))) {
  console.error('bench/gate-routing.mjs: lib/ is missing; run `npm run build:ts` first');
  process.exit(2);
}
const { commitAsBase, generateRegistry } = await import(pathToFileURL(path.join(here, 'generate-registry.mjs')).href);
const root = await mkdtemp(path.join(os.tmpdir(), 'capreg-routing-bench-'));
try {
  const { ids } = await generateRegistry(root, { count });
  await commitAsBase(root);
  git(root, 'repack', '-a', '-d', '-q');

  const file = path.join(root, 'capabilities', ids[Math.floor(count / 2)], 'PROTOCOL.md');
  const original = await readFile(file, 'utf8');
  const bump = (text, level) =>
    text
      .replace(/protocol_version: (\d+)\.(\d+)\.(\d+)/, (_, a, b, c) =>
        level === 'minor' ? `protocol_version: ${a}.${Number(b) + 1}.0` : `protocol_version: ${a}.${b}.${Number(c) + 1}`,
      )
      .replace(/protocol_updated: .*/, 'protocol_updated: 2026-12-31');
  const variants = {
    wording: bump(original.replace('Keep replies short', 'Keep every reply short'), 'patch'),
    trigger: bump(original.replace('whenToUse:\n', 'whenToUse:\n  - benchmark trigger added to one capability\n'), 'minor'),
  };
  const expected = { wording: 'routing unchanged', trigger: `eval requests moved` };
  const times = { wording: [], trigger: [] };
  for (const text of Object.values(variants)) {
    // Warm the parse cache with this variant of the changed file (every other file is shared).
    await writeFile(file, text);
    await run(['lint'], root);
  }
  for (let round = 1; round <= runs; round += 1) {
    for (const [name, text] of Object.entries(variants)) {
      await writeFile(file, text);
      const result = await run(['check', '--against', 'base'], root);
      if (result.code !== 0 || !result.stderr.includes(expected[name])) throw new Error(`${name}: exit ${result.code}\n${result.stderr}`);
      times[name].push(result.wallMs);
      process.stderr.write(`  round ${round} ${name.padEnd(8)} ${result.wallMs.toFixed(0).padStart(7)} ms  ${result.stderr.trim().split('; ').at(-1)}\n`);
    }
  }
  const base = median(times.wording);
  console.log(
    `capreg check --against base, ${count} capabilities with evals (${4 * count} requests), node ${process.version}, load ${os.loadavg()[0].toFixed(1)}`,
  );
  console.log(`| change | median wall ms (rounds) | vs wording |`);
  console.log(`| --- | --- | --- |`);
  for (const name of ['wording', 'trigger']) {
    console.log(
      `| ${name} | ${median(times[name]).toFixed(0)} (${times[name].map((t) => t.toFixed(0)).join(', ')}) | ${(median(times[name]) / base).toFixed(2)}× |`,
    );
  }
} finally {
  await rm(root, { recursive: true, force: true });
}

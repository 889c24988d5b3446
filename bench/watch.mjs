#!/usr/bin/env node
// Watch-mode benchmark: how long after one PROTOCOL.md is saved do the diagnostics come out of
// `capreg lint --watch` (or `build --watch`), against the one-off `capreg lint` a user would run
// instead (parse cache warm), measured in the same run on the same registry.
//
//   npm run build:ts && node bench/watch.mjs [--count 10000] [--edits 20] [--root DIR] [--command lint|build] [--baseline-runs 3]
//
// --root uses an existing registry (it is edited: a sentence is appended to protocols and taken
// away again); without it one is generated in a temporary folder (bench/generate-registry.mjs).
// Each edit appends a sentence to a different capability's PROTOCOL.md; every fifth names a tool
// no toolset defines, and the bench checks that the report that follows names it. Timed per edit:
//   saved → report   from just before the write until the watch process's status line for that
//                     compile ("linted N capabilities in X ms") has been read from its stderr, which it
//                     prints right after the diagnostics on stdout: what the author waits for
//   in-process       the X of that line: from the compile's start (after the 25 ms settle) to the report
// The baseline is `capreg lint` run once per round after an edit, with the parse cache warm.
import { spawn, spawnSync } from 'node:child_process';
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { generateRegistry } from './generate-registry.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.join(here, '..', 'bin', 'capreg.js');

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '10000' },
    edits: { type: 'string', default: '20' },
    root: { type: 'string' },
    command: { type: 'string', default: 'lint' },
    'baseline-runs': { type: 'string', default: '3' },
  },
});
const edits = Number(values.edits);
if (!['lint', 'build'].includes(values.command)) throw new Error('--command is lint or build');

const log = (line) => process.stderr.write(`[watch bench] ${line}\n`);
let root = values.root;
let temporary;
if (root === undefined) {
  temporary = await mkdtemp(path.join(os.tmpdir(), 'capreg-watch-bench-'));
  root = temporary;
  log(`generating ${values.count} capabilities in ${root}`);
  await generateRegistry(root, { count: Number(values.count) });
}
const ids = (await import('node:fs')).readdirSync(path.join(root, 'capabilities')).filter((name) => !name.includes('.') && name !== 'toolsets');

const child = spawn(process.execPath, [bin, values.command, '--watch', '--format', 'json', '--root', root], { stdio: ['ignore', 'pipe', 'pipe'] });
let stderr = '';
let stdout = '';
const waiting = [];
child.stdout.on('data', (chunk) => (stdout += chunk));
child.stderr.on('data', (chunk) => {
  stderr += chunk;
  for (const waiter of [...waiting]) waiter();
});
const cleanup = () => child.kill('SIGTERM');
process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(1));

/** Wait for the n-th "linted … in X ms" status line; returns its X. */
function statusLine(n, timeoutMs) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no status line ${n} after ${timeoutMs} ms:\n${stderr}`)), timeoutMs);
    const check = () => {
      const lines = [...stderr.matchAll(/linted \d+ capabilit(?:y|ies) in (\d+) ms/g)];
      if (lines.length < n) return;
      clearTimeout(timer);
      waiting.splice(waiting.indexOf(check), 1);
      resolve(Number(lines[n - 1][1]));
    };
    waiting.push(check);
    check();
  });
}

function mebibytes(status, field) {
  const kib = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1]);
  return Math.round(kib / 1024);
}

const started = performance.now();
const first = await statusLine(1, 15 * 60_000);
log(`first compile: ${first} ms in-process, ${Math.round(performance.now() - started)} ms from spawn`);
await new Promise((resolve) => setTimeout(resolve, 1000));

const originals = new Map();
const saved = [];
const inProcess = [];
let checked = 0;
for (let i = 0; i < edits; i += 1) {
  const id = ids[(i * 7919) % ids.length];
  const file = path.join(root, 'capabilities', id, 'PROTOCOL.md');
  if (!originals.has(file)) originals.set(file, await readFile(file, 'utf8'));
  // A tool name no toolset defines, shaped like the protocol's own tools (unknown-tools reports it).
  const tool = `${/`([a-z0-9]+_[a-z0-9_]+)`/.exec(originals.get(file))?.[1] ?? 'bench_tool'}_bench${i}`;
  const unknown = i % 5 === 4 ? ` Then call \`${tool}\`.` : '';
  const before = stdout.length;
  const t0 = performance.now();
  await appendFile(file, `\nNever skip step ${i} of this procedure.${unknown}\n`);
  const x = await statusLine(i + 2, 120_000);
  saved.push(performance.now() - t0);
  inProcess.push(x);
  if (unknown) {
    if (!stdout.slice(before).includes(tool)) throw new Error(`edit ${i}: the report does not name ${tool}`);
    checked += 1;
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
}
// The watch process's memory (Linux): resident now and its peak.
const memory = await readFile(`/proc/${child.pid}/status`, 'utf8').then(
  (status) => `RSS ${mebibytes(status, 'VmRSS')} MiB, peak ${mebibytes(status, 'VmHWM')} MiB`,
  () => 'memory not measured (no /proc)',
);
child.kill('SIGTERM');
const code = await new Promise((resolve) => child.once('exit', resolve));
for (const [file, text] of originals) await writeFile(file, text);

const baseline = [];
for (let i = 0; i < Number(values['baseline-runs']); i += 1) {
  const file = [...originals.keys()][i % originals.size];
  await appendFile(file, `\nNever skip the baseline step ${i}.\n`);
  const t0 = performance.now();
  const run = spawnSync(process.execPath, [bin, 'lint', '--format', 'json', '--root', root], { encoding: 'utf8', maxBuffer: 1 << 30 });
  baseline.push(performance.now() - t0);
  if (run.status === null || run.status > 1) throw new Error(`capreg lint exited ${run.status}: ${run.stderr}`);
  await writeFile(file, originals.get(file));
}
// Put the parse cache back in step with the registry as it was.
spawnSync(process.execPath, [bin, 'lint', '--root', root], { encoding: 'utf8', maxBuffer: 1 << 30 });

const sorted = (list) => [...list].sort((a, b) => a - b);
const median = (list) => sorted(list)[Math.floor(list.length / 2)];
const p90 = (list) => sorted(list)[Math.min(list.length - 1, Math.floor(list.length * 0.9))];
const ms = (value) => `${Math.round(value)} ms`;
console.log(`capreg ${values.command} --watch, ${ids.length} capabilities, ${edits} edits (${checked} checked for their diagnostic); watch exited ${code}`);
console.log('');
console.log('| measure | median | p90 | max |');
console.log('| --- | --- | --- | --- |');
console.log(`| saved → report (watch) | ${ms(median(saved))} | ${ms(p90(saved))} | ${ms(Math.max(...saved))} |`);
console.log(`| in-process compile (watch) | ${ms(median(inProcess))} | ${ms(p90(inProcess))} | ${ms(Math.max(...inProcess))} |`);
console.log(`| baseline: one-off \`capreg lint\`, parse cache warm | ${ms(median(baseline))} | ${ms(p90(baseline))} | ${ms(Math.max(...baseline))} |`);
console.log('');
console.log(
  `watch / baseline (medians): ${(median(saved) / median(baseline)).toFixed(3)}×; first compile ${first} ms; watch process ${memory}; load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
if (temporary !== undefined) await rm(temporary, { recursive: true, force: true });

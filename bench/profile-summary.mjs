#!/usr/bin/env node
// Self time per function and per package from V8 CPU profiles (`node --cpu-prof`), all threads
// together (each worker thread writes a profile of its own).
//
//   node --cpu-prof --cpu-prof-dir /tmp/prof bin/capreg.js build --root DIR --no-cache
//   node bench/profile-summary.mjs /tmp/prof [--top 25]
//
// A function is "name file:line"; its package is the node_modules folder it was loaded from,
// "capreg <folder>" for this repository's own code, "node:internal" for Node's, or V8's
// pseudo-frames as they are: (garbage collector), (program), (idle). Shares are of the busy time
// (everything but (idle)).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const usage = 'usage: node bench/profile-summary.mjs PROFILE-DIR-OR-FILE... [--top 25]';

/** Package a frame's code belongs to. */
function packageOf(url, functionName) {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node:internal';
  const file = url.startsWith('file://') ? fileURLToPath(url) : url;
  const modules = file.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const parts = file.slice(modules + '/node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  const relative = path.relative(repo, file);
  return relative.startsWith('..') ? file : `capreg ${relative.split(path.sep).slice(0, 2).join('/')}`;
}

/** Adds each sample's interval to the self time of the node it hit. */
function addProfile(profile, byFunction, byPackage) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  let total = 0;
  for (let i = 0; i < profile.samples.length; i += 1) {
    const micros = profile.timeDeltas[i] ?? 0;
    const { functionName, url, lineNumber } = nodes.get(profile.samples[i]).callFrame;
    const shortName = functionName.length > 60 ? `${functionName.slice(0, 57)}...` : functionName;
    const name = `${shortName || '(anonymous)'}${url ? ` ${path.basename(url)}:${lineNumber + 1}` : ''}`;
    const pkg = packageOf(url, functionName);
    byFunction.set(`${name}\u0000${pkg}`, (byFunction.get(`${name}\u0000${pkg}`) ?? 0) + micros);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + micros);
    total += micros;
  }
  return total;
}

async function profileFiles(inputs) {
  const files = [];
  for (const input of inputs) {
    if (input.endsWith('.cpuprofile')) files.push(input);
    else files.push(...(await readdir(input)).filter((name) => name.endsWith('.cpuprofile')).map((name) => path.join(input, name)));
  }
  return files.sort();
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' } } });
const top = Number(values.top);
if (positionals.length === 0 || !Number.isInteger(top) || top < 1) {
  console.error(usage);
  process.exit(2);
}
const files = await profileFiles(positionals);
if (files.length === 0) {
  console.error(`no .cpuprofile in ${positionals.join(', ')}\n${usage}`);
  process.exit(2);
}
const byFunction = new Map();
const byPackage = new Map();
let total = 0;
for (const file of files) {
  const idleBefore = byPackage.get('(idle)') ?? 0;
  const threadTotal = addProfile(JSON.parse(await readFile(file, 'utf8')), byFunction, byPackage);
  const idle = (byPackage.get('(idle)') ?? 0) - idleBefore;
  console.log(`${path.basename(file)}: ${(threadTotal / 1000).toFixed(0)} ms sampled, ${((threadTotal - idle) / 1000).toFixed(0)} ms busy`);
  total += threadTotal;
}
const busy = total - (byPackage.get('(idle)') ?? 0);
const row = (micros, label) => `| ${label} | ${(micros / 1000).toFixed(0)} | ${((100 * micros) / busy).toFixed(1)} % |`;
const sorted = (map) => [...map].sort((a, b) => b[1] - a[1]).slice(0, top);
console.log(`\n${files.length} profile(s), ${(total / 1000).toFixed(0)} ms sampled in all, ${(busy / 1000).toFixed(0)} ms busy\n`);
byPackage.delete('(idle)');
byFunction.delete('(idle)\u0000(idle)');
console.log('| package | self ms | share of busy |\n| --- | --- | --- |');
for (const [pkg, micros] of sorted(byPackage)) console.log(row(micros, pkg));
console.log('\n| function | package | self ms | share of busy |\n| --- | --- | --- | --- |');
for (const [key, micros] of sorted(byFunction)) {
  const [name, pkg] = key.split('\u0000');
  console.log(row(micros, `\`${name}\` | ${pkg}`));
}

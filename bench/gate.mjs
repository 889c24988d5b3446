#!/usr/bin/env node
// Version-gate benchmark: `capreg check --against base` on a generated 1,000-capability registry
// (bench/generate-registry.mjs) committed in a temporary Git repository, with one capability changed
// (a trigger added, a minor bump: the gate passes), against a cold `capreg build` of the same tree.
//
//   npm run build:ts && node bench/gate.mjs [--count 1000] [--runs 3] [--keep DIR]
//
// One round, each measure a child process of its own, timed from spawn to exit; rounds are
// interleaved so that a change in machine load hits every measure alike:
//   cold build       rm -rf .capreg/cache; capreg build
//   lint, no cache   rm -rf .capreg/cache; capreg lint: the full lint of the new tree that the gate reports
//                    (docs/gate.md), the floor of a check without a cache
//   check, no cache  rm -rf .capreg/cache; capreg check --against base      (a CI runner without actions/cache)
//   check, cache     the parse cache holds the BASE tree's documents (what actions/cache restores from the
//                    base branch, or a developer's cache from before the edit); capreg check --against base
//   check, warm      the parse cache holds the new tree (a check right after a local lint or build)
// Targets: `check, no cache` ≤ 0.6× `cold build` (issue 13); `check, cache` ≤ 0.5× `cold build` (issue 4).
// Ratios are per round (each measure against the cold build of its own round), then the median.
// `--only coldBuild,checkNoCache` runs some measures only (a 10,000 round takes minutes).
// `--baseline-bin DIR/bin/capreg.js` adds `check, no cache` with another build of capreg, in the same
// rounds: before/after a change, e.g. `git archive <commit> | tar -x -C DIR`, link node_modules,
// `npx tsc -p tsconfig.build.json` there.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const bin = path.join(repo, 'bin', 'capreg.js');

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '3' },
    keep: { type: 'string' },
    only: { type: 'string' },
    'baseline-bin': { type: 'string' },
  },
});

function run(args, cwd, executable = bin) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, [executable, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, wallMs: performance.now() - start }));
  });
}

const git = (cwd, ...args) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

async function main() {
  const count = Number(values.count);
  const runs = Number(values.runs);
  if (!Number.isInteger(count) || count < 2 || !Number.isInteger(runs) || runs < 1) {
    console.error(
      'usage: node bench/gate.mjs [--count N] [--runs N] [--keep DIR] [--only coldBuild,lintNoCache,checkNoCache,checkBaseCache,checkWarm,baselineCheckNoCache] [--baseline-bin PATH]',
    );
    process.exit(2);
  }
  if (!existsSync(path.join(repo, 'lib', 'cli', 'main.js'))) {
    console.error('bench/gate.mjs: lib/ is missing; run `npm run build:ts` first');
    process.exit(2);
  }
  const { commitAsBase, generateRegistry } = await import(pathToFileURL(path.join(here, 'generate-registry.mjs')).href);
  const root = values.keep ? path.resolve(values.keep) : await mkdtemp(path.join(os.tmpdir(), 'capreg-gate-bench-'));
  const log = (text) => process.stderr.write(`${text}\n`);
  const loadBefore = os.loadavg();
  const summary = await generateRegistry(root, { count });

  // The base commit, then one capability changed the way an author would: a trigger added, minor bump.
  await commitAsBase(root);
  const changedId = summary.ids[Math.floor(count / 2)];
  const changedFile = path.join(root, 'capabilities', changedId, 'PROTOCOL.md');
  const original = await readFile(changedFile, 'utf8');
  const changed = original
    .replace('whenToUse:\n', 'whenToUse:\n  - benchmark trigger added to one capability\n')
    .replace(/protocol_version: (\d+)\.(\d+)\.\d+/, (_, major, minor) => `protocol_version: ${major}.${Number(minor) + 1}.0`)
    .replace(/protocol_updated: .*/, 'protocol_updated: 2026-12-31');
  if (changed === original) throw new Error(`could not change ${changedFile}`);
  await writeFile(changedFile, changed);
  git(root, 'commit', '-q', '-am', `change ${changedId}`);
  // A clone (what CI checks) keeps its objects in a pack, not as 2,000 loose files.
  git(root, 'repack', '-a', '-d', '-q');
  log(
    `bench: ${count} capabilities, ${(summary.bytes / 1024).toFixed(0)} KiB in ${root}; changed ${changedId}; ${runs} round(s); node ${process.version}, ${os.availableParallelism()} cores, load ${loadBefore.map((l) => l.toFixed(1)).join(' ')}`,
  );

  const cache = path.join(root, '.capreg', 'cache');
  const checkArgs = ['check', '--against', 'base', '--root', root];
  const expectCheck = (label, result) => {
    if (result.code !== 0 || !/1 changed, 0 added, 0 removed, \d+ unchanged; every version bump is right/.test(result.stderr)) {
      throw new Error(`${label}: unexpected result (exit ${result.code}):\n${result.stderr}${result.stdout.slice(0, 2000)}`);
    }
    return result;
  };
  /** Fill the parse cache with the base tree's documents: lint the base content, then restore the change. */
  const primeWithBase = async () => {
    await rm(cache, { recursive: true, force: true });
    await writeFile(changedFile, original);
    const lint = await run(['lint', '--root', root], root);
    await writeFile(changedFile, changed);
    if (lint.code !== 0) throw new Error(`priming lint failed:\n${lint.stderr}${lint.stdout.slice(0, 2000)}`);
  };
  const measures = {
    coldBuild: async () => {
      await rm(cache, { recursive: true, force: true });
      const result = await run(['build', '--root', root], root);
      if (result.code !== 0) throw new Error(`cold build failed:\n${result.stderr}${result.stdout.slice(0, 2000)}`);
      return result;
    },
    lintNoCache: async () => {
      await rm(cache, { recursive: true, force: true });
      const result = await run(['lint', '--root', root], root);
      if (result.code !== 0) throw new Error(`lint failed:\n${result.stderr}${result.stdout.slice(0, 2000)}`);
      return result;
    },
    checkNoCache: async () => {
      await rm(cache, { recursive: true, force: true });
      return expectCheck('check, no cache', await run(checkArgs, root));
    },
    checkBaseCache: async () => {
      await primeWithBase();
      return expectCheck('check, base cache', await run(checkArgs, root));
    },
    checkWarm: async () => expectCheck('check, warm', await run(checkArgs, root)),
    // Another build of capreg (an older commit, built with `npm run build:ts` in a copy of it), same registry, same round.
    ...(values['baseline-bin'] === undefined
      ? {}
      : {
          baselineCheckNoCache: async () => {
            await rm(cache, { recursive: true, force: true });
            return expectCheck('baseline check, no cache', await run(checkArgs, root, path.resolve(values['baseline-bin'])));
          },
        }),
  };
  const names = {
    coldBuild: 'cold `capreg build` (no parse cache)',
    lintNoCache: '`capreg lint`, no parse cache',
    checkNoCache: '`capreg check`, no parse cache',
    checkBaseCache: '`capreg check`, parse cache of the base tree',
    checkWarm: '`capreg check`, parse cache of the new tree',
    baselineCheckNoCache: `\`capreg check\`, no parse cache, baseline build (${values['baseline-bin']})`,
  };
  const chosen = values.only === undefined ? Object.keys(measures) : values.only.split(',').map((key) => key.trim());
  const unknown = chosen.filter((key) => !(key in measures));
  if (unknown.length > 0 || !chosen.includes('coldBuild')) {
    throw new Error(`--only: unknown measure(s) ${unknown.join(', ') || '(none)'}; coldBuild is always needed; measures: ${Object.keys(measures).join(', ')}`);
  }
  const results = Object.fromEntries(chosen.map((key) => [key, []]));
  for (let round = 1; round <= runs; round += 1) {
    for (const key of chosen) {
      const result = await measures[key]();
      results[key].push(result.wallMs);
      log(`  round ${round} ${key.padEnd(14)} ${result.wallMs.toFixed(0).padStart(7)} ms`);
    }
  }
  /** Each round's wall time over the same round's cold build: the load of that round cancels out. */
  const ratios = (key) => results[key].map((ms, index) => ms / results.coldBuild[index]);
  const rows = chosen.map((key) => {
    const perRound = ratios(key);
    return `| ${names[key]} | ${median(results[key]).toFixed(0)} | ${results[key].map((ms) => ms.toFixed(0)).join(', ')} | ${perRound.map((r) => r.toFixed(2)).join(', ')} | ${median(perRound).toFixed(2)}× |`;
  });
  const target = (key, limit, label) => {
    if (!(key in results)) return [];
    const ratio = median(ratios(key));
    return [`target: ${label} ≤ ${limit}× cold build (median of per-round ratios): ${ratio.toFixed(2)}× — ${ratio <= limit ? 'met' : 'NOT met'}`];
  };
  const loadAfter = os.loadavg();
  console.log(
    [
      '',
      `capreg check benchmark — ${count} capabilities (${(summary.bytes / 1024).toFixed(0)} KiB), one changed, ${runs} round(s), node ${process.version}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'cpu'}), load avg ${loadBefore[0].toFixed(1)} → ${loadAfter[0].toFixed(1)}`,
      '',
      '| measure | wall ms (median) | runs (wall ms) | per round vs cold build | median ratio |',
      '| --- | --- | --- | --- | --- |',
      ...rows,
      '',
      ...target('checkNoCache', 0.6, 'check without a parse cache (issue 13)'),
      ...target('checkBaseCache', 0.5, "check with the base tree's parse cache (issue 4)"),
    ].join('\n'),
  );
  if (!values.keep) await rm(root, { recursive: true, force: true });
}

await main();

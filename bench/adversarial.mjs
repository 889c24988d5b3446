#!/usr/bin/env node
// Adversarial inputs for the compiler: one PROTOCOL.md made of a single hostile pattern, at several
// sizes, compiled like `capreg lint` does (parse, token count, every rule against the bundled
// toolsets). Work per byte must be bounded: the time for 4× the input must stay near 4× the time.
//
//   npm run build:ts && node bench/adversarial.mjs [--sizes 8,16,32,64] [--timeout 20] [--only a,b]
//                                                   [--lib DIR] [--json]
//
// Sizes are KiB of body. Each measure runs in a worker thread that is terminated after --timeout
// seconds (shown as `>20s`), so a cubic case cannot hang the run. --lib points at another build's
// lib/ (e.g. a `git worktree` of an older commit) to measure before/after. `ratio` is the time of
// the largest size over the time of the size 4× smaller; `rules` lists the rule ids reported.
//
// Measured (2 vCPU, load average ~15 from other jobs, so wall times are noisy; --timeout 10/20),
// total time at 8 / 16 / 32 / 64 KiB, before -> after the bounded-work changes:
//   hyphen compound ab-     >10s at 8 KiB            -> 82 / 237 / 250 / 335 ms   (foreign-tools was cubic)
//   dot compound a.         >10s at 8 KiB            -> 106 / 232 / 123 / 223 ms
//   www dots / email-like   >10s at 8 KiB            -> ≤ 260 ms at 64 KiB
//   tool compound           2.1 s, >10s at 16 KiB    -> 170 / 180 / 144 / 248 ms
//   star-underscore run     0.8 / 1.8 / 6.5 / >10 s  -> ≤ 222 ms (refused by markdown-syntax)
//   underscore-star run     1.0 / 3.5 / >10 s        -> ≤ 147 ms (refused)
//   star-underscore lines   0.7 / 4.5 / >10 s        -> ≤ 205 ms (refused)
//   bracket-paren           1.0 / 2.1 / 7.5 / >10 s  -> ≤ 264 ms (refused)
//   long word aaa           1.0 / 1.7 / 3.5 / >10 s  -> 79 / 112 / 111 / 112 ms (counted in pieces)
//   backslashes             0.8 / 1.2 / 2.9 / >10 s  -> 0.6 / 0.8 / 1.0 / 2.0 s
//   less-than run, backtick run, pipes, image openers: >10 s at 64 KiB -> ≤ 1.4 s
// Still above 3× for 4× input (but under 8×, and under 3 s at 64 KiB): open brackets (3.2×),
// table many rows (4.6×): noisy on this machine, left alone.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');

/** Repeat `unit` until the text is `bytes` long (ASCII units: one byte per character). */
const fill = (unit, bytes) => unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
/** Lines of `width` characters made of `unit`, `bytes` in all. */
const lines = (unit, bytes, width = 80) => {
  const line = `${fill(unit, width)}\n`;
  return line.repeat(Math.max(1, Math.floor(bytes / line.length)));
};
/** A deterministic pseudo-random word of letters and digits (no whitespace at all). */
const noise = (bytes) => {
  let seed = 7;
  let out = '';
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  for (let i = 0; i < bytes; i += 1) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    out += alphabet[seed % alphabet.length];
  }
  return out;
};
/** Runs of backticks of growing length (1, 2, 3, …) separated by a letter: no span ever closes. */
const growingBackticks = (bytes) => {
  let out = '';
  for (let n = 1; out.length < bytes; n += 1) out += `${'`'.repeat(n)}a`;
  return out.slice(0, bytes);
};

/** name -> body of about `bytes` bytes. */
export const CASES = {
  'star-underscore run': (b) => fill('*_', b),
  'underscore-star run': (b) => fill('_*', b),
  'star run': (b) => fill('*', b),
  'star-underscore lines': (b) => lines('*_', b),
  'open brackets': (b) => fill('[', b),
  'bracket-paren': (b) => fill('](', b),
  'link openers': (b) => fill('[a](', b),
  'image openers': (b) => fill('![', b),
  'backtick run': (b) => fill('`', b),
  'growing backticks': growingBackticks,
  'less-than run': (b) => fill('<', b),
  'tag openers': (b) => fill('<a ', b),
  'html comment openers': (b) => fill('<!-- ', b),
  'table many columns': (b) => {
    const cols = Math.floor(b / 8);
    return `${'| a '.repeat(cols)}|\n${'| - '.repeat(cols)}|\n`;
  },
  'table many rows': (b) => `| Tool | Use |\n| --- | --- |\n${lines('| x | y ', b)}`,
  'pipes no table': (b) => fill('|', b),
  'emphasis nesting': (b) => fill('*a _b ', b),
  'link nesting': (b) => `${fill('[a ', b / 2)}${fill('](x) ', b / 2)}`,
  'long word aaa': (b) => fill('a', b),
  'long word noise': noise,
  'long word digits': (b) => fill('0123456789', b),
  'long line of words': (b) => fill('word ', b),
  'hyphen compound ab-': (b) => fill('ab-', b),
  'dot compound a.': (b) => fill('a.', b),
  'underscore compound a_': (b) => fill('a_', b),
  'tool compound': (b) => fill('work_log_record-', b),
  'repeated tool names': (b) => fill('automation_create_task ', b),
  'many headings': (b) => lines('x', b, 6).replace(/^/gm, '# '),
  'many links': (b) => fill('[a](capability:personal-automation) ', b),
  'many relative links': (b) => fill('[a](./x.md) ', b),
  'many definitions': (b) => Array.from({ length: Math.floor(b / 12) }, (_, i) => `[d${i}]: /x\n`).join(''),
  'abbreviations e.g.': (b) => fill('e.g. ', b),
  'email-like': (b) => fill('a.', b) + '@',
  'at signs': (b) => fill('a@', b),
  'www dots': (b) => fill('www.', b),
  'http run': (b) => fill('http://a', b),
  ampersands: (b) => fill('&a', b),
  'entity-like': (b) => fill('&#', b),
  backslashes: (b) => fill('\\', b),
  tildes: (b) => fill('~', b),
  'quote markers': (b) => lines('> ', b, 40),
  'list markers': (b) => lines('- ', b, 40),
  'special tokens': (b) => fill('<|endoftext|>', b),
  'cjk no spaces': (b) => fill('不要调用工具', Math.floor(b / 3)),
};

const FRONTMATTER = [
  '---',
  'id: adversarial',
  'name: Adversarial',
  'description: A hostile body.',
  'whenToUse:',
  '  - never',
  'requiredToolsets: [work-logs]',
  'protocol_version: 1.0.0',
  'protocol_updated: 2026-11-29',
  '---',
  'Never do this.',
  '',
  '',
].join('\n');

async function measure({ lib, name, kib }) {
  const compile = await import(pathToFileURL(path.join(lib, 'compiler', 'compile.js')).href);
  const parse = await import(pathToFileURL(path.join(lib, 'compiler', 'parse.js')).href);
  const toolsets = await readFile(path.join(repo, 'capabilities', 'toolsets.yaml'), 'utf8');
  const file = 'capabilities/adversarial/PROTOCOL.md';
  const content = FRONTMATTER + CASES[name](kib * 1024) + '\n';
  const input = {
    files: [
      { path: file, content },
      { path: 'capabilities/toolsets.yaml', content: toolsets },
    ],
    allPaths: [file, 'capabilities/toolsets.yaml'],
    foldersWithoutProtocol: [],
  };
  const started = performance.now();
  const document = parse.parseCapability(file, content);
  const parsed = performance.now();
  const result = compile.compileRegistry(input, { documents: [document] });
  const linted = performance.now();
  const rules = [...new Set(result.diagnostics.filter((d) => d.severity === 'error').map((d) => d.ruleId))].sort();
  return { parseMs: parsed - started, lintMs: linted - parsed, totalMs: linted - started, rules };
}

function runInWorker(job, timeoutMs) {
  return new Promise((resolve) => {
    const worker = new Worker(fileURLToPath(import.meta.url), { workerData: job });
    const timer = setTimeout(() => {
      void worker.terminate();
      resolve({ timedOut: true });
    }, timeoutMs);
    worker.once('message', (result) => {
      clearTimeout(timer);
      void worker.terminate();
      resolve(result);
    });
    worker.once('error', (error) => {
      clearTimeout(timer);
      resolve({ error: String(error) });
    });
  });
}

const fmt = (result, timeout) => {
  if (result.timedOut) return `>${timeout}s`;
  if (result.error) return 'crash';
  return result.totalMs < 1000 ? `${result.totalMs.toFixed(0)}ms` : `${(result.totalMs / 1000).toFixed(1)}s`;
};

async function main() {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '8,16,32,64' },
      timeout: { type: 'string', default: '20' },
      only: { type: 'string' },
      lib: { type: 'string', default: path.join(repo, 'lib') },
      json: { type: 'boolean', default: false },
    },
  });
  const sizes = values.sizes.split(',').map(Number);
  const timeout = Number(values.timeout);
  const names = values.only ? values.only.split(',') : Object.keys(CASES);
  const lib = path.resolve(values.lib);
  const rows = [];
  for (const name of names) {
    if (!(name in CASES)) throw new Error(`unknown case "${name}"; cases: ${Object.keys(CASES).join(', ')}`);
    const results = [];
    for (const kib of sizes) {
      const result = await runInWorker({ lib, name, kib }, timeout * 1000);
      results.push(result);
      // Once a size times out, bigger ones will too.
      if (result.timedOut) break;
    }
    const last = results.length - 1;
    const quarter = sizes.indexOf(sizes[last] / 4);
    const ratio =
      results.length === sizes.length && quarter >= 0 && results[last].totalMs !== undefined
        ? results[last].totalMs / Math.max(1, results[quarter].totalMs)
        : undefined;
    const row = { name, results, ratio };
    rows.push(row);
    if (!values.json) {
      const cells = sizes.map((_, i) => (results[i] ? fmt(results[i], timeout) : '-').padStart(8));
      const rules = results.find((r) => r.rules)?.rules.join(',') ?? '';
      console.log(`${name.padEnd(24)}${cells.join('')}  ratio ${ratio === undefined ? '  -  ' : ratio.toFixed(1).padStart(5)}  ${rules}`);
    }
  }
  if (values.json) console.log(JSON.stringify({ sizes, timeout, rows }, null, 2));
}

if (!isMainThread) {
  parentPort.postMessage(await measure(workerData));
} else if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}

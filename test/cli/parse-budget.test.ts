// The parse budget (limits.maxParseMs): a PROTOCOL.md whose parse is still running when its budget
// ends becomes one registry-files error at 1:1, its worker is terminated and replaced, and every
// other file is still parsed and linted. The slow input is genuine: a table of some 100,000 rows,
// which remark-gfm parses in linear time but at ~10-30 µs a byte (tens of seconds for 3 MiB),
// far past the small budget these tests set.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { deserialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { refuseOverBudget } from '../../cli/compile-root.js';
import { compileRegistry, protocolFiles } from '../../compiler/compile.js';
import { parseConfig } from '../../compiler/config.js';
import { parseCapability } from '../../compiler/parse.js';
import type { CapabilityDocument } from '../../compiler/types.js';
import { commitAll, git, initRepository } from '../gate/fixture.js';
import { REPO_ROOT, cleanProtocol, runBin, tempRegistry, writeFiles, type JsonReport } from './helpers.js';

const BUDGET_MS = 1500;
/** Worker start-up (about 1 s on a loaded 2-core machine), reading 3 MiB, the other files, slack. */
const SLACK_MS = 20_000;

/** A protocol whose body is a table of `bytes` bytes. */
function slowProtocol(id: string, bytes = 3 * 1024 * 1024): string {
  const row = '| x | y |\n';
  return cleanProtocol(id, { body: `| Tool | Use |\n| --- | --- |\n${row.repeat(Math.ceil(bytes / row.length))}` });
}

/** A table of 2,000 columns in 1 MB: without the worker's heap limit its parse took 37 s and 2.3 GB. */
function wideProtocol(id: string): string {
  const columns = 2000;
  const head = `|${'a|'.repeat(columns)}\n|${'-|'.repeat(columns)}\n`;
  const rows = `${'|'.repeat(columns)}\n`.repeat(Math.floor((1_000_000 - head.length) / (columns + 1)));
  return cleanProtocol(id, { body: `- Never guess.\n\n${head}${rows}` });
}

/** The budget messages, and the diagnostic registry-files prints with them. */
const ADVICE = 'so it was stopped and not checked; simplify the Markdown (long runs of brackets or table rows, deep nesting) or split the file';
const budgetMessage = (ms: number): string =>
  `parsing this file took over ${ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`} (limits.maxParseMs in capreg.config.yaml), ${ADVICE}`;
const MEMORY_MESSAGE = `parsing this file needed over 1 GiB of memory (a parse worker's heap, which no configuration raises), ${ADVICE}`;
const overBudget = (file: string, ms: number): string => `${file}:1:1 registry-files ${budgetMessage(ms)}`;

const described = (report: JsonReport): string[] => report.diagnostics.map((d) => `${d.file}:${d.line}:${d.column} ${d.ruleId} ${d.message}`);

/**
 * Two pathological files: the first in the first batch, with clean files queued behind it in the
 * same worker (they are handed out again), the second later on (the replacement is replaced).
 */
function hostileRegistry(): string {
  const files: Record<string, string> = {
    'capreg.config.yaml': `limits:\n  maxFileBytes: 8388608\n  maxParseMs: ${BUDGET_MS}\n`,
    'capabilities/aaa-slow/PROTOCOL.md': slowProtocol('aaa-slow'),
    'capabilities/mmm-slow/PROTOCOL.md': slowProtocol('mmm-slow'),
    'capabilities/bad-version/PROTOCOL.md': cleanProtocol('bad-version', { version: 'latest' }),
  };
  for (let i = 0; i < 8; i += 1) files[`capabilities/cap-${i}/PROTOCOL.md`] = cleanProtocol(`cap-${i}`);
  return tempRegistry(files);
}

function timedBin(argv: string[], cwd: string): { code: number; stdout: string; stderr: string; ms: number } {
  const started = performance.now();
  const result = runBin(argv, { cwd });
  return { ...result, ms: performance.now() - started };
}

describe('capreg lint/build through the real bin: the parse budget', () => {
  it('reports each file over the budget at 1:1, lints the others, exits 1, and says the same twice', () => {
    const root = hostileRegistry();
    const runs = [
      timedBin(['lint', '--format', 'json'], root),
      timedBin(['lint', '--format', 'json'], root),
      timedBin(['lint', '--format', 'json', '--no-cache'], root),
    ];
    for (const result of runs) {
      expect(result.stderr).toBe('');
      expect(result.code).toBe(1);
      // Two slow files, each stopped at its budget; never the minutes a full parse takes.
      expect(result.ms).toBeLessThan(2 * BUDGET_MS + SLACK_MS);
      const report = JSON.parse(result.stdout) as JsonReport;
      const lines = described(report);
      expect(lines).toContain(overBudget('capabilities/aaa-slow/PROTOCOL.md', BUDGET_MS));
      expect(lines).toContain(overBudget('capabilities/mmm-slow/PROTOCOL.md', BUDGET_MS));
      // One diagnostic per slow file: no other rule sees a half-read capability.
      expect(report.diagnostics.filter((d) => d.file.includes('-slow/'))).toHaveLength(2);
      // The other files were parsed and linted as usual.
      expect(report.diagnostics.filter((d) => d.file === 'capabilities/bad-version/PROTOCOL.md' && d.ruleId === 'frontmatter-schema')).toHaveLength(1);
      expect(report.diagnostics.filter((d) => d.file.includes('/cap-'))).toEqual([]);
    }
    expect(runs[1]!.stdout).toBe(runs[0]!.stdout);
    expect(runs[2]!.stdout).toBe(runs[0]!.stdout);
  });

  it('build: the same error, nothing written', () => {
    const root = hostileRegistry();
    const result = timedBin(['build', '--format', 'json'], root);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^capreg build: \d+ error\(s\); nothing written\n$/);
    expect(described(JSON.parse(result.stdout) as JsonReport)).toContain(overBudget('capabilities/aaa-slow/PROTOCOL.md', BUDGET_MS));
    expect(fs.existsSync(path.join(root, 'dist'))).toBe(false);
  });

  it('stops a file whose parse needs more than the worker heap long before its time budget, and says so', { timeout: 240_000 }, () => {
    const root = tempRegistry({
      'capreg.config.yaml': 'limits:\n  maxParseMs: 120000\n',
      'capabilities/wide/PROTOCOL.md': wideProtocol('wide'),
      'capabilities/bad-version/PROTOCOL.md': cleanProtocol('bad-version', { version: 'latest' }),
    });
    const rusage = `data:text/javascript,${encodeURIComponent("process.on('exit',()=>process.stderr.write('maxRSS '+process.resourceUsage().maxRSS+'\\n'))")}`;
    // Without the parse cache, and with it (the workers then send serialized documents).
    for (const cache of [['--no-cache'], []]) {
      const result = runBin(['lint', '--format', 'json', ...cache], { cwd: root, nodeOptions: ['--import', rusage] });
      expect(result.code).toBe(1);
      const report = JSON.parse(result.stdout) as JsonReport;
      // Said as memory, not as the time budget: raising limits.maxParseMs would not help.
      expect(described(report)).toContain(`capabilities/wide/PROTOCOL.md:1:1 registry-files ${MEMORY_MESSAGE}`);
      expect(described(report).some((line) => line.startsWith('capabilities/bad-version/PROTOCOL.md'))).toBe(true);
      const maxRssKiB = Number(/maxRSS (\d+)/.exec(result.stderr)?.[1]);
      expect(maxRssKiB).toBeLessThan(1.8 * 1024 * 1024);
    }
  });

  it('refuses a budget that is not a whole number of milliseconds from 1 to 600000 (exit 2)', () => {
    for (const value of ['0', '600001', '1.5', 'ten']) {
      const root = tempRegistry({ 'capreg.config.yaml': `limits:\n  maxParseMs: ${value}\n`, 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha') });
      expect(runBin(['lint'], { cwd: root })).toEqual({
        code: 2,
        stdout: '',
        stderr: 'capreg lint: invalid configuration: capreg.config.yaml:2:15: `limits.maxParseMs` must be a whole number of milliseconds from 1 to 600000\n',
      });
    }
  });
});

/** A registry of `files` in a Git repository, committed and tagged `base`. */
function taggedBase(files: Record<string, string>): string {
  const root = tempRegistry(files);
  initRepository(root);
  commitAll(root, 'base');
  git(root, 'tag', 'base');
  return root;
}

describe('capreg check through the real bin: the parse budget on both sides', () => {
  const config = `limits:\n  maxFileBytes: 8388608\n  maxParseMs: ${BUDGET_MS}\n`;

  it('fails closed on a base file over the budget: it cannot be compared', () => {
    const root = taggedBase({
      'capreg.config.yaml': config,
      'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'),
      'capabilities/slow/PROTOCOL.md': slowProtocol('slow'),
    });
    writeFiles(root, { 'capabilities/slow/PROTOCOL.md': cleanProtocol('slow') });
    commitAll(root, 'the table is gone');
    const result = timedBin(['check', '--against', 'base', '--format', 'json'], root);
    expect(result.code).toBe(1);
    expect(result.ms).toBeLessThan(BUDGET_MS + SLACK_MS);
    const report = JSON.parse(result.stdout) as JsonReport;
    expect(described(report)).toEqual([
      `capabilities/slow/PROTOCOL.md:1:1 registry-files at base: ${budgetMessage(BUDGET_MS)}; the version gate cannot compare this capability`,
    ]);
    // Not an added capability that passes: a change the gate could not compare, which fails.
    const { gate } = JSON.parse(result.stdout) as { gate: { changes: { id: string; kind: string; verdict: string }[] } };
    expect(gate.changes.find((change) => change.id === 'slow')).toMatchObject({ kind: 'changed', verdict: 'fail' });
  });

  it('says a base file was refused for memory, not time', { timeout: 120_000 }, () => {
    const root = taggedBase({
      'capreg.config.yaml': 'limits:\n  maxParseMs: 120000\n',
      'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'),
      'capabilities/wide/PROTOCOL.md': wideProtocol('wide'),
    });
    writeFiles(root, { 'capabilities/wide/PROTOCOL.md': cleanProtocol('wide') });
    commitAll(root, 'the table is gone');
    const result = runBin(['check', '--against', 'base', '--format', 'json'], { cwd: root });
    expect(result.code).toBe(1);
    expect(described(JSON.parse(result.stdout) as JsonReport)).toEqual([
      `capabilities/wide/PROTOCOL.md:1:1 registry-files at base: ${MEMORY_MESSAGE}; the version gate cannot compare this capability`,
    ]);
  });

  it('applies a lowered budget to a file the cache learned under a higher one, as a run without the cache does', () => {
    const rules = 'rules:\n  token-budget: off\n';
    const root = taggedBase({
      'capreg.config.yaml': rules,
      'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'),
      'capabilities/slow/PROTOCOL.md': cleanProtocol('slow'),
    });
    // 64 KiB of prose: parsed within the default budget, so the cache learns it; far over 1 ms.
    const body = Array.from({ length: 800 }, (_, i) => `Step ${i}: read the *record* number ${i} and \`check\` it against [the notes](#step-${i}).`)
      .concat(['Never guess a record.'])
      .join('\n\n');
    writeFiles(root, { 'capabilities/slow/PROTOCOL.md': cleanProtocol('slow', { body }) });
    expect(timedBin(['lint'], root)).toMatchObject({ code: 0, stdout: '' });
    writeFiles(root, { 'capreg.config.yaml': `${rules}limits:\n  maxParseMs: 1\n` });
    // The parse cache keeps a document per budget: under the new one the file is parsed again.
    const cached = timedBin(['check', '--against', 'base', '--format', 'json'], root);
    const uncached = timedBin(['check', '--against', 'base', '--no-cache', '--format', 'json'], root);
    expect(cached.code).toBe(1);
    expect(described(JSON.parse(cached.stdout) as JsonReport)).toContain(overBudget('capabilities/slow/PROTOCOL.md', 1));
    expect(described(JSON.parse(uncached.stdout) as JsonReport)).toContain(overBudget('capabilities/slow/PROTOCOL.md', 1));
  });

  it('reports a head file over the budget once (a lint error, not also a removed capability)', () => {
    const root = taggedBase({
      'capreg.config.yaml': config,
      'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'),
      'capabilities/slow/PROTOCOL.md': cleanProtocol('slow'),
    });
    writeFiles(root, { 'capabilities/slow/PROTOCOL.md': slowProtocol('slow', 3 * 1024 * 1024) });
    const result = timedBin(['check', '--against', 'base', '--format', 'json'], root);
    expect(result.code).toBe(1);
    expect(result.ms).toBeLessThan(BUDGET_MS + SLACK_MS);
    expect(described(JSON.parse(result.stdout) as JsonReport)).toEqual([overBudget('capabilities/slow/PROTOCOL.md', BUDGET_MS)]);
  });

  it('says a head file over the budget took its capability out of the catalog when registry-files is off (it used to vanish unsaid)', () => {
    const root = taggedBase({
      'capreg.config.yaml': config,
      'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'),
      'capabilities/slow/PROTOCOL.md': cleanProtocol('slow'),
    });
    writeFiles(root, {
      'capreg.config.yaml': `rules:\n  registry-files: "off"\n${config}`,
      'capabilities/slow/PROTOCOL.md': slowProtocol('slow', 3 * 1024 * 1024),
    });
    const result = timedBin(['check', '--against', 'base', '--format', 'json', '--max-warnings', '0'], root);
    // As for a file the reader refused with that rule off: removed, a warning (which --max-warnings 0 fails).
    expect(described(JSON.parse(result.stdout) as JsonReport)).toEqual([
      'capabilities/slow/PROTOCOL.md:1:1 capability-removed capability `slow` was removed: agents and user capabilities that load it by id will no longer find it (a breaking change)',
    ]);
    expect(result.code).toBe(1);
  });
});

/** The compiled parse pool (lib/, built by the global setup): from TypeScript sources there is no worker file. */
async function compiledWorkers(): Promise<typeof import('../../cli/parse-workers.js')> {
  return (await import(pathToFileURL(path.join(REPO_ROOT, 'lib/cli/parse-workers.js')).href)) as typeof import('../../cli/parse-workers.js');
}

describe('parse workers in-process: the budget', () => {
  const files = [
    { path: 'capabilities/a/PROTOCOL.md', content: cleanProtocol('a') },
    { path: 'capabilities/slow/PROTOCOL.md', content: slowProtocol('slow') },
    { path: 'capabilities/b/PROTOCOL.md', content: cleanProtocol('b') },
    { path: 'capabilities/c/PROTOCOL.md', content: cleanProtocol('c') },
    { path: 'capabilities/d/PROTOCOL.md', content: cleanProtocol('d') },
  ];
  const expected = files.map((file) => (file.path.includes('slow') ? undefined : parseCapability(file.path, file.content)));

  it('leaves the slow document out, parses the ones queued behind it, within the budget', async () => {
    const { parseInWorkers } = await compiledWorkers();
    const started = performance.now();
    expect(await parseInWorkers(files, { maxParseMs: 800, threads: 1 })).toEqual(expected);
    expect(performance.now() - started).toBeLessThan(800 + SLACK_MS);
  });

  it('uses a worker started ahead (startParseWorker), ready or still loading', async () => {
    const { parseInWorkers, startParseWorker } = await compiledWorkers();
    startParseWorker();
    expect(await parseInWorkers(files, { maxParseMs: 800, threads: 1 })).toEqual(expected);
    startParseWorker();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(await parseInWorkers(files, { maxParseMs: 800, threads: 1 })).toEqual(expected);
  });

  it('keeps one worker for the next parse (--watch), warmed up or not, and the budget holds in it', async () => {
    const { parseInWorkers, startParseWorker } = await compiledWorkers();
    const clean = files.filter((file) => !file.path.includes('slow'));
    const cleanExpected = expected.filter((document) => document !== undefined);
    const options = { maxParseMs: 800, threads: 1, keepWorker: true };
    startParseWorker(40);
    expect(await parseInWorkers(clean, options)).toEqual(cleanExpected);
    // The kept worker takes the next parse: the slow file is still refused, the others parsed.
    expect(await parseInWorkers(files, options)).toEqual(expected);
    expect(await parseInWorkers(clean, options)).toEqual(cleanExpected);
    expect(await parseInWorkers(clean, { ...options, keepWorker: false })).toEqual(cleanExpected);
    expect(await parseInWorkers(files, { maxParseMs: 800, threads: 1 })).toEqual(expected);
  });

  it('does not count the time this thread was busy against a document whose answer was waiting', async () => {
    const { parseAndSerialize } = await compiledWorkers();
    const clean = files.filter((file) => !file.path.includes('slow'));
    const cleanExpected = expected.filter((document) => document !== undefined);
    // After the first document this thread is busy for longer than the budget, between two turns
    // of the event loop (as when it loads the tokenizer's tables while the workers parse); the
    // worker answers the next document meanwhile, well within the budget.
    const busy = (ms: number): void => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    const documents = await parseAndSerialize(clean, { maxParseMs: 300, threads: 1 }, (index) => {
      if (index === 0) setImmediate(() => busy(1_000));
    });
    expect(documents).toEqual(cleanExpected);
  });

  it('keeps a worker that has said it is ready: the warm-up of a spare still warming up is not counted against the next file', async () => {
    const { parseInWorkers, startParseWorker } = await compiledWorkers();
    const one = files.slice(0, 1);
    const oneExpected = expected.slice(0, 1);
    // The spare takes ~1.4 s to say it is ready (100 rounds); a worker without warm-up ~0.5 s, and
    // it parses the file while the spare is still warming up.
    startParseWorker(100);
    expect(await parseInWorkers(one, { maxParseMs: 10_000, threads: 2, keepWorker: true })).toEqual(oneExpected);
    // The next file goes to the kept worker at once; its clock starts when that worker is ready.
    expect(await parseInWorkers(one, { maxParseMs: 600, threads: 1, keepWorker: true })).toEqual(oneExpected);
    expect(await parseInWorkers(one, { maxParseMs: 600, threads: 1 })).toEqual(oneExpected);
  });

  it('does the same for the parse cache (serialized documents)', async () => {
    const { parseAndSerialize } = await compiledWorkers();
    const serialized: (Uint8Array | undefined)[] = files.map(() => undefined);
    const documents = await parseAndSerialize(files, { maxParseMs: 800, threads: 2 }, (index, bytes) => {
      // Each document once, as it comes in.
      expect(serialized[index]).toBeUndefined();
      serialized[index] = bytes;
    });
    expect(documents).toEqual(expected);
    // The bytes are the document without its token count (the cache keeps the count beside them).
    const uncounted = expected.map((document) => {
      if (!document) return undefined;
      const { bodyTokens: _counted, ...rest } = document;
      return rest;
    });
    expect(serialized.map((bytes) => (bytes ? (deserialize(bytes) as CapabilityDocument) : undefined))).toEqual(uncounted);
  });

  it('a file over the budget is one registry-files error at 1:1 and no other rule sees it', () => {
    const input = { files, allPaths: files.map((file) => file.path), foldersWithoutProtocol: [] };
    const { input: refused, documents, overBudget: over } = refuseOverBudget(input, expected, 800, new Set());
    expect(over).toEqual(['capabilities/slow/PROTOCOL.md']);
    expect(protocolFiles(refused)).toHaveLength(4);
    const config = parseConfig('limits:\n  maxParseMs: 800\n');
    const result = compileRegistry(refused, { config, documents });
    expect(
      result.diagnostics.filter((d) => d.file === 'capabilities/slow/PROTOCOL.md').map((d) => `${d.file}:${d.line}:${d.column} ${d.ruleId} ${d.message}`),
    ).toEqual([overBudget('capabilities/slow/PROTOCOL.md', 800)]);
  });

  it('--watch: a file refused for memory is said so after edits of other files, until it is edited', { timeout: 120_000 }, async () => {
    const { CompileSession } = (await import(
      pathToFileURL(path.join(REPO_ROOT, 'lib/cli/compile-session.js')).href
    )) as typeof import('../../cli/compile-session.js');
    const root = tempRegistry({
      'capreg.config.yaml': 'limits:\n  maxParseMs: 120000\n',
      'capabilities/wide/PROTOCOL.md': wideProtocol('wide'),
      'capabilities/other/PROTOCOL.md': cleanProtocol('other'),
    });
    const session = new CompileSession(root, { cache: false });
    const wide = (result: Awaited<ReturnType<typeof session.compile>>): string[] =>
      result.result.diagnostics.filter((d) => d.file === 'capabilities/wide/PROTOCOL.md').map((d) => `${d.ruleId} ${d.message}`);
    expect(wide(await session.compile())).toEqual([`registry-files ${MEMORY_MESSAGE}`]);
    const edit = async (id: string, text: string): Promise<Awaited<ReturnType<typeof session.compile>>> => {
      const file = path.join(root, 'capabilities', id, 'PROTOCOL.md');
      fs.writeFileSync(file, text);
      session.noteChange(file, false);
      return session.compile();
    };
    // Another file edited: the wide one is not parsed again, and is still said to be over memory.
    const afterOther = await edit('other', cleanProtocol('other', { body: '- Never guess a date.' }));
    expect(afterOther.parsed).toBe(1);
    expect(wide(afterOther)).toEqual([`registry-files ${MEMORY_MESSAGE}`]);
    // The wide file made small: parsed, and nothing left to say.
    expect(wide(await edit('wide', cleanProtocol('wide')))).toEqual([]);
  });

  it('says so when the file was refused for memory, not time', () => {
    const input = { files, allPaths: files.map((file) => file.path), foldersWithoutProtocol: [] };
    const { input: refused } = refuseOverBudget(input, expected, 800, new Set(['capabilities/slow/PROTOCOL.md']));
    expect(refused.files.find((file) => file.path === 'capabilities/slow/PROTOCOL.md')).toEqual({
      path: 'capabilities/slow/PROTOCOL.md',
      problem: MEMORY_MESSAGE,
    });
  });
});

describe('pre-parse bound: backtick runs of many lengths in one block', () => {
  /** `a``a```a…`: each run one backtick longer, none ever closes (as in bench/adversarial.mjs). */
  const growingBackticks = (bytes: number): string => {
    let out = '';
    for (let n = 1; out.length < bytes; n += 1) out += `${'`'.repeat(n)}a`;
    return out;
  };
  const bodyProblems = (body: string): string[] =>
    parseCapability('capabilities/x/PROTOCOL.md', cleanProtocol('x', { body })).bodyProblems.map((problem) => `${problem.range.line}: ${problem.message}`);

  it('refuses the block at its line, fast, instead of parsing it in time that grows faster than it', () => {
    const started = performance.now();
    expect(bodyProblems(`Intro.\n\n${growingBackticks(256 * 1024)}\n`)).toEqual([
      '15: this block of non-blank lines has backtick runs of over 16 different lengths, which makes parsing it take time that grows faster than its size; split it with blank lines or use fewer kinds of code spans',
    ]);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('parses 16 lengths in a block, and any number of lengths over several blocks', () => {
    const spans = (from: number, to: number): string =>
      Array.from({ length: to - from + 1 }, (_, k) => `${'`'.repeat(from + k)}x${'`'.repeat(from + k)}`).join(' ');
    expect(bodyProblems(`${spans(1, 16)}\n`)).toEqual([]);
    expect(bodyProblems(`${spans(1, 16)}\n\n${spans(17, 32)}\n`)).toEqual([]);
    expect(bodyProblems(`${spans(1, 8)}\n${spans(9, 17)}\n`)[0]).toMatch(/^14: this block of non-blank lines has backtick runs of over 16/);
  });
});

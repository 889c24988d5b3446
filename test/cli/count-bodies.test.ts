// The bodies of a large parse are counted on two threads: half by a parse worker kept for it,
// half by the main thread (cli/parse-workers.ts, countBodies). Through the compiled workers, with
// the size from which that happens lowered so that a few protocols reach it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseCapability } from '../../compiler/parse.js';
import { REPO_ROOT, cleanProtocol } from './helpers.js';

async function compiledWorkers(): Promise<typeof import('../../cli/parse-workers.js')> {
  return (await import(pathToFileURL(path.join(REPO_ROOT, 'lib/cli/parse-workers.js')).href)) as typeof import('../../cli/parse-workers.js');
}

// Bodies of different lengths and kinds, so that a count given to the wrong document shows: long
// runs the counter cuts up, text that looks like a special token, CJK, whitespace runs.
const BODIES = [
  'Ask the user before every write.\n',
  `${'a'.repeat(3000)} and ${' '.repeat(700)} after\n`,
  'Never print <|endoftext|> or <|fim_prefix|> as they are, not even once.\n',
  '在执行任何写入操作之前，先向用户展示完整的变更内容。\n'.repeat(5),
  '| Tool | Use |\n| --- | --- |\n| `records_read` | Reads a record |\n',
  'One line.\n',
  `${'- Step with `code` and **bold**.\n'.repeat(40)}`,
];
const files = BODIES.map((body, index) => ({ path: `capabilities/c${index}/PROTOCOL.md`, content: cleanProtocol(`c${index}`, { body }) }));
const expected = files.map((file) => parseCapability(file.path, file.content));

describe('parse workers: the bodies of a large parse counted on two threads', () => {
  it('gives every document the count the main thread gives it, a worker counting the first half', async () => {
    const { parseInWorkers } = await compiledWorkers();
    const countedInWorker = new Set<string>();
    const documents = await parseInWorkers(files, { maxParseMs: 10_000, threads: 2, countInTwoMinChars: 1, countedInWorker });
    expect(documents).toEqual(expected);
    expect(new Set(documents.map((document) => document?.bodyTokens)).size).toBe(BODIES.length);
    expect([...countedInWorker].sort()).toEqual(files.slice(0, Math.floor(files.length / 2)).map((file) => file.path));
  });

  it('counts every body on the main thread below the size', async () => {
    const { parseInWorkers, COUNT_IN_TWO_MIN_CHARS } = await compiledWorkers();
    const countedInWorker = new Set<string>();
    const total = files.reduce((sum, file) => sum + file.content.length, 0);
    expect(await parseInWorkers(files, { maxParseMs: 10_000, threads: 2, countInTwoMinChars: total + 1, countedInWorker })).toEqual(expected);
    expect(countedInWorker.size).toBe(0);
    expect(total).toBeLessThan(COUNT_IN_TWO_MIN_CHARS);
    expect(await parseInWorkers(files, { maxParseMs: 10_000, threads: 2, countedInWorker })).toEqual(expected);
    expect(countedInWorker.size).toBe(0);
  });

  it('keeps the counting worker as the spare under --watch, and it parses and counts the next time', async () => {
    const { parseInWorkers } = await compiledWorkers();
    const options = { maxParseMs: 10_000, threads: 1, countInTwoMinChars: 1, keepWorker: true };
    for (let round = 0; round < 3; round += 1) {
      const countedInWorker = new Set<string>();
      expect(await parseInWorkers(files, { ...options, countedInWorker })).toEqual(expected);
      expect(countedInWorker.size).toBe(Math.floor(files.length / 2));
    }
    // Without --watch the spare parses, counts half, and is ended.
    const last = new Set<string>();
    expect(await parseInWorkers(files, { ...options, keepWorker: false, countedInWorker: last })).toEqual(expected);
    expect(last.size).toBe(Math.floor(files.length / 2));
  });

  it('counts a single body on the main thread, and keeps the worker for the next parse under --watch', async () => {
    const { parseInWorkers } = await compiledWorkers();
    const options = { maxParseMs: 10_000, threads: 1, countInTwoMinChars: 1 };
    const countedInWorker = new Set<string>();
    expect(await parseInWorkers(files.slice(0, 1), { ...options, keepWorker: true, countedInWorker })).toEqual(expected.slice(0, 1));
    expect(countedInWorker.size).toBe(0);
    expect(await parseInWorkers(files, { ...options, keepWorker: true, countedInWorker })).toEqual(expected);
    expect(countedInWorker.size).toBe(Math.floor(files.length / 2));
    expect(await parseInWorkers(files.slice(0, 1), options)).toEqual(expected.slice(0, 1));
  });

  it('leaves a document over the budget a hole, and counts the others in their places', async () => {
    const { parseInWorkers } = await compiledWorkers();
    const slowRow = '| x | y |\n';
    const slow = {
      path: 'capabilities/slow/PROTOCOL.md',
      content: cleanProtocol('slow', { body: `| Tool | Use |\n| --- | --- |\n${slowRow.repeat(300_000)}` }),
    };
    const withSlow = [files[0]!, slow, ...files.slice(1)];
    const countedInWorker = new Set<string>();
    const documents = await parseInWorkers(withSlow, { maxParseMs: 800, threads: 1, countInTwoMinChars: 1, countedInWorker });
    expect(documents).toEqual([expected[0], undefined, ...expected.slice(1)]);
    expect(1 in documents).toBe(false);
    expect(countedInWorker.size).toBe(Math.floor(files.length / 2));
  });

  it('asks a keepWorker function when the parse is over, not when it starts (capreg check: the new tree keeps none once the base parses)', () => {
    // Two parses of one worker each, the first told only once it has begun whether to keep its
    // worker for the second; with --cpu-prof every worker thread writes a profile when it ends.
    const script = (keepAtEnd: boolean): string =>
      [
        `const { parseInWorkers } = await import(${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'lib/cli/parse-workers.js')).href)});`,
        `const files = ${JSON.stringify(files.slice(0, 2))};`,
        `let keep = ${!keepAtEnd};`,
        'const first = parseInWorkers(files, { maxParseMs: 10000, threads: 1, keepWorker: () => keep });',
        `keep = ${keepAtEnd};`,
        'await first;',
        'await parseInWorkers(files, { maxParseMs: 10000, threads: 1 });',
      ].join('\n');
    const folder = mkdtempSync(path.join(tmpdir(), 'capreg-count-'));
    try {
      const workers = (keepAtEnd: boolean): number => {
        const file = path.join(folder, `keep-${keepAtEnd}.mjs`);
        const profiles = path.join(folder, `profiles-${keepAtEnd}`);
        writeFileSync(file, script(keepAtEnd));
        const result = spawnSync(process.execPath, ['--cpu-prof', '--cpu-prof-dir', profiles, file], { encoding: 'utf8', timeout: 30_000 });
        expect(result.stderr).toBe('');
        expect(result.status).toBe(0);
        return readdirSync(profiles).filter((name) => !/^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(name)).length;
      };
      expect(workers(true)).toBe(1);
      expect(workers(false)).toBe(2);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('ends the counting worker when something fails on this thread, so that the process still exits', () => {
    // The Set the caller passed throws once the worker has answered: the parse rejects, and nothing
    // is left running (the worker had been ref'd for the count).
    const script = [
      `const { parseInWorkers } = await import(${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'lib/cli/parse-workers.js')).href)});`,
      'class Refusing extends Set { add() { throw new Error("refused by the caller"); } }',
      `const files = ${JSON.stringify(files)};`,
      'for (const keepWorker of [false, true]) {',
      '  await parseInWorkers(files, { maxParseMs: 10000, threads: 2, countInTwoMinChars: 1, keepWorker, countedInWorker: new Refusing() })',
      '    .then(() => console.log("resolved"), (error) => console.log(`rejected: ${error.message}`));',
      '}',
    ].join('\n');
    // A file, not `-e`: worker threads inherit the process's options, and `--input-type` stops them.
    const folder = mkdtempSync(path.join(tmpdir(), 'capreg-count-'));
    const file = path.join(folder, 'count.mjs');
    writeFileSync(file, script);
    const result = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 30_000 });
    rmSync(folder, { recursive: true, force: true });
    expect(result.signal).toBeNull();
    expect(result.status).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('rejected: refused by the caller\nrejected: refused by the caller\n');
  });
});

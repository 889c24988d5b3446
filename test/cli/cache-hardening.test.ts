// The on-disk caches under .capreg/cache/ against what a file there can hold: another shape behind a
// valid checksum, a FIFO, a symbolic link, a record naming files that are not the build's outputs;
// and the build cache's fingerprint against large files the compiler never reads.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { MAX_TEXT_INPUT_BYTES, buildCacheFile, registryFingerprint } from '../../cli/build-cache.js';
import { cacheDirectory } from '../../cli/cache-folder.js';
import { isTextInput } from '../../compiler/layout.js';
import { BIN, forgetLastLint, run, tempDir, type RunResult, BUILD_CACHE } from './helpers.js';

const { ALPHA, UP_TO_DATE, WROTE, registry } = BUILD_CACHE;

/** The real executable, killed after 20 s: a hang fails the test instead of the suite. */
function runBinBounded(argv: string[], cwd: string): RunResult {
  const result = spawnSync(process.execPath, [BIN, ...argv], { cwd, env: { PATH: process.env.PATH }, encoding: 'utf8', timeout: 20_000 });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

const shardPaths = (root: string): string[] =>
  fs
    .readdirSync(cacheDirectory(root))
    .filter((name) => name.endsWith('.bin'))
    .map((name) => path.join(cacheDirectory(root), name));

/** Replace what follows a shard's checksum (its records and token counts) with `change` of it, and give the shard a valid checksum again. */
function rewriteShardBody(file: string, change: (body: Buffer) => Buffer): void {
  const data = fs.readFileSync(file);
  const bodyStart = data.indexOf(10) + 1 + 32;
  const body = change(Buffer.from(data.subarray(bodyStart)));
  fs.writeFileSync(file, Buffer.concat([data.subarray(0, bodyStart - 32), createHash('sha256').update(body).digest(), body]));
}

/** Rewrite every record's document of a shard with `change`, and give the shard a valid checksum again. */
function rewriteShard(file: string, change: (document: Record<string, unknown>) => unknown): void {
  rewriteShardBody(file, (body) => {
    // The records, then a u32 token count per record and the number of records (cli/parse-cache.ts).
    const recordsEnd = body.length - 4 - 4 * body.readUInt32LE(body.length - 4);
    const parts: Buffer[] = [];
    for (let offset = 0; offset < recordsEnd;) {
      const keyLength = body.readUInt32LE(offset);
      const key = body.subarray(offset + 4, offset + 4 + keyLength);
      const documentLength = body.readUInt32LE(offset + 4 + keyLength);
      const documentStart = offset + 8 + keyLength;
      const document = serialize(change(deserialize(body.subarray(documentStart, documentStart + documentLength)) as Record<string, unknown>));
      const lengths = Buffer.alloc(8);
      lengths.writeUInt32LE(keyLength, 0);
      lengths.writeUInt32LE(document.length, 4);
      parts.push(lengths.subarray(0, 4), key, lengths.subarray(4), document);
      offset = documentStart + documentLength;
    }
    parts.push(body.subarray(recordsEnd));
    return Buffer.concat(parts);
  });
}

describe('parse cache: what a shard can hold', () => {
  it('a document of another shape behind a valid checksum is parsed again, not a crash, and its shard rewritten', async () => {
    const changes: ((document: Record<string, unknown>) => unknown)[] = [
      () => null,
      () => 42,
      (document) => ({ ...document, blocks: null }),
      (document) => ({ ...document, frontmatter: { ...(document.frontmatter as object), data: 'hello' } }),
      (document) => ({ ...document, frontmatter: { ...(document.frontmatter as object), data: { id: new Map([['a', 1]]) } } }),
      (document) => ({ ...document, links: [null] }),
      (document) => ({ ...document, bodyProblems: [{ message: 'x', range: { line: 1, column: 2 ** 31, endLine: 1, endColumn: 1 } }] }),
      // Only a catalog stand-in's block has a fingerprint (duplicate-content and the manifest would take it for the text's).
      (document) => ({ ...document, blocks: (document.blocks as object[]).map((block) => ({ ...block, fingerprint: '0000000000000000' })) }),
    ];
    const clean = await run(['lint'], { cwd: registry() });
    for (const change of changes) {
      const root = registry();
      expect((await run(['lint'], { cwd: root })).code).toBe(0);
      for (const file of shardPaths(root)) rewriteShard(file, change);
      forgetLastLint(root);
      const result = await run(['lint'], { cwd: root });
      expect(result.stderr).not.toMatch(/internal error/);
      expect(result).toEqual(clean);
      // The shards hold the documents of a fresh parse again.
      for (const file of shardPaths(root)) {
        rewriteShard(file, (document) => {
          expect(Array.isArray(document.blocks)).toBe(true);
          return document;
        });
      }
    }
  });

  it('a shard whose token counts do not match its records, behind a valid checksum, is parsed again, not a crash', async () => {
    const clean = await run(['lint'], { cwd: registry() });
    for (const count of [(records: number) => records + 1, (records: number) => records - 1, () => 0xffffffff]) {
      const root = registry();
      expect((await run(['lint'], { cwd: root })).code).toBe(0);
      const shards = shardPaths(root);
      for (const file of shards) {
        rewriteShardBody(file, (body) => {
          body.writeUInt32LE(count(body.readUInt32LE(body.length - 4)), body.length - 4);
          return body;
        });
      }
      const before = new Map(shards.map((file) => [file, fs.readFileSync(file)]));
      forgetLastLint(root);
      const result = await run(['lint'], { cwd: root });
      expect(result.stderr).not.toMatch(/internal error/);
      expect(result).toEqual(clean);
      // Each shard was written again, whole.
      for (const file of shards) expect(fs.readFileSync(file).equals(before.get(file)!)).toBe(false);
    }
  });

  it('a FIFO or a symbolic link in place of a shard is not opened, and is replaced by the shard', async () => {
    const root = registry();
    expect((await run(['lint'], { cwd: root })).code).toBe(0);
    const [fifo, link] = shardPaths(root);
    fs.rmSync(fifo!);
    execFileSync('mkfifo', [fifo!]);
    // A link to a valid shard: even that is not followed.
    const elsewhere = path.join(tempDir(), 'shard.bin');
    fs.renameSync(link!, elsewhere);
    fs.symlinkSync(elsewhere, link!);
    const result = runBinBounded(['lint'], root);
    expect(result.code).toBe(0);
    expect(fs.lstatSync(fifo!).isFile()).toBe(true);
    expect(fs.lstatSync(link!).isFile()).toBe(true);
  });
});

describe('the cache folder', () => {
  it('is not used through a link (a pull request could commit one): nothing is read or written where it points', () => {
    for (const link of ['.capreg', '.capreg/cache', '.capreg/cache/documents']) {
      const root = registry();
      const elsewhere = tempDir('capreg-elsewhere-');
      fs.mkdirSync(path.dirname(path.join(root, link)), { recursive: true });
      fs.symlinkSync(elsewhere, path.join(root, link));
      for (const command of ['build', 'build']) {
        const result = runBinBounded([command], root);
        expect(result.code).toBe(0);
        // Never "up to date": with no usable cache folder there is no build record.
        expect(result.stderr).toMatch(WROTE);
      }
      expect(fs.readdirSync(elsewhere)).toEqual([]);
    }
  });
});

describe('build cache: what build.json can hold', () => {
  it('a FIFO in place of build.json does not hang the build', () => {
    const root = registry();
    expect(runBinBounded(['build'], root).code).toBe(0);
    fs.rmSync(buildCacheFile(root));
    execFileSync('mkfifo', [buildCacheFile(root)]);
    const result = runBinBounded(['build'], root);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(WROTE);
  });

  it('a record naming a file that is not one of the build outputs, or an output through a link, is refused', async () => {
    const root = registry();
    await run(['build'], { cwd: root });
    const record = fs.readFileSync(buildCacheFile(root), 'utf8');
    const protocol = path.join(root, ALPHA);
    const bytes = fs.readFileSync(protocol);
    const forged = JSON.parse(record) as { outputs: unknown[] };
    forged.outputs.push({ path: protocol, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
    fs.writeFileSync(buildCacheFile(root), JSON.stringify(forged));
    expect((await run(['build'], { cwd: root })).stderr).toMatch(WROTE);
    expect((await run(['build'], { cwd: root })).stderr).toMatch(UP_TO_DATE);

    // The same bytes, through a symbolic link.
    const manifestPath = path.join(root, 'dist', 'manifest.json');
    const copy = path.join(tempDir(), 'manifest.json');
    fs.copyFileSync(manifestPath, copy);
    fs.rmSync(manifestPath);
    fs.symlinkSync(copy, manifestPath);
    expect((await run(['build'], { cwd: root })).stderr).toMatch(WROTE);
    expect(fs.lstatSync(manifestPath).isFile()).toBe(true);
  });

  it('a record whose report has another shape is refused, not a crash', async () => {
    const root = registry();
    await run(['build'], { cwd: root });
    const record = JSON.parse(fs.readFileSync(buildCacheFile(root), 'utf8')) as { report: Record<string, unknown> };
    const reports = [
      { ...record.report, diagnostics: [null], warningCount: 1 },
      { ...record.report, diagnostics: 'none' },
      { ...record.report, diagnostics: [{ file: 'x', line: '1', column: 1, endLine: 1, endColumn: 1, severity: 'warning', ruleId: 'r', message: 'm' }] },
    ];
    for (const report of reports) {
      fs.writeFileSync(buildCacheFile(root), JSON.stringify({ ...record, report }));
      const result = await run(['build'], { cwd: root });
      expect(result.stderr).not.toMatch(/internal error/);
      expect(result.code).toBe(0);
      expect(result.stderr).toMatch(WROTE);
    }
  });
});

describe('build cache: the registry fingerprint', () => {
  it('takes a file the compiler does not read by its path only: a 3 GiB reference is not read', async () => {
    const root = registry();
    const big = path.join(root, 'capabilities/alpha/references/big.bin');
    fs.mkdirSync(path.dirname(big));
    fs.writeFileSync(big, 'one');
    const before = registryFingerprint(root);
    expect(before).toBeDefined();
    fs.writeFileSync(big, 'two');
    expect(registryFingerprint(root)).toBe(before);
    // Sparse: no disk space, but reading it would take 3 GiB.
    fs.truncateSync(big, 3 * 1024 ** 3);
    expect(registryFingerprint(root)).toBe(before);
    expect((await run(['build'], { cwd: root })).stderr).toMatch(WROTE);
    expect((await run(['build'], { cwd: root })).stderr).toMatch(UP_TO_DATE);
    // Its path still counts.
    fs.renameSync(big, `${big}.old`);
    expect(registryFingerprint(root)).not.toBe(before);
  });

  it('takes a text input by its content, and does not cache a registry with one over the cap', () => {
    const root = registry();
    const before = registryFingerprint(root);
    // The same size and mtime, another content: still another fingerprint.
    const alpha = path.join(root, ALPHA);
    const { mtime } = fs.statSync(alpha);
    fs.writeFileSync(alpha, fs.readFileSync(alpha, 'utf8').replace('alpha name', 'alpha nome'));
    fs.utimesSync(alpha, mtime, mtime);
    expect(registryFingerprint(root)).not.toBe(before);
    const gamma = path.join(root, 'capabilities/gamma/PROTOCOL.md');
    fs.mkdirSync(path.dirname(gamma));
    fs.writeFileSync(gamma, '');
    fs.truncateSync(gamma, MAX_TEXT_INPUT_BYTES + 1);
    expect(registryFingerprint(root)).toBeUndefined();
  });

  it('reads as text exactly the files the compiler reads as text (one predicate for both: isTextInput)', () => {
    const expected: Record<string, boolean> = {
      'capabilities/toolsets.yaml': true,
      'capabilities/toolsets/a.yaml': true,
      'capabilities/toolsets/evals.yaml': true,
      'capabilities/toolsets/a.yml': false,
      'capabilities/toolsets/x/a.yaml': false,
      'capabilities/toolsets/PROTOCOL.md': false,
      'capabilities/alpha/PROTOCOL.md': true,
      'capabilities/alpha/evals.yaml': true,
      'capabilities/alpha/references/PROTOCOL.md': false,
      'capabilities/alpha/references/evals.yaml': false,
      'capabilities/alpha/toolsets.yaml': false,
      'capabilities/PROTOCOL.md': false,
      'capabilities/evals.yaml': false,
      'capabilities/alpha/protocol.md': false,
      'capabilities/alpha/notes.md': false,
    };
    expect(Object.fromEntries(Object.keys(expected).map((relative) => [relative, isTextInput(relative)]))).toEqual(expected);
  });
});

// The parse cache (cli/parse-cache.ts): cached documents are the documents a fresh parse gives,
// one edited file rewrites one shard, and a damaged or foreign cache is only a slower build.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { deserialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { cacheDirectory } from '../../cli/cache-folder.js';
import { parseWithCache } from '../../cli/parse-cache.js';
import { serializeDocument, threadCount } from '../../cli/parse-workers.js';
import { readRegistry } from '../../cli/read-registry.js';
import { DEFAULT_MAX_PARSE_MS } from '../../compiler/config.js';
import { parseCapability } from '../../compiler/parse.js';
import { REPO_ROOT, cleanProtocol, tempDir, tempRegistry } from './helpers.js';

const COUNT = 40;

function registry(): string {
  const files: Record<string, string> = {};
  for (let i = 0; i < COUNT; i += 1) files[`capabilities/cap-${i}/PROTOCOL.md`] = cleanProtocol(`cap-${i}`, { body: `Body ${i}.\n\n- Never guess ${i}.\n` });
  return tempRegistry(files);
}

async function parse(root: string, enabled = true) {
  const input = readRegistry(root, { maxFileBytes: 1024 * 1024 });
  const documents = await parseWithCache(root, input, { enabled, maxParseMs: DEFAULT_MAX_PARSE_MS });
  const fresh = input.files.filter((file) => file.path.endsWith('/PROTOCOL.md')).map((file) => parseCapability(file.path, file.content!));
  return { documents, fresh };
}

const shardFiles = (root: string): Map<string, Buffer> =>
  new Map(fs.readdirSync(cacheDirectory(root)).map((name) => [name, fs.readFileSync(path.join(cacheDirectory(root), name))]));

describe('parse cache', () => {
  it('gives the documents of a fresh parse, cold and warm', async () => {
    const root = registry();
    const cold = await parse(root);
    expect(cold.documents).toEqual(cold.fresh);
    const shards = shardFiles(root);
    expect(shards.size).toBeGreaterThan(1);
    const warm = await parse(root);
    expect(warm.documents).toEqual(warm.fresh);
    expect(shardFiles(root)).toEqual(shards); // nothing rewritten
  });

  it('parses again under another parse budget: a document parsed within one may be over a lower one', async () => {
    const root = registry();
    const input = readRegistry(root, { maxFileBytes: 1024 * 1024 });
    const parseUnder = async (maxParseMs: number): Promise<number> => {
      const fromCache = new Set<string>();
      await parseWithCache(root, input, { enabled: true, maxParseMs, fromCache });
      return fromCache.size;
    };
    expect(await parseUnder(DEFAULT_MAX_PARSE_MS)).toBe(0);
    expect(await parseUnder(DEFAULT_MAX_PARSE_MS)).toBe(COUNT);
    expect(await parseUnder(1000)).toBe(0);
    expect(await parseUnder(1000)).toBe(COUNT);
  });

  it('rewrites only the shard of an edited file, and drops removed files', async () => {
    const root = registry();
    await parse(root);
    const before = shardFiles(root);
    fs.appendFileSync(path.join(root, 'capabilities/cap-7/PROTOCOL.md'), '\nAsk again.\n');
    const edited = await parse(root);
    expect(edited.documents).toEqual(edited.fresh);
    expect(edited.documents.find((document) => document?.folder === 'cap-7')!.body).toContain('Ask again.');
    const after = shardFiles(root);
    const rewritten = [...after.keys()].filter((name) => !after.get(name)!.equals(before.get(name)!));
    expect(rewritten).toHaveLength(1);
    fs.rmSync(path.join(root, 'capabilities/cap-8'), { recursive: true });
    const removed = await parse(root);
    expect(removed.documents).toEqual(removed.fresh);
    expect(removed.documents).toHaveLength(COUNT - 1);
  });

  it('writes the shards while parsing: only shard files are left, each read back whole', async () => {
    const root = registry();
    await parse(root);
    const names = [...shardFiles(root).keys()];
    expect(names.every((name) => /^\d+\.bin$/.test(name))).toBe(true);
    for (const bytes of shardFiles(root).values()) {
      // Header line, then the sha256 of everything after it.
      const body = bytes.indexOf(0x0a) + 1 + 32;
      expect(
        createHash('sha256')
          .update(bytes.subarray(body))
          .digest()
          .equals(bytes.subarray(body - 32, body)),
      ).toBe(true);
    }
    // Every document is found again: a shard with a wrong digest or a lost record would be parsed again and rewritten.
    const shards = shardFiles(root);
    const warm = await parse(root);
    expect(warm.documents).toEqual(warm.fresh);
    expect(shardFiles(root)).toEqual(shards);
  });

  it('a cache folder that cannot be made only costs speed', async () => {
    const root = registry();
    fs.mkdirSync(path.join(root, '.capreg', 'cache'), { recursive: true });
    fs.writeFileSync(cacheDirectory(root), 'not a folder');
    const result = await parse(root);
    expect(result.documents).toEqual(result.fresh);
    expect(fs.readFileSync(cacheDirectory(root), 'utf8')).toBe('not a folder');
  });

  it('treats a damaged, truncated or foreign shard as missing', async () => {
    const root = registry();
    await parse(root);
    const names = [...shardFiles(root).keys()];
    const file = (name: string): string => path.join(cacheDirectory(root), name);
    fs.writeFileSync(file(names[0]!), fs.readFileSync(file(names[0]!)).subarray(0, 100));
    fs.writeFileSync(file(names[1]!), 'capreg parse cache 2; capreg 0.0.0-other; v8 0\n');
    const damaged = fs.readFileSync(file(names[2]!));
    damaged.fill(0xff, damaged.length - 40);
    fs.writeFileSync(file(names[2]!), damaged);
    const result = await parse(root);
    expect(result.documents).toEqual(result.fresh);
    expect((await parse(root)).documents).toEqual(result.fresh);
  });

  it('writes nothing when disabled', async () => {
    const root = registry();
    const { documents, fresh } = await parse(root, false);
    expect(documents).toEqual(fresh);
    expect(fs.existsSync(cacheDirectory(root))).toBe(false);
  });
});

describe('parse workers', () => {
  it('serializes a document into a buffer of its own', () => {
    const document = parseCapability('capabilities/a/PROTOCOL.md', cleanProtocol('a'));
    const bytes = serializeDocument(document);
    expect(deserialize(new Uint8Array(bytes))).toEqual(document);
  });

  it('uses one thread per 64 files, up to the number of cores', () => {
    expect(threadCount(10, 2)).toBe(1);
    expect(threadCount(64, 2)).toBe(1);
    expect(threadCount(65, 2)).toBe(2);
    expect(threadCount(1000, 2)).toBe(2);
    expect(threadCount(1000, 8)).toBe(8);
  });
});

describe('token counts', () => {
  it('a parse worker does not load the tokenizer, and the compiler loads it only for its first count', () => {
    // In these children an import of gpt-tokenizer fails, and `loaded` says whether its CommonJS
    // build (what compiler/tokens.ts requires for its first count) is among the loaded modules.
    const hooks = `export async function resolve(specifier, context, next) { if (specifier === 'gpt-tokenizer') throw new Error('tokenizer imported'); return next(specifier, context); }`;
    const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
    const loaded = [
      "const { createRequire } = await import('node:module');",
      "const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes('/gpt-tokenizer/'));",
    ].join('\n');
    const child = (script: string): { stdout: string; stderr: string } =>
      spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', `${loaded}\n${script}`], {
        cwd: REPO_ROOT,
        encoding: 'utf8',
      });
    const text = '---\\nid: a\\n---\\n\\nNever guess.\\n';
    const worker = child(
      [
        "await import('./lib/cli/parse-worker.js');",
        "const { parseUncounted } = await import('./lib/compiler/parse-markdown.js');",
        `console.log(JSON.stringify(parseUncounted('capabilities/a/PROTOCOL.md', '${text}')));`,
        'console.log(loaded());',
      ].join('\n'),
    );
    expect(worker.stderr).toBe('');
    const [document, workerLoaded] = worker.stdout.trim().split('\n');
    const { bodyTokens, ...uncounted } = parseCapability('capabilities/a/PROTOCOL.md', '---\nid: a\n---\n\nNever guess.\n');
    expect(JSON.parse(document!)).toEqual(uncounted);
    expect(bodyTokens).toBeGreaterThan(2);
    expect(workerLoaded).toBe('false');

    // The whole compiler loads without it (a build starts its parse first); the first count loads it.
    const compiler = child(
      [
        "const { compileRegistry } = await import('./lib/compiler/compile.js');",
        "await import('./lib/cli/compile-root.js');",
        'console.log(loaded());',
        "const files = [{ path: 'capabilities/a/PROTOCOL.md', content: '" + text + "' }];",
        "const result = compileRegistry({ files, allPaths: ['capabilities/a/PROTOCOL.md'], foldersWithoutProtocol: [] });",
        'console.log(loaded(), result.registry.capabilities.length);',
      ].join('\n'),
    );
    expect(compiler.stderr).toBe('');
    expect(compiler.stdout.trim().split('\n')).toEqual(['false', 'true 1']);
  });

  it('a parse counts the bodies once its workers are gone: the tokenizer is not loaded while documents come in', () => {
    // The compiled pool, in a child of its own: nothing has loaded the tokenizer there before.
    const files = Array.from({ length: 12 }, (_, i) => ({
      path: `capabilities/c${i}/PROTOCOL.md`,
      content: cleanProtocol(`c${i}`, { body: `Step ${i}.\n\n- Never guess ${i}.\n` }),
    }));
    const lib = (file: string): string => JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'lib', file)).href);
    const script = [
      `const { parseAndSerialize } = await import(${lib('cli/parse-workers.js')});`,
      `const tokens = await import(${lib('compiler/tokens.js')});`,
      'const arrivals = [];',
      `const documents = await parseAndSerialize(${JSON.stringify(files)}, { maxParseMs: 10000, threads: 2 }, () => arrivals.push(tokens.tokenizerRanks ?? 'not loaded'));`,
      'console.log(JSON.stringify({ arrivals, after: tokens.tokenizerRanks, counts: documents.map((document) => document.bodyTokens) }));',
    ].join('\n');
    // A file, not `-e`: the workers would inherit `--input-type`, which Node refuses for them.
    const probe = path.join(tempDir(), 'probe.mjs');
    fs.writeFileSync(probe, script);
    const child = spawnSync(process.execPath, [probe], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(child.stderr).toBe('');
    const { arrivals, after, counts } = JSON.parse(child.stdout) as { arrivals: string[]; after: string; counts: number[] };
    expect(arrivals).toEqual(files.map(() => 'not loaded'));
    expect(after).toBe('ranks-file');
    expect(counts).toEqual(files.map((file) => parseCapability(file.path, file.content).bodyTokens));
  });

  it('a warm cache gives each body count (kept beside the document)', async () => {
    const root = registry();
    const cold = await parse(root);
    const warm = await parse(root);
    expect(warm.documents.map((document) => document?.bodyTokens)).toEqual(cold.fresh.map((document) => document.bodyTokens));
    expect(cold.fresh.every((document) => document.bodyTokens > 3)).toBe(true);
  });
});

// Parsing is the expensive step of a build. Parsed documents are cached on disk by path and content
// hash, in a format tied to the capreg version (a new parser invalidates everything) and to V8's
// serialization format. Rules always run: they depend on the whole registry. (A rebuild with
// nothing changed at all does not get here: see build-cache.ts.)
//
// Layout: .capreg/cache/documents/<n>.bin, SHARDS files; a document lives in the shard of its path.
// A shard is a header line, the sha256 of the rest (32 bytes), then records: u32 key length, key
// (UTF-8 `path\0sha256`), u32 document length, document without its token count (v8.serialize:
// lossless, and cheap to produce in the parse workers, which do not count tokens); then each
// record's body token count (u32, in record order: counted once, after the parse, by the main
// thread) and the number of records (u32). Editing one file rewrites one shard, not the whole
// cache; reading needs no giant JSON string; a damaged shard is detected and ignored.
//
// The cache is trusted as much as the folder it lives in: whoever can write .capreg/ can write any
// output of capreg there (as with node_modules/), so the checksum and the shape check below are
// against damage and crashes, not against a forger. A shard is read only when it is a regular file
// under MAX_SHARD_BYTES, and a document is used only when it has the shape the compiler relies on;
// anything else is a miss: the file is parsed again and the shard rewritten. `capreg check`, whose
// cache folder is a pull request's, confirms the documents it compares (commands/check.ts).
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { deserialize } from 'node:v8';
import { protocolFiles } from '../compiler/compile.js';
import { contentDigest } from './content-digests.js';
import type { UncountedDocument } from '../compiler/parse-markdown.js';
import type { CapabilityDocument, FrontmatterProblem, LinkRef, RegistryInput, SourceFile, TextBlock } from '../compiler/types.js';
import { MAX_ALIAS_COUNT, MAX_YAML_DEPTH } from '../compiler/yaml-source.js';
import { removeStaleTemporaries, temporaryPath } from '../server/atomic-write.js';
import { cacheFolderUsable, readRegularFile } from './build-cache.js';
import { cacheDirectory, cacheFolder } from './cache-folder.js';
import { pipelineFingerprint } from './code-fingerprint.js';
import { INLINE_LIMIT, parseAndSerialize, parseInWorkers, threadCount, type ParsedDocuments, type ParseOptions } from './parse-workers.js';

const SHARDS = 16;
const HEADER = `capreg parse cache 4; capreg ${pipelineFingerprint()}\n`;
const HEADER_BYTES = Buffer.from(HEADER, 'utf8');
/**
 * A shard is never larger than this: the writer drops one that would be (its files are parsed every
 * time instead), and the reader refuses one that is. A document takes ~1.7× its file's bytes, so at
 * 10,000 capabilities of 16 KB a shard is ~17 MB; 256 MiB leaves room for registries 15× that.
 */
export const MAX_SHARD_BYTES = 256 * 1024 * 1024;

/** FNV-1a of the path: the shard a document lives in, stable while the file is edited. */
function shardOf(file: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < file.length; i += 1) hash = Math.imul(hash ^ file.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % SHARDS;
}

/** One cached document: its serialized form without the token count, and the count. */
interface CacheRecord {
  bytes: Uint8Array;
  bodyTokens: number;
}

/** The records of one shard file; empty when it is missing, from another version, or damaged. */
function readShard(file: string): Map<string, CacheRecord> {
  const records = new Map<string, CacheRecord>();
  const data = readRegularFile(file, MAX_SHARD_BYTES);
  if (data === undefined) return records;
  const bodyStart = HEADER_BYTES.byteLength + 32;
  if (data.byteLength < bodyStart || !data.subarray(0, HEADER_BYTES.byteLength).equals(HEADER_BYTES)) return records;
  const digest = createHash('sha256').update(data.subarray(bodyStart)).digest();
  if (!digest.equals(data.subarray(HEADER_BYTES.byteLength, bodyStart))) return records;
  if (data.byteLength < bodyStart + 4) return records;
  const count = data.readUInt32LE(data.byteLength - 4);
  const recordsEnd = data.byteLength - 4 - 4 * count;
  if (recordsEnd < bodyStart) return records;
  let offset = bodyStart;
  for (let record = 0; record < count; record += 1) {
    if (offset + 4 > recordsEnd) return new Map();
    const keyLength = data.readUInt32LE(offset);
    const keyEnd = offset + 4 + keyLength;
    if (keyEnd + 4 > recordsEnd) return new Map();
    const key = data.toString('utf8', offset + 4, keyEnd);
    const documentLength = data.readUInt32LE(keyEnd);
    const documentEnd = keyEnd + 4 + documentLength;
    if (documentEnd > recordsEnd) return new Map();
    records.set(key, { bytes: data.subarray(keyEnd + 4, documentEnd), bodyTokens: data.readUInt32LE(recordsEnd + 4 * record) });
    offset = documentEnd;
  }
  return offset === recordsEnd ? records : new Map<string, CacheRecord>();
}

/**
 * A shard file written while the documents come in: each record goes to a temporary file as soon
 * as it is known (a cached one at once, a parsed one when its worker answers), so the records are
 * never all in memory; the token counts, known once the parse is over, and the digest are filled
 * in at the end and the file renamed into place. Any failure only drops the shard (a cache that
 * cannot be written costs speed, nothing else).
 */
class ShardWriter {
  private readonly temporary: string;
  private fd: number | undefined;
  private failed = false;
  private offset = 0;
  private readonly digest = createHash('sha256');
  /** Each record's body token count, by its place in the file; a hole until it is counted. */
  private readonly tokens: number[] = [];

  constructor(private readonly file: string) {
    this.temporary = temporaryPath(file);
    this.attempt(() => {
      this.fd = openSync(this.temporary, 'w');
      // The digest's place stays zero until finish().
      this.write(HEADER_BYTES, false);
      this.write(Buffer.alloc(32), false);
    });
  }

  /** Writes a record; its token count is given now (a cached document) or later, to {@link counted}. @returns its place */
  add(key: string, bytes: Uint8Array, bodyTokens?: number): number {
    const keyBytes = Buffer.from(key, 'utf8');
    const head = Buffer.alloc(4 + keyBytes.byteLength + 4);
    head.writeUInt32LE(keyBytes.byteLength, 0);
    keyBytes.copy(head, 4);
    head.writeUInt32LE(bytes.byteLength, 4 + keyBytes.byteLength);
    this.attempt(() => {
      this.write(head);
      this.write(bytes);
    });
    const place = this.tokens.length;
    this.tokens.length += 1;
    if (bodyTokens !== undefined) this.counted(place, bodyTokens);
    return place;
  }

  counted(place: number, bodyTokens: number): void {
    this.tokens[place] = bodyTokens;
  }

  /** Write the token counts, fill in the digest and move the file into place; a record never counted drops the shard. */
  async finish(): Promise<void> {
    this.attempt(() => {
      const tail = Buffer.alloc(4 * (this.tokens.length + 1));
      for (let place = 0; place < this.tokens.length; place += 1) {
        const bodyTokens = this.tokens[place];
        if (bodyTokens === undefined) throw new Error('a record without its token count');
        tail.writeUInt32LE(bodyTokens, 4 * place);
      }
      tail.writeUInt32LE(this.tokens.length, 4 * this.tokens.length);
      this.write(tail);
      writeSync(this.fd!, this.digest.digest(), 0, 32, HEADER_BYTES.byteLength);
      closeSync(this.fd!);
      this.fd = undefined;
    });
    if (this.failed) return;
    try {
      await rename(this.temporary, this.file);
    } catch {
      this.abandon();
    }
  }

  /** Close and remove the temporary file; nothing more is written. */
  abandon(): void {
    this.failed = true;
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {
        // already closed
      }
      this.fd = undefined;
    }
    rmSync(this.temporary, { force: true });
  }

  private write(bytes: Uint8Array, digested = true): void {
    if (this.offset + bytes.byteLength > MAX_SHARD_BYTES) throw new Error('shard over MAX_SHARD_BYTES');
    if (digested) this.digest.update(bytes);
    writeSync(this.fd!, bytes, 0, bytes.byteLength, this.offset);
    this.offset += bytes.byteLength;
  }

  private attempt(step: () => void): void {
    if (this.failed) return;
    try {
      step();
    } catch {
      this.abandon();
    }
  }
}

// The shape check of a cached document: every field the rules and the manifest read, of the type
// they expect, so that a shard with a valid checksum but another shape (an older or foreign writer,
// a bug) is a miss, not a TypeError. Positions and list lengths are bounded by the file's length
// (nothing in a document is longer than the file it was parsed from), so no formatter pads to a
// column of 2^31 and no loop runs over an array of a billion holes.

type Check = (value: unknown, limit: number) => boolean;
type Fields = Record<string, unknown>;

const isFields = (value: unknown): value is Fields => typeof value === 'object' && value !== null;
const isString = (value: unknown): value is string => typeof value === 'string';
const isPosition = (value: unknown, limit: number): boolean => typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= limit;
const isRange = (value: unknown, limit: number): boolean =>
  isFields(value) && isPosition(value.line, limit) && isPosition(value.column, limit) && isPosition(value.endLine, limit) && isPosition(value.endColumn, limit);

function isList(value: unknown, limit: number, item: Check): boolean {
  if (!Array.isArray(value) || value.length > limit) return false;
  for (let i = 0; i < value.length; i += 1) if (!item(value[i], limit)) return false;
  return true;
}

const isStrings: Check = (value, limit) => isList(value, limit, isString);

const BLOCK_KINDS = new Set(Object.keys({ paragraph: 0, listItem: 0, tableRow: 0, heading: 0 } satisfies Record<TextBlock['kind'], 0>));
const LINK_KINDS = new Set(Object.keys({ link: 0, image: 0, definition: 0 } satisfies Record<LinkRef['kind'], 0>));
const PROBLEM_CODES = new Set(
  Object.keys({
    missing: 0,
    'yaml-syntax': 0,
    'yaml-depth': 0,
    'yaml-size': 0,
    'non-json': 0,
    'duplicate-key': 0,
    'not-a-mapping': 0,
    'alias-limit': 0,
    'forbidden-key': 0,
  } satisfies Record<FrontmatterProblem['code'], 0>),
);

const isBlock: Check = (block, limit) =>
  isFields(block) &&
  BLOCK_KINDS.has(block.kind as string) &&
  isString(block.text) &&
  isString(block.section) &&
  isRange(block.range, limit) &&
  (block.cells === undefined || isStrings(block.cells, limit)) &&
  // A parse never sets it: only a catalog stand-in's block has one (compiler/compile-one.ts).
  block.fingerprint === undefined;
const isLink: Check = (link, limit) =>
  isFields(link) && LINK_KINDS.has(link.kind as string) && isString(link.url) && isString(link.text) && isRange(link.range, limit);
const isCode: Check = (code, limit) => isFields(code) && typeof code.inline === 'boolean' && isString(code.value) && isRange(code.range, limit);
const isToolsRow: Check = (row, limit) => isFields(row) && isString(row.tool) && isStrings(row.cells, limit) && isRange(row.range, limit);
const isToolsTable: Check = (table, limit) => isFields(table) && isRange(table.range, limit) && isList(table.rows, limit, isToolsRow);
const isBodyProblem: Check = (problem, limit) => isFields(problem) && isString(problem.message) && isRange(problem.range, limit);
const isFrontmatterProblem: Check = (problem, limit) =>
  isFields(problem) && PROBLEM_CODES.has(problem.code as string) && isString(problem.message) && isRange(problem.range, limit);

/**
 * Frontmatter data is JSON (the YAML reader refuses anything else: no Map, Date or cycle), at most
 * MAX_YAML_DEPTH deep. Aliases make it a graph of shared parts; it is walked as the tree the rules
 * see, within a budget of nodes as large as the YAML reader's alias limit allows.
 */
function isJson(value: unknown, limit: number): boolean {
  let budget = (MAX_ALIAS_COUNT + 1) * limit;
  const walk = (node: unknown, depth: number): boolean => {
    if ((budget -= 1) < 0 || depth > MAX_YAML_DEPTH + 1) return false;
    if (node === null || typeof node === 'string' || typeof node === 'boolean') return true;
    if (typeof node === 'number') return Number.isFinite(node);
    if (Array.isArray(node)) return isList(node, limit, (item) => walk(item, depth + 1));
    if (typeof node !== 'object' || Object.getPrototypeOf(node) !== Object.prototype) return false;
    for (const key in node) if (!walk((node as Fields)[key], depth + 1)) return false;
    return true;
  };
  return walk(value, 1);
}

function isFrontmatter(value: unknown, limit: number): boolean {
  if (!isFields(value) || typeof value.present !== 'boolean' || !isRange(value.range, limit) || !isFields(value.ranges)) return false;
  if (value.data !== undefined && (!isFields(value.data) || Array.isArray(value.data) || !isJson(value.data, limit))) return false;
  const ranges = value.ranges;
  for (const key in ranges) {
    const entry = ranges[key];
    if (!isFields(entry) || !isRange(entry.value, limit) || (entry.key !== undefined && !isRange(entry.key, limit))) return false;
  }
  return isList(value.problems, limit, isFrontmatterProblem);
}

/** Whether a deserialized value is the document of `file` (its path and content hash) in the shape the compiler relies on. */
function isCachedDocument(value: unknown, file: SourceFile & { content: string }, contentHash: string): value is UncountedDocument {
  if (!isFields(value) || value.file !== file.path || value.contentHash !== contentHash || !isString(value.folder) || !isString(value.body)) return false;
  // Lines and columns count from 1; the file's length (+2 for an end past the last character) bounds them.
  const limit = file.content.length + 2;
  return (
    value.body.length <= file.content.length &&
    file.path === `capabilities/${value.folder}/PROTOCOL.md` &&
    isPosition(value.bodyStartLine, limit) &&
    isFrontmatter(value.frontmatter, limit) &&
    isList(value.blocks, limit, isBlock) &&
    isList(value.links, limit, isLink) &&
    isList(value.code, limit, isCode) &&
    isList(value.toolsTables, limit, isToolsTable) &&
    isList(value.bodyProblems, limit, isBodyProblem)
  );
}

function sameKeys(a: ReadonlySet<string>, b: ReadonlyMap<string, unknown>): boolean {
  if (a.size !== b.size) return false;
  for (const key of a.keys()) if (!b.has(key)) return false;
  return true;
}

/**
 * The documents of `input`'s protocol files, in order; undefined for a file whose parse ran over
 * `maxParseMs` (never cached: the next run tries again).
 */
export async function parseWithCache(
  root: string,
  input: RegistryInput,
  options: {
    enabled: boolean;
    maxParseMs: number;
    /** Parse worker threads at most (`--jobs`). */
    jobs?: number;
    /** Filled with the paths of the documents taken from the cache. */
    fromCache?: Set<string>;
    /** Filled with the paths of the files refused for memory (ParseOptions.overMemory). */
    overMemory?: Set<string>;
    /**
     * Keep the parse worker as the spare for a parse that follows (ParseOptions.keepWorker), when
     * the files to parse need only one (INLINE_LIMIT at most): `capreg check` parses the base's
     * changed files in it. A worker that parsed more would hold their garbage until the command
     * ends (+45 MiB for a check of 1,000 without a cache).
     */
    keepOneWorker?: boolean | (() => boolean) | undefined;
  },
): Promise<ParsedDocuments> {
  const files = protocolFiles(input);
  const threads = options.jobs === undefined ? undefined : threadCount(files.length, options.jobs);
  /** ParseOptions.keepWorker for a parse of `count` files. */
  const keepWorker = (count: number): ParseOptions['keepWorker'] => (count <= INLINE_LIMIT ? options.keepOneWorker : false);
  if (!options.enabled || !cacheFolderUsable(root)) {
    return parseInWorkers(files, { maxParseMs: options.maxParseMs, threads, overMemory: options.overMemory, keepWorker: keepWorker(files.length) });
  }
  const directory = cacheDirectory(root);
  const shards = Array.from({ length: SHARDS }, (_, index) => readShard(path.join(directory, `${index}.bin`)));

  const hashes = files.map((file) => contentDigest(input, file.path, file.content));
  // The parse budget too: a document parsed within one budget may be over a lower one, and a
  // lowered limits.maxParseMs must refuse it as a run without the cache would.
  const keys = files.map((file, index) => `${file.path}\0${hashes[index]!}\0${options.maxParseMs}`);
  const shardIndex = files.map((file) => shardOf(file.path));

  const documents: ParsedDocuments = new Array<CapabilityDocument | undefined>(files.length);
  const cached: (CacheRecord | undefined)[] = new Array<CacheRecord | undefined>(files.length);
  const missing: number[] = [];
  files.forEach((file, index) => {
    const shard = shards[shardIndex[index]!]!;
    const record = shard.get(keys[index]!);
    if (record) {
      try {
        const document: unknown = deserialize(record.bytes);
        if (isCachedDocument(document, file, hashes[index]!)) {
          documents[index] = { ...document, bodyTokens: record.bodyTokens };
          cached[index] = record;
          options.fromCache?.add(file.path);
          return;
        }
      } catch {
        // a damaged record
      }
      // Parsed again, and its shard rewritten without the record.
      shard.delete(keys[index]!);
    }
    missing.push(index);
  });

  // A shard is rewritten when its set of entries changes (a file added, edited or removed, a record
  // refused). That is known before parsing: a shard whose entries are all cached has nothing to parse.
  const wanted = Array.from({ length: SHARDS }, () => new Set<string>());
  files.forEach((_, index) => wanted[shardIndex[index]!]!.add(keys[index]!));
  const writers = new Map<number, ShardWriter>();
  try {
    await mkdir(directory, { recursive: true });
    // What an interrupted build (Ctrl-C, SIGKILL) left of its shards: nothing else removes it.
    await removeStaleTemporaries(Array.from({ length: SHARDS }, (_, index) => path.join(directory, `${index}.bin`)));
    wanted.forEach((entries, index) => {
      if (!sameKeys(entries, shards[index]!)) writers.set(index, new ShardWriter(path.join(directory, `${index}.bin`)));
    });
  } catch {
    // No cache folder: nothing is written, the build goes on.
  }

  cached.forEach((record, index) => {
    if (record) writers.get(shardIndex[index]!)?.add(keys[index]!, record.bytes, record.bodyTokens);
  });
  /** Where in its shard each of `missing` was written (by its place in `missing`). */
  const places: (number | undefined)[] = [];
  try {
    if (missing.length > 0) {
      const parsed = await parseAndSerialize(
        missing.map((index) => files[index]!),
        {
          maxParseMs: options.maxParseMs,
          threads: options.jobs === undefined ? undefined : threadCount(missing.length, options.jobs),
          overMemory: options.overMemory,
          keepWorker: keepWorker(missing.length),
        },
        // A document over the parse budget is never cached: the next run tries again.
        (k, bytes) => (places[k] = writers.get(shardIndex[missing[k]!]!)?.add(keys[missing[k]!]!, bytes)),
      );
      missing.forEach((index, k) => {
        const document = parsed[k];
        documents[index] = document;
        const place = places[k];
        if (document && place !== undefined) writers.get(shardIndex[index]!)!.counted(place, document.bodyTokens);
      });
    }
  } catch (error) {
    for (const writer of writers.values()) writer.abandon();
    throw error;
  }
  for (const writer of writers.values()) await writer.finish();
  if (writers.size > 0) {
    // The single-file cache of earlier versions.
    await rm(path.join(cacheFolder(root), 'documents.json'), { force: true }).catch(() => undefined);
  }
  return documents;
}

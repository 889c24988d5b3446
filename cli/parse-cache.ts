// Parsing is the expensive step of a build. Parsed documents are cached on disk by path and content
// hash, in a format tied to the capreg version (a new parser invalidates everything) and to V8's
// serialization format. Rules always run: they depend on the whole registry. (A rebuild with
// nothing changed at all does not get here: see build-cache.ts.)
//
// Layout: .capreg/cache/documents/<n>.bin, SHARDS files; a document lives in the shard of its path.
// A shard is a header line, the sha256 of the rest (32 bytes), then records: u32 key length, key
// (UTF-8 `path\0sha256`), u32 document length, document without its token count (v8.serialize:
// lossless, and cheap to produce in the parse workers, which do not count tokens), u32 the body's
// token count (counted once, by the thread that received the document). Editing one file rewrites one shard, not the whole cache; reading
// needs no giant JSON string; a damaged shard is detected and ignored.
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { readFile, mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { deserialize } from 'node:v8';
import { protocolFiles } from '../compiler/compile.js';
import { sha256Hex } from '../compiler/canonical.js';
import type { UncountedDocument } from '../compiler/parse-markdown.js';
import type { CapabilityDocument, RegistryInput } from '../compiler/types.js';
import { CODE_FINGERPRINT } from './code-fingerprint.js';
import { parseAndSerialize, parseInWorkers, threadCount, type ParsedDocuments } from './parse-workers.js';

const SHARDS = 16;
const HEADER = `capreg parse cache 3; capreg ${CODE_FINGERPRINT}; v8 ${process.versions.v8}\n`;
const HEADER_BYTES = Buffer.from(HEADER, 'utf8');

export function cacheDirectory(root: string): string {
  return path.join(root, '.capreg', 'cache', 'documents');
}

function cacheKey(file: string, content: string): string {
  return `${file}\0${sha256Hex(content)}`;
}

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
async function readShard(file: string): Promise<Map<string, CacheRecord>> {
  const records = new Map<string, CacheRecord>();
  let data: Buffer;
  try {
    data = await readFile(file);
  } catch {
    return records;
  }
  const bodyStart = HEADER_BYTES.byteLength + 32;
  if (data.byteLength < bodyStart || !data.subarray(0, HEADER_BYTES.byteLength).equals(HEADER_BYTES)) return records;
  const digest = createHash('sha256').update(data.subarray(bodyStart)).digest();
  if (!digest.equals(data.subarray(HEADER_BYTES.byteLength, bodyStart))) return records;
  let offset = bodyStart;
  while (offset < data.byteLength) {
    if (offset + 4 > data.byteLength) return new Map();
    const keyLength = data.readUInt32LE(offset);
    const keyEnd = offset + 4 + keyLength;
    if (keyEnd + 4 > data.byteLength) return new Map();
    const key = data.toString('utf8', offset + 4, keyEnd);
    const documentLength = data.readUInt32LE(keyEnd);
    const documentEnd = keyEnd + 4 + documentLength;
    if (documentEnd + 4 > data.byteLength) return new Map();
    records.set(key, { bytes: data.subarray(keyEnd + 4, documentEnd), bodyTokens: data.readUInt32LE(documentEnd) });
    offset = documentEnd + 4;
  }
  return records;
}

/**
 * A shard file written while the documents come in: each record goes to a temporary file as soon
 * as it is known (a cached one at once, a parsed one when its worker answers), so the records are
 * never all in memory; the digest is filled in at the end and the file renamed into place. Any
 * failure only drops the shard (a cache that cannot be written costs speed, nothing else).
 */
class ShardWriter {
  private readonly temporary: string;
  private fd: number | undefined;
  private failed = false;
  private offset = 0;
  private readonly digest = createHash('sha256');

  constructor(private readonly file: string) {
    this.temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    this.attempt(() => {
      this.fd = openSync(this.temporary, 'w');
      // The digest's place stays zero until finish().
      this.write(HEADER_BYTES, false);
      this.write(Buffer.alloc(32), false);
    });
  }

  add(key: string, bytes: Uint8Array, bodyTokens: number): void {
    const keyBytes = Buffer.from(key, 'utf8');
    const head = Buffer.alloc(4 + keyBytes.byteLength + 4);
    head.writeUInt32LE(keyBytes.byteLength, 0);
    keyBytes.copy(head, 4);
    head.writeUInt32LE(bytes.byteLength, 4 + keyBytes.byteLength);
    const tokens = Buffer.alloc(4);
    tokens.writeUInt32LE(bodyTokens);
    this.attempt(() => {
      this.write(head);
      this.write(bytes);
      this.write(tokens);
    });
  }

  /** Fill in the digest and move the file into place. */
  async finish(): Promise<void> {
    this.attempt(() => {
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
  options: { enabled: boolean; maxParseMs: number; /** Parse worker threads at most (`--jobs`). */ jobs?: number },
): Promise<ParsedDocuments> {
  const files = protocolFiles(input);
  const threads = options.jobs === undefined ? undefined : threadCount(files.length, options.jobs);
  if (!options.enabled) return parseInWorkers(files, { maxParseMs: options.maxParseMs, threads });
  const directory = cacheDirectory(root);
  const shards = await Promise.all(Array.from({ length: SHARDS }, (_, index) => readShard(path.join(directory, `${index}.bin`))));

  const keys = files.map((file) => cacheKey(file.path, file.content));
  const shardIndex = files.map((file) => shardOf(file.path));
  // A shard is rewritten when its set of entries changes (a file added, edited or removed). That is
  // known before parsing: a shard whose entries are all cached has nothing to parse.
  const wanted = Array.from({ length: SHARDS }, () => new Set<string>());
  files.forEach((_, index) => wanted[shardIndex[index]!]!.add(keys[index]!));
  const writers = new Map<number, ShardWriter>();
  try {
    await mkdir(directory, { recursive: true });
    wanted.forEach((entries, index) => {
      if (!sameKeys(entries, shards[index]!)) writers.set(index, new ShardWriter(path.join(directory, `${index}.bin`)));
    });
  } catch {
    // No cache folder: nothing is written, the build goes on.
  }

  const documents: ParsedDocuments = new Array<CapabilityDocument | undefined>(files.length);
  const missing: number[] = [];
  files.forEach((_, index) => {
    const record = shards[shardIndex[index]!]!.get(keys[index]!);
    if (record) {
      try {
        documents[index] = { ...(deserialize(record.bytes) as UncountedDocument), bodyTokens: record.bodyTokens };
        writers.get(shardIndex[index]!)?.add(keys[index]!, record.bytes, record.bodyTokens);
        return;
      } catch {
        // a damaged record: parse the file again
      }
    }
    missing.push(index);
  });
  try {
    if (missing.length > 0) {
      const parsed = await parseAndSerialize(
        missing.map((index) => files[index]!),
        { maxParseMs: options.maxParseMs, threads: options.jobs === undefined ? undefined : threadCount(missing.length, options.jobs) },
        // A document over the parse budget is never cached: the next run tries again.
        (k, bytes, document) => writers.get(shardIndex[missing[k]!]!)?.add(keys[missing[k]!]!, bytes, document.bodyTokens),
      );
      missing.forEach((index, k) => (documents[index] = parsed[k]));
    }
  } catch (error) {
    for (const writer of writers.values()) writer.abandon();
    throw error;
  }
  for (const writer of writers.values()) await writer.finish();
  if (writers.size > 0) {
    // The single-file cache of earlier versions.
    await rm(path.join(root, '.capreg', 'cache', 'documents.json'), { force: true }).catch(() => undefined);
  }
  return documents;
}

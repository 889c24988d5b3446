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
import { readFile, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { deserialize } from 'node:v8';
import { protocolFiles } from '../compiler/compile.js';
import { sha256Hex } from '../compiler/canonical.js';
import type { UncountedDocument } from '../compiler/parse-markdown.js';
import type { CapabilityDocument, RegistryInput } from '../compiler/types.js';
import { writeFileAtomic } from '../server/atomic-write.js';
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

async function writeShard(file: string, records: Map<string, CacheRecord>): Promise<void> {
  const parts: Uint8Array[] = [];
  for (const [key, { bytes, bodyTokens }] of records) {
    const keyBytes = Buffer.from(key, 'utf8');
    const lengths = Buffer.alloc(4);
    lengths.writeUInt32LE(keyBytes.byteLength);
    const documentLength = Buffer.alloc(4);
    documentLength.writeUInt32LE(bytes.byteLength);
    const tokens = Buffer.alloc(4);
    tokens.writeUInt32LE(bodyTokens);
    parts.push(lengths, keyBytes, documentLength, bytes, tokens);
  }
  // One copy of the records, not two: the digest is taken part by part.
  const digest = createHash('sha256');
  for (const part of parts) digest.update(part);
  await writeFileAtomic(file, Buffer.concat([HEADER_BYTES, digest.digest(), ...parts]), { sync: false });
}

function sameKeys(a: Map<string, unknown>, b: Map<string, unknown>): boolean {
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
  const documents: ParsedDocuments = new Array<CapabilityDocument | undefined>(files.length);
  const bytes = new Array<Uint8Array | undefined>(files.length);
  const missing: number[] = [];
  files.forEach((_, index) => {
    const record = shards[shardIndex[index]!]!.get(keys[index]!);
    if (record) {
      try {
        documents[index] = { ...(deserialize(record.bytes) as UncountedDocument), bodyTokens: record.bodyTokens };
        bytes[index] = record.bytes;
        return;
      } catch {
        // a damaged record: parse the file again
      }
    }
    missing.push(index);
  });
  if (missing.length > 0) {
    const parsed = await parseAndSerialize(
      missing.map((index) => files[index]!),
      { maxParseMs: options.maxParseMs, threads: options.jobs === undefined ? undefined : threadCount(missing.length, options.jobs) },
    );
    missing.forEach((index, k) => {
      documents[index] = parsed.documents[k];
      bytes[index] = parsed.serialized[k];
    });
  }

  // Rewrite the shards whose set of entries changed (a file added, edited or removed).
  const wanted = Array.from({ length: SHARDS }, () => new Map<string, CacheRecord>());
  files.forEach((_, index) => {
    const record = bytes[index];
    const document = documents[index];
    if (record && document) wanted[shardIndex[index]!]!.set(keys[index]!, { bytes: record, bodyTokens: document.bodyTokens });
  });
  const changed: number[] = [];
  wanted.forEach((records, index) => {
    if (!sameKeys(records, shards[index]!)) changed.push(index);
  });
  if (changed.length > 0) {
    try {
      await mkdir(directory, { recursive: true });
      // One shard at a time: each is a copy of its records in memory until it is written.
      for (const index of changed) await writeShard(path.join(directory, `${index}.bin`), wanted[index]!);
      // The single-file cache of earlier versions.
      await rm(path.join(root, '.capreg', 'cache', 'documents.json'), { force: true });
    } catch {
      // A cache that cannot be written only costs speed; the build itself is unaffected.
    }
  }
  return documents;
}

// Whole-build cache: when nothing that a build reads has changed since the last build, and the
// files it wrote are still on disk byte for byte, `capreg build` prints the diagnostics of that
// build again and stops — no parse, no lint, no emit, and none of the compiler's modules loaded.
//
// What a build reads, and so what the key covers:
// - every file under capabilities/: the text inputs (PROTOCOL.md, toolsets and evals files) by path
//   and content, every other file by path only (the compiler lists them for link checks and never
//   reads them, so a 2 GB references/data.bin costs nothing here either); dot-entries are skipped,
//   as the reader does,
// - capreg.config.yaml (content, or its absence),
// - the Git source written into the manifest ({commit, dirty}),
// - the build options that change what is written (output folder, SOURCE_DATE_EPOCH, the client
//   skill's text), capreg's code, the packages its compiler brings and Node's versions
//   (pipelineFingerprint).
// A registry that holds a symbolic link or a special file (capabilities/ itself a link included) is
// never cached: following links is the reader's business, and a FIFO must not be opened here. Nor is
// one with a text input over MAX_TEXT_INPUT_BYTES, or a configuration saved under a name capreg
// refuses (`capreg.config.yml`, …), which must stop the build every time.
//
// The cache is trusted as much as the folder it lives in: whoever can write .capreg/ can write the
// outputs next to it (as with node_modules/), so a forged build.json is not defended against. What
// is checked is that nothing there can crash, hang or exhaust the process: a cache file is read
// only when it is a regular file (not a link, FIFO or device) under a size cap, its content is used
// only when it has the shape written here, and the files it names must be this build's outputs.
//
// A registry over the ceilings of limits.maxFiles or limits.maxTotalBytes is not cached either: the
// walk stops there, and the compile that follows says what is over.
//
// This module imports nothing from the compiler but its limits and file names, so that the fast path stays fast.
import { constants as bufferConstants } from 'node:buffer';
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import path from 'node:path';
import type { LintReport } from '../compiler/formatters/types.js';
import { removeStaleTemporaries, writeFileAtomic } from '../server/atomic-write.js';
import { LIMITS } from '../compiler/limits.js';
import { CONFIG_FILE, CONFIG_NEAR_MISSES, isTextInput } from '../compiler/layout.js';
import { BUILD_OUTPUTS } from './build-outputs.js';
import { cacheDirectory, cacheFolder } from './cache-folder.js';
import { pipelineFingerprint } from './code-fingerprint.js';
import { byKey } from '../compiler/order.js';
import { sha256Hex } from '../compiler/canonical.js';

const FORMAT = 2;

/**
 * The largest text input (PROTOCOL.md, toolsets or evals file) whose content is fingerprinted: the
 * ceiling of `limits.maxFileBytes`, so every file a config can let the compiler read is covered
 * (a fingerprint by size and mtime could miss an edit the compiler would see).
 */
export const MAX_TEXT_INPUT_BYTES = LIMITS.maxFileBytes.ceiling;
/**
 * build.json holds the report of the last build. 64 MiB is ~200,000 diagnostics; a build with more
 * is not recorded (see recordBuild), so a larger file was not written by capreg.
 */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;
/** Each output is made in memory as one Buffer or string before it is written, so none is larger. */
const MAX_OUTPUT_BYTES = bufferConstants.MAX_LENGTH;
/** What a build writes (cli/build-outputs.ts); a record naming anything else is refused. */
const OUTPUT_NAMES = Object.values(BUILD_OUTPUTS);

// Never through a symbolic link (O_NOFOLLOW), and never waiting for a FIFO's writer (O_NONBLOCK):
// what is opened is then refused by fstat unless it is a regular file.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * Whether the cache may live at `<root>/.capreg/cache`: each folder on the way is a real folder, or
 * not there yet. A link there (or a file) would send the cache's reads and writes wherever it
 * points, outside the root: a pull request could commit one. The cache is then not used at all.
 */
export function cacheFolderUsable(root: string): boolean {
  for (const folder of [path.dirname(cacheFolder(root)), cacheFolder(root), cacheDirectory(root)]) {
    try {
      if (!lstatSync(folder).isDirectory()) return false;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ENOENT';
    }
  }
  return true;
}

export function buildCacheFile(root: string): string {
  return path.join(cacheFolder(root), 'build.json');
}

export interface BuildKeyOptions {
  outDir: string;
  builtAt: string | undefined;
  source: unknown;
  /** Anything else that changes what the build writes (e.g. the client skill's text). */
  extra?: unknown;
}

/** One written file, by path (absolute), size and content digest. */
interface OutputRecord {
  path: string;
  size: number;
  sha256: string;
}

interface BuildRecord {
  format: number;
  key: string;
  report: LintReport;
  /** What the build wrote; empty when it wrote nothing (lint errors). */
  outputs: OutputRecord[];
  /** Human summary of what was written, for the "up to date" message. */
  summary: string;
}

export interface CachedBuild {
  report: LintReport;
  summary: string;
  wroteOutputs: boolean;
}

/**
 * The bytes of a cache or registry file, or undefined when it is not a regular file (a symbolic
 * link, FIFO, device or folder) or is over `maxBytes`. Errors of lstat and open (ENOENT, EACCES) are thrown.
 */
export function readRegularFileSync(file: string, maxBytes: number): Buffer | undefined {
  const info = lstatSync(file);
  if (!info.isFile() || info.size > maxBytes) return undefined;
  const fd = openSync(file, OPEN_FLAGS);
  try {
    // The path may have been replaced since lstat: what counts is what was opened.
    const opened = fstatSync(fd);
    if (!opened.isFile() || opened.size > maxBytes) return undefined;
    const buffer = Buffer.allocUnsafe(opened.size);
    let filled = 0;
    while (filled < buffer.byteLength) {
      const read = readSync(fd, buffer, filled, buffer.byteLength - filled, filled);
      if (read === 0) break;
      filled += read;
    }
    return buffer.subarray(0, filled);
  } finally {
    closeSync(fd);
  }
}

/**
 * readRegularFileSync, undefined on any error too (a cache file that cannot be read is a miss). Only
 * the command line reads the caches, and O_NONBLOCK keeps a FIFO from blocking the read.
 */
export function readRegularFile(file: string, maxBytes: number): Buffer | undefined {
  try {
    return readRegularFileSync(file, maxBytes);
  } catch {
    return undefined;
  }
}

/** sha256 of a regular file of exactly `size` bytes, read in pieces; undefined for anything else. */
async function regularFileDigest(file: string, size: number): Promise<string | undefined> {
  try {
    const info = await lstat(file);
    if (!info.isFile() || info.size !== size) return undefined;
    const handle = await open(file, OPEN_FLAGS);
    try {
      const opened = await handle.stat();
      if (!opened.isFile() || opened.size !== size) return undefined;
      const hash = createHash('sha256');
      const buffer = Buffer.allocUnsafe(Math.min(size, 1024 * 1024));
      let position = 0;
      while (position < size) {
        const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.byteLength, size - position), position);
        if (bytesRead === 0) return undefined;
        hash.update(buffer.subarray(0, bytesRead));
        position += bytesRead;
      }
      return hash.digest('hex');
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
}

/**
 * Digest of what the compiler reads under capabilities/ plus the config file, or undefined when the
 * registry cannot be fingerprinted safely (symbolic links, special files, unreadable entries, a
 * text input or config over MAX_TEXT_INPUT_BYTES, more files or text than any config allows).
 */
export function registryFingerprint(root: string): string | undefined {
  const hash = createHash('sha256');
  let files = 0;
  let textBytes = 0;
  const walk = (absoluteDir: string, relativeDir: string): boolean => {
    const entries = readdirSync(absoluteDir, { withFileTypes: true }).sort(byKey((entry) => entry.name));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      if (!entry.isDirectory() && ++files > LIMITS.maxFiles.ceiling) return false;
      const absolute = path.join(absoluteDir, entry.name);
      const relative = `${relativeDir}/${entry.name}`;
      if (entry.isDirectory()) {
        hash.update(`d\0${relative}\n`);
        if (!walk(absolute, relative)) return false;
      } else if (entry.isFile()) {
        if (!isTextInput(relative)) {
          // Listed by the compiler, never read: its content cannot change the build.
          hash.update(`f\0${relative}\n`);
          continue;
        }
        const content = readRegularFileSync(absolute, MAX_TEXT_INPUT_BYTES);
        if (content === undefined || (textBytes += content.byteLength) > LIMITS.maxTotalBytes.ceiling) return false;
        hash.update(`t\0${relative}\0${sha256Hex(content)}\n`);
      } else {
        return false; // symbolic link, FIFO, socket, device
      }
    }
    return true;
  };
  try {
    // A link, even to a folder the reader accepts, is never cached: the reader judges where it leads.
    if (lstatSync(path.join(root, 'capabilities')).isSymbolicLink()) return undefined;
    if (!walk(path.join(root, 'capabilities'), 'capabilities')) return undefined;
  } catch (error) {
    // No capabilities/ folder is an input like any other; anything else is not cacheable.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
    hash.update('no capabilities folder\n');
  }
  // A configuration under a name capreg does not read stops the command: never answered from here.
  if (CONFIG_NEAR_MISSES.some((name) => lstatExists(path.join(root, name)))) return undefined;
  try {
    const config = readRegularFileSync(path.join(root, CONFIG_FILE), MAX_TEXT_INPUT_BYTES);
    if (config === undefined) return undefined;
    hash.update(`config\0${sha256Hex(config)}\n`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
    hash.update('no config\n');
  }
  return hash.digest('hex');
}

/** Whether anything (a file, a folder, a link, broken or not) is at `file`. */
function lstatExists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

/** The key of a build of `root` with these options, or undefined when it cannot be cached. */
export function buildKey(root: string, options: BuildKeyOptions): string | undefined {
  const registry = registryFingerprint(root);
  if (registry === undefined) return undefined;
  return sha256Hex(
    JSON.stringify({
      format: FORMAT,
      capreg: pipelineFingerprint(),
      registry,
      outDir: path.resolve(options.outDir),
      builtAt: options.builtAt ?? null,
      source: options.source ?? null,
      extra: options.extra ?? null,
    }),
  );
}

/** The paths a build with output folder `outDir` may write (absolute). */
const outputPaths = (outDir: string): Set<string> => new Set(OUTPUT_NAMES.map((name) => path.join(outDir, name)));

const isRecordObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const isOptionalString = (value: unknown): boolean => value === undefined || typeof value === 'string';

/** A diagnostic with every field the formatters read, of the right type. */
function isDiagnostic(value: unknown): boolean {
  if (!isRecordObject(value)) return false;
  const { file, line, column, endLine, endColumn, severity, ruleId, message, messageId, capabilityId, related } = value;
  if (typeof file !== 'string' || typeof ruleId !== 'string' || typeof message !== 'string') return false;
  if (!isCount(line) || !isCount(column) || !isCount(endLine) || !isCount(endColumn)) return false;
  if ((severity !== 'error' && severity !== 'warning') || !isOptionalString(messageId) || !isOptionalString(capabilityId)) return false;
  if (related === undefined) return true;
  return isRecordObject(related) && typeof related.file === 'string' && isCount(related.line) && isCount(related.column) && typeof related.message === 'string';
}

/**
 * A record's JSON, parsed, or undefined when it is not JSON or not of a record's build: objects and
 * arrays nested more than MAX_RECORD_DEPTH deep, or (past the first 1,024) more of them than one per
 * RECORD_BYTES_PER_CONTAINER bytes (a diagnostic is an object of ~200 bytes). Checked before
 * JSON.parse, whose memory such a text would exhaust: 60 MiB of `[` took 2.8 GB, outside the heap's limit.
 */
export function parseRecord(text: string): unknown {
  let depth = 0;
  let containers = 0;
  const most = Math.max(1024, Math.ceil(text.length / RECORD_BYTES_PER_CONTAINER));
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code === 34) {
      // A string: on to its closing quote, past escaped characters.
      for (index += 1; index < text.length; index += 1) {
        const inner = text.charCodeAt(index);
        if (inner === 92) index += 1;
        else if (inner === 34) break;
      }
    } else if (code === 123 || code === 91) {
      if ((depth += 1) > MAX_RECORD_DEPTH || (containers += 1) > most) return undefined;
    } else if (code === 125 || code === 93) {
      depth -= 1;
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A record nests a report's diagnostics and their `related` within this. */
const MAX_RECORD_DEPTH = 8;
const RECORD_BYTES_PER_CONTAINER = 16;

/** Whether a recorded report has every field the formatters read, of the right type, with counts that match its diagnostics. */
export function isRecordedReport(report: unknown): report is LintReport {
  if (!isRecordObject(report) || !Array.isArray(report.diagnostics) || !isCount(report.errorCount) || !isCount(report.warningCount)) return false;
  let errors = 0;
  for (const diagnostic of report.diagnostics as unknown[]) {
    if (!isDiagnostic(diagnostic)) return false;
    if ((diagnostic as { severity: string }).severity === 'error') errors += 1;
  }
  return errors === report.errorCount && report.diagnostics.length - errors === report.warningCount;
}

/** The record in build.json when it has the shape recordBuild writes and names only the outputs of `outDir`. */
function checkedRecord(value: unknown, outDir: string): BuildRecord | undefined {
  if (!isRecordObject(value) || value.format !== FORMAT || typeof value.key !== 'string' || typeof value.summary !== 'string') return undefined;
  const { report, outputs } = value;
  if (!isRecordedReport(report)) return undefined;
  const allowed = outputPaths(outDir);
  if (!Array.isArray(outputs)) return undefined;
  for (const output of outputs as unknown[]) {
    if (!isRecordObject(output) || typeof output.path !== 'string' || !allowed.delete(output.path)) return undefined;
    if (!isCount(output.size) || output.size > MAX_OUTPUT_BYTES || typeof output.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(output.sha256)) return undefined;
  }
  return value as unknown as BuildRecord;
}

/**
 * The last build's report, when `key` is its key and every file it wrote is still in `outDir`
 * unchanged (a record naming any other file is refused).
 */
export async function cachedBuild(root: string, key: string, outDir: string): Promise<CachedBuild | undefined> {
  const bytes = readRegularFile(buildCacheFile(root), MAX_RECORD_BYTES);
  if (bytes === undefined) return undefined;
  const record = checkedRecord(parseRecord(bytes.toString('utf8')), path.resolve(outDir));
  if (!record || record.key !== key) return undefined;
  for (const output of record.outputs) {
    if ((await regularFileDigest(output.path, output.size)) !== output.sha256) return undefined;
  }
  return { report: record.report, summary: record.summary, wroteOutputs: record.outputs.length > 0 };
}

/**
 * Remember a finished build. `key` is the key computed before the build; the record is written only
 * if the inputs still have that key now, so that a file edited during the build is never paired
 * with outputs made from its earlier content.
 */
export async function recordBuild(
  root: string,
  key: string,
  options: BuildKeyOptions,
  build: { report: LintReport; outputs: { path: string; content: string | Uint8Array }[]; summary: string },
): Promise<void> {
  try {
    if (buildKey(root, options) !== key) return;
    const record: BuildRecord = {
      format: FORMAT,
      key,
      report: { diagnostics: build.report.diagnostics, errorCount: build.report.errorCount, warningCount: build.report.warningCount },
      outputs: build.outputs.map((output) => ({
        path: path.resolve(output.path),
        size: typeof output.content === 'string' ? Buffer.byteLength(output.content) : output.content.byteLength,
        sha256: sha256Hex(output.content),
      })),
      summary: build.summary,
    };
    // What cachedBuild would refuse is not written: outputs it does not expect, a record over its cap.
    const allowed = outputPaths(path.resolve(options.outDir));
    if (!record.outputs.every((output) => allowed.has(output.path))) return;
    const text = JSON.stringify(record);
    if (text.length > MAX_RECORD_BYTES / 4 && Buffer.byteLength(text) > MAX_RECORD_BYTES) return;
    await removeStaleTemporaries([buildCacheFile(root)]);
    await writeFileAtomic(buildCacheFile(root), text, { sync: false });
  } catch {
    // A cache that cannot be written only costs speed.
  }
}

// Whole-build cache: when nothing that a build reads has changed since the last build, and the
// files it wrote are still on disk byte for byte, `capreg build` prints the diagnostics of that
// build again and stops — no parse, no lint, no emit, and none of the compiler's modules loaded.
//
// What a build reads, and so what the key covers:
// - every file under capabilities/ (path and content; dot-entries are skipped, as the reader does),
// - capreg.config.yaml (content, or its absence),
// - the Git source written into the manifest ({commit, dirty}),
// - the build options that change what is written (output folder, SOURCE_DATE_EPOCH, the client
//   skill's text), capreg's version and Node's version.
// A registry that holds a symbolic link or a special file is never cached: following links is the
// reader's business, and a FIFO must not be opened here.
//
// This module imports nothing from the compiler, so that the fast path stays fast.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { LintReport } from '../compiler/formatters/types.js';
import { writeFileAtomic } from '../server/atomic-write.js';
import { CODE_FINGERPRINT } from './code-fingerprint.js';

const FORMAT = 1;

export function buildCacheFile(root: string): string {
  return path.join(root, '.capreg', 'cache', 'build.json');
}

export interface BuildKeyOptions {
  outDir: string;
  builtAt: string | undefined;
  source: unknown;
  /** Anything else that changes what the build writes (e.g. the client skill's text). */
  extra?: unknown;
}

/** One written file, by path (absolute) and content digest. */
interface OutputRecord {
  path: string;
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

const sha256 = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

/**
 * Digest of everything under capabilities/ plus the config file, or undefined when the registry
 * cannot be fingerprinted safely (symbolic links, special files, unreadable entries).
 */
export function registryFingerprint(root: string): string | undefined {
  const hash = createHash('sha256');
  const walk = (absoluteDir: string, relativeDir: string): boolean => {
    const entries = readdirSync(absoluteDir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const absolute = path.join(absoluteDir, entry.name);
      const relative = `${relativeDir}/${entry.name}`;
      if (entry.isDirectory()) {
        hash.update(`d\0${relative}\n`);
        if (!walk(absolute, relative)) return false;
      } else if (entry.isFile()) {
        hash.update(`f\0${relative}\0${sha256(readFileSync(absolute))}\n`);
      } else {
        return false; // symbolic link, FIFO, socket, device
      }
    }
    return true;
  };
  try {
    if (!walk(path.join(root, 'capabilities'), 'capabilities')) return undefined;
  } catch (error) {
    // No capabilities/ folder is an input like any other; anything else is not cacheable.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
    hash.update('no capabilities folder\n');
  }
  try {
    hash.update(`config\0${sha256(readFileSync(path.join(root, 'capreg.config.yaml')))}\n`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
    hash.update('no config\n');
  }
  return hash.digest('hex');
}

/** The key of a build of `root` with these options, or undefined when it cannot be cached. */
export function buildKey(root: string, options: BuildKeyOptions): string | undefined {
  const registry = registryFingerprint(root);
  if (registry === undefined) return undefined;
  return sha256(
    JSON.stringify({
      format: FORMAT,
      capreg: CODE_FINGERPRINT,
      node: process.version,
      registry,
      outDir: path.resolve(options.outDir),
      builtAt: options.builtAt ?? null,
      source: options.source ?? null,
      extra: options.extra ?? null,
    }),
  );
}

async function readRecord(root: string): Promise<BuildRecord | undefined> {
  try {
    const record = JSON.parse(await readFile(buildCacheFile(root), 'utf8')) as BuildRecord;
    if (record.format !== FORMAT || typeof record.key !== 'string' || !Array.isArray(record.outputs) || !record.report) return undefined;
    return record;
  } catch {
    return undefined;
  }
}

/** The last build's report, when `key` is its key and every file it wrote is still on disk unchanged. */
export async function cachedBuild(root: string, key: string): Promise<CachedBuild | undefined> {
  const record = await readRecord(root);
  if (!record || record.key !== key) return undefined;
  for (const output of record.outputs) {
    try {
      if (sha256(await readFile(output.path)) !== output.sha256) return undefined;
    } catch {
      return undefined;
    }
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
      outputs: build.outputs.map((output) => ({ path: path.resolve(output.path), sha256: sha256(output.content) })),
      summary: build.summary,
    };
    await writeFileAtomic(buildCacheFile(root), JSON.stringify(record), { sync: false });
  } catch {
    // A cache that cannot be written only costs speed.
  }
}

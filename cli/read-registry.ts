// Read a registry from disk into the in-memory form the compiler takes. This is where the hostile
// cases of the file system are handled: files over the size limit, binary or non-UTF-8 files, and
// symbolic links that lead out of the root are refused with a reason instead of being read.
//
// The reads are synchronous. Each asynchronous call is a round trip through libuv's thread pool,
// and the walk reads folders and files one after another: reading 1,000 capabilities took ~0.4 s
// that way and ~0.1 s synchronously (10,000: 3.9 s and 1.1 s), while the parse workers waited
// for the files. Only the command line reads a registry, and nothing else runs on its thread then.
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, readdirSync, realpathSync, statSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { LIMITS, type ReadLimits } from '../compiler/limits.js';
import { isEvalsFile, isProtocolFile, isTextInput, isToolsetsFile, MAX_FOLDER_DEPTH, pathDepth, TOOLSETS_FOLDER } from '../compiler/layout.js';
import type { RegistryInput, SourceFile } from '../compiler/types.js';
import { UsageError } from './context.js';
import { linkRefusal } from './link-refusal.js';

export interface ReadOptions extends Partial<ReadLimits> {
  maxFileBytes: number;
  /** Counts files and text bytes against the limits; by default one of the read's own. */
  budget?: RegistryBudget;
  /** Told of each symbolic link the walk follows, with its real target (`--watch` watches the targets). */
  onLink?: (relative: string, target: string) => void;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 * 1024) return `${(bytes / (1024 * 1024 * 1024)).toFixed(1)} GiB`;
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}

/**
 * What a reader has taken in, against `limits.maxFiles` and `limits.maxTotalBytes`. Crossing either
 * ends the read with a usage error (exit 2) before anything more is read: a check of part of a
 * registry would report what is missing as broken, and all of it may not fit in memory.
 */
export class RegistryBudget {
  private files = 0;
  private folders = 0;
  private bytes = 0;
  private readonly sizes = new Map<string, number>();

  /** `where` names the registry in messages: `capabilities/`, or `capabilities/ at <ref>`. */
  constructor(
    private readonly limits: Partial<Pick<ReadLimits, 'maxFiles' | 'maxTotalBytes'>> = {},
    private readonly where = 'capabilities/',
  ) {}

  /** One more file met (of any kind, text inputs too). */
  addFile(): void {
    this.files += 1;
    this.checkFiles(this.files);
  }

  /**
   * One more folder met. A folder holds no text, but reading it is a call of its own, as watching
   * it is a watch: more folders than the file limit is no registry (a folder made for each capability
   * holds its PROTOCOL.md), and 200,000 empty ones took 8 s to walk.
   */
  addFolder(): void {
    this.folders += 1;
    this.checkFolders(this.folders);
  }

  /** Throws when a registry of `count` folders is over the file limit. */
  checkFolders(count: number): void {
    const refusal = this.foldersRefusal(count);
    if (refusal !== undefined) throw new UsageError(refusal);
  }

  /** Why a registry of `count` folders is refused, or undefined within the limit. */
  foldersRefusal(count: number): string | undefined {
    const limit = this.limits.maxFiles ?? LIMITS.maxFiles.default;
    if (count <= limit) return undefined;
    return (
      `${this.where} holds more than ${limit} folders, over limits.maxFiles in capreg.config.yaml (which bounds folders as well as files); ` +
      'nothing was checked: remove the folders no capability needs, or raise the limit'
    );
  }

  /** Throws when a registry of `count` files is over the limit. */
  checkFiles(count: number): void {
    const refusal = this.filesRefusal(count);
    if (refusal !== undefined) throw new UsageError(refusal);
  }

  /** Why a registry of `count` files is refused, or undefined within the limit. */
  filesRefusal(count: number): string | undefined {
    const limit = this.limits.maxFiles ?? LIMITS.maxFiles.default;
    if (count <= limit) return undefined;
    return (
      `${this.where} holds more than ${limit} files, over limits.maxFiles in capreg.config.yaml; nothing was checked: ` +
      `move what no capability needs out of capabilities/, or raise the limit (at most ${LIMITS.maxFiles.ceiling})`
    );
  }

  /** The text input at `path` is `size` bytes (a path counted before is counted again at its new size). */
  addText(path: string, size: number): void {
    this.bytes += size - (this.sizes.get(path) ?? 0);
    this.sizes.set(path, size);
    const limit = this.limits.maxTotalBytes ?? LIMITS.maxTotalBytes.default;
    if (this.bytes <= limit) return;
    throw new UsageError(
      `the protocols, toolsets and evals files under ${this.where} come to more than ${formatBytes(limit)}, over limits.maxTotalBytes in capreg.config.yaml; ` +
        `nothing was checked: split the registry, or raise the limit (at most ${formatBytes(LIMITS.maxTotalBytes.ceiling)})`,
    );
  }

  /** The text input at `path` is gone. */
  removeText(path: string): void {
    this.bytes -= this.sizes.get(path) ?? 0;
    this.sizes.delete(path);
  }
}

/** Why a registry file (`file`, its path under the root) over the size limit is refused, and what to do about it. */
export function sizeProblem(size: number, maxFileBytes: number, file: string): string {
  // Exact when the rounding would make the two the same ("1.0 MiB, over the 1.0 MiB limit").
  const [over, limit] =
    formatBytes(size) === formatBytes(maxFileBytes) ? [`${size} bytes`, `${maxFileBytes}-byte`] : [formatBytes(size), formatBytes(maxFileBytes)];
  const advice = isToolsetsFile(file)
    ? `split its toolsets over files in ${TOOLSETS_FOLDER}/`
    : isEvalsFile(file)
      ? 'keep fewer or shorter requests'
      : 'split it or move material into references/';
  return `file is ${over}, over the ${limit} limit (limits.maxFileBytes in capreg.config.yaml); ${advice}`;
}

const lenientUtf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** Byte offset of the first byte that is not part of valid UTF-8, or -1. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let offset = 0;
  for (const char of lenientUtf8.decode(bytes)) {
    const code = char.codePointAt(0) ?? 0;
    if (code === 0xfffd && !(bytes[offset] === 0xef && bytes[offset + 1] === 0xbf && bytes[offset + 2] === 0xbd)) return offset;
    offset += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return -1;
}

/** 1-based line and column (in characters, as editors count them) of a byte offset. */
function pointOf(bytes: Uint8Array, offset: number): { line: number; column: number } {
  const lineStart = bytes.lastIndexOf(10, offset - 1) + 1;
  let line = 1;
  for (let i = 0; i < lineStart; i += 1) if (bytes[i] === 10) line += 1;
  return { line, column: lenientUtf8.decode(bytes.subarray(lineStart, offset)).length + 1 };
}

export type DecodedFile = { content: string } | { problem: string; problemAt?: { line: number; column: number } };

/** Decode a text file's bytes or say why (and where) it is not a text file capreg can read. */
export function decodeTextFile(bytes: Uint8Array, maxFileBytes: number, file: string): DecodedFile {
  if (bytes.byteLength > maxFileBytes) return { problem: sizeProblem(bytes.byteLength, maxFileBytes, file) };
  const nul = bytes.indexOf(0);
  if (nul !== -1) return { problem: `file is binary (NUL byte at offset ${nul}); it must be UTF-8 text`, problemAt: pointOf(bytes, nul) };
  try {
    return { content: utf8.decode(bytes) };
  } catch {
    const offset = Math.max(0, firstInvalidUtf8(bytes));
    const byte = (bytes[offset] ?? 0).toString(16).toUpperCase().padStart(2, '0');
    return {
      problem: `file is not valid UTF-8 text: byte 0x${byte} at offset ${offset} is not UTF-8 (was it saved as Latin-1 or Windows-1252?); save it as UTF-8`,
      problemAt: pointOf(bytes, offset),
    };
  }
}

/** Why a link whose target cannot be resolved is not read: it loops, or what it names is not there. */
function brokenLink(error: unknown, kind: 'file' | 'folder'): string {
  return (error as NodeJS.ErrnoException).code === 'ELOOP'
    ? `symbolic link loops (it leads back to itself); replace the link with the ${kind}`
    : `symbolic link is broken: its target does not exist; replace the link with the ${kind}`;
}

/** Why a folder deeper than MAX_FOLDER_DEPTH is not read (the Git reader says the same). */
export function folderTooDeep(relative: string): string {
  return `folder is ${pathDepth(relative)} levels deep under capabilities/, over the limit of ${MAX_FOLDER_DEPTH}; nothing in it is read: move its files up`;
}

/** Opening never waits: a FIFO put in place of a file after its stat opens at once (and is refused by its fstat). */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
const NOT_REGULAR = 'not a regular file; it must be a UTF-8 text file';

/** What an open file holds, `expected` bytes by its fstat, and one byte more than `maxBytes` at most (a file still being written to can grow). */
function readOpened(fd: number, expected: number, maxBytes: number): Buffer {
  let buffer = Buffer.allocUnsafe(Math.min(expected, maxBytes) + 1);
  let total = 0;
  for (;;) {
    if (total === buffer.length) {
      if (total > maxBytes) break;
      const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, maxBytes + 1));
      buffer.copy(grown, 0, 0, total);
      buffer = grown;
    }
    const read = readSync(fd, buffer, total, buffer.length - total, null);
    if (read === 0) break;
    total += read;
  }
  return buffer.subarray(0, total);
}

/**
 * The text of a regular file, or why it is not one capreg reads. A FIFO or device would block the
 * read or never end, so it is refused unopened; and as the path can be swapped between the stat and
 * the open (a watched registry saw it happen), the file is opened without waiting and what the open
 * gave is checked again. `onSize` is told the size of a file that is read; `file`, its path under
 * the registry root, picks the advice for one over `maxBytes`. Errors of stat, open and read are thrown.
 */
export function readRegularText(absolute: string, maxBytes: number, onSize?: (size: number) => void, file = path.basename(absolute)): DecodedFile {
  if (!statSync(absolute).isFile()) return { problem: NOT_REGULAR };
  const fd = openSync(absolute, OPEN_FLAGS);
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return { problem: NOT_REGULAR };
    if (info.size > maxBytes) return { problem: sizeProblem(info.size, maxBytes, file) };
    onSize?.(info.size);
    return decodeTextFile(readOpened(fd, info.size, maxBytes), maxBytes, file);
  } finally {
    closeSync(fd);
  }
}

/** One text input of the registry (a protocol, toolsets or evals file), or why it cannot be read. */
export function readSourceFile(absolute: string, relative: string, options: ReadOptions): SourceFile {
  // Counted again at its size if it is read (under --watch, a file read before may be refused now).
  options.budget?.removeText(relative);
  try {
    return { path: relative, ...readRegularText(absolute, options.maxFileBytes, (size) => options.budget?.addText(relative, size), relative) };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    return {
      path: relative,
      problem: `file cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); make it a readable UTF-8 text file`,
    };
  }
}

export function readRegistry(root: string, readOptions: ReadOptions): RegistryInput {
  const options = { ...readOptions, budget: readOptions.budget ?? new RegistryBudget(readOptions) };
  const realRoot = realpathSync(root);
  // capabilities/ itself may be a link, under the same terms as the links inside it.
  const capabilitiesRefusal = linkRefusal(realRoot, realpathSync(path.join(root, 'capabilities')), 'folder');
  if (capabilitiesRefusal !== undefined) throw new UsageError(`capabilities/: ${capabilitiesRefusal}`);
  const files: SourceFile[] = [];
  const allPaths: string[] = [];
  const protocolFolders = new Set<string>();
  const capabilityFolders: string[] = [];
  const visited = new Set<string>();

  const walk = (absoluteDir: string, relativeDir: string): void => {
    let entries: Dirent[];
    try {
      const realDir = realpathSync(absoluteDir);
      if (visited.has(realDir)) return;
      visited.add(realDir);
      entries = readdirSync(absoluteDir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
    } catch (error) {
      // capabilities/ itself is the caller's to check (a root without one is a usage error).
      if (relativeDir === 'capabilities') throw error;
      // A name that is not UTF-8 comes back with U+FFFD in place of its bytes, a path nothing has.
      const problem = relativeDir.includes('\uFFFD')
        ? 'folder name is not valid UTF-8 (its bad bytes show as \uFFFD); rename it in UTF-8'
        : `folder cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); make it readable or remove it`;
      files.push({ path: relativeDir, problem });
      return;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      if (!entry.isDirectory()) options.budget.addFile();
      const absolute = path.join(absoluteDir, entry.name);
      const relative = `${relativeDir}/${entry.name}`;
      let isDir = entry.isDirectory();
      if (entry.isSymbolicLink()) {
        let target: string;
        try {
          target = realpathSync(absolute);
        } catch (error) {
          if (isProtocolFile(relative)) protocolFolders.add(relativeDir);
          // A capability folder's link too: skipped without a word, its capability would just be gone.
          if (isTextInput(relative) || relativeDir === 'capabilities')
            files.push({ path: relative, problem: brokenLink(error, isTextInput(relative) ? 'file' : 'folder') });
          continue;
        }
        const refusal = linkRefusal(realRoot, target);
        if (refusal !== undefined) {
          allPaths.push(relative);
          // The folder has its PROTOCOL.md; it is refused, not missing.
          if (isProtocolFile(relative)) protocolFolders.add(relativeDir);
          if (isTextInput(relative) || relativeDir === 'capabilities') files.push({ path: relative, problem: refusal });
          continue;
        }
        options.onLink?.(relative, target);
        isDir = lstatSync(target).isDirectory();
      }
      if (isDir) {
        options.budget.addFolder();
        if (pathDepth(relative) > MAX_FOLDER_DEPTH) {
          files.push({ path: relative, problem: folderTooDeep(relative) });
          continue;
        }
        // capabilities/toolsets/ holds toolsets files, not a capability.
        if (relativeDir === 'capabilities' && relative !== TOOLSETS_FOLDER) capabilityFolders.push(relative);
        walk(absolute, relative);
        continue;
      }
      allPaths.push(relative);
      if (isProtocolFile(relative)) protocolFolders.add(relativeDir);
      if (isTextInput(relative)) files.push(readSourceFile(absolute, relative, options));
    }
  };

  walk(path.join(root, 'capabilities'), 'capabilities');
  return {
    files,
    allPaths: allPaths.sort(),
    foldersWithoutProtocol: capabilityFolders.filter((folder) => !protocolFolders.has(folder)).sort(),
  };
}

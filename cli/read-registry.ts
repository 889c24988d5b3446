// Read a registry from disk into the in-memory form the compiler takes. This is where the hostile
// cases of the file system are handled: files over the size limit, binary or non-UTF-8 files, and
// symbolic links that lead out of the root are refused with a reason instead of being read.
import { lstat, readFile, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { isProtocolFile } from '../compiler/compile.js';
import { isEvalsFile } from '../compiler/evals/file.js';
import { TOOLSETS_FOLDER, isToolsetsFile } from '../compiler/toolsets.js';
import type { RegistryInput, SourceFile } from '../compiler/types.js';

export interface ReadOptions {
  maxFileBytes: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}

function sizeProblem(size: number, maxFileBytes: number): string {
  return `file is ${formatBytes(size)}, over the ${formatBytes(maxFileBytes)} limit (limits.maxFileBytes in capreg.config.yaml); split it or move material into references/`;
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
export function decodeTextFile(bytes: Uint8Array, maxFileBytes: number): DecodedFile {
  if (bytes.byteLength > maxFileBytes) return { problem: sizeProblem(bytes.byteLength, maxFileBytes) };
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

function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

export function isTextInput(relativePath: string): boolean {
  return isToolsetsFile(relativePath) || isProtocolFile(relativePath) || isEvalsFile(relativePath);
}

/** One text input of the registry (a protocol, toolsets or evals file), or why it cannot be read. */
export async function readSourceFile(absolute: string, relative: string, options: ReadOptions): Promise<SourceFile> {
  try {
    const info = await stat(absolute);
    // A FIFO or device named PROTOCOL.md would block the read or never end.
    if (!info.isFile()) return { path: relative, problem: 'not a regular file; it must be a UTF-8 text file' };
    if (info.size > options.maxFileBytes) return { path: relative, problem: sizeProblem(info.size, options.maxFileBytes) };
    const result = decodeTextFile(await readFile(absolute), options.maxFileBytes);
    return { path: relative, ...result };
  } catch (error) {
    return {
      path: relative,
      problem: `file cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); make it a readable UTF-8 text file`,
    };
  }
}

/** Text files read at once while the walk goes on (libuv has 4 threads for file I/O). */
const READ_AHEAD = 16;

export async function readRegistry(root: string, options: ReadOptions): Promise<RegistryInput> {
  const realRoot = await realpath(root);
  // In walk order; a text file's slot holds its read in flight (files are read while the walk goes on).
  const files: (SourceFile | Promise<SourceFile>)[] = [];
  const allPaths: string[] = [];
  const protocolFolders = new Set<string>();
  const capabilityFolders: string[] = [];
  const visited = new Set<string>();
  const reading: Promise<SourceFile>[] = [];

  const readText = (absolute: string, relative: string): Promise<SourceFile> => readSourceFile(absolute, relative, options);

  const walk = async (absoluteDir: string, relativeDir: string): Promise<void> => {
    const realDir = await realpath(absoluteDir);
    if (visited.has(realDir)) return;
    visited.add(realDir);
    const entries = (await readdir(absoluteDir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const absolute = path.join(absoluteDir, entry.name);
      const relative = `${relativeDir}/${entry.name}`;
      let isDir = entry.isDirectory();
      if (entry.isSymbolicLink()) {
        let target: string;
        try {
          target = await realpath(absolute);
        } catch {
          if (isProtocolFile(relative)) protocolFolders.add(relativeDir);
          if (isTextInput(relative))
            files.push({ path: relative, problem: 'symbolic link is broken: its target does not exist; replace the link with the file' });
          continue;
        }
        if (!isInside(realRoot, target)) {
          allPaths.push(relative);
          // The folder has its PROTOCOL.md; it is refused, not missing.
          if (isProtocolFile(relative)) protocolFolders.add(relativeDir);
          if (isTextInput(relative) || relativeDir === 'capabilities') {
            files.push({
              path: relative,
              problem: `symbolic link points outside the registry root (to ${target}); refused: put the file itself inside the registry`,
            });
          }
          continue;
        }
        isDir = (await lstat(target)).isDirectory();
      }
      if (isDir) {
        // capabilities/toolsets/ holds toolsets files, not a capability.
        if (relativeDir === 'capabilities' && relative !== TOOLSETS_FOLDER) capabilityFolders.push(relative);
        await walk(absolute, relative);
        continue;
      }
      allPaths.push(relative);
      if (isProtocolFile(relative)) protocolFolders.add(relativeDir);
      if (isTextInput(relative)) {
        // At most READ_AHEAD reads in flight: a registry of many large files is not all in buffers at once.
        if (reading.length >= READ_AHEAD) await reading.shift();
        const read = readText(absolute, relative);
        reading.push(read);
        files.push(read);
      }
    }
  };

  await walk(path.join(root, 'capabilities'), 'capabilities');
  return {
    files: await Promise.all(files.map(async (file) => file)),
    allPaths: allPaths.sort(),
    foldersWithoutProtocol: capabilityFolders.filter((folder) => !protocolFolders.has(folder)).sort(),
  };
}

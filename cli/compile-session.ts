// The compiles of one `--watch` session. The first compile reads and parses the whole registry
// (through the parse cache); after that the session is told which paths changed and reads, parses
// and derives only what they touch: unchanged files keep their text, document and evals objects,
// so the facts rules derive from them (compiler/derived.ts) are still there.
//
// What is re-read per path, from the disk as it is now (an event only says "look here"):
// - a regular file under `capabilities/` whose folders are not symbolic links: read again (or
//   dropped when it is gone), with the same limits and refusals as a full read;
// - anything else — a folder added or removed, a symbolic link, the config file, a path the
//   session cannot place — makes the next compile a full one: the whole registry is read again,
//   and a protocol whose text did not change keeps its document.
import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { compileRegistry, protocolFiles, type CompileResult } from '../compiler/compile.js';
import { isEvalsFile, isProtocolFile, isTextInput, isToolsetsFolderProtocol } from '../compiler/layout.js';
import type { ResolvedConfig } from '../compiler/config.js';
import { DerivedFacts } from '../compiler/derived.js';
import { parseEvalsFiles, type ParsedEvals } from '../compiler/evals/file.js';
import { isToolsetsFile, toolsetsSourceOf, type ParsedToolsets } from '../compiler/toolsets.js';
import type { CapabilityDocument, RegistryInput, SourceFile } from '../compiler/types.js';
import { refuseOverBudget } from './compile-root.js';
import { loadConfig } from './load-config.js';
import { parseWithCache } from './parse-cache.js';
import { parseInWorkers, startParseWorker, threadCount, type ParsedDocuments } from './parse-workers.js';
import { readRegistry, readSourceFile, RegistryBudget } from './read-registry.js';
import { searchSorted } from './sorted.js';
import { byCodeUnits, byKey } from '../compiler/order.js';

/** Enough rounds for the parser's hot code to be optimized (an edit's parse: ~50 ms cold, ~6 ms warm). */
const WARM_UP_ROUNDS = 40;

export interface SessionOptions {
  /** The parse cache, for the first compile (and full ones). */
  cache: boolean;
  jobs?: number;
}

export interface SessionCompile {
  config: ResolvedConfig;
  input: RegistryInput;
  result: CompileResult;
  /** `full`: the whole registry was read; `paths`: only the changed paths. */
  kind: 'full' | 'paths';
  /** Files read from the disk, and protocols parsed, for this compile. */
  read: number;
  parsed: number;
}

/** The order readRegistry's walk gives: folder by folder, each folder's entries by name. */
export function compareWalkOrder(a: string, b: string): number {
  const left = a.split('/');
  const right = b.split('/');
  for (let i = 0; i < Math.min(left.length, right.length); i += 1) {
    if (left[i] !== right[i]) return left[i]! < right[i]! ? -1 : 1;
  }
  return left.length - right.length;
}

const itself = (value: string): string => value;

function insertSorted(list: string[], value: string): void {
  const index = searchSorted(list, value, itself, byCodeUnits);
  if (list[index] !== value) list.splice(index, 0, value);
}

function removeSorted(list: string[], value: string): void {
  const index = searchSorted(list, value, itself, byCodeUnits);
  if (list[index] === value) list.splice(index, 1);
}

const pathOf = (file: SourceFile): string => file.path;

/** Put `file` in its place in `files` (walk order), replacing the file of the same path. */
function placeFile(files: SourceFile[], file: SourceFile): void {
  const index = searchSorted(files, file.path, pathOf, compareWalkOrder);
  files.splice(index, files[index]?.path === file.path ? 1 : 0, file);
}

function dropFile(files: SourceFile[], relative: string): void {
  const index = searchSorted(files, relative, pathOf, compareWalkOrder);
  if (files[index]?.path === relative) files.splice(index, 1);
}

interface State {
  config: ResolvedConfig;
  /** In readRegistry's walk order. */
  files: SourceFile[];
  allPaths: string[];
  foldersWithoutProtocol: string[];
  /** A protocol's document; undefined when its parse ran over the budget. */
  documents: Map<string, CapabilityDocument | undefined>;
  /** The protocols of `documents` refused for memory rather than time (ParseOptions.overMemory). */
  overMemory: Set<string>;
  toolsets: ParsedToolsets;
  evals: Map<string, ParsedEvals>;
  /** The text bytes of the last full read, kept up to date by each edit (limits.maxTotalBytes). */
  budget: RegistryBudget;
}

export class CompileSession {
  private state: State | undefined;
  private readonly changed = new Set<string>();
  private full = true;
  private readonly derived = new DerivedFacts();
  /** The real targets of the links the last full read followed. */
  private links = new Set<string>();

  constructor(
    private readonly root: string,
    private readonly options: SessionOptions,
  ) {}

  /**
   * Where the registry's symbolic links lead (absolute real paths), as of the last full read: the
   * watcher does not follow links (links back to their own folder would make it walk without end),
   * so it watches their targets by these paths.
   */
  linkTargets(): string[] {
    return [...this.links];
  }

  /** A path under the root changed (was added, edited or removed). */
  noteChange(absolutePath: string, isDirectory: boolean): void {
    const relative = path.relative(this.root, absolutePath).split(path.sep).join('/');
    // With links, one file can be read under several paths: every change is a full read.
    const placeable =
      this.links.size === 0 &&
      !isDirectory &&
      relative.startsWith('capabilities/') &&
      !relative.split('/').some((segment) => segment.startsWith('.') || segment === '..') &&
      !isToolsetsFolderProtocol(relative);
    if (placeable) this.changed.add(relative);
    else this.full = true;
  }

  async compile(): Promise<SessionCompile> {
    const state = this.state;
    const full = this.full || state === undefined;
    const paths = [...this.changed];
    this.full = false;
    this.changed.clear();
    try {
      const compiled = full ? await this.compileAll() : await this.compilePaths(state, paths);
      // The next edit's parse finds a worker with its modules loaded and its parser warmed up (or
      // the one that parsed the last edit, kept).
      startParseWorker(WARM_UP_ROUNDS);
      return compiled;
    } catch (error) {
      // Half-applied changes are not trusted: the next compile reads everything.
      this.full = true;
      throw error;
    }
  }

  /** Parse threads for `files` files under `--jobs` (the parse's own default without it). */
  private threads(files: number): number | undefined {
    return this.options.jobs === undefined ? undefined : threadCount(files, this.options.jobs);
  }

  private async compileAll(): Promise<SessionCompile> {
    const previous = this.state;
    const config = await loadConfig(this.root);
    const links = new Set<string>();
    const budget = new RegistryBudget(config);
    const input = readRegistry(this.root, { maxFileBytes: config.maxFileBytes, budget, onLink: (_relative, target) => links.add(target) });
    this.links = links;
    const protocols = protocolFiles(input);
    // A file whose text is unchanged keeps what was made of it (its document, its parsed evals).
    const previousText = new Map((previous?.files ?? []).map((file) => [file.path, file.content]));
    let parsed: ParsedDocuments;
    let parsedCount: number;
    const overMemory = new Set<string>();
    if (previous === undefined) {
      parsed = await parseWithCache(this.root, input, { enabled: this.options.cache, maxParseMs: config.maxParseMs, jobs: this.options.jobs, overMemory });
      parsedCount = protocols.length;
    } else {
      // A protocol that ran over the parse budget is tried again, as a one-off lint would.
      const stale = protocols.filter((file) => previousText.get(file.path) !== file.content || previous.documents.get(file.path) === undefined);
      const fresh = await parseInWorkers(stale, { maxParseMs: config.maxParseMs, threads: this.threads(stale.length), keepWorker: true, overMemory });
      const byPath = new Map(stale.map((file, index) => [file.path, fresh[index]]));
      parsed = protocols.map((file) => (byPath.has(file.path) ? byPath.get(file.path) : previous.documents.get(file.path)));
      parsedCount = stale.length;
    }
    const previousEvals = previous?.evals ?? new Map<string, ParsedEvals>();
    const evals = new Map<string, ParsedEvals>();
    for (const file of input.files) {
      if (!isEvalsFile(file.path) || file.content === undefined) continue;
      const kept = previousEvals.get(file.path);
      evals.set(file.path, kept !== undefined && previousText.get(file.path) === file.content ? kept : parseEvalsFiles([file])[0]!);
    }
    const toolsetsText = (files: readonly SourceFile[]): string =>
      JSON.stringify(files.filter((file) => isToolsetsFile(file.path)).map((file) => [file.path, file.content ?? null, file.problem ?? null]));
    const toolsets = previous !== undefined && toolsetsText(previous.files) === toolsetsText(input.files) ? previous.toolsets : toolsetsSourceOf(input.files);
    this.state = {
      config,
      files: input.files,
      allPaths: input.allPaths,
      foldersWithoutProtocol: input.foldersWithoutProtocol,
      documents: new Map(protocols.map((file, index) => [file.path, parsed[index]])),
      overMemory,
      toolsets,
      evals,
      budget,
    };
    return { ...this.lint(this.state), kind: 'full', read: input.files.length, parsed: parsedCount };
  }

  private async compilePaths(state: State, paths: string[]): Promise<SessionCompile> {
    const realRoot = await realpath(this.root);
    const reads: SourceFile[] = [];
    const removed: string[] = [];
    for (const relative of paths) {
      const absolute = path.join(this.root, relative);
      // A path reached through a linked folder is placed by a full read, which refuses links out of the root.
      let parent: string;
      try {
        parent = await realpath(path.dirname(absolute));
      } catch {
        parent = '';
      }
      if (parent !== '' && parent !== path.join(realRoot, path.dirname(relative))) return this.compileAll();
      let kind: 'file' | 'gone' | 'other';
      try {
        const info = await lstat(absolute);
        kind = info.isFile() ? 'file' : 'other';
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return this.compileAll();
        kind = 'gone';
      }
      if (kind === 'other') return this.compileAll();
      if (kind === 'gone') {
        // A protocol removed with its folder: the folder's removal is placed by a full read.
        if (isProtocolFile(relative) && parent === '') return this.compileAll();
        removed.push(relative);
        continue;
      }
      if (isTextInput(relative)) reads.push(readSourceFile(absolute, relative, { maxFileBytes: state.config.maxFileBytes, budget: state.budget }));
      else insertSorted(state.allPaths, relative);
    }

    let toolsetsChanged = false;
    const files = state.files;
    for (const relative of removed) {
      state.budget.removeText(relative);
      dropFile(files, relative);
      removeSorted(state.allPaths, relative);
      state.documents.delete(relative);
      state.overMemory.delete(relative);
      state.evals.delete(relative);
      if (isToolsetsFile(relative)) toolsetsChanged = true;
      if (isProtocolFile(relative)) {
        // The folder is left without its protocol (removing the folder itself makes a full compile).
        insertSorted(state.foldersWithoutProtocol, path.posix.dirname(relative));
      }
    }
    const protocols: (SourceFile & { content: string })[] = [];
    for (const file of reads) {
      const before = files[searchSorted(files, file.path, pathOf, compareWalkOrder)];
      if (before?.path === file.path && before.content === file.content && before.problem === file.problem) continue;
      placeFile(files, file);
      insertSorted(state.allPaths, file.path);
      if (isToolsetsFile(file.path)) toolsetsChanged = true;
      if (isEvalsFile(file.path)) {
        if (file.content === undefined) state.evals.delete(file.path);
        else state.evals.set(file.path, parseEvalsFiles([file])[0]!);
      }
      if (isProtocolFile(file.path)) {
        removeSorted(state.foldersWithoutProtocol, path.posix.dirname(file.path));
        state.overMemory.delete(file.path);
        if (file.content === undefined) state.documents.delete(file.path);
        else protocols.push(file as SourceFile & { content: string });
      }
    }
    state.budget.checkFiles(state.allPaths.length);
    const parsed = await parseInWorkers(protocols, {
      maxParseMs: state.config.maxParseMs,
      threads: this.threads(protocols.length),
      keepWorker: true,
      overMemory: state.overMemory,
    });
    protocols.forEach((file, index) => state.documents.set(file.path, parsed[index]));
    if (toolsetsChanged) state.toolsets = toolsetsSourceOf(state.files);
    return { ...this.lint(state), kind: 'paths', read: reads.length, parsed: protocols.length };
  }

  private lint(state: State): { config: ResolvedConfig; input: RegistryInput; result: CompileResult } {
    const read: RegistryInput = { files: state.files, allPaths: state.allPaths, foldersWithoutProtocol: state.foldersWithoutProtocol };
    // Every readable protocol has its entry; undefined marks one over the parse budget.
    const parsed = [...state.documents.values()];
    const { input, documents } = parsed.includes(undefined)
      ? refuseOverBudget(
          read,
          protocolFiles(read).map((file) => state.documents.get(file.path)),
          state.config.maxParseMs,
          state.overMemory,
        )
      : { input: read, documents: parsed as CapabilityDocument[] };
    const evals = [...state.evals.values()].sort(byKey((parsed) => parsed.file));
    const result = compileRegistry(input, { config: state.config, documents, prepared: { toolsets: state.toolsets, evals }, derived: this.derived });
    return { config: state.config, input, result };
  }
}

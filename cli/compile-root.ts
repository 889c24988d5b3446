// Compile the registry at a root: read config and files from disk, parse (through the cache, under
// the parse budget), lint. Shared by lint, build and the gate.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { compileRegistry, protocolFiles, type CompileResult, type PreparedInput } from '../compiler/compile.js';
import { readLimits, type ResolvedConfig } from '../compiler/config.js';
import type { CapabilityDocument, RegistryInput } from '../compiler/types.js';
import { parseEvalsFiles } from '../compiler/evals/file.js';
import { isEvalsFile } from '../compiler/layout.js';
import { toolsetsSourceOf } from '../compiler/toolsets.js';
import type { LintReport } from '../compiler/formatters/types.js';
import { cacheFolderUsable } from './build-cache.js';
import { lintKey, recordedLint, recordLint } from './lint-record.js';
import { loadConfig } from './load-config.js';
import { parseWithCache } from './parse-cache.js';
import { overBudgetProblem, type ParsedDocuments } from './parse-workers.js';
import { readRegistry } from './read-registry.js';
import type { Timings } from './timing.js';
import { byKey } from '../compiler/order.js';

export interface RootCompilation {
  config: ResolvedConfig;
  input: RegistryInput;
  result: CompileResult;
  /** Protocol files that could not be parsed within `config.maxParseMs` (reported by registry-files). */
  overBudget: string[];
  /** Protocol files whose document was taken from the parse cache. */
  fromCache: ReadonlySet<string>;
}

export interface CompileRootOptions {
  cache: boolean;
  /** Parse worker threads at most (`--jobs`); the cores available when absent. */
  jobs?: number;
  /** CAPREG_TIMING: the phases start (all before this), read, parse and lint, and the rules, are timed here. */
  timings?: Timings | undefined;
  /**
   * Keep the parse worker as the spare for a parse that follows, when this parse needed only one
   * (parseWithCache's `keepOneWorker`; a function is asked when the parse is over).
   */
  keepOneWorker?: boolean | (() => boolean);
}

export async function compileRoot(root: string, options: CompileRootOptions): Promise<RootCompilation> {
  const { config, read } = await readRoot(root, options.timings);
  return compileRead(root, config, read, options);
}

/**
 * `capreg lint`'s compile: answered from the lint record (cli/lint-record.ts) when the configuration
 * and every file read are what the last lint read, with the cache on; recorded otherwise.
 */
export async function lintRoot(root: string, options: CompileRootOptions): Promise<LintReport> {
  const { config, read } = await readRoot(root, options.timings);
  const key = options.cache && cacheFolderUsable(root) ? lintKey(config, read) : undefined;
  const recorded = key === undefined ? undefined : recordedLint(root, key);
  if (recorded !== undefined) return recorded;
  const { result, overBudget } = await compileRead(root, config, read, options);
  // A file over the parse budget is a finding of this run's timing, not of the files: not kept.
  if (key !== undefined && overBudget.length === 0) await recordLint(root, key, result);
  return result;
}

/** The configuration and the registry as read from disk. */
async function readRoot(root: string, timings: Timings | undefined): Promise<{ config: ResolvedConfig; read: RegistryInput }> {
  timings?.mark('start');
  const config = await loadConfig(root);
  const read = readRegistry(root, readLimits(config));
  timings?.mark('read');
  return { config, read };
}

/** Parse (through the cache, under the parse budget) and lint what readRoot read. */
async function compileRead(root: string, config: ResolvedConfig, read: RegistryInput, options: CompileRootOptions): Promise<RootCompilation> {
  const { timings } = options;
  const fromCache = new Set<string>();
  const overMemory = new Set<string>();
  const parsing = parseWithCache(root, read, {
    enabled: options.cache,
    maxParseMs: config.maxParseMs,
    jobs: options.jobs,
    fromCache,
    overMemory,
    keepOneWorker: options.keepOneWorker,
  });
  // This thread is idle while the workers parse: it parses the toolsets and evals files meanwhile.
  // (It loads the tokenizer after the parse, for the first body it counts: cli/parse-workers.ts.)
  const [parsed, prepared] = await Promise.all([parsing, prepareWhileParsing(read)]);
  timings?.mark('parse');
  const { input, documents, overBudget } = refuseOverBudget(read, parsed, config.maxParseMs, overMemory);
  // Over-budget protocols only change protocol files, which prepareInput does not read.
  const result = compileRegistry(input, { config, documents, prepared, ruleTimes: timings?.rules });
  timings?.mark('lint');
  return { config, input, result, overBudget, fromCache };
}

/**
 * prepareInput (compiler/compile.ts), after the parse has handed out its first batches; the files go one at a time
 * between turns of the event loop, so that the workers' messages (a worker that is ready, a
 * document parsed, the parse budget's timers) wait for one file at most.
 */
async function prepareWhileParsing(input: RegistryInput): Promise<PreparedInput> {
  await nextTurn();
  const toolsets = toolsetsSourceOf(input.files);
  const evals: PreparedInput['evals'] = [];
  for (const file of input.files) {
    if (!isEvalsFile(file.path)) continue;
    await nextTurn();
    evals.push(...parseEvalsFiles([file]));
  }
  // parseEvalsFiles' order.
  return { toolsets, evals: evals.sort(byKey((parsed) => parsed.file)) };
}

/**
 * A protocol file that could not be parsed within its budget is refused like an unreadable one:
 * registry-files reports it (one error at 1:1, saying whether it ran out of time or of memory: the
 * files in `overMemory`), and no other rule sees a half-read capability.
 */
export function refuseOverBudget(
  input: RegistryInput,
  parsed: ParsedDocuments,
  maxParseMs: number,
  overMemory: ReadonlySet<string>,
): { input: RegistryInput; documents: CapabilityDocument[]; overBudget: string[] } {
  const overBudget = protocolFiles(input).flatMap((file, index) => (parsed[index] ? [] : [file.path]));
  const documents = parsed.filter((document): document is CapabilityDocument => document !== undefined);
  if (overBudget.length === 0) return { input, documents, overBudget };
  const over = new Set(overBudget);
  return {
    input: {
      ...input,
      files: input.files.map((file) => (over.has(file.path) ? { path: file.path, problem: overBudgetProblem(file.path, maxParseMs, overMemory) } : file)),
    },
    documents,
    overBudget,
  };
}

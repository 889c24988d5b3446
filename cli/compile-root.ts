// Compile the registry at a root: read config and files from disk, parse (through the cache, under
// the parse budget), lint. Shared by lint, build and the gate.
import { compileRegistry, protocolFiles, type CompileResult } from '../compiler/compile.js';
import type { ResolvedConfig } from '../compiler/config.js';
import type { CapabilityDocument, RegistryInput } from '../compiler/types.js';
import { loadConfig } from './load-config.js';
import { parseWithCache } from './parse-cache.js';
import { overBudgetProblem, type ParsedDocuments } from './parse-workers.js';
import { readRegistry } from './read-registry.js';

export interface RootCompilation {
  config: ResolvedConfig;
  input: RegistryInput;
  result: CompileResult;
  /** Protocol files that could not be parsed within `config.maxParseMs` (reported by registry-files). */
  overBudget: string[];
}

export interface CompileRootOptions {
  cache: boolean;
  /** Parse worker threads at most (`--jobs`); the cores available when absent. */
  jobs?: number;
}

export async function compileRoot(root: string, options: CompileRootOptions): Promise<RootCompilation> {
  const config = await loadConfig(root);
  const read = await readRegistry(root, { maxFileBytes: config.maxFileBytes });
  const parsed = await parseWithCache(root, read, { enabled: options.cache, maxParseMs: config.maxParseMs, jobs: options.jobs });
  const { input, documents, overBudget } = refuseOverBudget(read, parsed, config.maxParseMs);
  const result = compileRegistry(input, { config, documents });
  return { config, input, result, overBudget };
}

/**
 * A protocol file that could not be parsed within its budget is refused like an unreadable one:
 * registry-files reports it (one error at 1:1), and no other rule sees a half-read capability.
 */
export function refuseOverBudget(
  input: RegistryInput,
  parsed: ParsedDocuments,
  maxParseMs: number,
): { input: RegistryInput; documents: CapabilityDocument[]; overBudget: string[] } {
  const overBudget = protocolFiles(input).flatMap((file, index) => (parsed[index] ? [] : [file.path]));
  const documents = parsed.filter((document): document is CapabilityDocument => document !== undefined);
  if (overBudget.length === 0) return { input, documents, overBudget };
  const over = new Set(overBudget);
  const problem = overBudgetProblem(maxParseMs);
  return {
    input: { ...input, files: input.files.map((file) => (over.has(file.path) ? { path: file.path, problem } : file)) },
    documents,
    overBudget,
  };
}

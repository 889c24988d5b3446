// Compile the registry at a root: read config and files from disk, parse (through the cache),
// lint. Shared by lint, build and the gate.
import { compileRegistry, type CompileResult } from '../compiler/compile.js';
import type { ResolvedConfig } from '../compiler/config.js';
import type { RegistryInput } from '../compiler/types.js';
import { loadConfig } from './load-config.js';
import { parseWithCache } from './parse-cache.js';
import { readRegistry } from './read-registry.js';

export interface RootCompilation {
  config: ResolvedConfig;
  input: RegistryInput;
  result: CompileResult;
}

export async function compileRoot(root: string, options: { cache: boolean }): Promise<RootCompilation> {
  const config = await loadConfig(root);
  const input = await readRegistry(root, { maxFileBytes: config.maxFileBytes });
  const documents = await parseWithCache(root, input, { enabled: options.cache });
  const result = compileRegistry(input, { config, documents });
  return { config, input, result };
}

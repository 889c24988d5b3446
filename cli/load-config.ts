import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CONFIG_FILE, ConfigError, defaultConfig, parseConfig, type ResolvedConfig } from '../compiler/config.js';
import { UsageError } from './context.js';

/** The registry's capreg.config.yaml, or the defaults when there is none. A broken file is a usage error. */
export async function loadConfig(root: string): Promise<ResolvedConfig> {
  let text: string;
  try {
    text = await readFile(path.join(root, CONFIG_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return defaultConfig();
    throw new UsageError(`cannot read ${CONFIG_FILE}: ${(error as Error).message}`);
  }
  try {
    return parseConfig(text, CONFIG_FILE);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(`invalid configuration: ${error.message}`);
    throw error;
  }
}

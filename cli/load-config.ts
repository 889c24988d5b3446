import { lstat, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { CONFIG_FILE, ConfigError, defaultConfig, parseConfig, type ResolvedConfig } from '../compiler/config.js';
import { CONFIG_NEAR_MISSES } from '../compiler/layout.js';
import { UsageError } from './context.js';
import { linkRefusal } from './link-refusal.js';
import { readRegularText } from './read-registry.js';

/** A configuration file is a few dozen lines; this bounds what is read before it is parsed. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** The registry's capreg.config.yaml, or the defaults when there is none. A broken file is a usage error. */
export async function loadConfig(root: string): Promise<ResolvedConfig> {
  await refuseNearMiss(root);
  const text = await readConfigText(root);
  if (text === undefined) return defaultConfig();
  try {
    return parseConfig(text, CONFIG_FILE);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(`invalid configuration: ${error.message}`);
    throw error;
  }
}

/** A configuration under a name capreg does not read would be skipped without a word (its limits, its rule levels): refused. */
async function refuseNearMiss(root: string): Promise<void> {
  for (const name of CONFIG_NEAR_MISSES) {
    const present = await lstat(path.join(root, name)).then(
      () => true,
      () => false,
    );
    if (present) throw new UsageError(`${name} is not read: capreg reads its configuration from ${CONFIG_FILE}; rename it, or remove it`);
  }
}

/**
 * The file's text, undefined when there is none. Read on the terms of the registry's own files: a
 * regular UTF-8 file within a size limit, a link only to a file inside the root and not hidden (a
 * parse error quotes the text, and a link to `.git/config` or outside the root could print a secret).
 */
async function readConfigText(root: string): Promise<string | undefined> {
  const file = path.join(root, CONFIG_FILE);
  try {
    let info = await lstat(file);
    if (info.isSymbolicLink()) {
      let target: string;
      try {
        target = await realpath(file);
      } catch {
        throw new UsageError(`${CONFIG_FILE} is a broken symbolic link: its target does not exist; replace the link with the file`);
      }
      const refusal = linkRefusal(await realpath(root), target);
      if (refusal !== undefined) throw new UsageError(`${CONFIG_FILE}: ${refusal}`);
      info = await stat(file);
    }
    // A FIFO or device would block the read or never end.
    if (!info.isFile()) throw new UsageError(`${CONFIG_FILE} is not a regular file; it must be a UTF-8 text file`);
    if (info.size > MAX_CONFIG_BYTES)
      throw new UsageError(`${CONFIG_FILE} is ${info.size} bytes, over the ${MAX_CONFIG_BYTES} bytes a configuration file may have`);
    // Read on the same terms again: the file can be swapped for a FIFO since the checks above.
    const decoded = readRegularText(file, MAX_CONFIG_BYTES);
    if ('problem' in decoded) throw new UsageError(`${CONFIG_FILE}: ${decoded.problem}`);
    return decoded.content;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read ${CONFIG_FILE}: ${(error as Error).message}`);
  }
}

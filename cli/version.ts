import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** capreg's own package folder and version, from its package.json (found relative to this module, in lib/ or source). */
function findPackage(): { folder: string | undefined; version: string } {
  for (const relative of ['../../', '../']) {
    const folder = new URL(relative, import.meta.url);
    try {
      const data = JSON.parse(readFileSync(new URL('package.json', folder), 'utf8')) as { name?: string; version?: string };
      if (data.name === 'capreg' && typeof data.version === 'string') return { folder: fileURLToPath(folder), version: data.version };
    } catch {
      // try the next location
    }
  }
  return { folder: undefined, version: '0.0.0' };
}

const found = findPackage();

export const CAPREG_VERSION = found.version;

/**
 * The absolute path of this checkout's bin/capreg.js, for client configurations: a desktop client
 * starts its servers from / or $HOME, where `npx capreg` would fetch whatever the public registry
 * holds under that name.
 */
const packageFolder = found.folder ?? path.resolve(fileURLToPath(import.meta.url), '../../..');
export const CAPREG_BIN = path.join(packageFolder, 'bin', 'capreg.js');

/** The demo principals file shipped with capreg (public keys, for a local demo). */
export const DEMO_PRINCIPALS_FILE = path.join(packageFolder, 'examples', 'principals.demo.yaml');

/** The demo key the printed client configuration uses: it sees every bundled capability and may save user capabilities. */
export const DEMO_KEY = 'capreg-demo-author';

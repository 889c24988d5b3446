// Where this capreg is installed, for the client configurations `capreg serve` prints. Its version
// is part of the catalog contract (compiler/contract.ts).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** capreg's own package folder: the one whose package.json is capreg's, relative to this module in lib/ or source. */
function findPackageFolder(): string | undefined {
  for (const relative of ['../../', '../']) {
    const folder = new URL(relative, import.meta.url);
    try {
      const data = JSON.parse(readFileSync(new URL('package.json', folder), 'utf8')) as { name?: string };
      if (data.name === 'capreg') return fileURLToPath(folder);
    } catch {
      // try the next location
    }
  }
  return undefined;
}

/**
 * The absolute path of this checkout's bin/capreg.js, for client configurations: a desktop client
 * starts its servers from / or $HOME, where `npx capreg` would fetch whatever the public registry
 * holds under that name.
 */
const packageFolder = findPackageFolder() ?? path.resolve(fileURLToPath(import.meta.url), '../../..');
export const CAPREG_BIN = path.join(packageFolder, 'bin', 'capreg.js');

/** The demo principals file shipped with capreg (public keys, for a local demo). */
export const DEMO_PRINCIPALS_FILE = path.join(packageFolder, 'examples', 'principals.demo.yaml');

/** The demo key the printed client configuration uses: it sees every bundled capability and may save user capabilities. */
export const DEMO_KEY = 'capreg-demo-author';

// A digest of capreg's own compiler code, so caches are invalidated by any change to the parser or
// the rules, not only by a new release number (a development checkout changes code without one).
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import { CAPREG_VERSION } from '../compiler/contract.js';

function digestFolder(folder: string, hash: ReturnType<typeof createHash>): void {
  for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) digestFolder(full, hash);
    else if (/\.(js|ts|json)$/.test(entry.name) && !entry.name.endsWith('.map')) {
      hash.update(entry.name).update('\0').update(readFileSync(full)).update('\0');
    }
  }
}

function computeFingerprint(): string {
  const hash = createHash('sha256').update(CAPREG_VERSION);
  try {
    digestFolder(fileURLToPath(new URL('../compiler/', import.meta.url)), hash);
  } catch {
    // Without readable sources the release version alone keys the caches.
  }
  return hash.digest('hex').slice(0, 16);
}

/** capreg version + digest of the compiler's code (lib/compiler when compiled, compiler/ in tests). */
export const CODE_FINGERPRINT = computeFingerprint();

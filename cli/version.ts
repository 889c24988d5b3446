import { readFileSync } from 'node:fs';

/** capreg's own version, from its package.json (found relative to this module, in lib/ or source). */
function readVersion(): string {
  for (const relative of ['../../package.json', '../package.json']) {
    try {
      const data = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (data.name === 'capreg' && typeof data.version === 'string') return data.version;
    } catch {
      // try the next location
    }
  }
  return '0.0.0';
}

export const CAPREG_VERSION = readVersion();

// Parsing is the expensive step of a build. Parsed documents are cached on disk by content hash,
// keyed by the capreg version (a new parser invalidates everything). Rules always run: they are
// cheap next to parsing and depend on the whole registry.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { protocolFiles } from '../compiler/compile.js';
import { parseCapability } from '../compiler/parse.js';
import { sha256Hex } from '../compiler/canonical.js';
import type { CapabilityDocument, RegistryInput } from '../compiler/types.js';
import { CAPREG_VERSION } from './version.js';
import { parseInWorkers } from './parse-workers.js';

interface CacheFile {
  version: string;
  documents: Record<string, CapabilityDocument>;
}

export function cacheFilePath(root: string): string {
  return path.join(root, '.capreg', 'cache', 'documents.json');
}

function cacheKey(file: string, content: string): string {
  return `${file}\0${sha256Hex(content)}`;
}

async function loadCache(file: string): Promise<Map<string, CapabilityDocument>> {
  try {
    const data = JSON.parse(await readFile(file, 'utf8')) as CacheFile;
    if (data.version !== CAPREG_VERSION || typeof data.documents !== 'object') return new Map();
    return new Map(Object.entries(data.documents));
  } catch {
    return new Map();
  }
}

export async function parseWithCache(root: string, input: RegistryInput, options: { enabled: boolean }): Promise<CapabilityDocument[]> {
  const files = protocolFiles(input);
  if (!options.enabled) return parseInWorkers(files);
  const cachePath = cacheFilePath(root);
  const cache = await loadCache(cachePath);
  const keys = files.map((file) => cacheKey(file.path, file.content));
  const missing = files.filter((_, index) => !cache.has(keys[index]!));
  const parsed = await parseInWorkers(missing);
  const fresh = new Map(missing.map((file, index) => [file.path, parsed[index]!]));
  const documents = files.map((file, index) => cache.get(keys[index]!) ?? fresh.get(file.path) ?? parseCapability(file.path, file.content));
  if (missing.length > 0 || cache.size !== files.length) {
    const next: CacheFile = { version: CAPREG_VERSION, documents: Object.fromEntries(keys.map((key, index) => [key, documents[index]!])) };
    try {
      await mkdir(path.dirname(cachePath), { recursive: true });
      const temporary = `${cachePath}.${process.pid}.tmp`;
      await writeFile(temporary, JSON.stringify(next));
      await rename(temporary, cachePath);
    } catch {
      // A cache that cannot be written only costs speed; the build itself is unaffected.
    }
  }
  return documents;
}

// Where the caches live under a registry root: `.capreg/cache/`, the parse cache's `documents/` in
// it and the build record beside that. Apart from the caches' own modules so that the launcher
// (respawn.ts) can look there without loading the compiler.
import path from 'node:path';

export function cacheFolder(root: string): string {
  return path.join(root, '.capreg', 'cache');
}

/** The parse cache's shards. */
export function cacheDirectory(root: string): string {
  return path.join(cacheFolder(root), 'documents');
}

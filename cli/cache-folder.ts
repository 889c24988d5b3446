// Where the parse cache lives under a registry root. Apart from parse-cache.ts so that the
// launcher (respawn.ts) can look at it without loading the compiler.
import path from 'node:path';

export function cacheDirectory(root: string): string {
  return path.join(root, '.capreg', 'cache', 'documents');
}

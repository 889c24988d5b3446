// What `capreg build` writes and where, by default: the names build, serve, export and the build
// cache's records agree on, in one place.
import { lstatSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { linkRefusal } from './link-refusal.js';

/** The output folder under the registry root when `build --out` is not given. */
export const DEFAULT_OUT_DIR = 'dist';

/**
 * What a build writes, relative to its output folder; a build record naming anything else is
 * refused (cli/build-cache.ts). The signature is the manifest's name with MANIFEST_SIGNATURE_SUFFIX
 * (server/signature.ts, not imported here: it loads jose, and the build cache's fast path loads
 * nothing it does not need; a test holds the two equal).
 */
export const BUILD_OUTPUTS = { manifest: 'manifest.json', signature: 'manifest.json.sig', skill: path.join('skill', 'SKILL.md') } as const;

/** The manifest `serve` and `export` read when `--manifest` is not given. */
export function defaultManifestFile(root: string): string {
  return path.join(root, DEFAULT_OUT_DIR, BUILD_OUTPUTS.manifest);
}

/**
 * Why capreg must not write or read `target` (an output folder, or the manifest export reads by
 * default), or undefined. Inside the registry root the folders are the repository's, and a pull
 * request can commit `dist` as a symbolic link: the build then wrote its outputs (and removed a
 * stale signature) wherever the link points, and export quoted the start of the file it points to.
 * A link on the way is followed under the registry reader's terms (cli/link-refusal.ts): inside the
 * root and out of hidden folders. A target outside the root was named by the user and is theirs.
 */
export function outputLinkProblem(root: string, target: string): string | undefined {
  const relative = path.relative(root, target);
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
  let current = root;
  for (const name of relative.split(path.sep)) {
    current = path.join(current, name);
    try {
      if (!lstatSync(current).isSymbolicLink()) continue;
    } catch {
      return undefined; // not there yet: the build makes it a folder
    }
    const shown = path.relative(root, current);
    let real: string;
    try {
      real = realpathSync(current);
    } catch {
      return `${shown}: symbolic link is broken: its target does not exist; refused: make ${shown} a folder`;
    }
    const refusal = linkRefusal(realpathSync(root), real, statSync(real).isDirectory() ? 'folder' : 'file');
    if (refusal !== undefined) return `${shown}: ${refusal}`;
  }
  return undefined;
}

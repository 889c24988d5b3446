// What `capreg build` writes and where, by default: the names build, serve, export and the build
// cache's records agree on, in one place.
import path from 'node:path';

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

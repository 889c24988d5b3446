// A digest of capreg's own compiler code, so caches are invalidated by any change to the parser or
// the rules, not only by a new release number (a development checkout changes code without one).
import { existsSync, readFileSync, readdirSync, realpathSync } from 'node:fs';
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

/**
 * The packages compiler/ imports (test/code-fingerprint.test.ts holds this list to its imports).
 * Their versions, and those of every package they depend on, key what caches a compile's results.
 */
export const COMPILER_PACKAGES = [
  'ajv',
  'ajv-formats',
  'gpt-tokenizer',
  'lru-cache',
  'minisearch',
  'remark-frontmatter',
  'remark-gfm',
  'remark-parse',
  'unified',
  'yaml',
];

/**
 * The real folder of package `name` as Node finds it from `folder`: in node_modules there or above,
 * through links (pnpm's layout), as Node resolves a package's own imports from where it really is.
 */
function packageFolder(name: string, folder: string): string | undefined {
  for (let at = folder; ; at = path.dirname(at)) {
    const candidate = path.join(at, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return realpathSync(candidate);
    if (path.dirname(at) === at) return undefined;
  }
}

/**
 * `name@version` of each package `roots` bring, as found from `folder` (each one, then its own
 * dependencies from its folder, as Node resolves them), sorted; a package not found is `name@-`.
 * Read from each package.json by path, so a package's `exports` does not hide it.
 */
export function installedPackages(roots: readonly string[], folder: string): string[] {
  const found = new Map<string, string>();
  const queue = roots.map((name) => [name, folder] as const);
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    const [name, from] = next;
    const at = packageFolder(name, from);
    if (at === undefined) {
      found.set(`missing:${name}`, `${name}@-`);
      continue;
    }
    if (found.has(at)) continue;
    const manifest = JSON.parse(readFileSync(path.join(at, 'package.json'), 'utf8')) as { version?: unknown; dependencies?: Record<string, string> };
    found.set(at, `${name}@${String(manifest.version)}`);
    for (const dependency of Object.keys(manifest.dependencies ?? {})) queue.push([dependency, at]);
  }
  return [...found.values()].sort();
}

let pipeline: string | undefined;

/**
 * CODE_FINGERPRINT and what else a compile's results rest on: capreg's command-line code (the
 * reader, the parse workers, the parse cache), every package the compiler brings (an `npm update`
 * can bring a parser that reads the same file differently, with no new capreg version), and Node's
 * V8, ICU and Unicode versions (serialization, normalization, word segmentation). For the caches
 * of a compile's results: the parse cache, the build record and the lint record; made on first use
 * (~10 ms).
 */
export function pipelineFingerprint(): string {
  if (pipeline !== undefined) return pipeline;
  const hash = createHash('sha256').update(CODE_FINGERPRINT).update('\0');
  const own = fileURLToPath(new URL('./', import.meta.url));
  try {
    digestFolder(own, hash);
    hash.update(installedPackages(COMPILER_PACKAGES, path.dirname(own)).join('\n'));
  } catch {
    // Unreadable sources or packages: the rest still keys the caches.
  }
  const { v8, icu, unicode } = process.versions;
  hash.update(`\0${process.version} ${v8} ${icu ?? '-'} ${unicode ?? '-'}`);
  pipeline = hash.digest('hex').slice(0, 16);
  return pipeline;
}

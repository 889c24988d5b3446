// Where a Markdown link in a PROTOCOL.md points, as registry paths. Shared by the `links` rule
// (relative links stay inside the capability folder) and `catalog-references` (a relative link into
// another capability's folder must be a `capability:` link instead), so that both rules agree on
// which of them owns a link and none is reported twice.
import { posix } from 'node:path';
import { capabilityTarget } from './contract.js';
import type { Derived } from './derived.js';
import type { CapabilityDocument } from './types.js';

export type LinkTarget =
  /** `capability:<id>` */
  | { kind: 'capability'; id: string }
  /** Any other scheme (`https:`, `mailto:` …) or a protocol-relative `//host/…` URL. */
  | { kind: 'external' }
  /** `#section`: a place in the same document. */
  | { kind: 'anchor' }
  /** `[text]()` */
  | { kind: 'empty' }
  /** `/abs/path`: absolute paths depend on where the registry is checked out. */
  | { kind: 'absolute'; path: string }
  | {
      kind: 'relative';
      /** The path as written, without `#fragment` / `?query`, percent-decoded. */
      path: string;
      /** Resolved against the linking file's folder, from the registry root; starts with `../` when it leaves the root. */
      resolved: string;
      /** The resolved path is the linking file's own capability folder or inside it. */
      inside: boolean;
      /** The folder under `capabilities/` the resolved path lies in, if any. */
      capabilityFolder: string | undefined;
    };

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

function decode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path; // malformed %-escape: keep it as written; it will not resolve and is reported as missing
  }
}

/** @param file the linking file, e.g. `capabilities/x/PROTOCOL.md` */
export function linkTarget(url: string, file: string): LinkTarget {
  const id = capabilityTarget(url);
  if (id !== undefined) return { kind: 'capability', id };
  const trimmed = url.trim();
  if (trimmed === '') return { kind: 'empty' };
  if (SCHEME.test(trimmed) || trimmed.startsWith('//')) return { kind: 'external' };
  if (trimmed.startsWith('#')) return { kind: 'anchor' };
  const path = decode(trimmed.replace(/[?#].*$/s, ''));
  if (path === '') return { kind: 'anchor' }; // `?query` alone: this document
  if (path.startsWith('/')) return { kind: 'absolute', path };
  const folder = posix.dirname(file);
  const resolved = posix.normalize(posix.join(folder, path)).replace(/\/$/, '');
  const inside = resolved === folder || resolved.startsWith(`${folder}/`);
  const parts = resolved.split('/');
  const capabilityFolder = parts[0] === 'capabilities' && parts.length > 1 ? parts[1] : undefined;
  return { kind: 'relative', path, resolved, inside, capabilityFolder };
}

/** Where each of a document's links points, in the order of `document.links`: a fact of the document, shared by the rules that read it. */
export function linkTargets(derived: Derived, document: CapabilityDocument): readonly LinkTarget[] {
  return derived.of(document, 'link-targets', undefined, () => document.links.map((link) => linkTarget(link.url, document.file)));
}

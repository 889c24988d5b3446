// links: every relative link, image and link definition in a protocol resolves to a file inside the
// capability's own folder. The folder is the unit that is reviewed, versioned and moved together;
// a link that leaves it, an absolute path or a missing file is broken for every reader.
//
// Not checked here: URLs with a scheme (`https:`, `mailto:` …), `#anchors` in the same document and
// `capability:` links (see `catalog-references`, which also owns relative links into another
// capability's folder, so that no link is reported twice). `#fragment` and `?query` are ignored and
// `%20`-style escapes decoded before resolving.
import { posix } from 'node:path';
import { didYouMeanEach } from '../did-you-mean.js';
import { linkTargets, type LinkTarget } from '../link-target.js';
import type { Derived } from '../derived.js';
import { ruleDocsUrl, type Rule } from '../rule.js';
import type { CapabilityDocument, LinkRef } from '../types.js';

export const links: Rule = {
  meta: {
    id: 'links',
    description: 'Relative links and images resolve to a file inside the capability folder.',
    defaultLevel: 'error',
    reads: 'catalog',
    docs: { url: ruleDocsUrl('links') },
    defaultOptions: {},
    messages: {
      empty: '{{what}} has an empty target; link to a file in this capability folder (e.g. references/notes.md) or remove the link',
      absolute: '{{what}} "{{url}}" is an absolute path; use a path relative to this PROTOCOL.md that stays inside {{folder}}/ (e.g. references/notes.md)',
      escapes:
        '{{what}} "{{url}}" leaves the capability folder {{folder}}/ (resolves to {{resolved}}); keep linked files inside the folder, or link a web page with https:',
      missing: '{{what}} "{{url}}" does not resolve: {{resolved}} does not exist{{hint}}; link to an existing file inside {{folder}}/',
      folder: '{{what}} "{{url}}" points at the folder {{resolved}}, not a file; link to a file inside it',
    },
  },
  check({ registry, report }) {
    // Built only when needed: capability folders (a link out of its folder), every folder and the
    // files of each capability folder (a broken link).
    let capabilityFolders: Set<string> | undefined;
    let folders: Set<string> | undefined;
    const isFolder = (path: string): boolean => {
      folders ??= foldersOf(registry.allPaths);
      return folders.has(path);
    };
    let filesByFolder: Map<string, string[]> | undefined;
    const filesUnder = (folder: string): string[] => {
      filesByFolder ??= filesByCapabilityFolder(registry.allPaths);
      return filesByFolder.get(folder) ?? [];
    };

    for (const capability of registry.capabilities) {
      const relative = registry.derived.of(capability.document, 'links', undefined, () => relativeLinks(registry.derived, capability.document));
      // Every link of a protocol is in its own folder: one set of candidates.
      const near = didYouMeanEach(() => filesUnder(posix.dirname(capability.document.file)));
      for (const { link, target, folder } of relative) {
        const what = whatLinks(link);
        const data = { what, url: link.url, folder };
        const range = link.range;
        if (target.kind === 'empty') {
          report({ capability, range, messageId: 'empty', data: { what } });
        } else if (target.kind === 'absolute') {
          report({ capability, range, messageId: 'absolute', data });
        } else if (target.kind === 'relative') {
          const resolved = target.resolved;
          if (!target.inside) {
            // Into another capability's folder: catalog-references tells the author to use `capability:`.
            capabilityFolders ??= new Set(registry.capabilities.map((each) => each.document.folder));
            if (target.capabilityFolder !== undefined && capabilityFolders.has(target.capabilityFolder)) continue;
            report({ capability, range, messageId: 'escapes', data: { ...data, resolved } });
          } else if (registry.allPaths.has(resolved)) {
            continue;
          } else if (isFolder(resolved) || resolved === folder) {
            report({ capability, range, messageId: 'folder', data: { ...data, resolved } });
          } else {
            const match = near(posix.relative(folder, resolved));
            const hint = match ? ` (did you mean ${match}?)` : '';
            report({ capability, range, messageId: 'missing', data: { ...data, resolved, hint } });
          }
        }
      }
    }
  },
};

function whatLinks(link: LinkRef): string {
  return link.kind === 'image' ? 'image' : link.kind === 'definition' ? 'link definition' : 'link';
}

/** The links this rule looks at (empty, absolute and relative ones), with their targets and the protocol's folder: a fact of the document. */
function relativeLinks(derived: Derived, document: CapabilityDocument): readonly { link: LinkRef; target: LinkTarget; folder: string }[] {
  const targets = linkTargets(derived, document);
  const checked: { link: LinkRef; target: LinkTarget; folder: string }[] = [];
  document.links.forEach((link, index) => {
    const target = targets[index] as LinkTarget;
    if (target.kind === 'empty' || target.kind === 'absolute' || target.kind === 'relative')
      checked.push({ link, target, folder: posix.dirname(document.file) });
  });
  return checked.length > 0 ? checked : NONE;
}

const NONE: readonly never[] = Object.freeze([]);

function foldersOf(paths: Iterable<string>): Set<string> {
  const folders = new Set<string>();
  for (const path of paths) {
    for (let slash = path.lastIndexOf('/'); slash > 0; slash = path.lastIndexOf('/', slash - 1)) {
      const folder = path.slice(0, slash);
      if (folders.has(folder)) break;
      folders.add(folder);
    }
  }
  return folders;
}

/** `capabilities/<folder>` -> paths of the files under it, relative to it. */
function filesByCapabilityFolder(paths: Iterable<string>): Map<string, string[]> {
  const files = new Map<string, string[]>();
  for (const path of paths) {
    const parts = path.split('/');
    if (parts[0] !== 'capabilities' || parts.length < 3) continue;
    const folder = `capabilities/${parts[1]}`;
    const list = files.get(folder) ?? [];
    list.push(parts.slice(2).join('/'));
    files.set(folder, list);
  }
  return files;
}

// createLintRegistry under a session (DerivedFacts): after any sequence of edits, the capabilities,
// their ids, texts and the first capability of each id are what a registry made from nothing gives.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DerivedFacts } from '../compiler/derived.js';
import { createLintRegistry } from '../compiler/lint.js';
import { parseCapability } from '../compiler/parse.js';
import type { LintRegistry } from '../compiler/rule.js';
import { toolsetsSourceOf } from '../compiler/toolsets.js';
import type { CapabilityDocument, SourceFile } from '../compiler/types.js';
import { runs } from './support/property.js';

const IDS = ['alpha', 'beta', 'gamma', undefined] as const;

const text = (id: string | undefined, version: number): string => `---\n${id === undefined ? '' : `id: ${id}\n`}name: N\n---\nBody ${version}.\n`;

type Step =
  | { kind: 'edit'; place: number; id: (typeof IDS)[number] } // a protocol's text and document change (its id may too)
  | { kind: 'text'; place: number } // a protocol's text changes, its document object stays
  | { kind: 'other'; place: number } // a file that is not a protocol changes
  | { kind: 'add'; id: (typeof IDS)[number] }
  | { kind: 'remove'; place: number }
  | { kind: 'copy' } // the same files and documents in new arrays
  | { kind: 'swap'; files: boolean; a: number; b: number } // two documents, or two files, trade places
  | { kind: 'twin'; place: number }; // a second file with a protocol's path (not from a disk, but the API takes it)

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('edit' as const), place: fc.nat(), id: fc.constantFrom(...IDS) }),
  fc.record({ kind: fc.constant('text' as const), place: fc.nat() }),
  fc.record({ kind: fc.constant('other' as const), place: fc.nat() }),
  fc.record({ kind: fc.constant('add' as const), id: fc.constantFrom(...IDS) }),
  fc.record({ kind: fc.constant('remove' as const), place: fc.nat() }),
  fc.constant({ kind: 'copy' as const }),
  fc.record({ kind: fc.constant('swap' as const), files: fc.boolean(), a: fc.nat(), b: fc.nat() }),
  fc.record({ kind: fc.constant('twin' as const), place: fc.nat() }),
);

/** What a rule can see of a registry: documents as their index in `documents`. */
function view(registry: LintRegistry, documents: readonly CapabilityDocument[]) {
  const at = (document: CapabilityDocument): number => documents.indexOf(document);
  return {
    capabilities: registry.capabilities.map((capability) => ({
      document: at(capability.document),
      id: capability.id,
      fm: capability.fm,
      source: capability.source,
    })),
    byId: [...registry.byId].map(([id, capability]) => [id, at(capability.document)]),
    allPaths: [...registry.allPaths],
  };
}

describe('createLintRegistry under a session', () => {
  it('gives what a registry made from nothing gives after any sequence of edits (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...IDS), { minLength: 1, maxLength: 8 }), fc.array(step, { maxLength: 25 }), (initial, steps) => {
        let version = 0;
        let folders = 0;
        const protocolAt = (folder: string): string => `capabilities/${folder}/PROTOCOL.md`;
        let files: SourceFile[] = [];
        let documents: CapabilityDocument[] = [];
        const add = (id: string | undefined): void => {
          const folder = `cap-${(folders += 1)}`;
          const content = text(id, (version += 1));
          files.push({ path: protocolAt(folder), content }, { path: `capabilities/${folder}/notes.md`, content: 'notes' });
          documents.push(parseCapability(protocolAt(folder), content));
        };
        initial.forEach(add);
        const derived = new DerivedFacts();
        const toolsets = toolsetsSourceOf([]);
        const check = (): void => {
          const input = { files, allPaths: files.map((file) => file.path), foldersWithoutProtocol: [] };
          const kept = createLintRegistry(documents, toolsets, input, [], derived);
          const fresh = createLintRegistry(documents, toolsets, input, []);
          expect(view(kept, documents)).toEqual(view(fresh, documents));
        };
        check();
        for (const each of steps) {
          if (each.kind === 'add') add(each.id);
          else if (each.kind === 'copy') [files, documents] = [[...files], [...documents]];
          else if (each.kind === 'swap') {
            const list: unknown[] = each.files ? files : documents;
            const [a, b] = [each.a % list.length, each.b % list.length];
            [list[a], list[b]] = [list[b], list[a]];
          } else if (documents.length > 0) {
            const place = each.place % documents.length;
            const path = (documents[place] as CapabilityDocument).file;
            const fileAt = files.findIndex((file) => file.path === path);
            const notes = path.replace(/PROTOCOL\.md$/, 'notes.md');
            const notesAt = files.findIndex((file) => file.path === notes);
            if (each.kind === 'twin') {
              files.push({ path, content: text('twin', (version += 1)) });
            } else if (each.kind === 'remove') {
              documents.splice(place, 1);
              files = files.filter((file) => file.path !== path && file.path !== notes);
            } else if (each.kind === 'other') {
              files[notesAt] = { path: notes, content: `notes ${(version += 1)}` };
            } else {
              const id = each.kind === 'edit' ? each.id : (documents[place] as CapabilityDocument).frontmatter.data?.id;
              const content = text(typeof id === 'string' ? id : undefined, (version += 1));
              files[fileAt] = { path, content };
              if (each.kind === 'edit') documents[place] = parseCapability(path, content);
            }
          }
          check();
        }
      }),
      { numRuns: runs(200) },
    );
  });
});

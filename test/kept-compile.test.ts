// A compile that keeps facts between runs (DerivedFacts, as `--watch` does) gives the diagnostics of
// a compile from nothing, after any sequence of edits, additions, removals, reorderings and config
// changes, on protocols written to make the registry-wide rules speak: shared and near-shared
// triggers, copied paragraphs, ids named in prose, `capability:` links that form cycles.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRegistry } from '../compiler/compile.js';
import { defaultConfig, type ResolvedConfig } from '../compiler/config.js';
import { DerivedFacts } from '../compiler/derived.js';
import { parseCapability } from '../compiler/parse.js';
import { toolsetsSourceOf } from '../compiler/toolsets.js';
import type { CapabilityDocument, SourceFile } from '../compiler/types.js';
import { runs } from './support/property.js';

const IDS = ['a-one', 'b-two', 'c-three', undefined] as const;
const FOLDERS = ['a-one', 'b-two', 'c-three', 'd-four', 'e-five', 'f-six'];
const TRIGGERS = ['book a flight', 'Book a flight', 'flight booking', 'booking a flight', 'cancel it', 'do the thing'];
const PARAGRAPHS = [
  'This is a reasonably long paragraph that says the same thing in many protocols at once.',
  'Another reasonably long paragraph, copied around between several protocols, for testing.',
  'See a-one and b-two and c-three for details about what to do next in this situation.',
  'Follow [the other](capability:a-one) and [that](capability:b-two) and [this](capability:c-three).',
  '- A list item that is long enough to be compared by the duplicate content rule here.',
];
const REGISTRY_WIDE = ['when-to-use', 'trigger-collision', 'duplicate-content', 'catalog-references', 'reference-cycle'];

interface Protocol {
  id: (typeof IDS)[number];
  triggers: string[];
  paragraphs: string[];
}

const protocol: fc.Arbitrary<Protocol> = fc.record({
  id: fc.constantFrom(...IDS),
  triggers: fc.subarray(TRIGGERS),
  paragraphs: fc.array(fc.constantFrom(...PARAGRAPHS), { maxLength: 4 }),
});

function text({ id, triggers, paragraphs }: Protocol, version: number): string {
  const whenToUse = triggers.length > 0 ? `whenToUse:\n${triggers.map((trigger) => `  - ${trigger}\n`).join('')}` : '';
  return `---\n${id === undefined ? '' : `id: ${id}\n`}name: N\ndescription: D ${version}\n${whenToUse}---\n\n# T\n\n${paragraphs.join('\n\n')}\n`;
}

type Step =
  | { kind: 'edit'; place: number; protocol: Protocol }
  | { kind: 'add'; protocol: Protocol }
  | { kind: 'remove'; place: number }
  | { kind: 'swap'; a: number; b: number }
  | { kind: 'config'; off: string[]; minLength: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('edit' as const), place: fc.nat(), protocol }),
  fc.record({ kind: fc.constant('add' as const), protocol }),
  fc.record({ kind: fc.constant('remove' as const), place: fc.nat() }),
  fc.record({ kind: fc.constant('swap' as const), a: fc.nat(), b: fc.nat() }),
  fc.record({ kind: fc.constant('config' as const), off: fc.subarray(REGISTRY_WIDE), minLength: fc.constantFrom(20, 60, 200) }),
);

function configWith(off: readonly string[], minLength: number): ResolvedConfig {
  const config = defaultConfig();
  for (const [id, setting] of config.rules) {
    const options = id === 'duplicate-content' ? { ...(setting.options as Record<string, unknown>), minLength } : setting.options;
    config.rules.set(id, { level: off.includes(id) ? 'off' : setting.level, options });
  }
  return config;
}

describe('a compile that keeps facts between runs', () => {
  it('gives the diagnostics of a compile from nothing after any sequence of changes (property)', () => {
    const spoke = new Set<string>();
    fc.assert(
      fc.property(fc.array(protocol, { minLength: 1, maxLength: 6 }), fc.array(step, { maxLength: 20 }), (initial, steps) => {
        let version = 0;
        let added = 0;
        const files: SourceFile[] = [];
        const documents: CapabilityDocument[] = [];
        const add = (written: Protocol): void => {
          const path = `capabilities/${FOLDERS[added % FOLDERS.length] as string}${added >= FOLDERS.length ? added : ''}/PROTOCOL.md`;
          added += 1;
          const content = text(written, (version += 1));
          files.push({ path, content });
          documents.push(parseCapability(path, content));
        };
        initial.forEach(add);
        const derived = new DerivedFacts();
        const prepared = { toolsets: toolsetsSourceOf([]), evals: [] };
        let config = defaultConfig();
        const check = (): void => {
          const input = { files: [...files], allPaths: files.map((file) => file.path).sort(), foldersWithoutProtocol: [] };
          const kept = compileRegistry(input, { documents: [...documents], prepared, derived, config }).diagnostics;
          const fresh = compileRegistry(input, { documents: [...documents], prepared, config }).diagnostics;
          expect(kept).toEqual(fresh);
          for (const diagnostic of fresh) spoke.add(diagnostic.ruleId);
        };
        check();
        for (const each of steps) {
          if (each.kind === 'config') config = configWith(each.off, each.minLength);
          else if (each.kind === 'add') add(each.protocol);
          else if (documents.length > 0 && each.kind === 'swap') {
            const [a, b] = [each.a % documents.length, each.b % documents.length];
            [documents[a], documents[b]] = [documents[b] as CapabilityDocument, documents[a] as CapabilityDocument];
          } else if (documents.length > 0 && (each.kind === 'edit' || each.kind === 'remove')) {
            const place = each.place % documents.length;
            const path = (documents[place] as CapabilityDocument).file;
            const at = files.findIndex((file) => file.path === path);
            if (each.kind === 'remove') {
              documents.splice(place, 1);
              files.splice(at, 1);
            } else {
              const content = text(each.protocol, (version += 1));
              files[at] = { path, content };
              documents[place] = parseCapability(path, content);
            }
          }
          check();
        }
      }),
      { numRuns: runs(200) },
    );
    // Every registry-wide rule had something to say somewhere, or the property proves little.
    expect([...spoke].filter((id) => REGISTRY_WIDE.includes(id)).sort()).toEqual([...REGISTRY_WIDE].sort());
  });
});

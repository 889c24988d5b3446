// The gate's comparison takes time linear in what it compares: a pull request that renames every
// heading of a protocol, or every capability folder, must not stall the check. CPU time, not wall
// time (the machine is shared).
import { describe, expect, it } from 'vitest';
import { compareRegistries, requiredBump } from '../../compiler/gate/index.js';
import { planRouting } from '../../compiler/gate/routing.js';
import { createLintRegistry } from '../../compiler/lint.js';
import { toolsetsSourceOf } from '../../compiler/toolsets.js';
import { parseCapability } from '../../compiler/parse.js';
import type { CapabilityDocument } from '../../compiler/types.js';

function cpuMs<T>(run: () => T): { ms: number; result: T } {
  const start = process.cpuUsage();
  const result = run();
  const used = process.cpuUsage(start);
  return { ms: (used.user + used.system) / 1000, result };
}

const frontmatter = (id: string, name: string): string =>
  `---\nid: ${id}\nname: ${name}\ndescription: A capability.\nwhenToUse:\n  - do ${id}\nrequiredToolsets: []\nprotocol_version: 1.0.0\nprotocol_updated: 2026-01-01\n---\n\nNever guess.\n\n`;

describe('the version gate compares in linear time', () => {
  it('a protocol whose 12,000 headings were all renamed in place', () => {
    const headings = (prefix: string): string => Array.from({ length: 12_000 }, (_, index) => `# ${prefix}${index}\n`).join('');
    const file = 'capabilities/big/PROTOCOL.md';
    const before = parseCapability(file, frontmatter('big', 'Big') + headings('a'));
    const after = parseCapability(file, frontmatter('big', 'Big') + headings('b'));
    // Each renamed heading looked the outline up with includes(): 1.4 s here, 4 s at 20,000.
    const { ms, result } = cpuMs(() => requiredBump(before, after));
    expect(result.level).toBe('patch');
    expect(result.reasons[0]!.text).toMatch(/^section renamed: `a0 → b0`, .* and 11995 more$/);
    expect(ms).toBeLessThan(400);
  });

  it('2,000 capability folders renamed, each with a body of 20 KB that differs from the others only at its end', () => {
    // One parsed document, told apart by folder, body and name: the comparison reads nothing else.
    const template = parseCapability('capabilities/x/PROTOCOL.md', frontmatter('x', 'X') + 'Never guess. '.repeat(1_600));
    const documents = (prefix: string, count: number, body: (index: number) => string): CapabilityDocument[] =>
      Array.from({ length: count }, (_, index) => {
        const folder = `${prefix}${String(index).padStart(5, '0')}`;
        return {
          ...template,
          folder,
          file: `capabilities/${folder}/PROTOCOL.md`,
          contentHash: `sha256:${folder}`,
          body: body(index),
          frontmatter: { ...template.frontmatter, data: { ...template.frontmatter.data, id: folder, name: `${prefix} ${index}` } },
        };
      });
    const endingIn = (index: number): string => `${template.body}${String(index).padStart(6, '0')}\n`;
    // Renamed ones: the first 10 keep their bodies (folder renamed), the rest are new bodies.
    const removed = documents('old', 2_000, endingIn);
    const added = documents('new', 2_000, (index) => endingIn(index < 10 ? index : 1_000_000 - index));
    // Every removed body was compared with every added one, and a Map keyed by bodies over 16 KiB
    // is no better (V8 hashes them by length): ~25 s here.
    const { ms, result } = cpuMs(() => compareRegistries(removed, added));
    const renamed = result.changes.filter((change) => change.renamedTo !== undefined);
    expect(renamed.map((change) => `${change.id} → ${change.renamedTo}`)).toEqual(
      Array.from({ length: 10 }, (_, index) => `old${String(index).padStart(5, '0')} → new${String(index).padStart(5, '0')}`),
    );
    expect(result.changes).toHaveLength(4_000);
    expect(ms).toBeLessThan(1_500);
  });

  it('routing over 1,600 capabilities whose search sources are over 16 KiB and of one length (a registry with frontmatter-schema off)', () => {
    // One parsed document, told apart by folder and id: what search reads is in the frontmatter.
    const template = parseCapability(
      'capabilities/x/PROTOCOL.md',
      frontmatter('x', 'Same').replace('description: A capability.', `description: ${'word '.repeat(3_500)}`),
    );
    const tree = (changedName: string): ReturnType<typeof createLintRegistry> => {
      const documents = Array.from({ length: 1_600 }, (_, index): CapabilityDocument => {
        const id = `c${String(index).padStart(5, '0')}`;
        const data = { ...template.frontmatter.data, id, name: index === 0 ? changedName : 'Same', whenToUse: [`do ${id}`] };
        return { ...template, folder: id, file: `capabilities/${id}/PROTOCOL.md`, frontmatter: { ...template.frontmatter, data } };
      });
      const files = [{ path: 'capabilities/toolsets.yaml', content: '{}\n' }];
      return createLintRegistry(documents, toolsetsSourceOf(files), { files, allPaths: [], foldersWithoutProtocol: [] });
    };
    const [base, head] = [tree('Same'), tree('Renamed')];
    // A capability that reads the same on both sides is analyzed once, found by its source: as a map
    // key over 16 KiB, V8 hashes it by its length alone, and each lookup compared it with every other
    // (3.1 s at 1,000, 14.5 s at 2,000; 5.2 s here).
    const { ms, result } = cpuMs(() => planRouting(base, head));
    expect('result' in result ? result.result.status : result.head.length).toBe(1_600);
    expect(ms).toBeLessThan(2_500);
  });
});

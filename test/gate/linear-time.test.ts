// The gate's comparison takes time linear in what it compares: a pull request that renames every
// heading of a protocol, or every capability folder, must not stall the check. CPU time, not wall
// time (the machine is shared).
import { describe, expect, it } from 'vitest';
import { requiredBump } from '../../compiler/gate/index.js';
import { parseCapability } from '../../compiler/parse.js';

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
});

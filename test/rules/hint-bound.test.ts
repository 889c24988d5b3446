// A "did you mean" reads every candidate, so a protocol that names thousands of missing toolsets,
// tools or files against thousands of candidates cost their product (2,000 unknown toolsets against
// 20,000 defined took toolset-exists 8.7 s; 5,000 missing links in a folder of 5,000 files, links
// 5.5 s). Each capability now gets a hint for its first MAX_HINTED_NAMES missing names per rule;
// the others are reported all the same, without one.
import { describe, expect, it } from 'vitest';
import { MAX_HINTED_NAMES } from '../../compiler/did-you-mean.js';
import { lintJson, tempRegistry } from '../cli/helpers.js';

const COUNT = 2000;
const names = (prefix: string): string[] => Array.from({ length: COUNT }, (_, i) => `${prefix}${i}`);

/**
 * `alpha` names COUNT missing tools and files, `beta` COUNT missing toolsets; the registry defines
 * COUNT of each that are one edit away.
 */
function hostileRegistry(): string {
  const toolsets = names('ts').map((id) => `${id}: { description: d, tools: {} }`);
  toolsets.push(
    `own:\n  description: d\n  tools:\n${names('tool')
      .map((tool) => `    ${tool}: { description: d }`)
      .join('\n')}`,
  );
  const body = [
    '# Alpha',
    '',
    '- Never guess.',
    '',
    '## Tools',
    '',
    '| Tool | Use |',
    '| --- | --- |',
    ...names('tool').map((tool) => `| ${tool}x | x |`),
    '',
    // One link per paragraph: a block of thousands of `]` is refused before parsing.
    ...names('r').map((file) => `[a](references/${file}x.md)\n`),
  ].join('\n');
  const protocol = (id: string, toolsets: string): string => `---
id: ${id}
name: ${id}
description: Names thousands of missing things.
whenToUse:
  - ${id}
${toolsets}
protocol_version: 1.0.0
protocol_updated: 2026-11-29
---
${body}
`;
  const references = Object.fromEntries(names('r').map((file) => [`capabilities/alpha/references/${file}.md`, 'x\n']));
  return tempRegistry({
    'capabilities/toolsets.yaml': `${toolsets.join('\n')}\n`,
    'capabilities/alpha/PROTOCOL.md': protocol('alpha', 'requiredToolsets: [own]'),
    'capabilities/beta/PROTOCOL.md': protocol(
      'beta',
      `requiredToolsets: []\noptionalToolsets: [${names('ts')
        .map((id) => `${id}x`)
        .join(', ')}]`,
    ).replace(/## Tools[^]*/, ''),
    ...references,
  });
}

describe('did you mean, bounded per capability', () => {
  it('hints the first missing names of each rule and reports every one, in time linear in the registry', async () => {
    const root = hostileRegistry();
    const start = process.cpuUsage();
    const { code, report } = await lintJson(root, ['--jobs', '1']);
    const used = process.cpuUsage(start);
    expect(code).toBe(1);
    const firstHint = { 'toolset-exists': 'did you mean "ts0"?', 'tools-table': 'did you mean "tool0"?', links: '(did you mean references/r0.md?)' };
    for (const [ruleId, hint] of Object.entries(firstHint)) {
      const found = report.diagnostics.filter((d) => d.ruleId === ruleId && / (?:does not exist|is not defined)/.test(d.message));
      expect(found, ruleId).toHaveLength(COUNT);
      expect(found[0]?.message).toContain(hint);
      // The first ones, in the order of the protocol.
      const hinted = found.filter((d) => d.message.includes('did you mean'));
      expect(hinted, ruleId).toEqual(found.slice(0, MAX_HINTED_NAMES));
    }
    // Before the bound, each rule searched 2,000 names against 2,000 candidates: ~12 s in all, ~2.4 s now.
    expect((used.user + used.system) / 1000).toBeLessThan(6_000);
  }, 120_000);
});

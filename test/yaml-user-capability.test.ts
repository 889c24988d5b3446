// A user capability's frontmatter (saved at run time through MCP) goes through the same YAML
// reader as the registry's: nesting over the limit and YAML-only types are diagnostics of
// `user-frontmatter`, never a thrown error, and the same text gets the same verdict every time.
import { describe, expect, it } from 'vitest';
import type { CatalogContext } from '../compiler/compile-one.js';
import { compileUserCapability } from '../compiler/user/compile-user.js';

const catalog: CatalogContext = { capabilities: [], toolsets: {} };

function save(frontmatterLines: string[]): string[] {
  const markdown = `---\nname: Friday report\ndescription: My weekly report.\nwhenToUse: [friday report]\nuses: [work-reporting]\n${frontmatterLines.join('\n')}\n---\n\nNever guess.\n`;
  const result = compileUserCapability(markdown, catalog);
  expect(result.ok).toBe(false);
  return result.diagnostics.filter((d) => d.ruleId === 'user-frontmatter').map((d) => `${d.line}:${d.column} ${d.message}`);
}

describe('user capability frontmatter', () => {
  it('refuses nesting over the limit at the token that goes too deep, the same way twice', () => {
    const deep = [`toolBindings: ${'['.repeat(500)}${']'.repeat(500)}`];
    const first = save(deep);
    expect(first).toEqual([`6:${15 + 63} YAML nested more than 64 levels deep (mappings, lists and brackets, aliases expanded); flatten the structure`]);
    expect(save(deep)).toEqual(first);
  });

  it('refuses YAML-only types instead of rewriting them', () => {
    expect(save(['toolBindings: !!omap [ { a: 1 } ]'])).toEqual([
      '6:22 YAML tag !!omap is not allowed: only JSON-compatible YAML is read (text, numbers, true/false, null, mappings, lists)',
    ]);
  });
});

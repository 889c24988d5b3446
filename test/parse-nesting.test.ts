// Deeply nested Markdown is refused before parsing: micromark's work grows far faster than the
// file on hundreds of nested quotes or list levels, and a registry file must not stall CI.
import { describe, expect, it } from 'vitest';
import { MAX_NESTING, parseCapability, tooDeeplyNestedLine } from '../compiler/parse.js';

const FRONTMATTER = '---\nid: alpha\n---\n';

describe('nesting pre-check', () => {
  it('accepts ordinary nesting', () => {
    expect(tooDeeplyNestedLine('- a\n  - b\n    - c\n> quote\n> > nested\n1. one\n   2. two\n')).toBe(0);
  });

  it('finds a line with too many quote markers', () => {
    expect(tooDeeplyNestedLine(`ok\n${'> '.repeat(MAX_NESTING + 1)}deep\n`)).toBe(2);
  });

  it('finds a list nested by indentation and one nested by markers on one line', () => {
    const indented = Array.from({ length: 300 }, (_, level) => `${'  '.repeat(level)}- item ${level}`).join('\n');
    expect(tooDeeplyNestedLine(indented)).toBe(MAX_NESTING + 1);
    expect(tooDeeplyNestedLine(`${'- '.repeat(MAX_NESTING + 1)}x`)).toBe(1);
  });

  it('reports a 1,000-level nested list quickly, at its line, and keeps the frontmatter', () => {
    const body = Array.from({ length: 1000 }, (_, level) => `${'  '.repeat(level)}- item ${level}`).join('\n');
    const started = Date.now();
    const document = parseCapability('capabilities/alpha/PROTOCOL.md', `${FRONTMATTER}Never guess.\n\n${body}\n`);
    // Generous bound: before the pre-check this took minutes; now it skips the Markdown parse.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(document.frontmatter.data).toEqual({ id: 'alpha' });
    expect(document.bodyProblems).toEqual([
      {
        message: `the Markdown body nests too deeply to be parsed (over ${MAX_NESTING} nested quotes or list levels); flatten it`,
        range: expect.objectContaining({ line: 6 + MAX_NESTING, column: 1 }) as unknown,
      },
    ]);
  });

  it('keeps an empty frontmatter apart from a later `---` line when it refuses the body', () => {
    // The frontmatter is parsed on its own when the body is refused; an empty one ('---' right after
    // '---') once ran on to the last '---' of the file and took the refused body with it.
    const text = `---\n---\n${'> '.repeat(20_000)}x\n---\n`;
    const document = parseCapability('capabilities/alpha/PROTOCOL.md', text);
    expect(document.frontmatter.data).toBeUndefined();
    expect(document.frontmatter.range).toEqual(expect.objectContaining({ line: 1, endLine: 2 }));
    expect(document.bodyProblems).toEqual([
      {
        message: `the Markdown body nests too deeply to be parsed (over ${MAX_NESTING} nested quotes or list levels); flatten it`,
        range: expect.objectContaining({ line: 3, column: 1 }) as unknown,
      },
    ]);
  });
});

// Deeply nested Markdown is refused before parsing: micromark's work grows far faster than the
// file on hundreds of nested quotes or list levels, and a registry file must not stall CI.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_NESTING, parseCapability, tooDeeplyNestedLine } from '../compiler/parse.js';
import { runs } from './support/property.js';

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

  it('finds the line that checking every line with the prefix pattern finds', () => {
    const prefix = /^(?:[ \t]*(?:>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t])))+/;
    const byEveryLine = (text: string): number => {
      const rows = text.split('\n');
      for (const [index, row] of rows.entries()) {
        const indentation = /^[ \t]*/.exec(row)![0].length;
        const found = prefix.exec(row)?.[0];
        const depth = found === undefined ? 0 : found.replace(/[ \t]/g, '').replace(/\d{1,9}/g, '').length + (found.length - found.trimStart().length) / 2;
        if (indentation / 2 > MAX_NESTING || depth > MAX_NESTING) return index + 1;
      }
      return 0;
    };
    // Lines of repeated prefixes, around the limit's length, ending in text or not.
    const line = fc
      .tuple(
        fc.array(fc.constantFrom('> ', '>', '- ', '* ', '+ ', '1. ', '123) ', '  ', ' ', '\t', '-', 'x', '7'), { maxLength: 4 }),
        fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 30, max: 120 })),
        fc.constantFrom('', 'item', ' ', '\r'),
      )
      .map(([pieces, times, tail]) => `${pieces.join('').repeat(times)}${tail}`);
    fc.assert(
      fc.property(fc.array(line, { maxLength: 6 }), (lines) => {
        const text = lines.join('\n');
        expect(tooDeeplyNestedLine(text)).toBe(byEveryLine(text));
      }),
      { numRuns: runs(3000) },
    );
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

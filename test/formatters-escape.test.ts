// The escaping of author text (escape.ts), for any string: plain text stays one line with no control
// character, and Markdown holds it as text or code, never as a link, image, HTML or emphasis.
import fc from 'fast-check';
import type { Nodes, Root } from 'mdast';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { describe, expect, it } from 'vitest';
import { markdownCode, markdownMessage, markdownText, plainText } from '../compiler/formatters/escape.js';
import { shownName } from '../compiler/manifest.js';
import { runs } from './support/property.js';

const parser = unified().use(remarkParse).use(remarkGfm);

function parse(markdown: string): Root {
  return parser.runSync(parser.parse(markdown)) as Root;
}

function nodes(node: Nodes): Nodes[] {
  return [node, ...('children' in node ? node.children.flatMap((child) => nodes(child)) : [])];
}

/** Any string, and strings made of the pieces an attacker would reach for. */
const hostile = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc
    .array(
      fc.constantFrom(
        ...['`', '``', '[', '](', ')', '![', '<', '>', '<img src=x>', 'https://e.x/a.png', 'www.e.x', 'a@b.co', '@team', '\\', '|', '*', '_', '~~'],
        ...['&#60;', '$x$', ' ', 'a', '.', ':', '//', '\n', '\r', '\u001b[31m', '\u009b', '\u2028', '\u202e', '::error ::x'],
      ),
      { maxLength: 20 },
    )
    .map((pieces) => pieces.join('')),
);

const FORBIDDEN = new Set(['link', 'image', 'html', 'linkReference', 'imageReference', 'definition', 'footnoteReference', 'emphasis', 'delete']);

describe('escaping author text', () => {
  it('plain text: one line, no control, separator or bidi character (property)', () => {
    fc.assert(
      fc.property(hostile, (text) => {
        // eslint-disable-next-line no-control-regex
        expect(plainText(text)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
      }),
      { numRuns: runs(500) },
    );
    expect(plainText('x\n::error file=README.md::injected \u001b[31mRED\u001b[0m')).toBe('x\\n::error file=README.md::injected \\u001b[31mRED\\u001b[0m');
    expect(plainText('capabilities/odd,name:x/PROTOCOL.md 工具 "x" `id` 100%')).toBe('capabilities/odd,name:x/PROTOCOL.md 工具 "x" `id` 100%');
  });

  it('markdown: a problem line and a table row keep their shape and form no link, image, HTML or emphasis (property)', () => {
    fc.assert(
      fc.property(hostile, (text) => {
        const row = `| ${markdownCode(text, { cell: true })} | ${markdownText(text)} | ${markdownMessage(text, { cell: true })} | x |`;
        const tree = parse(
          `- **error** ${markdownCode(text)} ${markdownMessage(text)} (${markdownCode('rule')})\n\n| a | b | c | d |\n| - | - | - | - |\n${row}\n`,
        );
        expect(nodes(tree).filter((node) => FORBIDDEN.has(node.type))).toEqual([]);
        // The one strong node is the formatter's own `**error**`.
        expect(nodes(tree).filter((node) => node.type === 'strong')).toHaveLength(1);
        const [list, table] = tree.children;
        expect(tree.children.map((node) => node.type)).toEqual(['list', 'table']);
        expect(list?.type === 'list' && list.children.length).toBe(1);
        expect(table?.type === 'table' && table.children.map((tableRow) => tableRow.children.length)).toEqual([4, 4]);
        // The code span holds the name exactly, on one line.
        const code = nodes(tree).find((node) => node.type === 'inlineCode');
        if (markdownCode(text) !== '') expect(code?.type === 'inlineCode' && code.value).toBe(plainText(text.replace(/\r?\n/g, ' ')));
      }),
      { numRuns: runs(500) },
    );
  });

  it('markdown: ordinary names and messages come out as they always did', () => {
    expect(markdownCode('archive-search')).toBe('`archive-search`');
    expect(markdownCode('a`b')).toBe('``a`b``');
    expect(markdownCode('`a')).toBe('`` `a ``');
    expect(markdownMessage('whenToUse gained `jot this | down`', { cell: true })).toBe('whenToUse gained `jot this \\| down`');
    expect(markdownMessage('paragraph copied from capabilities/notes/PROTOCOL.md (a breaking change); 1.2.3 → 1.2.4')).toBe(
      'paragraph copied from capabilities/notes/PROTOCOL.md (a breaking change); 1.2.3 → 1.2.4',
    );
  });
});

describe('markdownCode on a long text', () => {
  it('fences 200,000 runs of backticks without overflowing the stack', () => {
    const code = markdownCode('a`'.repeat(200_000) + 'b``c');
    expect(code.startsWith('``` ')).toBe(false);
    expect(code.startsWith('```a`')).toBe(true);
  });
});

describe('shownName: a manifest name as a refusal quotes it', () => {
  it('is cut like every other quoted item (truncate), never on half of a surrogate pair', () => {
    // It sliced at 64 UTF-16 units itself: an emoji across the cut left a lone surrogate in the
    // refusal that /healthz, the log and the terminal show (U+FFFD once written as UTF-8).
    const name = `${'a'.repeat(63)}${'\u{1F600}'.repeat(4)}`;
    const shown = shownName(name);
    expect(shown).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(shown).toBe(`${'a'.repeat(63)}…`);
    expect(shownName('x'.repeat(64))).toBe('x'.repeat(64));
    expect(shownName(`${'x'.repeat(200)}\u001b`)).toBe(`${'x'.repeat(64)}…`);
  });
});

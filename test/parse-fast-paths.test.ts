// compiler/parse-markdown.ts: the parser without GFM autolink literals is used only for texts that cannot
// contain one (the documents are the same), and a special-token text in a body is counted, not fatal.
import fc from 'fast-check';
import remarkGfm from 'remark-gfm';
import { unified } from 'unified';
import { describe, expect, it } from 'vitest';
import { parseCapability } from '../compiler/parse.js';
import { MARKDOWN_PARSERS, markdownParserFor, withoutConstructs } from '../compiler/parse-markdown.js';
import { runs } from './support/property.js';

const FILE = 'capabilities/a/PROTOCOL.md';
const doc = (body: string): string => `---\nid: a\n---\n${body}\n`;

describe('parseCapability: autolink literals', () => {
  it.each([
    ['see www.example.com today', 'http://www.example.com'],
    ['see https://example.com/x today', 'https://example.com/x'],
    ['write to ops@example.com today', 'mailto:ops@example.com'],
    ['see WWW.EXAMPLE.COM today', 'http://WWW.EXAMPLE.COM'],
  ])('still finds the link in %j', (body, url) => {
    expect(parseCapability(FILE, doc(body)).links.map((link) => link.url)).toEqual([url]);
  });

  it('still decodes character references before looking for them', () => {
    expect(parseCapability(FILE, doc('write to ops&#64;example.com today')).links.map((link) => link.url)).toEqual(['mailto:ops@example.com']);
  });

  it('parses the GFM constructs of a text without autolink literals', () => {
    const document = parseCapability(
      FILE,
      doc('## Tools\n\n| Tool | Use |\n| --- | --- |\n| `a_b` | x \\| y |\n\n- [ ] task ~~gone~~ [^1]\n\n[^1]: note\n\n[l](capability:b)'),
    );
    expect(document.toolsTables[0]!.rows.map((row) => row.cells)).toEqual([['a_b', 'x | y']]);
    expect(document.blocks.find((block) => block.kind === 'listItem')!.text).toBe('task gone');
    expect(document.links.map((link) => link.url)).toEqual(['capability:b']);
  });
});

describe('the parser without autolink literals', () => {
  // Texts made of the characters Markdown's constructs start and end with, so that tables, lists,
  // emphasis, strikethrough, footnotes, task items, code, links, HTML and escapes all occur.
  const pieces = [
    '|',
    ' | ',
    '---',
    ':--',
    '\n',
    '\n\n',
    ' ',
    '  ',
    '\t',
    '- ',
    '* ',
    '1. ',
    '> ',
    '# ',
    '## ',
    '```',
    '`',
    '~',
    '~~',
    '*',
    '**',
    '_',
    '[',
    ']',
    '(',
    ')',
    '[^1]',
    '[^1]: ',
    '[ ] ',
    '[x] ',
    '!',
    '<',
    '>',
    '\\',
    ':',
    '.',
    '-',
    'a',
    'b9',
    'word',
    'W',
    'x_y',
    'é',
    '0',
    '@',
    'www.',
    'http://',
    '&#64;',
    '&#x40;',
    '&#119;',
    '&commat;',
    '&amp;',
    '&copy;',
    '&',
    'R&D',
    '.co',
  ];
  // Each text starts with something like frontmatter, or not, which the choice of parser skips.
  const starts = [
    '',
    '---\na\r\n---\r\n',
    '---\nb\r---\r',
    '---\n',
    '---\n---\n',
    '--- \n',
    '----\n',
    ' ---\n',
    '---\nid: a@b.co http://x\n---\n',
    '---\nwww.x\n--- \n',
    '---\nhttp://x\n',
  ];
  const markdown = fc.tuple(fc.constantFrom(...starts), fc.array(fc.constantFrom(...pieces), { maxLength: 60 })).map(([start, list]) => start + list.join(''));

  // The outcome of a parse: its tree, or what it threw. Under vitest the syntax-tree packages run
  // their development builds, whose assertions throw on a few texts the production builds parse
  // ('-\n[x] |': a task check outside a list item); the two parsers must agree on those too.
  const outcome = (parser: (typeof MARKDOWN_PARSERS)[keyof typeof MARKDOWN_PARSERS], text: string): unknown => {
    try {
      return { tree: parser.parse(text) };
    } catch (error) {
      return { threw: String(error) };
    }
  };

  it('builds the same tree, positions included, for every text it is chosen for', () => {
    fc.assert(
      fc.property(markdown, (text) => {
        fc.pre(markdownParserFor(text) === MARKDOWN_PARSERS.withoutAutolinkLiterals);
        expect(outcome(MARKDOWN_PARSERS.withoutAutolinkLiterals, text)).toEqual(outcome(MARKDOWN_PARSERS.full, text));
      }),
      { numRuns: runs(3000), examples: [['-\n[x] |'], ['- [x] a\n[x] b'], ['> -\n[ ] |\n| - |']] },
    );
  });

  it('is not chosen for a text that may hold one', () => {
    for (const text of [
      'a@b.co',
      'www.x',
      'HTTP://x',
      'a &#64; b',
      'a&commat;b.co',
      'ww&#119;.x.com',
      'ww&#X77;.x.com',
      '---\nid: a\n---\nwww.x',
      '---\nid: a\n--\nwww.x',
      '---\nwww.x',
      // An empty frontmatter ends at the first '---' after it, not at the last one in the file.
      '---\n---\nwww.x\n---',
      '---\n---\nhttp://x\n---\n',
      // Mixed line endings: micromark closes the frontmatter at '\r\n---\r\n', the regex would not.
      '---\na\r\n---\r\nhttps://x.com\n\n---\n',
      '---\na\r---\rwww.x.com\n---\n',
    ]) {
      expect(markdownParserFor(text)).toBe(MARKDOWN_PARSERS.full);
    }
    expect(markdownParserFor('---\n$schema: https://json-schema.org\n---\nbody')).toBe(MARKDOWN_PARSERS.withoutAutolinkLiterals);
    expect(markdownParserFor('R&D and Q&amp;A &copy; us')).toBe(MARKDOWN_PARSERS.withoutAutolinkLiterals);
  });

  it('withoutConstructs: drops the named constructs and the characters left with none, keeps the order of the rest', () => {
    const extension = unified().use(remarkGfm).freeze().data().micromarkExtensions![0]!;
    const before = JSON.stringify(Object.keys(extension.text!));
    const names = (value: unknown): string[] => (Array.isArray(value) ? value : [value]).map((construct: { name: string }) => construct.name);
    const stripped = withoutConstructs(extension, new Set(['emailAutolink', 'wwwAutolink', 'protocolAutolink']));
    expect(Object.keys(stripped.text!).sort()).toEqual(['126', '91', '93']);
    expect(names(stripped.text![91])).toEqual(names(extension.text![91]));
    expect(stripped.flow).toEqual(extension.flow);
    expect(stripped.document).toEqual(extension.document);
    expect(names(extension.text![119])).toEqual(['emailAutolink', 'wwwAutolink']);
    expect(JSON.stringify(Object.keys(extension.text!))).toBe(before);
  });
});

describe('parseCapability: token count', () => {
  it('counts a special-token text in the body as text instead of throwing', () => {
    expect(parseCapability(FILE, doc('Never print <|endoftext|> to the user.')).bodyTokens).toBeGreaterThan(5);
  });
});

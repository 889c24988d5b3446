// compiler/parse.ts: the parser without GFM autolink literals is used only for texts that cannot
// contain one (the documents are the same), and a special-token text in a body is counted, not fatal.
import { describe, expect, it } from 'vitest';
import { parseCapability } from '../compiler/parse.js';

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

describe('parseCapability: token count', () => {
  it('counts a special-token text in the body as text instead of throwing', () => {
    expect(parseCapability(FILE, doc('Never print <|endoftext|> to the user.')).bodyTokens).toBeGreaterThan(5);
  });
});

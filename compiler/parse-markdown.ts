// Parse: one PROTOCOL.md (text) -> CapabilityDocument, the plain-data view every rule works on,
// without its token count (compiler/parse.ts adds it): this module does not import the tokenizer,
// so a parse worker (cli/parse-worker.ts) never loads its BPE tables (~0.35 s CPU, ~65 MiB).
// unified + remark-parse + remark-frontmatter build the syntax tree; the frontmatter goes through
// the YAML reader that keeps positions. The tree itself is not kept: rules need prose blocks,
// links, code and tools tables with their positions, which are small and cacheable.
import { unified, type Data, type Processor } from 'unified';
import remarkParse from 'remark-parse';
import remarkFrontmatter from 'remark-frontmatter';
import remarkGfm from 'remark-gfm';
import type { Nodes, Root, RootContent, Table, Code } from 'mdast';
import { sha256Hex } from './canonical.js';
import { LineIndex, FILE_START, pointRange } from './positions.js';
import { parseYamlSource } from './yaml-source.js';
import type { CapabilityDocument, Frontmatter, LinkRef, Range, TextBlock, ToolsTable } from './types.js';

const markdownParser = unified().use(remarkParse).use(remarkFrontmatter, ['yaml']).use(remarkGfm);

/**
 * The same parser without GFM autolink literals (`www.example.com`, `https://…`, `a@b.co` in plain
 * text). They are about a third of the parse: the email construct hooks every ASCII letter and
 * digit, so in a text tokenizer that has them each letter ends a run of data and tries a
 * construct, and a transform walks every text node. Their constructs are taken out of the hook
 * lists (not merely disabled, which still stops at every letter), and their transform with them.
 * In a text without `@`, `www` and `http` (any case), and without a character reference that could
 * make one (numeric, or `&commat;`: the one named reference to `@`, `w`, `h`, `t` or `p`), there
 * can be none, and both parsers build the same tree (test/parse-fast-paths.test.ts). A plain `&`,
 * as in "R&D", is not such a reference.
 */
const markdownParserWithoutAutolinkLiterals = unified()
  .use(remarkParse)
  .use(remarkFrontmatter, ['yaml'])
  .use(remarkGfm)
  .use(function withoutAutolinkLiterals(this: Processor) {
    const data = this.data();
    data.micromarkExtensions = (data.micromarkExtensions ?? []).map((extension) => withoutConstructs(extension, AUTOLINK_LITERAL_CONSTRUCTS));
    // mdast-util-gfm-autolink-literal: its tokens no longer occur, and its transform would find nothing.
    data.fromMarkdownExtensions = (data.fromMarkdownExtensions ?? []).map((extension) =>
      Array.isArray(extension) ? extension.filter((item) => !(item.enter && 'literalAutolink' in item.enter)) : extension,
    );
  });
const AUTOLINK_LITERAL_CONSTRUCTS: ReadonlySet<string> = new Set(['wwwAutolink', 'protocolAutolink', 'emailAutolink']);

type MicromarkExtension = NonNullable<Data['micromarkExtensions']>[number];
/** The hook maps of a micromark extension: character code (or `null`) -> the constructs tried there. */
const HOOK_MAPS = ['document', 'contentInitial', 'flowInitial', 'flow', 'string', 'text'] as const;

/**
 * `extension` without the constructs named in `names`, in the order the others had; a character
 * left with no construct is no longer a hook at all. The extension itself is not changed.
 */
export function withoutConstructs(extension: MicromarkExtension, names: ReadonlySet<string>): MicromarkExtension {
  const result: Record<string, unknown> = { ...extension };
  for (const map of HOOK_MAPS) {
    const hooks = extension[map] as Record<string, unknown> | undefined;
    if (hooks === undefined) continue;
    const kept: Record<string, unknown> = {};
    for (const [code, value] of Object.entries(hooks)) {
      const constructs = (Array.isArray(value) ? value : [value]).filter(
        (construct: { name?: string }) => construct.name === undefined || !names.has(construct.name),
      );
      if (constructs.length > 0) kept[code] = Array.isArray(value) ? constructs : constructs[0];
    }
    result[map] = kept;
  }
  return result;
}

const MAY_HAVE_AUTOLINK_LITERAL = /@|www|http|&(?:#|commat;)/i;

/**
 * The parser a text gets: the one without autolink literals where the body cannot have any. The
 * frontmatter is left out of the test (a JSON Schema's `$schema` URL or an owner's address there
 * would otherwise cost the whole body the slower parser): remark-frontmatter takes it whole.
 */
export function markdownParserFor(text: string): typeof markdownParser {
  // frontmatterBlock knows '\n' only, micromark '\r' too: a text not normalized is tested whole.
  const body = text.includes('\r') ? text : text.slice(frontmatterBlock(text).length);
  return MAY_HAVE_AUTOLINK_LITERAL.test(body) ? markdownParser : markdownParserWithoutAutolinkLiterals;
}
/** Both parsers, for the test that they agree. */
export const MARKDOWN_PARSERS = { full: markdownParser, withoutAutolinkLiterals: markdownParserWithoutAutolinkLiterals };

/** `capabilities/<folder>/PROTOCOL.md` -> `<folder>`. */
export function folderOf(file: string): string {
  const parts = file.split('/');
  return parts[parts.length - 2] ?? '';
}

/** Line endings are normalized so positions and digests do not depend on the author's editor. */
export function normalizeNewlines(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

/** The frontmatter block at the start of a text (fences included), or '' when there is none. */
function frontmatterBlock(text: string): string {
  return /^---[ \t]*\n(?:[^]*?\n)??---[ \t]*(?:\n|$)/.exec(text)?.[0] ?? '';
}

/**
 * Protocols nest a few levels at most. Hundreds of nested quotes or list levels make micromark's
 * work grow much faster than the file (a 1 MB nested list took minutes), so such a body is refused
 * before parsing: a hostile pull request cannot stall CI.
 */
export const MAX_NESTING = 100;
const NESTING_PREFIX = /^(?:[ \t]*(?:>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t])))+/;

/** Whether a character can be part of a NESTING_PREFIX: indentation, `>`, list markers, digits, `.` and `)`. */
function isNestingCode(code: number): boolean {
  return code === 32 || code === 9 || code === 62 || code === 45 || code === 42 || code === 43 || code === 46 || code === 41 || (code >= 48 && code <= 57);
}

/** Whether one line (without its line break) is nested deeper than MAX_NESTING. */
function nestsTooDeeply(row: string): boolean {
  const indentation = /^[ \t]*/.exec(row)?.[0].length ?? 0;
  if (indentation / 2 > MAX_NESTING) return true;
  const prefix = NESTING_PREFIX.exec(row)?.[0];
  return prefix !== undefined && prefix.replace(/[ \t]/g, '').replace(/\d{1,9}/g, '').length + (prefix.length - prefix.trimStart().length) / 2 > MAX_NESTING;
}

/** 1-based line of the first line nested deeper than MAX_NESTING, or 0. */
export function tooDeeplyNestedLine(text: string): number {
  let line = 0;
  for (let start = 0; start <= text.length;) {
    const found = text.indexOf('\n', start);
    const end = found < 0 ? text.length : found;
    line += 1;
    // Every level takes a character of the prefix at least (a marker, or half of two spaces), so a
    // line nested deeper than MAX_NESTING has prefix characters up to that offset and past it.
    if (end - start > MAX_NESTING && isNestingCode(text.charCodeAt(start + MAX_NESTING)) && nestsTooDeeply(text.slice(start, end))) return line;
    start = end + 1;
  }
  return 0;
}

/**
 * micromark matches emphasis delimiters (`*`, `_` runs, and GFM's strikethrough `~` runs) and link
 * ends (`]`) by looking back over every earlier one in the same paragraph, so a paragraph of `*_*_…`,
 * `~a~a…` or `](](…` takes time that grows with the square of its length (16 KB: seconds; 64 KB:
 * minutes). Inline content never spans
 * a blank line, so a block of consecutive non-blank lines with more delimiters than this is refused
 * before parsing. Real protocols have a few dozen per block at most.
 */
export const MAX_BLOCK_DELIMITERS = 1000;

/** 1-based line on which a block of non-blank lines passes MAX_BLOCK_DELIMITERS delimiters, or 0. */
export function tooManyDelimitersLine(text: string): number {
  let line = 1;
  let delimiters = 0;
  let blank = true;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 10) {
      if (blank) delimiters = 0;
      blank = true;
      line += 1;
      continue;
    }
    if (code !== 32 && code !== 9) blank = false;
    if (code === 42 || code === 95 || code === 126) {
      // A run between blanks (a thematic break such as `*****`, a list bullet) opens and closes
      // nothing: it counts once. A run next to text counts each character: micromark pairs a run
      // one or two characters at a time, each pairing costing as much as those before it, so
      // `***…a***…` (two runs) took seconds at 16 KB and minutes at 64 KB.
      let end = i + 1;
      while (text.charCodeAt(end) === code) end += 1;
      delimiters += isBlankOrEdge(text.charCodeAt(i - 1)) && isBlankOrEdge(text.charCodeAt(end)) ? 1 : end - i;
      i = end - 1;
    } else if (code === 93) {
      delimiters += 1; // each `]` counts
    } else {
      continue;
    }
    if (delimiters > MAX_BLOCK_DELIMITERS) return line;
  }
  return 0;
}

/** A space, a tab, a line break, or past either end of the text (NaN). */
function isBlankOrEdge(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || Number.isNaN(code);
}

/**
 * micromark closes a code span with the next backtick run of the same length; an opening run with
 * none scans the rest of its block. Runs of one length pair up, so only the distinct lengths cost a
 * scan each, but `a``a```a…` (each run one longer) makes that the square root of the block's size
 * for each of them (512 KB: seconds). A block of non-blank lines with backtick runs of more than
 * this many lengths is refused before parsing; prose uses one to three, a fence example four.
 */
export const MAX_BLOCK_BACKTICK_LENGTHS = 16;

/** 1-based line on which a block of non-blank lines has backtick runs of over MAX_BLOCK_BACKTICK_LENGTHS lengths, or 0. */
export function tooManyBacktickLengthsLine(text: string): number {
  let line = 1;
  let blank = true;
  const lengths = new Set<number>();
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 10) {
      if (blank) lengths.clear();
      blank = true;
      line += 1;
      continue;
    }
    if (code !== 32 && code !== 9) blank = false;
    if (code === 96) {
      const start = i;
      while (text.charCodeAt(i + 1) === 96) i += 1;
      lengths.add(i - start + 1);
      if (lengths.size > MAX_BLOCK_BACKTICK_LENGTHS) return line;
    }
  }
  return 0;
}

/**
 * micromark resolves each setext heading (a line of text with a line of `=` or `-` under it) over
 * what came before it in the document, so a body of many of them takes time that grows with the
 * square of their number: 4,000 took 2.5-3 s, 8,000 (32 KB of `a\n=\n`) 10 s. Over this many
 * lines that can underline the line above (the closing `---` of the frontmatter is one), the body
 * is refused before parsing; a protocol has a handful, and `#` headings cost nothing of the kind.
 */
export const MAX_SETEXT_UNDERLINES = 256;

/** 1-based line of the underline past MAX_SETEXT_UNDERLINES (see there), or 0. */
export function tooManySetextUnderlinesLine(text: string): number {
  let count = 0;
  let line = 1;
  for (let start = 0; start < text.length; line += 1) {
    const next = text.indexOf('\n', start);
    const end = next === -1 ? text.length : next;
    if (start > 0 && isUnderline(text, start, end) && !isBlankLine(text, text.lastIndexOf('\n', start - 2) + 1, start - 1)) {
      count += 1;
      if (count > MAX_SETEXT_UNDERLINES) return line;
    }
    start = end + 1;
  }
  return 0;
}

/** Whether text[start, end) is up to 3 spaces, a run of `=` or of `-`, then only spaces and tabs. */
function isUnderline(text: string, start: number, end: number): boolean {
  let i = start;
  while (i < end && i - start < 3 && text.charCodeAt(i) === 32) i += 1;
  const mark = text.charCodeAt(i);
  if (mark !== 61 && mark !== 45) return false;
  while (i < end && text.charCodeAt(i) === mark) i += 1;
  while (i < end && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i += 1;
  return i === end;
}

function isBlankLine(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i += 1) {
    const code = text.charCodeAt(i);
    if (code !== 32 && code !== 9) return false;
  }
  return true;
}

/** Why a body is not handed to the Markdown parser, and where. */
function refusal(text: string): { line: number; message: string } | undefined {
  const deep = tooDeeplyNestedLine(text);
  if (deep > 0) {
    return { line: deep, message: `the Markdown body nests too deeply to be parsed (over ${MAX_NESTING} nested quotes or list levels); flatten it` };
  }
  const crowded = tooManyDelimitersLine(text);
  if (crowded > 0) {
    return {
      line: crowded,
      message: `this block of non-blank lines has over ${MAX_BLOCK_DELIMITERS} emphasis markers (\`*\`, \`_\`, \`~\` runs) and \`]\`, which makes parsing it take time that grows with the square of its size; split it with blank lines or remove the markers`,
    };
  }
  const backticks = tooManyBacktickLengthsLine(text);
  if (backticks > 0) {
    return {
      line: backticks,
      message: `this block of non-blank lines has backtick runs of over ${MAX_BLOCK_BACKTICK_LENGTHS} different lengths, which makes parsing it take time that grows faster than its size; split it with blank lines or use fewer kinds of code spans`,
    };
  }
  const underlines = tooManySetextUnderlinesLine(text);
  if (underlines > 0) {
    return {
      line: underlines,
      message: `this body has over ${MAX_SETEXT_UNDERLINES} lines of \`=\` or \`-\` under a line of text (setext headings), which makes parsing it take time that grows with the square of their number; write headings with \`#\`, and put a blank line before a \`---\` rule`,
    };
  }
  return undefined;
}

/**
 * A document before its body's tokens are counted: what a parse worker sends (it never loads the
 * tokenizer; the main thread counts, see compiler/parse.ts).
 */
export type UncountedDocument = Omit<CapabilityDocument, 'bodyTokens'>;

/** Everything of parseCapability (compiler/parse.ts) but the token count. */
export function parseUncounted(file: string, content: string): UncountedDocument {
  const text = normalizeNewlines(content.charCodeAt(0) === 0xfeff ? content.slice(1) : content);
  let tree: Root | undefined;
  let collected: Collected | undefined;
  const refused = refusal(text);
  if (refused === undefined) {
    try {
      tree = markdownParserFor(text).parse(text);
      collected = collect(tree, text);
    } catch (error) {
      // Deep nesting below the pre-check can still overflow the recursion of the Markdown tools.
      if (!(error instanceof RangeError)) throw error;
    }
  }
  if (tree === undefined || collected === undefined) {
    // Keep the frontmatter (short, parsed on its own) and report the body instead of crashing the run.
    tree = markdownParser.parse(frontmatterBlock(text));
    collected = { blocks: [], links: [], code: [], toolsTables: [], bodyProblems: [] };
    const bodyLine = (tree.children[0]?.type === 'yaml' ? (tree.children[0].position?.end.line ?? 0) : 0) + 1;
    const { line, message } = refused ?? {
      line: 0,
      message: `the Markdown body nests too deeply to be parsed (over ${MAX_NESTING} nested quotes or list levels); flatten it`,
    };
    collected.bodyProblems.push({ message, range: pointRange(Math.max(line, bodyLine), 1) });
  }
  const first = tree.children[0];
  const frontmatterNode = first?.type === 'yaml' ? first : undefined;

  const frontmatter = readFrontmatter(frontmatterNode, text);
  const bodyStartOffset = frontmatterNode?.position ? (frontmatterNode.position.end.offset ?? 0) : 0;
  // Skip the newline that closes the frontmatter fence.
  const bodyOffset = text.charCodeAt(bodyStartOffset) === 10 ? bodyStartOffset + 1 : bodyStartOffset;
  const body = text.slice(bodyOffset);
  const bodyStartLine = frontmatterNode?.position ? frontmatterNode.position.end.line + 1 : 1;

  return {
    file,
    folder: folderOf(file),
    frontmatter,
    body,
    bodyStartLine,
    ...collected,
    contentHash: sha256Hex(content),
  };
}

function readFrontmatter(node: RootContent | undefined, text: string): Frontmatter {
  if (!node || node.type !== 'yaml' || !node.position) {
    const opened = /^---[ \t]*(?:\n|$)/.test(text);
    return {
      present: false,
      data: undefined,
      ranges: {},
      range: FILE_START,
      problems: [
        {
          code: 'missing',
          message: opened
            ? 'the frontmatter opened with `---` on line 1 is never closed; add a `---` line after the last field'
            : 'no YAML frontmatter: a PROTOCOL.md must start with a `---` line, the frontmatter fields, and a closing `---` line',
          range: opened ? pointRange(1, 1) : FILE_START,
        },
      ],
    };
  }
  const { start, end } = node.position;
  const range: Range = { line: start.line, column: start.column, endLine: end.line, endColumn: end.column };
  // The YAML text starts on the line after the opening `---`.
  const yamlIndex = new LineIndex(node.value, start.line + 1, 1);
  const source = parseYamlSource(node.value, yamlIndex);
  const problems = [...source.problems];
  let data: Record<string, unknown> | undefined;
  if (source.data !== undefined && problems.length === 0) {
    if (typeof source.data === 'object' && source.data !== null && !Array.isArray(source.data)) {
      data = source.data as Record<string, unknown>;
    } else {
      problems.push({
        code: 'not-a-mapping',
        message: 'frontmatter must be a YAML mapping of fields (`key: value` lines)',
        range,
      });
    }
  }
  return { present: true, data, ranges: source.ranges, range, problems };
}

function toRange(node: { position?: { start: { line: number; column: number }; end: { line: number; column: number } } }): Range {
  const p = node.position;
  if (!p) return FILE_START;
  return { line: p.start.line, column: p.start.column, endLine: p.end.line, endColumn: p.end.column };
}

/** Plain text of a node: Markdown syntax dropped, inline code and link text kept. */
export function plainText(node: Nodes): string {
  if ('value' in node && typeof node.value === 'string' && node.type !== 'html' && node.type !== 'yaml') return node.value;
  if (node.type === 'image') return node.alt ?? '';
  if (node.type === 'break') return ' ';
  if ('children' in node) {
    const separator = node.type === 'listItem' || node.type === 'tableRow' ? ' ' : '';
    return (node.children as Nodes[]).map((child) => plainText(child)).join(separator);
  }
  return '';
}

type Collected = Pick<CapabilityDocument, 'blocks' | 'links' | 'code' | 'toolsTables' | 'bodyProblems'>;

const TOOLS_TABLE_HEADER = /^(tool|tools|tool name)$/i;

function collect(tree: Root, text: string): Collected {
  const out: Collected = { blocks: [], links: [], code: [], toolsTables: [], bodyProblems: [] };
  let section = '';

  const visit = (node: Nodes, inListItem: boolean): void => {
    switch (node.type) {
      case 'heading':
        section = plainText(node).trim();
        out.blocks.push({ kind: 'heading', text: section, section, range: toRange(node) });
        break;
      case 'paragraph':
        if (!inListItem) out.blocks.push({ kind: 'paragraph', text: plainText(node).trim(), section, range: toRange(node) });
        break;
      case 'listItem': {
        const own = node.children.filter((child) => child.type !== 'list');
        const textOfItem = own
          .map((child) => plainText(child))
          .join(' ')
          .trim();
        out.blocks.push({ kind: 'listItem', text: textOfItem, section, range: toRange(node) });
        break;
      }
      case 'table':
        collectTable(node, section, out);
        break;
      case 'link':
        out.links.push({ kind: 'link', url: node.url, text: plainText(node), range: toRange(node) });
        break;
      case 'image':
        out.links.push({ kind: 'image', url: node.url, text: node.alt ?? '', range: toRange(node) });
        break;
      case 'definition':
        out.links.push({ kind: 'definition', url: node.url, text: node.label ?? node.identifier, range: toRange(node) });
        break;
      case 'inlineCode':
        out.code.push({ inline: true, value: node.value, range: toRange(node) });
        break;
      case 'code':
        out.code.push({ inline: false, value: node.value, range: toRange(node) });
        checkFence(node, text, out);
        break;
      default:
        break;
    }
    if ('children' in node) {
      for (const child of node.children as Nodes[]) visit(child, inListItem || node.type === 'listItem');
    }
  };
  for (const child of tree.children) if (child.type !== 'yaml') visit(child, false);
  return out;
}

function collectTable(node: Table, section: string, out: Collected): void {
  const rows = node.children.map((row) => ({
    cells: row.children.map((cell) => plainText(cell).trim()),
    range: toRange(row),
  }));
  const [header, ...bodyRows] = rows;
  for (const row of bodyRows) {
    out.blocks.push({ kind: 'tableRow', text: row.cells.join(' | '), cells: row.cells, section, range: row.range });
  }
  const headerCell = header?.cells[0] ?? '';
  if (TOOLS_TABLE_HEADER.test(headerCell)) {
    const table: ToolsTable = {
      range: toRange(node),
      rows: bodyRows
        .filter((row) => (row.cells[0] ?? '') !== '')
        .map((row) => ({ tool: (row.cells[0] ?? '').replace(/\(\)$/, ''), cells: row.cells, range: row.range })),
    };
    out.toolsTables.push(table);
  }
}

/** micromark closes an unclosed fence at the end of the document; authors almost never mean that. */
function checkFence(node: Code, text: string, out: Collected): void {
  const start = node.position?.start.offset;
  const end = node.position?.end.offset;
  if (start === undefined || end === undefined) return;
  const source = text.slice(start, end);
  const open = /^ {0,3}(`{3,}|~{3,})/.exec(source);
  if (!open) return; // indented code block
  const fence = open[1] ?? '```';
  const lines = source.split('\n');
  const last = lines.length > 1 ? (lines[lines.length - 1] ?? '') : '';
  // `source` starts at the opening fence, but its last line starts at the beginning of the line,
  // with the prefix of the containers the block sits in (`> `, list indentation): drop as many
  // columns as the opening fence is indented by.
  const prefixWidth = (node.position?.start.column ?? 1) - 1;
  const lastInContainer = /^[ \t>]*$/.test(last.slice(0, prefixWidth)) ? last.slice(prefixWidth) : last;
  const closing = new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
  if (!closing.test(lastInContainer)) {
    out.bodyProblems.push({
      message: `code fence opened with ${fence} on line ${node.position?.start.line} is never closed, so the text after it is read as code, not as instructions; close it with a ${fence} line`,
      range: toRange(node),
    });
  }
}

export type { TextBlock, LinkRef };

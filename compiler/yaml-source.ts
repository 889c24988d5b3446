// YAML with positions: parse a YAML text into plain data plus a map from JSON-pointer paths to the
// source ranges of keys and values, and the problems a reader must be told about (syntax errors,
// duplicate keys, tabs, nesting too deep, alias bombs, prototype keys, anything JSON cannot hold).
// The one YAML reader of the project: frontmatter (registry and user capabilities), toolsets,
// config and the server's principals file all go through it.
import {
  Composer,
  CST,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  Lexer,
  Parser,
  visit,
  YAMLParseError,
  type Alias,
  type Document,
  type Node as YamlNode,
  type Scalar,
} from 'yaml';
import { LineIndex } from './positions.js';
import type { FrontmatterProblem, Range, YamlRanges } from './types.js';

/** A YAML mapping as plain data (what the JSON-compatible reader yields for `{…}`), or any JSON object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keys that could reach an object's prototype when data is later spread or merged. */
export const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
/** An alias-heavy document ("billion laughs") is refused past this many alias expansions. */
export const MAX_ALIAS_COUNT = 100;
/**
 * Deepest nesting read: the nodes on the longest path from the top, the innermost value included
 * (`a: [1]` is 3), aliases expanded. The YAML library's parser and composer recurse once per level
 * and overflow the stack at a depth that depends on how much stack the caller used, so the limit
 * is checked as the parser reads each token, before it can go deeper.
 */
export const MAX_YAML_DEPTH = 64;
/** Syntax errors reported per text: one broken line can make the parser report thousands. */
export const MAX_YAML_ERRORS = 20;
/**
 * Values read from one text: scalars (keys included), aliases, list items and flow collections,
 * counted as the parser reads them. Each costs ~200 bytes of memory however short it is written:
 * a 1 MB toolsets file of `[1,1,1,…]` (500,000 values) took 9 s and held 93 MB, and 128 of them,
 * within limits.maxTotalBytes, ended `capreg lint` out of memory after 13 minutes. A 1 MB toolsets
 * file written as usual holds 70,000 to 90,000.
 */
export const MAX_YAML_VALUES = 100_000;
/**
 * A text longer than limits.maxFileBytes' default (1 MiB), which a registry may raise to 64 MiB, may
 * hold {@link MAX_YAML_VALUES} per MiB: a 2 MB toolsets file written as usual (~190,000 values) was
 * refused with no setting to raise. The bytes per value, and so the memory per byte read, stay bounded.
 */
const VALUES_TEXT_CHARS = 1024 * 1024;

/** The values `text` may hold: {@link MAX_YAML_VALUES}, or as many per MiB of a longer text. */
export function maxYamlValues(text: string): number {
  return Math.max(MAX_YAML_VALUES, Math.ceil((MAX_YAML_VALUES * text.length) / VALUES_TEXT_CHARS));
}
/** The lexical tokens that {@link MAX_YAML_VALUES} counts. */
const VALUE_TOKENS = new Set<string>([
  'scalar',
  'single-quoted-scalar',
  'double-quoted-scalar',
  'alias',
  'seq-item-ind',
  'explicit-key-ind',
  'flow-map-start',
  'flow-seq-start',
]);

/**
 * The core schema of YAML 1.2 and nothing else: no YAML 1.1 types (`!!timestamp`, `!!binary`,
 * `!!set`, `!!omap`, `!!pairs`) and no merge keys; what JSON cannot hold is refused by the walk.
 * Duplicate keys are found by the walk too: the library's `uniqueKeys` is quadratic in the keys.
 */
const COMPOSE_OPTIONS = {
  schema: 'core',
  version: '1.2',
  resolveKnownTags: false,
  merge: false,
  uniqueKeys: false,
  strict: true,
  stringKeys: false,
  prettyErrors: false,
} as const;
/** Explicit tags that only restate a JSON type (`!!str 12` is the string "12"). */
const JSON_TAGS = new Set(['str', 'int', 'float', 'bool', 'null', 'map', 'seq'].map((name) => `tag:yaml.org,2002:${name}`));

export interface YamlSource {
  data: unknown;
  ranges: YamlRanges;
  problems: FrontmatterProblem[];
}

export function escapePointer(segment: string | number): string {
  return String(segment).replace(/~/g, '~0').replace(/\//g, '~1');
}

const YAML_ERROR_TEXT: Record<string, string> = {
  TAB_AS_INDENT: 'tab characters are not allowed for indentation in YAML; indent with spaces',
};
/** Warnings the walk reports itself, with one message per offending node. */
const WALK_WARNINGS = new Set(['TAG_RESOLVE_FAILED', 'BAD_COLLECTION_TYPE']);

function depthMessage(): string {
  return `YAML nested more than ${MAX_YAML_DEPTH} levels deep (mappings, lists and brackets, aliases expanded); flatten the structure`;
}

/** Thrown between two tokens to stop the parser before it recurses deeper than the limit. */
class TooDeep extends Error {
  constructor(readonly offset: number) {
    super('YAML nested too deep');
  }
}

/** Thrown at the first token past the value limit, before the parser holds more. */
class TooManyValues extends Error {
  constructor(
    readonly offset: number,
    readonly limit: number,
  ) {
    super('YAML holds too many values');
  }
}

function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

/** Where the parser is: the offset of the token it reads (for a stack overflow below the limit). */
interface Progress {
  offset: number;
}

/** parseDocument, with the nesting checked after every token, before the parser goes deeper, and the values counted. */
function composeChecked(text: string, progress: Progress, maxValues: number): Document.Parsed {
  function* tokens(): Generator<CST.Token> {
    const parser = new Parser();
    let values = 0;
    for (const lexeme of new Lexer().lex(text)) {
      progress.offset = parser.offset;
      if (VALUE_TOKENS.has(CST.tokenType(lexeme) ?? '') && ++values > maxValues) throw new TooManyValues(progress.offset, maxValues);
      yield* parser.next(lexeme);
      // The parser's stack holds the document and each open node down to the current one: the
      // depth its own recursion and the composer's follow.
      if (parser.stack.length - 1 > MAX_YAML_DEPTH) throw new TooDeep(progress.offset);
    }
    yield* parser.end();
  }
  let first: Document.Parsed | undefined;
  for (const doc of new Composer(COMPOSE_OPTIONS).compose(tokens(), true, text.length)) {
    if (!first) first = doc;
    else {
      first.errors.push(
        new YAMLParseError([doc.range[0], doc.range[1]], 'MULTIPLE_DOCS', 'a second document (after `---`); this file holds one YAML document'),
      );
      break;
    }
  }
  // `compose(…, forceDoc = true)` yields a document even for an empty text.
  return first as Document.Parsed;
}

export interface YamlOptions {
  /** Alias expansions allowed; 0 refuses every alias (the principals file). */
  maxAliasCount?: number;
  /** Values allowed ({@link maxYamlValues} unless given). */
  maxValues?: number;
}

/**
 * @param text the YAML text
 * @param index maps offsets in `text` to positions in the file the text came from
 */
export function parseYamlSource(text: string, index: LineIndex, options: YamlOptions = {}): YamlSource {
  const progress: Progress = { offset: 0 };
  const tooDeep = (offset: number): YamlSource => ({
    data: undefined,
    ranges: {},
    problems: [{ code: 'yaml-depth', message: depthMessage(), range: index.range(offset, offset + 1) }],
  });
  try {
    return readYaml(text, index, progress, options.maxAliasCount ?? MAX_ALIAS_COUNT, options.maxValues ?? maxYamlValues(text));
  } catch (error) {
    if (error instanceof TooDeep) return tooDeep(error.offset);
    if (error instanceof TooManyValues) {
      const message =
        `YAML holds more than ${error.limit} values (keys, scalars, list items), more than is read from one text; ` +
        `make it smaller (toolsets can be split into several capabilities/toolsets/*.yaml files)`;
      return { data: undefined, ranges: {}, problems: [{ code: 'yaml-size', message, range: index.range(error.offset, error.offset + 1) }] };
    }
    // The scan bounds every recursion below it; should one still overflow, the verdict is the same.
    if (isStackOverflow(error)) return tooDeep(progress.offset);
    throw error;
  }
}

function readYaml(text: string, index: LineIndex, progress: Progress, maxAliasCount: number, maxValues: number): YamlSource {
  const problems: FrontmatterProblem[] = [];
  const ranges: YamlRanges = {};
  const doc = composeChecked(text, progress, maxValues);

  const errors = [...doc.errors, ...doc.warnings.filter((warning) => !WALK_WARNINGS.has(warning.code))];
  for (const error of errors.slice(0, MAX_YAML_ERRORS)) {
    const [start, end] = error.pos;
    const firstLine = error.message.split('\n')[0] ?? error.message;
    problems.push(
      error.code === 'RESOURCE_EXHAUSTION'
        ? { code: 'yaml-depth', message: depthMessage(), range: index.range(start, end) }
        : {
            code: 'yaml-syntax',
            message: `invalid YAML: ${YAML_ERROR_TEXT[error.code] ?? lowerFirst(firstLine.replace(/ at line \d+, column \d+:?$/, ''))}`,
            range: index.range(start, end),
          },
    );
  }
  const hidden = errors[MAX_YAML_ERRORS];
  if (hidden) {
    problems.push({
      code: 'yaml-syntax',
      message: `invalid YAML: ${errors.length - MAX_YAML_ERRORS} more errors not shown; fix the first ones and run again`,
      range: index.range(hidden.pos[0], hidden.pos[1]),
    });
  }
  if (problems.length > 0) return { data: undefined, ranges, problems };
  const yamlVersion = doc.directives?.yaml;
  if (yamlVersion?.explicit && yamlVersion.version !== '1.2') {
    const at = Math.max(0, text.indexOf('%YAML'));
    problems.push({
      code: 'non-json',
      message: `YAML ${yamlVersion.version} is not read (its booleans, dates and numbers differ); remove the %YAML line: files are read as YAML 1.2`,
      range: index.range(at, at + 5),
    });
    return { data: undefined, ranges, problems };
  }

  new Walk(doc, index, ranges, problems).node(doc.contents, '', 1);
  if (problems.length > 0) return { data: undefined, ranges, problems };

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount });
  } catch (error) {
    if (isStackOverflow(error)) throw error;
    const message = (error as Error).message;
    const aliases = /alias/i.test(message);
    problems.push({
      code: aliases ? 'alias-limit' : 'yaml-syntax',
      message: !aliases
        ? `invalid YAML: ${message}`
        : maxAliasCount === 0
          ? 'YAML aliases are not allowed in this file; write the values out instead of anchors'
          : `YAML aliases expand too much (over ${maxAliasCount} alias expansions); write the values out instead of anchors`,
      range: (aliases ? firstAliasRange(doc, index) : undefined) ?? index.range(0, 0),
    });
    return { data: undefined, ranges, problems };
  }
  // The alias count bounds how many expansions there are, not how large each is: 100 aliases of one
  // 900 KB scalar made a 90 MB value (and manifest). What the aliases make is bounded by the text.
  const allowed = 2 * text.length + MIN_EXPANDED;
  if (text.includes('*') && expandedOver(data, allowed)) {
    problems.push({
      code: 'alias-limit',
      message: `YAML aliases expand this text to over ${allowed} characters, more than twice its own length; write the values out instead of anchors`,
      range: firstAliasRange(doc, index) ?? index.range(0, 0),
    });
    return { data: undefined, ranges, problems };
  }
  return { data, ranges, problems };
}

/** What aliases may make of any text at least, in characters (so that small files can share a list or two). */
const MIN_EXPANDED = 64 * 1024;

/** Whether the keys and scalars of `value` come to more than `limit` characters (it stops counting there). */
function expandedOver(value: unknown, limit: number): boolean {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') size += item.length;
    else if (Array.isArray(item)) {
      size += 1;
      for (const each of item) stack.push(each);
    } else if (item !== null && typeof item === 'object') {
      for (const [key, each] of Object.entries(item)) {
        size += key.length;
        stack.push(each);
      }
    } else size += 1;
    if (size > limit) return true;
  }
  return false;
}

/** Where the first alias (`*name`) of a document is: the place to start writing values out. */
function firstAliasRange(doc: Document, index: LineIndex): Range | undefined {
  let found: Range | undefined;
  visit(doc, {
    Alias(_key, node) {
      found = nodeRange(node, index);
      return visit.BREAK;
    },
  });
  return found;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function nodeRange(node: { range?: [number, number, number] | null } | null | undefined, index: LineIndex): Range | undefined {
  if (!node?.range) return undefined;
  return index.range(node.range[0], node.range[1]);
}

function tagName(tag: string): string {
  return tag.startsWith('tag:yaml.org,2002:') ? `!!${tag.slice('tag:yaml.org,2002:'.length)}` : tag;
}

/**
 * An integer literal (decimal, 0x or 0o) past 2^53 that a JavaScript number holds only rounded, or
 * that JSON would write as another number (2^60 as 1152921504606847000): `1e20` is written as a
 * float, and read as one. 2^53 itself, or 2^54, is held and written exactly.
 */
function isRoundedInteger(node: Scalar): boolean {
  const source = node.source ?? '';
  if (Number.isSafeInteger(node.value) || !/^(?:[-+]?[0-9]+|0x[0-9a-fA-F]+|0o[0-7]+)$/.test(source)) return false;
  return BigInt(source).toString() !== String(node.value);
}

/** A scalar as written (`1`, `true`, `.nan`), for messages that quote it back. */
function scalarSource(node: Scalar): string {
  return node.source ?? JSON.stringify(node.value) ?? '';
}

function describeKey(node: YamlNode | null): string {
  if (node === null) return 'an empty key';
  if (isAlias(node)) return `the alias *${node.source}`;
  if (isMap(node)) return 'a mapping';
  if (isSeq(node)) return 'a list';
  if (isScalar(node)) {
    const value = node.value;
    if (value === null) return 'null';
    return `${typeof value === 'boolean' ? 'the boolean' : `the ${typeof value}`} ${scalarSource(node)}`;
  }
  return 'text';
}

/**
 * One pass over the node tree: records the ranges, and refuses what JSON cannot hold (other tags,
 * keys that are not text, NaN and infinities, recursive aliases), duplicate and prototype keys, and
 * aliases that expand deeper than the limit. Its recursion is bounded by the token scan.
 */
class Walk {
  /** Height of each finished node, aliases expanded: what an alias to it adds to the depth. */
  private readonly heights = new Map<YamlNode, number>();
  private readonly open = new Set<YamlNode>();

  constructor(
    private readonly doc: Document.Parsed,
    private readonly index: LineIndex,
    private readonly ranges: YamlRanges,
    private readonly problems: FrontmatterProblem[],
  ) {}

  private problem(code: FrontmatterProblem['code'], message: string, range: Range | undefined, first?: Range): void {
    this.problems.push({ code, message, range: range ?? this.index.range(0, 0), ...(first ? { first } : {}) });
  }

  /** @returns the height of the node with aliases expanded (a scalar is 1) */
  node(node: YamlNode | null, path: string, depth: number): number {
    if (!node) return 1;
    const range = nodeRange(node, this.index);
    if (range && !this.ranges[path]) this.ranges[path] = { value: range };
    if (isAlias(node)) return this.alias(node, depth, range);
    if (node.tag && !JSON_TAGS.has(node.tag)) {
      this.problem(
        'non-json',
        `YAML tag ${tagName(node.tag)} is not allowed: only JSON-compatible YAML is read (text, numbers, true/false, null, mappings, lists)`,
        range,
      );
    }
    this.open.add(node);
    let height = 1;
    if (isMap(node)) height = this.map(node.items, path, depth, range);
    else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        height = Math.max(height, 1 + this.node(item as YamlNode | null, `${path}/${i}`, depth + 1));
      });
    } else if (isScalar(node) && typeof node.value === 'number' && !Number.isFinite(node.value)) {
      this.problem('non-json', `${scalarSource(node)} is not a finite number, and JSON has no such number; quote it if it is text`, range);
    } else if (isScalar(node) && typeof node.value === 'number' && isRoundedInteger(node)) {
      this.problem(
        'non-json',
        `${scalarSource(node)} is a whole number too large to be read exactly (it would become ${String(node.value)}; ` +
          `every one up to ${Number.MAX_SAFE_INTEGER} is); write a smaller number, or quote it if it is text`,
        range,
      );
    }
    this.open.delete(node);
    this.heights.set(node, height);
    return height;
  }

  private alias(node: Alias, depth: number, range: Range | undefined): number {
    const target = node.resolve(this.doc);
    if (!target) {
      // Else the value's conversion fails, and its message was taken for an alias bomb's.
      this.problem(
        'yaml-syntax',
        `invalid YAML: the alias *${node.source} names no anchor before it; write &${node.source} on a value above it, or write the value out`,
        range,
      );
      return 1;
    }
    if (this.open.has(target)) {
      this.problem('non-json', `the alias *${node.source} is inside its own anchor: a recursive structure has no JSON form`, range);
      return 1;
    }
    const height = this.heights.get(target) ?? 1;
    if (depth + height - 1 > MAX_YAML_DEPTH) this.problem('yaml-depth', depthMessage(), range);
    return height;
  }

  private map(items: unknown[], path: string, depth: number, mapRange: Range | undefined): number {
    let height = 1;
    /** Each key and where it first is. */
    const seen = new Map<string, Range | undefined>();
    for (const pair of items) {
      if (!isPair(pair)) continue;
      const keyNode = pair.key as YamlNode | null;
      const keyRange = nodeRange(keyNode, this.index) ?? mapRange;
      if (!isScalar(keyNode) || typeof keyNode.value !== 'string' || (keyNode.tag && !JSON_TAGS.has(keyNode.tag))) {
        const quoted = isScalar(keyNode) && keyNode.value !== null ? `; quote it: "${scalarSource(keyNode)}"` : '';
        this.problem('non-json', `a key must be text, not ${describeKey(keyNode)}${quoted}`, keyRange);
        continue;
      }
      const key = keyNode.value;
      if (seen.has(key)) this.problem('duplicate-key', `duplicate key "${key}": a key may appear only once in a mapping`, keyRange, seen.get(key));
      else seen.set(key, keyRange);
      const childPath = `${path}/${escapePointer(key)}`;
      if (FORBIDDEN_KEYS.has(key)) {
        this.problem('forbidden-key', `key "${key}" is not allowed: it could change object prototypes; rename it`, keyRange);
      }
      const valueNode = pair.value as YamlNode | null;
      const childValue = nodeRange(valueNode, this.index) ?? keyRange;
      if (childValue) this.ranges[childPath] = { key: keyRange, value: childValue };
      height = Math.max(height, 1 + this.node(valueNode, childPath, depth + 1));
    }
    return height;
  }
}

/** The closest range recorded for a path: the path itself, else its nearest recorded ancestor. */
export function rangeForPath(ranges: YamlRanges, path: string, fallback: Range, part: 'key' | 'value' = 'value'): Range {
  let current = path;
  for (;;) {
    const entry = ranges[current];
    if (entry) return (part === 'key' ? entry.key : undefined) ?? entry.value;
    if (current === '') return fallback;
    current = current.slice(0, current.lastIndexOf('/'));
  }
}

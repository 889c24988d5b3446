// YAML with positions: parse a YAML text into plain data plus a map from JSON-pointer paths to the
// source ranges of keys and values, and the problems a reader must be told about (syntax errors,
// duplicate keys, tabs, alias bombs, prototype keys). Used for frontmatter, toolsets and config.
import { isAlias, isMap, isPair, isScalar, isSeq, parseDocument, visit, type Document, type Node as YamlNode } from 'yaml';
import { LineIndex } from './positions.js';
import type { FrontmatterProblem, Range, YamlRanges } from './types.js';

/** Keys that could reach an object's prototype when data is later spread or merged. */
export const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
/** An alias-heavy document ("billion laughs") is refused past this many alias expansions. */
export const MAX_ALIAS_COUNT = 100;

export interface YamlSource {
  data: unknown;
  ranges: YamlRanges;
  problems: FrontmatterProblem[];
}

export function escapePointer(segment: string | number): string {
  return String(segment).replace(/~/g, '~0').replace(/\//g, '~1');
}

const YAML_ERROR_TEXT: Record<string, string> = {
  DUPLICATE_KEY: 'duplicate key',
  TAB_AS_INDENT: 'tab characters are not allowed for indentation in YAML; indent with spaces',
};

/**
 * @param text the YAML text
 * @param index maps offsets in `text` to positions in the file the text came from
 */
export function parseYamlSource(text: string, index: LineIndex): YamlSource {
  const problems: FrontmatterProblem[] = [];
  const ranges: YamlRanges = {};
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false, strict: true, stringKeys: false });

  for (const error of doc.errors) {
    const [start, end] = error.pos;
    const firstLine = error.message.split('\n')[0] ?? error.message;
    const duplicate = error.code === 'DUPLICATE_KEY';
    problems.push({
      code: duplicate ? 'duplicate-key' : 'yaml-syntax',
      message: duplicate
        ? `duplicate key ${describeDuplicate(text, start)}: a key may appear only once in a mapping`
        : `invalid YAML: ${YAML_ERROR_TEXT[error.code] ?? lowerFirst(firstLine.replace(/ at line \d+, column \d+:?$/, ''))}`,
      range: index.range(start, end),
    });
  }
  if (problems.length > 0) return { data: undefined, ranges, problems };

  collectRanges(doc.contents as YamlNode | null, '', index, ranges, problems);
  if (problems.some((p) => p.code === 'forbidden-key')) return { data: undefined, ranges, problems };

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    const message = (error as Error).message;
    const aliases = /alias/i.test(message);
    problems.push({
      code: aliases ? 'alias-limit' : 'yaml-syntax',
      message: aliases
        ? `YAML aliases expand too much (over ${MAX_ALIAS_COUNT} alias expansions); write the values out instead of anchors`
        : `invalid YAML: ${message}`,
      range: (aliases ? firstAliasRange(doc, index) : undefined) ?? index.range(0, 0),
    });
    return { data: undefined, ranges, problems };
  }
  return { data, ranges, problems };
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

function describeDuplicate(text: string, start: number): string {
  const key = text.slice(start).split(/[:\n]/)[0]?.trim();
  return key ? `"${key}"` : '';
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function nodeRange(node: { range?: [number, number, number] | null } | null | undefined, index: LineIndex): Range | undefined {
  if (!node?.range) return undefined;
  return index.range(node.range[0], node.range[1]);
}

function collectRanges(
  node: YamlNode | null,
  path: string,
  index: LineIndex,
  ranges: YamlRanges,
  problems: FrontmatterProblem[],
): void {
  if (!node) return;
  const value = nodeRange(node, index);
  if (value && !ranges[path]) ranges[path] = { value };
  if (isMap(node)) {
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const keyNode = pair.key as YamlNode | null;
      const key = isScalar(keyNode) ? String(keyNode.value) : keyNode ? String(keyNode) : '';
      const keyRange = nodeRange(keyNode, index) ?? value;
      const childPath = `${path}/${escapePointer(key)}`;
      if (FORBIDDEN_KEYS.has(key) && keyRange) {
        problems.push({
          code: 'forbidden-key',
          message: `key "${key}" is not allowed: it could change object prototypes; rename it`,
          range: keyRange,
        });
      }
      const valueNode = pair.value as YamlNode | null;
      const childValue = nodeRange(valueNode, index) ?? keyRange;
      if (childValue) ranges[childPath] = { key: keyRange, value: childValue };
      if (!isAlias(valueNode)) collectRanges(valueNode, childPath, index, ranges, problems);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => {
      const itemNode = item as YamlNode | null;
      if (!isAlias(itemNode)) collectRanges(itemNode, `${path}/${i}`, index, ranges, problems);
      else {
        const r = nodeRange(itemNode, index);
        if (r) ranges[`${path}/${i}`] = { value: r };
      }
    });
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

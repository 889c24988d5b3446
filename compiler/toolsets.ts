// Parse the toolsets (capabilities/toolsets.yaml and/or capabilities/toolsets/*.yaml): YAML with
// positions, then the toolsets that are well-formed enough for the other rules to use. Schema
// problems, and a toolset defined in two files, are reported by the `toolsets-schema` rule.
import { isToolsetsFile, TOOLSETS_FILE, TOOLSETS_FOLDER } from './layout.js';
import { LineIndex } from './positions.js';
import { normalizeNewlines } from './parse.js';
import { isRecord, parseYamlSource } from './yaml-source.js';
import type { FrontmatterProblem, SourceFile, ToolAction, ToolDefinition, Toolsets, YamlRanges } from './types.js';
import { byCodeUnits } from './order.js';

export { TOOLSETS_FILE, TOOLSETS_FOLDER, isToolsetsFile } from './layout.js';

/** More files than this in capabilities/toolsets/ are refused: the rest are not parsed. */
export const MAX_TOOLSETS_FILES = 1000;

export interface ParsedToolsets {
  /** The file; for toolsets merged from several files, what messages call them (e.g. `capabilities/toolsets/*.yaml`). */
  file: string;
  present: boolean;
  /** For merged toolsets: every file's toolsets in path order, the first definition of an id kept. */
  data: unknown;
  ranges: YamlRanges;
  /** For merged toolsets: every file's problems (positions are in `parts`). */
  problems: FrontmatterProblem[];
  /** The files merged, in path order, each as parsed; absent for a single parsed file. */
  parts?: ParsedToolsets[];
}

/** The toolsets files among `paths`, in the order they are merged (path order), capped at the limit. */
export function toolsetsPaths(paths: Iterable<string>): { merged: string[]; overLimit: string[] } {
  const all = [...paths].filter(isToolsetsFile).sort(byCodeUnits);
  // toolsets.yaml sorts first ('.' < '/') and does not count against the folder's limit.
  const limit = MAX_TOOLSETS_FILES + (all[0] === TOOLSETS_FILE ? 1 : 0);
  return { merged: all.slice(0, limit), overLimit: all.slice(limit) };
}

/**
 * Every toolsets file of a registry, parsed and merged. Both layouts may be used at once (a
 * registry can move toolsets out of toolsets.yaml one at a time); one file alone is returned as
 * `parseToolsetsFile` returns it, so the single-file layout behaves exactly as it always has.
 */
export function toolsetsSourceOf(files: readonly SourceFile[]): ParsedToolsets {
  const byPath = new Map(files.filter((file) => file.content !== undefined).map((file) => [file.path, file.content!]));
  const parts = toolsetsPaths(byPath.keys()).merged.map((path) => parseToolsetsFile(path, byPath.get(path)));
  if (parts.length === 0) return parseToolsetsFile(TOOLSETS_FILE, undefined);
  if (parts.length === 1 && parts[0]!.file === TOOLSETS_FILE) return parts[0]!;
  const data: Record<string, unknown> = {};
  for (const part of parts) {
    if (!isRecord(part.data)) continue;
    for (const [id, entry] of Object.entries(part.data)) if (!Object.hasOwn(data, id)) data[id] = entry;
  }
  // Past the single-file case, at least one part is in the folder.
  const file = parts[0]!.file === TOOLSETS_FILE ? `${TOOLSETS_FILE} and ${TOOLSETS_FOLDER}/*.yaml` : `${TOOLSETS_FOLDER}/*.yaml`;
  return { file, present: true, data, ranges: {}, problems: parts.flatMap((part) => part.problems), parts };
}

/** Toolset ids defined in more than one file: id -> the files (in merge order) that define it. */
export function toolsetsDefinedTwice(parts: readonly ParsedToolsets[]): Map<string, ParsedToolsets[]> {
  const definers = new Map<string, ParsedToolsets[]>();
  for (const part of parts) {
    if (!isRecord(part.data)) continue;
    for (const id of Object.keys(part.data)) {
      // Appended in place: a copy per file made an id in all 1,000 files 500,000 copies.
      const list = definers.get(id);
      if (list) list.push(part);
      else definers.set(id, [part]);
    }
  }
  return new Map([...definers].filter(([, list]) => list.length > 1));
}

export function parseToolsetsFile(file: string, content: string | undefined): ParsedToolsets {
  if (content === undefined) return { file, present: false, data: undefined, ranges: {}, problems: [] };
  // A BOM would shift every column of the first line by one.
  const text = normalizeNewlines(content.replace(/^\uFEFF/, ''));
  const source = parseYamlSource(text, new LineIndex(text));
  return { file, present: true, data: source.data ?? undefined, ranges: source.ranges, problems: source.problems };
}

const ACTIONS = new Set<ToolAction>(['read', 'write', 'admin']);

/** Toolsets and tools whose shape is usable; malformed entries are left out (and reported by the schema rule). */
export function usableToolsets(data: unknown): Toolsets {
  const toolsets: Toolsets = {};
  if (!isRecord(data)) return toolsets;
  for (const [id, entry] of Object.entries(data)) {
    if (!isRecord(entry) || !isRecord(entry.tools)) continue;
    const tools: Record<string, ToolDefinition> = {};
    for (const [name, tool] of Object.entries(entry.tools)) {
      if (!isRecord(tool)) continue;
      const action = tool.action === undefined ? 'read' : tool.action;
      if (!ACTIONS.has(action as ToolAction)) continue;
      const definition: ToolDefinition = {
        action: action as ToolAction,
        description: typeof tool.description === 'string' ? tool.description : '',
      };
      if (Array.isArray(tool.states)) definition.states = tool.states.filter((s): s is string => typeof s === 'string');
      tools[name] = definition;
    }
    toolsets[id] = { description: typeof entry.description === 'string' ? entry.description : '', tools };
  }
  return toolsets;
}

export function toolOwnersOf(toolsets: Toolsets): Map<string, string[]> {
  const owners = new Map<string, string[]>();
  for (const [toolsetId, toolset] of Object.entries(toolsets)) {
    for (const tool of Object.keys(toolset.tools)) {
      const list = owners.get(tool) ?? [];
      list.push(toolsetId);
      owners.set(tool, list);
    }
  }
  return owners;
}

// Parse capabilities/toolsets.yaml: YAML with positions, then the toolsets that are well-formed
// enough for the other rules to use. Schema problems are reported by the `toolsets-schema` rule.
import { LineIndex } from './positions.js';
import { normalizeNewlines } from './parse.js';
import { isRecord, parseYamlSource } from './yaml-source.js';
import type { FrontmatterProblem, ToolAction, ToolDefinition, Toolsets, YamlRanges } from './types.js';

export { TOOLSETS_FILE } from './layout.js';

export interface ParsedToolsets {
  file: string;
  present: boolean;
  data: unknown;
  ranges: YamlRanges;
  problems: FrontmatterProblem[];
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

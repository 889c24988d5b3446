// Builders for in-memory registries used across tests.
import { stringify } from 'yaml';
import { isEvalsFile } from '../../compiler/layout.js';
import type { RegistryInput } from '../../compiler/types.js';

export const DEFAULT_TOOLSETS = `work-logs:
  description: Work log entries and reports.
  tools:
    work_log_record: { action: write, description: Record an entry. }
    work_log_list: { action: read, description: List entries. }
    work_log_generate: { action: write, description: Generate a report., states: [PENDING, DONE] }
automation:
  description: Reminders and scheduled tasks.
  tools:
    automation_create_task: { action: write, description: Create a task. }
    automation_list_tasks: { action: read, description: List tasks. }
`;

export interface CapabilityFields {
  id: string;
  [field: string]: unknown;
}

/** A PROTOCOL.md with sensible, valid defaults for every required field. */
export function protocol(fields: CapabilityFields, body = 'Do not guess.\n'): string {
  const { id, ...rest } = fields;
  const frontmatter = {
    id,
    name: `Capability ${fields.id}`,
    description: `Does ${fields.id} things.`,
    whenToUse: [`use ${fields.id}`],
    requiredToolsets: [],
    protocol_version: '1.0.0',
    protocol_updated: '2026-11-29',
    ...rest,
  };
  return `---\n${stringify(frontmatter)}---\n${body}`;
}

/** A RegistryInput from a map of relative path -> content (toolsets.yaml gets a default unless given or null). */
export function registryInput(files: Record<string, string | null>): RegistryInput {
  const all: Record<string, string | null> = { 'capabilities/toolsets.yaml': DEFAULT_TOOLSETS, ...files };
  const paths = Object.keys(all)
    .filter((path) => all[path] !== null)
    .sort();
  const protocolFolders = new Set(paths.filter((p) => p.endsWith('/PROTOCOL.md')).map((p) => p.split('/').slice(0, 2).join('/')));
  const folders = new Set(paths.filter((p) => p.split('/').length > 2).map((p) => p.split('/').slice(0, 2).join('/')));
  return {
    files: paths
      .filter((path) => path.endsWith('/PROTOCOL.md') || path === 'capabilities/toolsets.yaml' || isEvalsFile(path))
      .map((path) => ({ path, content: all[path] ?? '' })),
    allPaths: paths,
    foldersWithoutProtocol: [...folders].filter((folder) => !protocolFolders.has(folder)).sort(),
  };
}

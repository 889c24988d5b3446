// remark-lint's second pass: run a rule over documents whose every range is 1:1 (as if the parser
// gave no positions) to prove it cannot crash on them, e.g. when a range lies outside the body.
import { compileRegistry, parseDocuments } from '../../compiler/compile.js';
import { defaultConfig } from '../../compiler/config.js';
import { FILE_START } from '../../compiler/positions.js';
import type { AnyRule } from '../../compiler/rule.js';
import type { CapabilityDocument, Diagnostic } from '../../compiler/types.js';
import { registryInput } from '../support/registry.js';

function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (typeof value !== 'object' || value === null) return value;
  if ('line' in value && 'column' in value && 'endLine' in value && 'endColumn' in value) return { ...FILE_START };
  return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, strip(child)]));
}

export function lintWithoutPositions(rule: AnyRule, files: Record<string, string | null>): Diagnostic[] {
  const input = registryInput(files);
  const documents = parseDocuments(input).map((document) => strip(document) as CapabilityDocument);
  const config = defaultConfig();
  config.rules.set(rule.meta.id, { level: rule.meta.defaultLevel, options: structuredClone(rule.meta.defaultOptions) });
  return compileRegistry(input, { config, documents, rules: [rule] }).diagnostics;
}

/** A registry that gives every rule of this folder something to report. */
export const EVERYTHING: Record<string, string> = {
  'capabilities/alpha/PROTOCOL.md': `---
id: alpha
name: Alpha
description: Everything at once.
whenToUse: [alpha]
requiredToolsets: [work-logs]
protocol_version: 1.0.0
protocol_updated: 2026-11-29
states: [PENDING, GONE]
retiredTools: [old_tool, work_log_schedule_*]
---
## Tools

| Tool | Use |
| --- | --- |
| \`work_log_generate\` | start |
| \`automation_create_task\` | schedule |
| \`nope\` | x |

## States

- **PENDING**
- **STALE** — regenerate.

Use old_tool and \`automation_list_tasks\`.
`,
  'capabilities/beta/PROTOCOL.md': '---\nid: beta\n---\n',
};

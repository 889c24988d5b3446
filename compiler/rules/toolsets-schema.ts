// toolsets-schema: capabilities/toolsets.yaml exists, parses, and matches its JSON Schema
// (compiler/schema/toolsets.schema.json): toolset -> {description, tools: {name: {action, description, states}}}.
import { createAjv } from '../ajv.js';
import { FILE_START } from '../positions.js';
import type { Fact } from '../facts.js';
import { ruleDocsUrl, type Rule } from '../rule.js';
import { schemaProblems } from '../schema-messages.js';
import toolsetsSchema from '../schema/toolsets.schema.json' with { type: 'json' };

const validateToolsets = createAjv({ strict: true, useDefaults: false }).compile(toolsetsSchema);
const toolsetKeys = Object.keys(toolsetsSchema.additionalProperties.properties);
const toolKeys = Object.keys(toolsetsSchema.additionalProperties.properties.tools.additionalProperties.properties);
/** What a well-formed name looks like, keyed by the schema path of its `propertyNames`. */
const NAME_HINTS: Record<string, string> = {
  '#/propertyNames': 'a toolset id is lowercase letters and digits in words joined by single hyphens, e.g. "work-logs"',
  '#/additionalProperties/properties/tools/propertyNames':
    'a tool name starts with a letter and has only letters, digits, "_", "." and "-", e.g. "work_log_record"',
};

/**
 * What a schema problem at a path breaks: a problem inside a tool breaks that tool and its toolset
 * (the tool is left out of the usable toolsets); one inside a toolset breaks the toolset; one at
 * the top breaks the whole file when it is not a mapping of toolsets.
 */
function brokenBy(path: string, data: unknown): Fact[] {
  const [toolset, key, tool] = path.split('/').slice(1).map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (toolset === undefined) return typeof data === 'object' && data !== null && !Array.isArray(data) ? [] : [{ kind: 'toolsets-file' }];
  const marks: Fact[] = [{ kind: 'toolset', id: toolset }];
  if (key === 'tools' && tool !== undefined) marks.push({ kind: 'tool', name: tool });
  return marks;
}

export const toolsetsSchemaRule: Rule = {
  meta: {
    id: 'toolsets-schema',
    description: 'toolsets.yaml exists, parses as YAML, and matches the toolsets JSON Schema.',
    defaultLevel: 'error',
    reads: 'git',
    docs: { url: ruleDocsUrl('toolsets-schema') },
    defaultOptions: {},
    messages: {
      missing: '{{file}} is missing: every registry defines its toolsets there (an empty mapping `{}` is allowed)',
      yaml: '{{message}}',
      schema: '{{message}}',
    },
  },
  check({ registry, report }) {
    const source = registry.toolsetsSource;
    const file = source.file;
    if (!source.present) {
      if (!registry.refusedFiles.some((refused) => refused.path === file)) {
        report({ file, range: FILE_START, messageId: 'missing', data: { file }, marks: [{ kind: 'toolsets-file' }] });
      }
      return;
    }
    for (const problem of source.problems) {
      report({ file, range: problem.range, messageId: 'yaml', data: { message: problem.message }, marks: [{ kind: 'toolsets-file' }] });
    }
    if (source.problems.length > 0) return;
    const data = source.data ?? {};
    if (!validateToolsets(data)) {
      const problems = schemaProblems(validateToolsets.errors, source.ranges, FILE_START, (path) => {
        const depth = path.split('/').length - 1;
        return depth === 1 ? toolsetKeys : depth === 3 ? toolKeys : [];
      }, NAME_HINTS);
      for (const problem of problems) report({ file, range: problem.range, messageId: 'schema', data: { message: problem.message }, marks: brokenBy(problem.path, data) });
    }
  },
};

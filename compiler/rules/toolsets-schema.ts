// toolsets-schema: the toolsets (capabilities/toolsets.yaml and/or capabilities/toolsets/*.yaml) exist,
// each file parses and matches the JSON Schema (compiler/schema/toolsets.schema.json):
// toolset -> {description, tools: {name: {action, description, states}}}, and no toolset is defined in two files.
import { compiledOnFirstUse, createAjv, OWN_SCHEMAS } from '../ajv.js';
import { FILE_START } from '../positions.js';
import { MAX_TOOLSETS_FILES, TOOLSETS_FOLDER, toolsetsDefinedTwice, toolsetsPaths, type ParsedToolsets } from '../toolsets.js';
import type { Fact } from '../facts.js';
import { ruleDocsUrl, type Report, type Rule } from '../rule.js';
import { BLANK_HINT, schemaProblems } from '../schema-messages.js';
import toolsetsSchema from '../schema/toolsets.schema.json' with { type: 'json' };

const toolsetsValidator = compiledOnFirstUse(() => createAjv({ strict: true, useDefaults: false, ...OWN_SCHEMAS }).compile(toolsetsSchema));
const toolsetKeys = Object.keys(toolsetsSchema.additionalProperties.properties);
const toolKeys = Object.keys(toolsetsSchema.additionalProperties.properties.tools.additionalProperties.properties);
/** What a well-formed name looks like, keyed by the schema path of its `propertyNames`. */
const NAME_HINTS: Record<string, string> = {
  '#/propertyNames': 'a toolset id is lowercase letters and digits in words joined by single hyphens, e.g. "work-logs"',
  '#/additionalProperties/properties/tools/propertyNames':
    'a tool name starts with a letter and has only letters, digits, "_", "." and "-", e.g. "work_log_record"',
  // Only spaces: as empty as "", and state-machine could not ask the body for it.
  '#/additionalProperties/properties/tools/additionalProperties/properties/states/items/pattern': BLANK_HINT.state,
};

/**
 * What a schema problem at a path breaks: a problem inside a tool breaks that tool and its toolset
 * (the tool is left out of the usable toolsets); one inside a toolset breaks the toolset; one at
 * the top breaks the whole file when it is not a mapping of toolsets.
 */
function brokenBy(path: string, data: unknown): Fact[] {
  const [toolset, key, tool] = path
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (toolset === undefined) return typeof data === 'object' && data !== null && !Array.isArray(data) ? [] : [{ kind: 'toolsets-file' }];
  const marks: Fact[] = [{ kind: 'toolset', id: toolset }];
  if (key === 'tools' && tool !== undefined) marks.push({ kind: 'tool', name: tool });
  return marks;
}

export const toolsetsSchemaRule: Rule = {
  meta: {
    id: 'toolsets-schema',
    description: 'toolsets.yaml or toolsets/*.yaml exist, parse as YAML, match the toolsets JSON Schema, and define each toolset once.',
    defaultLevel: 'error',
    reads: 'git',
    docs: { url: ruleDocsUrl('toolsets-schema') },
    defaultOptions: {},
    messages: {
      missing: `{{file}} is missing: every registry defines its toolsets there, or in ${TOOLSETS_FOLDER}/*.yaml (one or more toolsets per file); an empty mapping \`{}\` is allowed`,
      yaml: '{{message}}',
      schema: '{{message}}',
      twice: 'toolset "{{toolset}}" is also defined in {{other}}; define each toolset in one file',
      tooMany: 'more than {{limit}} toolsets files in capabilities/toolsets/; this one and the ones after it are not read: merge toolsets into fewer files',
    },
  },
  check({ registry, report }) {
    const source = registry.toolsetsSource;
    if (!source.present) {
      if (!registry.toolsetsUnread) {
        report({ file: source.file, range: FILE_START, messageId: 'missing', data: { file: source.file }, marks: [{ kind: 'toolsets-file' }] });
      }
      return;
    }
    const overLimit = toolsetsPaths(registry.allPaths).overLimit[0];
    if (overLimit !== undefined) {
      report({ file: overLimit, range: FILE_START, messageId: 'tooMany', data: { limit: MAX_TOOLSETS_FILES }, marks: [{ kind: 'toolsets-file' }] });
    }
    const parts = source.parts ?? [source];
    for (const part of parts) checkFile(part, report);
    for (const [toolset, definers] of toolsetsDefinedTwice(parts)) {
      // Reported at every definition, each pointing at the first other one, so that either file shows it.
      for (const part of definers) {
        const other = definers.find((candidate) => candidate !== part)!;
        report({
          file: part.file,
          range: keyRange(part, toolset),
          messageId: 'twice',
          data: { toolset, other: other.file },
          related: { file: other.file, range: keyRange(other, toolset), message: `toolset "${toolset}" also defined here` },
          marks: [{ kind: 'toolset', id: toolset }],
        });
      }
    }
  },
};

function keyRange(part: ParsedToolsets, toolset: string): Report['range'] {
  const range = part.ranges[`/${toolset.replace(/~/g, '~0').replace(/\//g, '~1')}`];
  return range?.key ?? range?.value ?? FILE_START;
}

function checkFile(source: ParsedToolsets, report: (entry: Report) => void): void {
  const file = source.file;
  /** First places reported already (a key three times is two problems with the same first place). */
  const firsts = new Set<string>();
  for (const problem of source.problems) {
    const marks: Fact[] = [{ kind: 'toolsets-file' }];
    if (problem.first === undefined) {
      report({ file, range: problem.range, messageId: 'yaml', data: { message: problem.message }, marks });
      continue;
    }
    // A key twice in one file (a toolset defined twice, say) is reported at both places, each
    // pointing at the other, as a toolset defined in two files is.
    const related = (range: Report['range']): NonNullable<Report['related']> => ({ file, range, message: 'the same key here' });
    report({ file, range: problem.range, messageId: 'yaml', data: { message: problem.message }, related: related(problem.first), marks });
    const first = `${problem.first.line}:${problem.first.column}`;
    if (firsts.has(first)) continue;
    firsts.add(first);
    report({ file, range: problem.first, messageId: 'yaml', data: { message: problem.message }, related: related(problem.range), marks });
  }
  if (source.problems.length > 0) return;
  const data = source.data ?? {};
  const validateToolsets = toolsetsValidator();
  if (!validateToolsets(data)) {
    const problems = schemaProblems(
      validateToolsets.errors,
      source.ranges,
      FILE_START,
      (path) => {
        const depth = path.split('/').length - 1;
        return depth === 1 ? toolsetKeys : depth === 3 ? toolKeys : [];
      },
      NAME_HINTS,
    );
    for (const problem of problems)
      report({ file, range: problem.range, messageId: 'schema', data: { message: problem.message }, marks: brokenBy(problem.path, data) });
  }
}

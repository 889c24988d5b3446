// frontmatter-schema: the frontmatter parses as YAML (no duplicate keys, no tabs, no alias bombs,
// no prototype keys) and matches the JSON Schema shipped in compiler/schema/capability.schema.json.
import type { ErrorObject } from 'ajv';
import { compiledOnFirstUse, createAjv, dialectOf, OWN_SCHEMAS, JSON_SCHEMA_DIALECTS, type AjvInstance, type JsonSchemaDialect } from '../ajv.js';
import { BLANK_HINT, schemaProblems, type SchemaProblem } from '../schema-messages.js';
import { fieldFact, type Fact } from '../facts.js';
import { ruleDocsUrl, type LintCapability, type Report, type Rule } from '../rule.js';
import type { Range, YamlRanges } from '../types.js';
import capabilitySchema from '../schema/capability.schema.json' with { type: 'json' };
import { rangeForPath } from '../yaml-source.js';

const frontmatterValidator = compiledOnFirstUse(() => createAjv({ strict: true, ...OWN_SCHEMAS }).compile(capabilitySchema));
/** Lenient instances, one per dialect, made when first needed, to check inputSchema/outputSchema. */
const schemaCheckers = new Map<JsonSchemaDialect, AjvInstance>();
/**
 * Values (mappings, lists, scalars) an inputSchema/outputSchema may hold. ajv's compile time grows
 * faster than the schema (20,000 properties took 18 s); a capability's schema is far smaller.
 */
export const MAX_JSON_SCHEMA_VALUES = 1000;

function checkerFor(dialect: JsonSchemaDialect): AjvInstance {
  let checker = schemaCheckers.get(dialect);
  if (!checker) {
    checker = createAjv({ strict: false, validateSchema: true }, dialect);
    schemaCheckers.set(dialect, checker);
  }
  return checker;
}

/** How many values `value` holds, counting stops past `limit`. */
function countValues(value: unknown, limit: number): number {
  let count = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && count <= limit) {
    const next = pending.pop();
    count += 1;
    if (typeof next === 'object' && next !== null) pending.push(...(Object.values(next) as unknown[]));
  }
  return count;
}

const topLevelKeys = Object.keys(capabilitySchema.properties);
const constraintKeys = Object.keys(capabilitySchema.properties.constraints.items.properties);

const HINTS: Record<string, string> = {
  '/id': 'use lowercase letters and digits in words joined by single hyphens, e.g. "work-reporting"',
  '/protocol_version': 'use a semantic version MAJOR.MINOR.PATCH such as "1.2.0" (no ranges, no "latest", no "v" prefix, at most 15 digits a part)',
  '/protocol_updated': 'use an ISO date YYYY-MM-DD such as "2026-11-29"',
  '/evidenceTypes/*': 'use lowercase words joined by hyphens, e.g. "test-results"',
  '/retiredTools/*': 'use a tool name or a prefix glob ending in "*", e.g. "work_log_schedule_*"',
  '/name': BLANK_HINT.name,
  '/description': BLANK_HINT.description,
  '/states/*': BLANK_HINT.state,
  '/tags/*': 'a tag is one word without spaces (skill metadata lists tags separated by spaces): join words with hyphens, e.g. "customer-support"',
};

export const frontmatterSchema: Rule = {
  meta: {
    id: 'frontmatter-schema',
    description: 'The frontmatter parses as YAML and matches the capability JSON Schema.',
    defaultLevel: 'error',
    reads: 'git',
    docs: { url: ruleDocsUrl('frontmatter-schema') },
    defaultOptions: {},
    messages: {
      yaml: '{{message}}',
      schema: '{{message}}',
      unquotedVersion: '`{{field}}` must be a quoted semver string like "{{version}}", not {{written}} (YAML reads it as the {{type}} {{value}})',
      unquoted: '`{{field}}` must be a quoted string, not {{written}} (YAML reads it as the {{type}} {{value}}): write "{{written}}"',
      invalidJsonSchema: '`{{field}}` is not a valid JSON Schema: {{detail}}',
    },
  },
  check({ registry, report }) {
    for (const capability of registry.capabilities) {
      // A fact of the document and of the file's text (a scalar is quoted as written).
      const problems = registry.derived.of(capability.document, 'frontmatter-schema', capability.source, () => frontmatterProblems(capability));
      for (const problem of problems) report({ capability, ...problem });
    }
  },
};

/** What the rule reports about one capability's frontmatter, in order. */
function frontmatterProblems(capability: LintCapability): Omit<Report, 'capability'>[] {
  const found: Omit<Report, 'capability'>[] = [];
  const { frontmatter } = capability.document;
  for (const problem of frontmatter.problems) {
    found.push({
      range: problem.range,
      messageId: 'yaml',
      data: { message: problem.message },
      marks: [{ kind: 'frontmatter', file: capability.document.file }],
    });
  }
  if (!frontmatter.data) return found;
  const validateFrontmatter = frontmatterValidator();
  if (!validateFrontmatter(frontmatter.data)) {
    const problems = schemaProblems(
      validateFrontmatter.errors,
      frontmatter.ranges,
      frontmatter.range,
      (path) => (path === '' ? topLevelKeys : /^\/constraints\/\d+$/.test(path) ? constraintKeys : []),
      HINTS,
    );
    const scalars = scalarsReadAsOtherTypes(validateFrontmatter.errors);
    for (const problem of problems) {
      const scalar = scalars.get(problem.path);
      const written = scalar === undefined ? undefined : sourceText(capability.source, problem.range);
      if (scalar !== undefined && written !== undefined) {
        found.push({ range: problem.range, ...unquotedMessage(problem.path, written, scalar), marks: fieldMarks(capability, problem.path) });
        continue;
      }
      found.push({ range: problem.range, messageId: 'schema', data: { message: problem.message }, marks: fieldMarks(capability, problem.path) });
    }
  }
  for (const field of ['inputSchema', 'outputSchema'] as const) {
    const value = frontmatter.data[field];
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    for (const problem of jsonSchemaProblems(field, value, frontmatter.ranges, frontmatter.range)) {
      found.push({
        range: problem.range,
        messageId: 'invalidJsonSchema',
        data: { field, detail: problem.message },
        marks: [fieldFact(capability, `/${field}`)],
      });
    }
  }
  return found;
}

/** Paths of values the schema wants as text that YAML read as a number or boolean (`1.0`, `true`). */
function scalarsReadAsOtherTypes(errors: ErrorObject[] | null | undefined): Map<string, number | boolean> {
  const scalars = new Map<string, number | boolean>();
  for (const error of errors ?? []) {
    const data: unknown = error.data;
    if (error.keyword === 'type' && (error.params as { type?: unknown }).type === 'string' && (typeof data === 'number' || typeof data === 'boolean')) {
      scalars.set(error.instancePath, data);
    }
  }
  return scalars;
}

/** The text of a one-line range as written in the file: `1.0`, where the parsed value is the number 1. */
function sourceText(source: string | undefined, range: Range): string | undefined {
  if (source === undefined || range.line !== range.endLine) return undefined;
  const line = source.replace(/^\uFEFF/, '').split(/\r\n?|\n/)[range.line - 1];
  const text = line?.slice(range.column - 1, range.endColumn - 1).trim();
  return text === undefined || text === '' ? undefined : text;
}

function unquotedMessage(path: string, written: string, value: number | boolean): { messageId: string; data: Record<string, string> } {
  const data = { field: path.slice(1).replace(/\//g, '.'), written, type: typeof value, value: String(value) };
  if (path !== '/protocol_version') return { messageId: 'unquoted', data };
  // `1.0` becomes "1.0.0": the author's numbers, completed to MAJOR.MINOR.PATCH.
  const parts = /^\d+(\.\d+){0,2}$/.test(written) ? written.split('.') : ['1'];
  while (parts.length < 3) parts.push('0');
  return { messageId: 'unquotedVersion', data: { ...data, version: parts.join('.') } };
}

/** A schema problem breaks the field it is at; one about the whole mapping (an unknown or missing key) breaks no field a rule reads. */
function fieldMarks(capability: LintCapability, path: string): Fact[] {
  return path === '' ? [] : [fieldFact(capability, path)];
}

/**
 * Problems of a schema given in the frontmatter, at the YAML node they are about. The meta-schema
 * reports one wrong value several ways (`type: strin` fails an enum, a type and the anyOf around
 * them); the first error at each place says it best.
 */
function jsonSchemaProblems(field: string, value: object, ranges: YamlRanges, fallback: Range): SchemaProblem[] {
  const at = rangeForPath(ranges, `/${field}`, fallback);
  if (countValues(value, MAX_JSON_SCHEMA_VALUES) > MAX_JSON_SCHEMA_VALUES) {
    return [
      {
        path: `/${field}`,
        message: `it holds over ${MAX_JSON_SCHEMA_VALUES} values, more than capreg checks; keep the schema to what a caller passes`,
        range: at,
      },
    ];
  }
  const declared = (value as Record<string, unknown>).$schema;
  const dialect = declared === undefined ? 'draft-07' : typeof declared === 'string' ? dialectOf(declared) : undefined;
  if (!dialect) {
    const named = typeof declared === 'string' ? JSON.stringify(declared.slice(0, 200)) : 'that is not a URI';
    const supported = (Object.entries(JSON_SCHEMA_DIALECTS) as [string, string][]).map(([name, uri]) => `${name} ("${uri}")`).join(', ');
    return [
      {
        path: `/${field}/$schema`,
        message: `\`$schema\` ${named} names no JSON Schema dialect capreg checks; use one of ${supported}, or leave \`$schema\` out for draft-07`,
        range: rangeForPath(ranges, `/${field}/$schema`, at),
      },
    ];
  }
  const checker = checkerFor(dialect);
  try {
    if (!checker.validateSchema(value)) {
      const firstPerPlace = new Map<string, ErrorObject>();
      for (const error of checker.errors ?? []) {
        if (error.keyword !== 'anyOf' && !firstPerPlace.has(error.instancePath)) firstPerPlace.set(error.instancePath, error);
      }
      const errors = [...firstPerPlace.values()].map((error) => ({ ...error, instancePath: `/${field}${error.instancePath}` }));
      return schemaProblems(errors, ranges, at, () => []);
    }
    // ajv resolves only the schemas it holds: a `$ref` to a URL is reported as unresolved, never fetched.
    checker.compile(value);
    return [];
  } catch (error) {
    // ajv follows a `$ref` that leads back to itself (`a: {$ref: '#/$defs/a'}`) until the stack runs out.
    const message =
      error instanceof RangeError && /call stack/i.test(error.message)
        ? 'its `$ref`s lead round in a loop (or nest too deep) and never reach a schema; make each `$ref` end at a schema with a type or properties'
        : (error as Error).message;
    return [{ path: `/${field}`, message, range: at }];
  } finally {
    // Compiling registers the schema and every `$id` inside it; another capability (or the next
    // build in watch mode) with the same `$id` would otherwise be refused as a duplicate, and an
    // `$id` equal to a meta-schema's would replace it. Removing all but the meta-schemas undoes both.
    checker.removeSchema();
  }
}

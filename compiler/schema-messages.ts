// ajv errors -> readable sentences at the position of the offending YAML node (Spectral's approach:
// switch on the keyword, map the JSON path back to the source).
import type { ErrorObject } from 'ajv';
import { didYouMean, suggestion } from './did-you-mean.js';
import { rangeForPath } from './yaml-source.js';
import type { Range, YamlRanges } from './types.js';

/**
 * Hints for text of only spaces, which is as empty as "" (the schemas' `^$|\S` patterns refuse it;
 * the rules that read these fields skip it). Shared by every schema with such a field.
 */
export const BLANK_HINT = {
  name: 'it is blank; write the name users see',
  description: 'it is blank; write one or two sentences on what the capability does',
  state: 'it is blank; write the state\'s name, e.g. "PENDING", or remove the item',
} as const;

export interface SchemaProblem {
  path: string;
  message: string;
  range: Range;
}

function fieldName(path: string): string {
  if (path === '') return 'the document';
  return `\`${path.slice(1).replace(/\//g, '.').replace(/~1/g, '/').replace(/~0/g, '~')}\``;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${JSON.stringify(value)}`;
}

const TYPE_NAMES: Record<string, string> = {
  object: 'a mapping',
  array: 'a list',
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
};

/**
 * @param knownKeys allowed property names per JSON path of an object, for "did you mean"
 * @param hints what is expected, keyed by instance path with list indexes as `*` (`/retiredTools/*`)
 *   or, for property names and for values under a path of names, by ajv schema path (`#/propertyNames`)
 */
export function schemaProblems(
  errors: ErrorObject[] | null | undefined,
  ranges: YamlRanges,
  fallback: Range,
  knownKeys: (objectPath: string) => string[],
  hints: Record<string, string> = {},
): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const seen = new Set<string>();
  const seenPaths = new Set<string>();
  let namePattern = '';
  for (const error of errors ?? []) {
    const path = error.instancePath;
    let message: string;
    let range = rangeForPath(ranges, path, fallback);
    const params = error.params as Record<string, unknown>;
    // A hint is keyed by the value's path, or by the schema's where the path holds names (a toolset's tools).
    const hint = error.keyword === 'propertyNames' ? hints[error.schemaPath] : (hints[stripIndexes(path)] ?? hints[error.schemaPath]);
    // ajv reports a bad property name twice: the `pattern` of `propertyNames`, then `propertyNames`
    // itself; the second one carries the name, the first one only the pattern.
    if (error.keyword === 'pattern' && error.schemaPath.endsWith('/propertyNames/pattern')) {
      namePattern = String(params.pattern);
      continue;
    }
    switch (error.keyword) {
      case 'additionalProperty':
      case 'additionalProperties': {
        const key = String(params.additionalProperty);
        const keyPath = `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
        range = rangeForPath(ranges, keyPath, fallback, 'key');
        message = `unknown field "${key}"${path ? ` in ${fieldName(path)}` : ''}${suggestion(key, knownKeys(path))}`;
        break;
      }
      case 'required':
        // A misspelled key is one mistake: its "unknown field …; did you mean" says it, not a second "missing".
        if (misspelled(errors ?? [], path, String(params.missingProperty), knownKeys)) continue;
        message = `missing required field "${String(params.missingProperty)}"${path ? ` in ${fieldName(path)}` : ''}`;
        break;
      case 'type':
        message = `${fieldName(path)} must be ${TYPE_NAMES[String(params.type)] ?? String(params.type)}, not ${describe(error.data)}${hint ? `: ${hint}` : ''}`;
        break;
      case 'pattern':
        message = `${fieldName(path)} ${JSON.stringify(error.data)} has the wrong form${hint ? `: ${hint}` : ` (expected to match ${String(params.pattern)})`}`;
        break;
      case 'format':
        // After `pattern`: a value of the wrong form is reported once, by the pattern.
        if (seenPaths.has(path)) continue;
        message = `${fieldName(path)} ${JSON.stringify(error.data)} is not a real ${String(params.format) === 'date' ? 'calendar date' : String(params.format)}${hint ? `: ${hint}` : ''}`;
        break;
      case 'enum':
        message = `${fieldName(path)} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}, not ${JSON.stringify(error.data)}${typeof error.data === 'string' ? suggestion(error.data, (params.allowedValues as unknown[]).map(String)) : ''}`;
        break;
      case 'minItems':
        message = `${fieldName(path)} must have at least ${String(params.limit)} item${params.limit === 1 ? '' : 's'}`;
        break;
      case 'maxItems':
        message = `${fieldName(path)} has ${String((error.data as unknown[]).length)} items, at most ${String(params.limit)}`;
        break;
      case 'minLength':
        message = `${fieldName(path)} must not be empty`;
        break;
      case 'maxLength':
        message = `${fieldName(path)} is too long (${String((error.data as string).length)} characters, at most ${String(params.limit)})`;
        break;
      case 'uniqueItems': {
        // Reported at the later copy: the first one is where the author meant it.
        const [first, second] = [Number(params.i), Number(params.j)].sort((a, b) => a - b);
        message = `${fieldName(path)} lists ${JSON.stringify((error.data as unknown[])[second!])} twice (items ${first! + 1} and ${second! + 1}); remove one`;
        range = rangeForPath(ranges, `${path}/${second!}`, range);
        break;
      }
      case 'propertyNames': {
        const name = String(params.propertyName);
        range = rangeForPath(ranges, `${path}/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`, fallback, 'key');
        message = `name "${name}"${path ? ` in ${fieldName(path)}` : ''} has the wrong form${hint ? `: ${hint}` : namePattern ? ` (expected to match ${namePattern})` : ''}`;
        break;
      }
      default:
        message = `${fieldName(path)} ${error.message ?? 'is invalid'}`;
    }
    const key = `${path}|${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    seenPaths.add(path);
    problems.push({ path, message, range });
  }
  return problems;
}

function misspelled(errors: ErrorObject[], path: string, missing: string, knownKeys: (objectPath: string) => string[]): boolean {
  return errors.some(
    (error) =>
      error.keyword === 'additionalProperties' &&
      error.instancePath === path &&
      didYouMean(String((error.params as Record<string, unknown>).additionalProperty), knownKeys(path)) === missing,
  );
}

function stripIndexes(path: string): string {
  return path.replace(/\/\d+(?=\/|$)/g, '/*');
}

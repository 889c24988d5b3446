// capabilities/<id>/evals.yaml (SPEC §9): the requests an author expects to route to this capability
// (`shouldMatch`: in the first `top`, default 3) and those that must not put it first
// (`shouldNotMatch`). Parsed through the one YAML reader (positions, no duplicate keys, bounded depth
// and aliases) and checked against compiler/schema/evals.schema.json, which also bounds the number
// of requests and their length. An evals file is not served: the manifest and its revision ignore it.
import { compiledOnFirstUse, createAjv, OWN_SCHEMAS } from '../ajv.js';
import { normalizeNewlines } from '../parse.js';
import { FILE_START, LineIndex } from '../positions.js';
import { schemaProblems, type SchemaProblem } from '../schema-messages.js';
import evalsSchema from '../schema/evals.schema.json' with { type: 'json' };
import type { FrontmatterProblem, Range, SourceFile, YamlRanges } from '../types.js';
import { parseYamlSource, rangeForPath } from '../yaml-source.js';
import { byKey } from '../order.js';
import { isEvalsFile } from '../layout.js';

/** How far down a request must rank when the file does not say (`top`). */
export const DEFAULT_TOP = 3;
/** At most this many requests per list, each at most this long: the schema's bounds, read from it. */
export const MAX_EVAL_REQUESTS = evalsSchema.properties.shouldMatch.maxItems;
export const MAX_REQUEST_CHARS = evalsSchema.properties.shouldMatch.items.maxLength;

const evalsValidator = compiledOnFirstUse(() => createAjv({ strict: true, useDefaults: false, ...OWN_SCHEMAS }).compile(evalsSchema));
const EVALS_KEYS = Object.keys(evalsSchema.properties);
const HINTS: Record<string, string> = {
  '/top': 'how far down (1 to 10) each `shouldMatch` request may rank',
  '/shouldMatch': 'a list of requests, one string each',
  '/shouldNotMatch': 'a list of requests, one string each',
  // A request of only spaces matches nothing: as a shouldNotMatch it would always pass.
  '/shouldMatch/*': 'a request as a user would say it, not blank',
  '/shouldNotMatch/*': 'a request as a user would say it, not blank',
};

/** An evals file as read: YAML with positions, before the schema. */
export interface ParsedEvals {
  file: string;
  /** The capability folder it sits in. */
  folder: string;
  data: unknown;
  ranges: YamlRanges;
  problems: FrontmatterProblem[];
}

export type EvalKind = 'shouldMatch' | 'shouldNotMatch';

export interface EvalRequest {
  kind: EvalKind;
  request: string;
  range: Range;
}

/** An evals file that passed the schema. */
export interface CapabilityEvals {
  file: string;
  folder: string;
  top: number;
  requests: EvalRequest[];
}

export function parseEvalsFile(file: string, content: string): ParsedEvals {
  const folder = isEvalsFile(file) ? file.slice('capabilities/'.length, -'/evals.yaml'.length) : '';
  // A BOM would shift every column of the first line by one.
  const text = normalizeNewlines(content.replace(/^\uFEFF/, ''));
  const source = parseYamlSource(text, new LineIndex(text));
  return { file, folder, data: source.data, ranges: source.ranges, problems: source.problems };
}

/**
 * The readable evals files of a registry, parsed, in path order. `parsedBefore` may answer for a
 * file already parsed with the same path and text (the gate's base tree and its new tree share
 * most of their files, byte for byte); a parse is a pure function of both.
 */
export function parseEvalsFiles(files: readonly SourceFile[], parsedBefore?: (path: string, content: string) => ParsedEvals | undefined): ParsedEvals[] {
  return files
    .filter((file): file is SourceFile & { content: string } => isEvalsFile(file.path) && file.content !== undefined)
    .sort(byKey((file) => file.path))
    .map((file) => parsedBefore?.(file.path, file.content) ?? parseEvalsFile(file.path, file.content));
}

/** Schema problems of a file that parsed (YAML problems come first and are the file's own). */
export function evalsSchemaProblems(parsed: ParsedEvals): SchemaProblem[] {
  // An empty file is `null`: report it as the mapping it must be.
  const data = parsed.data ?? {};
  const validateEvals = evalsValidator();
  if (validateEvals(data)) return [];
  return schemaProblems(validateEvals.errors, parsed.ranges, FILE_START, (path) => (path === '' ? EVALS_KEYS : []), HINTS);
}

/** The evals of a file without YAML or schema problems; undefined otherwise (evals-schema says why). */
export function usableEvals(parsed: ParsedEvals): CapabilityEvals | undefined {
  if (parsed.problems.length > 0 || evalsSchemaProblems(parsed).length > 0) return undefined;
  const data = parsed.data as { top?: number; shouldMatch: string[]; shouldNotMatch?: string[] };
  const requests = (kind: EvalKind, list: readonly string[]): EvalRequest[] =>
    list.map((request, index) => ({ kind, request, range: rangeForPath(parsed.ranges, `/${kind}/${index}`, FILE_START) }));
  return {
    file: parsed.file,
    folder: parsed.folder,
    top: data.top ?? DEFAULT_TOP,
    requests: [...requests('shouldMatch', data.shouldMatch), ...requests('shouldNotMatch', data.shouldNotMatch ?? [])],
  };
}

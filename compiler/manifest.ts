// The manifest (SPEC §4): emitted by `capreg build`, loaded and verified by the server.
// Pure functions only; writing the file atomically is the CLI's job.
import { MAX_JSON_DEPTH, canonicalJsonBytes, digestOf, tooDeepPath } from './canonical.js';
import { compiledOnFirstUse, createAjv, OWN_SCHEMAS } from './ajv.js';
import { validatorFor } from './config.js';
import { linkedCapabilities } from './contract.js';
import { renderProtocol } from './render.js';
import { plainText, truncate } from './formatters/escape.js';
import type { LintCapability, LintRegistry, ResolvedRuleSetting } from './rule.js';
import { comparedBlocks, duplicateContent, type DuplicateContentOptions } from './rules/duplicate-content.js';
import type { Derived } from './derived.js';
import {
  MANIFEST_SCHEMA_VERSION,
  type CapabilityFrontmatter,
  type Manifest,
  type ManifestCapability,
  type ManifestRuleSetting,
  type TextBlock,
} from './types.js';
import { USER_REGISTRY_RULES } from './user/compile-user.js';
import manifestSchema from './schema/manifest.schema.json' with { type: 'json' };

const manifestShapeValidator = compiledOnFirstUse(() => createAjv({ strict: false, ...OWN_SCHEMAS }).compile(manifestSchema));

/**
 * The most JSON values (objects, arrays, strings, numbers, booleans, nulls) a manifest may hold. A
 * capability compiles to 90–230 values (its protocol is a few strings, whatever its length: the
 * generated registry of 10,000 holds 0.9 million, the bundled capabilities ~225 each), so the
 * 256 MiB byte limit binds before this one for any real registry, while parsing stays within
 * seconds and a few hundred MB of heap.
 */
export const MAX_MANIFEST_JSON_VALUES = 5_000_000;

/**
 * About how many values `text` (JSON) holds: its commas and its opening brackets outside strings,
 * plus one; counting stops past `limit`. Strings are skipped with indexOf, so a manifest of long
 * protocols is scanned in a few ms per MB.
 */
export function countJsonValues(text: string, limit: number): number {
  const next = /["{[,]/g;
  let count = 1;
  for (let match = next.exec(text); match !== null; match = next.exec(text)) {
    if (match[0] !== '"') {
      count++;
      if (count > limit) return count;
      continue;
    }
    // Past the closing quote: one not preceded by an odd run of backslashes.
    for (let from = next.lastIndex; ;) {
      const end = text.indexOf('"', from);
      if (end === -1) return count;
      let backslashes = 0;
      while (text.charCodeAt(end - 1 - backslashes) === 0x5c) backslashes++;
      from = end + 1;
      if (backslashes % 2 === 0) {
        next.lastIndex = from;
        break;
      }
    }
  }
  return count;
}

/** `integrity`: digest of the canonical JSON of every other field. */
export function manifestIntegrity(manifest: Omit<Manifest, 'integrity'> | Manifest): string {
  const { integrity: _ignored, ...rest } = manifest as Manifest;
  return digestOf(rest);
}

/** The bytes written to disk: canonical key order, pretty enough to diff, ending with a newline. */
export function manifestBytes(manifest: Manifest): Buffer {
  return canonicalJsonBytes(manifest, 2, '\n');
}

/** manifestBytes as text. */
export function serializeManifest(manifest: Manifest): string {
  return manifestBytes(manifest).toString('utf8');
}

export type ManifestParseResult = { ok: true; manifest: Manifest } | { ok: false; error: string };

/**
 * Parse and check a manifest file's text: JSON, shape, a `schemaVersion` this code knows, and
 * `integrity`. A half-written or tampered file fails here and is never served.
 */
export function parseManifest(text: string): ManifestParseResult {
  // JSON.parse holds the event loop and builds every value before anything can look at them: a
  // file within the size limit made only of `{},` (85 million objects in 256 MiB) ran the heap out
  // and aborted the server after minutes. Counted first, on the text.
  if (text.length > MAX_MANIFEST_JSON_VALUES && countJsonValues(text, MAX_MANIFEST_JSON_VALUES) > MAX_MANIFEST_JSON_VALUES) {
    return {
      ok: false,
      error: `manifest holds more than ${MAX_MANIFEST_JSON_VALUES} JSON values, over the limit (a registry of 10,000 capabilities holds about 1 to 2.3 million)`,
    };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `manifest is not valid JSON (${(error as Error).message}); it may be half-written` };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { ok: false, error: 'manifest is not a JSON object' };
  }
  // Before anything walks the data recursively (schema, integrity, catalog). Only the top-level
  // field and an index are named: keys further down may be content not every caller may read.
  const deep = tooDeepPath(data);
  if (deep !== undefined) {
    const where = `/${deep.slice(0, typeof deep[1] === 'number' ? 2 : 1).join('/')}`;
    return { ok: false, error: `manifest nests deeper than ${MAX_JSON_DEPTH} levels (under ${where})` };
  }
  const version = (data as { schemaVersion?: unknown }).schemaVersion;
  if (typeof version === 'number' && Number.isInteger(version) && version !== MANIFEST_SCHEMA_VERSION) {
    return {
      ok: false,
      error: `manifest schemaVersion ${version} is not supported (this capreg reads schemaVersion ${MANIFEST_SCHEMA_VERSION}); rebuild it with a matching capreg`,
    };
  }
  const shapeError = shapeProblem(data);
  if (shapeError !== undefined) return { ok: false, error: shapeError.message };
  const manifest = data as unknown as Manifest;
  const expected = manifestIntegrity(manifest);
  if (expected !== manifest.integrity) {
    return { ok: false, error: 'manifest integrity check failed: its content does not match its integrity digest' };
  }
  const catalogError = catalogProblem(manifest);
  if (catalogError !== undefined) return { ok: false, error: catalogError.message };
  return { ok: true, manifest };
}

/** Why readers refuse a manifest, and the capability entry it is in (its index), when it is in one. */
export interface ManifestProblem {
  message: string;
  capabilityIndex?: number;
}

/**
 * Why a manifest's content would be refused by its readers (parseManifest), or undefined. A build
 * checks what it is about to write with it: a registry that turned off the rules that keep every
 * capability whole (frontmatter-schema, id-matches-folder) would otherwise write a manifest that
 * serve and export refuse.
 */
export function manifestContentProblem(manifest: Manifest): ManifestProblem | undefined {
  return shapeProblem(manifest) ?? catalogProblem(manifest);
}

function shapeProblem(data: object): ManifestProblem | undefined {
  const validateManifestShape = manifestShapeValidator();
  if (validateManifestShape(data)) return undefined;
  const first = validateManifestShape.errors?.[0];
  const where = first?.instancePath ? first.instancePath.split('/').map(shownName).join('/') : '/';
  const message = `manifest does not match its schema: ${where} ${first?.message ?? 'is invalid'}`;
  const index = /^\/capabilities\/(\d+)(?:\/|$)/.exec(first?.instancePath ?? '')?.[1];
  return index === undefined ? { message } : { message, capabilityIndex: Number(index) };
}

/** Longest name taken from a manifest (a toolset, a tool, a rule id) or from a manifest server's answer that a refusal quotes. */
const MAX_SHOWN_NAME = 64;

/**
 * A name from the manifest as a refusal quotes it: cut at MAX_SHOWN_NAME characters, control
 * characters escaped as in every other line capreg prints (plainText). Refusals reach the unauthenticated `/healthz` (on every probe), the logs and
 * the terminal at start: a toolset named with 1 MB of text made each of them 1 MB long, and
 * terminal escapes went out as they were.
 */
export function shownName(name: string): string {
  // Cut by the one helper every quoted item goes through (never on half of a surrogate pair).
  return plainText(truncate(name, MAX_SHOWN_NAME + 1));
}

/** Each capability once, and rule settings this capreg checks user capabilities with. */
function catalogProblem(manifest: Manifest): ManifestProblem | undefined {
  const ids = new Set<string>();
  for (const [index, capability] of manifest.capabilities.entries()) {
    if (ids.has(capability.id)) return { message: `manifest lists capability "${capability.id}" twice`, capabilityIndex: index };
    ids.add(capability.id);
  }
  const rulesError = checkRuleSettings(manifest.rules ?? {});
  return rulesError === undefined ? undefined : { message: rulesError };
}

/** Settings for a rule this capreg does not run on user capabilities, or options it refuses, are refused. */
function checkRuleSettings(rules: Record<string, ManifestRuleSetting>): string | undefined {
  for (const [id, setting] of Object.entries(rules)) {
    const rule = USER_REGISTRY_RULES.find((each) => each.meta.id === id);
    if (rule === undefined)
      return `manifest sets rule "${shownName(id)}", which this capreg does not check user capabilities with; rebuild it with a matching capreg`;
    const validate = validatorFor(rule);
    const valid = validate ? validate(structuredClone(setting.options)) : Object.keys(setting.options as object).length === 0;
    if (!valid) return `manifest sets invalid options for rule "${id}"; rebuild it with a matching capreg`;
  }
  return undefined;
}

export interface ManifestOptions {
  source: Manifest['source'];
  generator: string;
  /** From SOURCE_DATE_EPOCH; omitted otherwise so that builds are reproducible. */
  builtAt?: string;
  /** The registry's resolved rule settings (capreg.config.yaml); defaults when absent. */
  rules?: ReadonlyMap<string, ResolvedRuleSetting>;
}

const OPTIONAL_FIELDS = [
  'states',
  'retiredTools',
  'lifecyclePhase',
  'tags',
  'inputSchema',
  'outputSchema',
  'evidenceTypes',
  'constraints',
  'scopeConstraints',
  'metadata',
] as const;

/** The manifest entry of one capability that passed lint; `minLength` of duplicate-content, unless it is off. */
export function manifestCapability(capability: LintCapability, paragraphMinLength: number | undefined, derived: Derived): ManifestCapability {
  const { document } = capability;
  // As written, not as lint's well-typed view: with frontmatter-schema off a field of the wrong type
  // reaches the manifest, whose check (manifestContentProblem) then refuses it rather than drop it.
  const fm = (document.frontmatter.data ?? {}) as unknown as CapabilityFrontmatter;
  const references = linkedCapabilities(document.links);
  const entry: ManifestCapability = {
    id: fm.id,
    name: fm.name,
    description: fm.description,
    whenToUse: fm.whenToUse,
    requiredToolsets: fm.requiredToolsets,
    optionalToolsets: fm.optionalToolsets ?? [],
    protocolVersion: fm.protocol_version,
    protocolUpdated: fm.protocol_updated,
    digest: '',
    references,
    protocol: renderProtocol(document, fm.protocol_version, fm.protocol_updated),
  };
  const optional = entry as unknown as Record<string, unknown>;
  for (const field of OPTIONAL_FIELDS) if (fm[field] !== undefined) optional[field] = fm[field];
  // The digest covers everything served for this capability, so equal revisions mean equal bytes.
  const { digest: _unset, ...content } = entry;
  const paragraphs = paragraphMinLength === undefined ? [] : paragraphsOf(derived, capability, paragraphMinLength);
  return { ...entry, digest: digestOf(content), ...(paragraphs.length > 0 ? { paragraphs } : {}) };
}

/** What duplicate-content compares (the fact it derived, when the compile kept it), without the text: a fingerprint and a line per block. */
function paragraphsOf(derived: Derived, capability: LintCapability, minLength: number): [string, number][] {
  const { blocks, keys } = comparedBlocks(derived, capability, minLength);
  return keys.map((key, index) => [key, (blocks[index] as TextBlock).range.line]);
}

/** The settings user capabilities are checked with: the registry's, for every rule they run. */
function userRuleSettings(settings: ReadonlyMap<string, ResolvedRuleSetting>): Record<string, ManifestRuleSetting> {
  const resolved: Record<string, ManifestRuleSetting> = {};
  for (const rule of USER_REGISTRY_RULES) {
    const setting = settings.get(rule.meta.id) ?? { level: rule.meta.defaultLevel, options: rule.meta.defaultOptions };
    resolved[rule.meta.id] = { level: setting.level, options: setting.options };
  }
  return resolved;
}

/** Assemble the manifest of a registry that linted without errors. */
export function buildManifest(registry: LintRegistry, options: ManifestOptions): Manifest {
  const rules = userRuleSettings(options.rules ?? new Map());
  const duplicates = rules[duplicateContent.meta.id];
  const minLength = duplicates && duplicates.level !== 'off' ? (duplicates.options as DuplicateContentOptions).minLength : undefined;
  // An entry reads only its own document (kept under --watch while the file is unchanged).
  const entryKey = `manifest-entry:${minLength}`;
  const capabilities = registry.capabilities
    .map((capability) => registry.derived.of(capability.document, entryKey, undefined, () => manifestCapability(capability, minLength, registry.derived)))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  const revision = digestOf({ toolsets: registry.toolsets, capabilities: capabilities.map(({ id, digest }) => ({ id, digest })) });
  const manifest: Omit<Manifest, 'integrity'> = {
    schemaVersion: MANIFEST_SCHEMA_VERSION,
    generator: options.generator,
    revision,
    source: options.source,
    ...(options.builtAt ? { builtAt: options.builtAt } : {}),
    toolsets: registry.toolsets,
    capabilities,
    rules,
  };
  return { ...manifest, integrity: manifestIntegrity(manifest) };
}

// The manifest (SPEC §4): emitted by `capreg build`, loaded and verified by the server.
// Pure functions only; writing the file atomically is the CLI's job.
import { canonicalJson, digestOf } from './canonical.js';
import { createAjv } from './ajv.js';
import { MANIFEST_SCHEMA_VERSION, type Manifest } from './types.js';
import manifestSchema from './schema/manifest.schema.json' with { type: 'json' };

const validateManifestShape = createAjv({ strict: false }).compile(manifestSchema);

/** `integrity`: digest of the canonical JSON of every other field. */
export function manifestIntegrity(manifest: Omit<Manifest, 'integrity'> | Manifest): string {
  const { integrity: _ignored, ...rest } = manifest as Manifest;
  return digestOf(rest);
}

/** The bytes written to disk: canonical key order, pretty enough to diff, ending with a newline. */
export function serializeManifest(manifest: Manifest): string {
  return `${JSON.stringify(JSON.parse(canonicalJson(manifest)), null, 2)}\n`;
}

export type ManifestParseResult = { ok: true; manifest: Manifest } | { ok: false; error: string };

/**
 * Parse and check a manifest file's text: JSON, shape, a `schemaVersion` this code knows, and
 * `integrity`. A half-written or tampered file fails here and is never served.
 */
export function parseManifest(text: string): ManifestParseResult {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `manifest is not valid JSON (${(error as Error).message}); it may be half-written` };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { ok: false, error: 'manifest is not a JSON object' };
  }
  const version = (data as { schemaVersion?: unknown }).schemaVersion;
  if (typeof version === 'number' && Number.isInteger(version) && version !== MANIFEST_SCHEMA_VERSION) {
    return {
      ok: false,
      error: `manifest schemaVersion ${version} is not supported (this capreg reads schemaVersion ${MANIFEST_SCHEMA_VERSION}); rebuild it with a matching capreg`,
    };
  }
  if (!validateManifestShape(data)) {
    const first = validateManifestShape.errors?.[0];
    return {
      ok: false,
      error: `manifest does not match its schema: ${first?.instancePath || '/'} ${first?.message ?? 'is invalid'}`,
    };
  }
  const manifest = data as unknown as Manifest;
  const expected = manifestIntegrity(manifest);
  if (expected !== manifest.integrity) {
    return { ok: false, error: 'manifest integrity check failed: its content does not match its integrity digest' };
  }
  const ids = new Set<string>();
  for (const capability of manifest.capabilities) {
    if (ids.has(capability.id)) return { ok: false, error: `manifest lists capability "${capability.id}" twice` };
    ids.add(capability.id);
  }
  return { ok: true, manifest };
}

// The manifest being served and how a new one is taken in: parsed and verified (shape,
// `schemaVersion`, `integrity`) by `parseManifest`, indexed into a Catalog, then activated in one
// step by ReloadableFile. No MCP SDK code here.
import { parseManifest } from '../compiler/manifest.js';
import type { Manifest } from '../compiler/types.js';
import { Catalog } from './catalog.js';
import type { ReadLimits } from './read-file.js';
import { ReloadableFile, type ParseResult, type ReloadOutcome, type Snapshot } from './reloadable.js';
import type { ToolNames } from '../compiler/contract.js';
import type { LineLog } from './log.js';

/** A verified manifest and its catalog, activated together. */
export interface ServedManifest {
  manifest: Manifest;
  catalog: Catalog;
  /** Where it came from (manifest-source.ts); a plain local file when absent. */
  source?: 'file' | 'url' | 'cache';
  /** The `kid` of the key whose signature was verified; absent when unsigned. */
  signedBy?: string;
}

/** The manifest being served and how it reloads: a plain file (ReloadableFile) or a verified source. */
export interface ManifestStore {
  readonly file: string;
  readonly label: string;
  readonly snapshot: Snapshot<ServedManifest>;
  readonly current: ServedManifest;
  readonly lastReloadError: string | null;
  /** The last read of the file timed out: read it again, though it did not change. */
  readonly retryDue: boolean;
  onActivate(listener: (next: Snapshot<ServedManifest>, previous: Snapshot<ServedManifest>) => void): () => void;
  reload(): Promise<ReloadOutcome>;
}

export function servedManifestFromText(text: string, names: ToolNames): ParseResult<ServedManifest> {
  const parsed = parseManifest(text);
  if (!parsed.ok) return { ok: false, error: withoutQuotedSource(parsed.error) };
  return { ok: true, value: { manifest: parsed.manifest, catalog: new Catalog(parsed.manifest, names) } };
}

export function openManifestStore(options: {
  file: string;
  names: ToolNames;
  limits?: ReadLimits | undefined;
  log?: LineLog;
}): Promise<ReloadableFile<ServedManifest>> {
  return ReloadableFile.open({
    file: options.file,
    label: 'manifest',
    parse: (text) => servedManifestFromText(text, options.names),
    describe: (served) => `revision ${served.manifest.revision}`,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
}

/**
 * V8's JSON errors can quote a few characters of the input ("Unexpected token 'x', \"…\" is not
 * valid JSON"). The reason ends up in the unauthenticated /healthz, and a manifest holds protocols
 * not every caller may read, so only the position is kept.
 */
function withoutQuotedSource(error: string): string {
  if (!error.startsWith('manifest is not valid JSON')) return error;
  const position = /position (\d+)/.exec(error)?.[1];
  return `manifest is not valid JSON${position !== undefined ? ` (error at position ${position})` : ''}; it may be half-written`;
}

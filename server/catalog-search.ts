// `find_capabilities` in the domain (SPEC §9): the ranker (compiler/search/ranker.ts) over exactly
// what one caller sees. Each capability is analyzed once per manifest load; a search index is built
// per distinct visible set (a caller class, or an owner with user capabilities), keyed by that set's
// catalogVersion, so no statistic, term or score depends on a capability the caller cannot see.
// Memory: at most MAX_CACHED_INDEXES indexes, each over at most the catalog's capabilities plus one
// owner's, and MAX_CACHED_ANSWERS answers of at most 50 hits; least recently used first out. No MCP
// SDK code here.
import { LRUCache } from 'lru-cache';
import { PROTOCOL_TOOL, catalogEntry, type CatalogEntry } from '../compiler/contract.js';
import {
  analyzeCapability,
  CapabilityIndex,
  protocolSearchText,
  type AnalyzedCapability,
  type SearchHit,
  type SearchRequest,
} from '../compiler/search/ranker.js';
import type { Manifest, ManifestCapability } from '../compiler/types.js';
import type { CatalogListing } from './catalog.js';

/** Distinct visible sets whose index is kept (a set's first search after eviction rebuilds it). */
export const MAX_CACHED_INDEXES = 16;
/**
 * Answers kept, keyed by visible set and request: an answer is a function of those two alone, and
 * agents repeat the same requests. Each holds at most 50 hits (entries are shared, not copied).
 */
export const MAX_CACHED_ANSWERS = 4096;
/** Longest stretch `prepare()` keeps the event loop before letting requests run. */
export const PREPARE_SLICE_MS = 10;

/** What a caller sees, as find_capabilities needs it: the listing's entries and its digest. */
export interface SearchScope {
  catalogVersion: string;
  platform: CatalogListing;
  /** The caller's own visible user capabilities (only their catalog facts are indexed). */
  user: readonly CatalogEntry[];
}

/** A hit with the entry the caller's listing shows for it. */
export interface FoundCapability extends SearchHit {
  entry: CatalogEntry;
}

interface ScopeIndex {
  index: CapabilityIndex;
  entries: ReadonlyMap<string, CatalogEntry>;
}

export class CatalogSearch {
  readonly #capabilities = new Map<string, ManifestCapability>();
  readonly #toolsets: Manifest['toolsets'];
  readonly #analyzed = new Map<string, AnalyzedCapability>();
  readonly #indexes = new LRUCache<string, ScopeIndex>({ max: MAX_CACHED_INDEXES });
  readonly #answers = new LRUCache<string, readonly FoundCapability[]>({ max: MAX_CACHED_ANSWERS });

  constructor(manifest: Manifest) {
    for (const capability of manifest.capabilities) this.#capabilities.set(capability.id, capability);
    this.#toolsets = manifest.toolsets;
  }

  /**
   * Analyze every capability off the request path, right after a manifest is activated, so the first
   * search after a reload pays only its visible set's index build. Runs in slices of at most
   * PREPARE_SLICE_MS and yields to pending I/O between them, so requests wait at most one slice.
   * Analysis is per capability and independent of visibility, so a search that comes first simply
   * analyzes what it needs itself.
   */
  async prepare(): Promise<void> {
    const pending = [...this.#capabilities.values()];
    let next = 0;
    while (next < pending.length) {
      const until = performance.now() + PREPARE_SLICE_MS;
      while (next < pending.length && performance.now() < until) {
        const capability = pending[next++] as ManifestCapability;
        if (!this.#analyzed.has(capability.id)) this.#analyzedPlatform(catalogEntry(capability, PROTOCOL_TOOL));
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  search(scope: SearchScope, request: SearchRequest): readonly FoundCapability[] {
    const key = JSON.stringify([scope.catalogVersion, request.query, request.lifecyclePhase, request.tags, request.limit]);
    const cached = this.#answers.get(key);
    if (cached !== undefined) return cached;
    const { index, entries } = this.#index(scope);
    const found = Object.freeze(index.search(request).map((hit) => Object.freeze({ ...hit, entry: entries.get(hit.id) as CatalogEntry })));
    this.#answers.set(key, found);
    return found;
  }

  /** The index of one visible set, built on its first search and kept while it is used. */
  #index(scope: SearchScope): ScopeIndex {
    const cached = this.#indexes.get(scope.catalogVersion);
    if (cached !== undefined) return cached;
    const entries = new Map<string, CatalogEntry>();
    const analyzed: AnalyzedCapability[] = [];
    for (const entry of scope.platform.capabilities) {
      entries.set(entry.id, entry);
      analyzed.push(this.#analyzedPlatform(entry));
    }
    for (const entry of scope.user) {
      entries.set(entry.id, entry);
      analyzed.push(analyzeCapability({ ...entry, protocolText: '' }));
    }
    const built = { index: new CapabilityIndex(analyzed), entries };
    this.#indexes.set(scope.catalogVersion, built);
    return built;
  }

  #analyzedPlatform(entry: CatalogEntry): AnalyzedCapability {
    let analyzed = this.#analyzed.get(entry.id);
    if (analyzed === undefined) {
      const capability = this.#capabilities.get(entry.id);
      const protocolText = capability === undefined ? '' : protocolSearchText(capability.protocol, (tool) => this.#toolDescription(capability, tool));
      analyzed = analyzeCapability({ ...entry, protocolText });
      this.#analyzed.set(entry.id, analyzed);
    }
    return analyzed;
  }

  /** The description of `tool` in one of the capability's own toolsets. */
  #toolDescription(capability: ManifestCapability, tool: string): string | undefined {
    for (const toolset of [...capability.requiredToolsets, ...capability.optionalToolsets]) {
      const definition = this.#toolsets[toolset]?.tools[tool];
      if (definition !== undefined) return definition.description;
    }
    return undefined;
  }
}

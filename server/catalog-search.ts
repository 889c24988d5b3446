// `find_capabilities` in the domain (SPEC §9): the ranker (compiler/search/ranker.ts) over exactly
// what one caller sees. Each capability is analyzed once per manifest load and the platform's
// capabilities are indexed once (one postings segment, shared by every caller); a caller's view
// marks which of them it may see, plus a small segment of its own user capabilities, keyed by that
// visible set's catalogVersion, so no statistic, term or score depends on a capability the caller
// cannot see. Memory: one segment over the catalog; at most MAX_CACHED_VIEWS views, each a byte per
// catalog capability plus one owner's user capabilities; term scores of at most DEFAULT_TERM_SCORES
// documents in all (~13 MiB); MAX_CACHED_ANSWERS answers of at most 50 hits; least recently used
// first out. No MCP SDK code here.
import { LRUCache } from 'lru-cache';
import { PROTOCOL_TOOL, catalogEntry, type CatalogEntry } from '../compiler/contract.js';
import { analyzeCapability, type AnalyzedCapability } from '../compiler/search/fields.js';
import { Segment } from '../compiler/search/postings.js';
import { CapabilityIndex, protocolSearchText, TermScoreCache, type SearchHit, type SearchRequest, type ViewPart } from '../compiler/search/ranker.js';
import type { Manifest, ManifestCapability } from '../compiler/types.js';
import type { CatalogListing } from './catalog.js';

/** Distinct visible sets whose view is kept (a set's first search after eviction rebuilds it: ~1 ms per 1,000 capabilities). */
export const MAX_CACHED_VIEWS = 64;
/** Answers kept (their hits: at most 50 each, an id, a score and the matched fields), keyed by visible set and request. */
export const MAX_CACHED_ANSWERS = 4096;
/**
 * User capabilities' analyses kept, by the text of their catalog facts (at most this many characters
 * of it in all; an analysis takes a few times its text in memory): an owner's save changes its
 * catalogVersion, and the next search then analyzes only the capability that changed, not all of
 * the owner's (up to 100 of 50 triggers each).
 */
export const MAX_CACHED_USER_ANALYSIS_CHARS = 8 * 1024 * 1024;
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

/** The find_capabilities answer as sent: its structured value and the same value as JSON text. */
export interface FindAnswer {
  readonly structured: Readonly<Record<string, unknown>>;
  /** `JSON.stringify(structured)`, byte for byte. */
  readonly text: string;
}

// An entry's JSON, once per entry object: platform entries are shared by every caller of a class and
// appear in many answers. Without its closing brace, so score and matched can follow.
const entryJsonCache = new WeakMap<CatalogEntry, string>();

function entryJsonOpen(entry: CatalogEntry): string {
  let json = entryJsonCache.get(entry);
  if (json === undefined) {
    json = JSON.stringify(entry).slice(0, -1);
    entryJsonCache.set(entry, json);
  }
  return json;
}

interface ScopeView {
  index: CapabilityIndex;
  entries: ReadonlyMap<string, CatalogEntry>;
}

/** What prepare() did: analyses taken over from the previous catalog, and capabilities it analyzed itself. */
export interface PrepareResult {
  kept: number;
  analyzed: number;
}

const yieldToRequests = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class CatalogSearch {
  readonly #capabilities = new Map<string, ManifestCapability>();
  readonly #toolsets: Manifest['toolsets'];
  readonly #analyzed = new Map<string, AnalyzedCapability>();
  /** Every capability of the manifest, indexed once; views choose what counts. */
  #segment: Segment | undefined;
  readonly #views = new LRUCache<string, ScopeView>({ max: MAX_CACHED_VIEWS });
  /** Views being made by prepareView, by catalogVersion. */
  readonly #building = new Map<string, Promise<void>>();
  /** Each view's term scores, under its catalogVersion (DEFAULT_TERM_SCORES document scores in all). */
  readonly #termScores = new TermScoreCache();
  /**
   * The hits of answers, by visible set and request: an answer is a function of those two alone,
   * and agents repeat requests. Only the hits are kept (their entries are the view's, shared), so a
   * stream of new requests does not fill the heap with answers that will not be asked again.
   */
  readonly #answers = new LRUCache<string, readonly SearchHit[]>({ max: MAX_CACHED_ANSWERS });
  readonly #userAnalyzed = new LRUCache<string, AnalyzedCapability>({
    maxSize: MAX_CACHED_USER_ANALYSIS_CHARS,
    sizeCalculation: (_, facts) => Math.max(1, facts.length),
  });

  constructor(manifest: Manifest) {
    for (const capability of manifest.capabilities) this.#capabilities.set(capability.id, capability);
    this.#toolsets = manifest.toolsets;
  }

  /**
   * Analyze and index every capability off the request path, right after a manifest is activated:
   * analysis (taken over from `previous`, the catalog this one replaces, for every capability that
   * did not change), then the segment, in slices of at most PREPARE_SLICE_MS, yielding to pending
   * I/O between them, so requests wait at most about one slice. A search that comes first simply
   * does what is missing itself (the same analysis, the same segment).
   */
  async prepare(previous?: CatalogSearch): Promise<PrepareResult> {
    const kept = previous === undefined ? 0 : this.#adopt(previous);
    const pending = [...this.#capabilities.values()];
    let analyzed = 0;
    let next = 0;
    while (next < pending.length) {
      const until = performance.now() + PREPARE_SLICE_MS;
      while (next < pending.length && performance.now() < until) {
        const capability = pending[next++] as ManifestCapability;
        if (!this.#analyzed.has(capability.id)) {
          this.#analyzedPlatform(capability.id);
          analyzed += 1;
        }
      }
      await yieldToRequests();
    }
    if (this.#segment !== undefined) return { kept, analyzed };
    const steps = Segment.build(this.#platformCapabilities());
    for (;;) {
      const until = performance.now() + PREPARE_SLICE_MS;
      let step = steps.next();
      while (step.done !== true && performance.now() < until) step = steps.next();
      if (step.done === true) {
        // A search that came first built it already; both are the same segment.
        this.#segment ??= step.value;
        return { kept, analyzed };
      }
      await yieldToRequests();
    }
  }

  /**
   * Take over the analysis of every capability the previous manifest had with the same digest (its
   * catalog facts and protocol), when the toolsets (whose tool descriptions are indexed) are the
   * same: a reload that changes a few capabilities analyzes only those.
   */
  #adopt(previous: CatalogSearch): number {
    if (previous === this || JSON.stringify(previous.#toolsets) !== JSON.stringify(this.#toolsets)) return 0;
    let kept = 0;
    for (const [id, capability] of this.#capabilities) {
      const analyzed = previous.#analyzed.get(id);
      if (analyzed !== undefined && previous.#capabilities.get(id)?.digest === capability.digest && !this.#analyzed.has(id)) {
        this.#analyzed.set(id, analyzed);
        kept += 1;
      }
    }
    return kept;
  }

  /** The capabilities `scope` sees that fit `request`, best first, with their entries (not cached: see answer()). */
  search(scope: SearchScope, request: SearchRequest): readonly FoundCapability[] {
    const { index, entries } = this.#view(scope);
    return index.search(request).map((hit) => ({ ...hit, entry: entries.get(hit.id) as CatalogEntry }));
  }

  /**
   * The whole answer for `scope` and `request`: `{success, catalogVersion, capabilities, warning?}`
   * with each capability its listing entry plus `score` and `matched`. The text is spliced from each
   * entry's JSON, made once per entry, instead of serializing the entries on every call.
   */
  answer(scope: SearchScope, request: SearchRequest, warning?: string): FindAnswer {
    const view = this.#view(scope);
    const key = JSON.stringify([scope.catalogVersion, request.query, request.lifecyclePhase, request.tags, request.limit]);
    let hits = this.#answers.get(key);
    if (hits === undefined) {
      hits = Object.freeze(view.index.search(request));
      this.#answers.set(key, hits);
    }
    // Each hit as its listing entry plus score and matched: an object for the structured value, and
    // the same in JSON for the text.
    const capabilities: Record<string, unknown>[] = [];
    const listed: string[] = [];
    for (const { id, score, matched } of hits) {
      const entry = view.entries.get(id) as CatalogEntry;
      capabilities.push({ ...entry, score, matched: [...matched] });
      listed.push(`${entryJsonOpen(entry)},"score":${JSON.stringify(score)},"matched":${JSON.stringify(matched)}}`);
    }
    const structured = {
      success: true,
      catalogVersion: scope.catalogVersion,
      capabilities,
      ...(warning !== undefined ? { warning } : {}),
    };
    const text =
      `{"success":true,"catalogVersion":${JSON.stringify(scope.catalogVersion)},"capabilities":[${listed.join(',')}]` +
      `${warning !== undefined ? `,"warning":${JSON.stringify(warning)}` : ''}}`;
    return { structured, text };
  }

  /**
   * Make the view of `scope` ahead of answer(), in slices of at most PREPARE_SLICE_MS with other
   * requests run between them: the segment of an owner's user capabilities is built on their first
   * search after each save, and it may hold up to 100 capabilities of 50 triggers each. One build per
   * visible set at a time (concurrent searches of the same set wait for it).
   */
  async prepareView(scope: SearchScope): Promise<void> {
    if (scope.user.length === 0 || this.#views.has(scope.catalogVersion)) return;
    let building = this.#building.get(scope.catalogVersion);
    if (building === undefined) {
      building = this.#buildView(scope).finally(() => this.#building.delete(scope.catalogVersion));
      this.#building.set(scope.catalogVersion, building);
    }
    await building;
  }

  async #buildView(scope: SearchScope): Promise<void> {
    let until = performance.now() + PREPARE_SLICE_MS;
    const analyzed: AnalyzedCapability[] = [];
    for (const entry of scope.user) {
      analyzed.push(this.#analyzedUser(entry));
      if (performance.now() < until) continue;
      await yieldToRequests();
      until = performance.now() + PREPARE_SLICE_MS;
    }
    const steps = Segment.build(analyzed);
    let step = steps.next();
    while (step.done !== true) {
      if (performance.now() >= until) {
        await yieldToRequests();
        until = performance.now() + PREPARE_SLICE_MS;
      }
      step = steps.next();
    }
    this.#views.set(scope.catalogVersion, this.#viewOf(scope, step.value));
  }

  /** The view of one visible set, made on its first search (when prepareView did not) and kept while it is used. */
  #view(scope: SearchScope): ScopeView {
    const cached = this.#views.get(scope.catalogVersion);
    if (cached !== undefined) return cached;
    const built = this.#viewOf(scope, scope.user.length > 0 ? Segment.of(scope.user.map((entry) => this.#analyzedUser(entry))) : undefined);
    this.#views.set(scope.catalogVersion, built);
    return built;
  }

  /** A view over the platform's segment and, when the caller has user capabilities, their own segment (all of it visible). */
  #viewOf(scope: SearchScope, user: Segment | undefined): ScopeView {
    const entries = new Map<string, CatalogEntry>();
    for (const entry of scope.platform.capabilities) entries.set(entry.id, entry);
    for (const entry of scope.user) entries.set(entry.id, entry);
    const parts: ViewPart[] = [{ segment: this.#platformSegment(), visible: scope.platform.capabilities.map((entry) => entry.id) }];
    if (user !== undefined) parts.push({ segment: user });
    return { index: CapabilityIndex.view(parts, { cache: this.#termScores, key: scope.catalogVersion }), entries };
  }

  /** A user capability's catalog facts, analyzed (only they are indexed: its protocol is not). */
  #analyzedUser(entry: CatalogEntry): AnalyzedCapability {
    const facts = JSON.stringify(entry);
    let analyzed = this.#userAnalyzed.get(facts);
    if (analyzed === undefined) {
      analyzed = analyzeCapability({ ...entry, protocolText: '' });
      this.#userAnalyzed.set(facts, analyzed);
    }
    return analyzed;
  }

  #platformSegment(): Segment {
    this.#segment ??= Segment.of(this.#platformCapabilities());
    return this.#segment;
  }

  #platformCapabilities(): AnalyzedCapability[] {
    return [...this.#capabilities.keys()].map((id) => this.#analyzedPlatform(id));
  }

  #analyzedPlatform(id: string): AnalyzedCapability {
    let analyzed = this.#analyzed.get(id);
    if (analyzed === undefined) {
      const capability = this.#capabilities.get(id) as ManifestCapability;
      // As the catalog, which never serves a capability without a protocol: nothing of it to index.
      const protocolText =
        typeof capability.protocol === 'string' ? protocolSearchText(capability.protocol, (tool) => this.#toolDescription(capability, tool)) : '';
      analyzed = analyzeCapability({ ...catalogEntry(capability, PROTOCOL_TOOL), protocolText });
      this.#analyzed.set(id, analyzed);
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

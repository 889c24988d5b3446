// The catalog a caller sees (SPEC §6, §7): which capabilities are visible to which grants, each
// caller's `catalogVersion`, and the single lookup that answers both "not found" and "not
// accessible". Built once per manifest load; no MCP SDK code here.
import { LRUCache } from 'lru-cache';
import { digestOf } from '../compiler/canonical.js';
import { PROTOCOL_TOOL, catalogEntry, type CatalogEntry, type ToolNames } from '../compiler/contract.js';
import type { Manifest, ManifestCapability } from '../compiler/types.js';
import { CatalogSearch } from './catalog-search.js';
import { catalogBudget } from './compact-listing.js';
import { ListingAnswers } from './listing-answers.js';
import { canUse, type Grants } from './permissions.js';

/** A capability as the server serves it: the protocol text ready to send, the entry ready to list. */
export interface ServedCapability {
  id: string;
  requiredToolsets: readonly string[];
  protocolVersion: string;
  protocolUpdated: string;
  digest: string;
  protocol: string;
  entry: CatalogEntry;
}

/** What one class of callers sees. Shared between callers of the class; treat as read-only. */
export interface CatalogListing {
  catalogVersion: string;
  capabilities: readonly CatalogEntry[];
}

// JWT scopes are caller-chosen, so the number of distinct classes is bounded only by this cap.
const MAX_CACHED_CLASSES = 256;

export class Catalog {
  readonly revision: string;
  /** The verified manifest behind this catalog (user capabilities are compiled against it). */
  readonly manifest: Manifest;
  readonly #byId = new Map<string, ServedCapability>();
  readonly #ordered: readonly ServedCapability[];
  /** Every toolset some capability requires: the only toolsets that decide visibility. */
  readonly #decidingToolsets: ReadonlySet<string>;
  readonly #listings = new LRUCache<string, CatalogListing>({ max: MAX_CACHED_CLASSES });
  /** The `list_capabilities` answers for this catalog's listings. */
  readonly answers: ListingAnswers;
  /** `find_capabilities` over this catalog's visible sets (server/catalog-search.ts). */
  readonly search: CatalogSearch;

  constructor(manifest: Manifest, names: ToolNames) {
    this.revision = manifest.revision;
    this.manifest = manifest;
    this.search = new CatalogSearch(manifest);
    this.answers = new ListingAnswers({ disclosure: { budget: catalogBudget(manifest), findTool: names.findCapabilities } });
    const rewrite = protocolRewriter(names);
    const ordered: ServedCapability[] = [];
    const deciding = new Set<string>();
    for (const capability of manifest.capabilities) {
      // A capability without a protocol is never served, not even as a catalog entry.
      if (typeof capability.protocol !== 'string' || capability.protocol.trim() === '') continue;
      const served = serve(capability, names, rewrite);
      this.#byId.set(served.id, served);
      ordered.push(served);
      for (const toolset of served.requiredToolsets) deciding.add(toolset);
    }
    this.#ordered = ordered;
    this.#decidingToolsets = deciding;
  }

  /** Caller-class listings and owners' answers held in memory for this catalog (a metric). */
  get cachedProjections(): number {
    return this.#listings.size + this.answers.cachedOwners;
  }

  /** Number of capabilities served (all callers together). */
  get size(): number {
    return this.#ordered.length;
  }

  /**
   * The capabilities these grants may use. Callers that can read the same deciding toolsets see
   * the same listing, so the listing is computed once per class per manifest load and then looked up.
   */
  visibleCapabilities(grants: Grants): CatalogListing {
    const key = this.#classKey(grants);
    const cached = this.#listings.get(key);
    if (cached) return cached;
    const visible = this.#ordered.filter((capability) => canUse(grants, capability.requiredToolsets));
    const listing: CatalogListing = Object.freeze({
      catalogVersion: digestOf({
        capabilities: visible.map((capability) => capability.entry),
        digests: visible.map((capability) => capability.digest),
      }),
      capabilities: Object.freeze(visible.map((capability) => capability.entry)),
    });
    this.#listings.set(key, listing);
    return listing;
  }

  /**
   * The capability with this id if these grants may use it, else undefined. Unknown ids, ids the
   * caller may not use and ids that are not even strings all take this one path, so callers can
   * answer them with the same bytes.
   */
  accessibleCapability(grants: Grants, capabilityId: unknown): ServedCapability | undefined {
    if (typeof capabilityId !== 'string') return undefined;
    const capability = this.#byId.get(capabilityId);
    if (capability === undefined || !canUse(grants, capability.requiredToolsets)) return undefined;
    return capability;
  }

  #classKey(grants: Grants): string {
    return grants
      .readableToolsets()
      .filter((toolset) => this.#decidingToolsets.has(toolset))
      .sort()
      .join('\n');
  }
}

function serve(capability: ManifestCapability, names: ToolNames, rewrite: (protocol: string) => string): ServedCapability {
  const entry = catalogEntry(capability, names.getCapabilityProtocol);
  return Object.freeze({
    id: capability.id,
    requiredToolsets: Object.freeze([...capability.requiredToolsets]),
    protocolVersion: capability.protocolVersion,
    protocolUpdated: capability.protocolUpdated,
    digest: capability.digest,
    protocol: rewrite(capability.protocol),
    entry,
  });
}

/**
 * The compiler renders a `capability:` link as an instruction naming the unprefixed protocol tool
 * (``call `get_capability_protocol` with …``). With a tool prefix the agent must see the real name,
 * so the instruction is rewritten here, once per manifest load.
 */
export function protocolRewriter(names: ToolNames): (protocol: string) => string {
  if (names.getCapabilityProtocol === PROTOCOL_TOOL) return (protocol) => protocol;
  const from = `call \`${PROTOCOL_TOOL}\` with`;
  const to = `call \`${names.getCapabilityProtocol}\` with`;
  return (protocol) => protocol.replaceAll(from, to);
}

// The `list_capabilities` answer as sent: its structured value and the same value as JSON text.
// A catalog can hold thousands of entries, so the text is built once per caller class (and once per
// owner's listing) and reused; an owner's text splices the shared platform entries in instead of
// serializing them again. No MCP SDK code here: the tool only wraps an answer in a tool result.
import { LRUCache } from 'lru-cache';
import type { CatalogEntry } from '../compiler/contract.js';
import type { CatalogListing } from './catalog.js';
import { compactListing, withinBudget } from './compact-listing.js';
import type { CallerListing } from './user-capabilities.js';

export interface ListingAnswer {
  readonly structured: Readonly<Record<string, unknown>>;
  /** `JSON.stringify(structured)`, byte for byte. */
  readonly text: string;
}

/** Bounds of the owner-answer cache, in characters of answer text. */
export interface ListingAnswersOptions {
  /** All cached owner answers together (default 32 M characters). */
  maxChars?: number;
  /** One answer larger than this is built for its call and not kept (default a quarter of maxChars). */
  maxAnswerChars?: number;
  /**
   * Progressive disclosure (server/compact-listing.ts): a listing over `budget` tokens is answered
   * in its compact form, pointing at `findTool`. Absent: every listing is answered in full.
   */
  disclosure?: { budget: number; findTool: string };
}

export const DEFAULT_OWNER_ANSWERS_MAX_CHARS = 32 * 1024 * 1024;

interface PlatformAnswer extends ListingAnswer {
  /** The entries of `text` without the surrounding brackets, as a slice of it (no copy). */
  readonly entries: () => string;
}

/** Answers for the listings of one catalog; owned by the catalog, so they go with its manifest. */
export class ListingAnswers {
  // A listing object is shared by its caller class and lives as long as the catalog keeps it in its
  // class cache, so its answer lives exactly as long (bounded by that cache).
  readonly #platform = new WeakMap<CatalogListing, PlatformAnswer>();
  // Keyed by the owner listing's catalogVersion: a digest of the platform listing, the protocol
  // tool's name and each user entry's id and revision (an entry is a function of those), so a key
  // always names the same bytes and nothing here can go stale across replicas or saves.
  readonly #owners: LRUCache<string, ListingAnswer>;
  readonly #disclosure: ListingAnswersOptions['disclosure'];
  /** What a class is answered: its full answer, or the compact one when that is over budget. */
  readonly #served = new WeakMap<CatalogListing, ListingAnswer>();

  /** Owners' answers held now (a metric). */
  get cachedOwners(): number {
    return this.#owners.size;
  }

  constructor(options: ListingAnswersOptions = {}) {
    this.#disclosure = options.disclosure;
    const maxSize = options.maxChars ?? DEFAULT_OWNER_ANSWERS_MAX_CHARS;
    this.#owners = new LRUCache<string, ListingAnswer>({
      maxSize,
      maxEntrySize: options.maxAnswerChars ?? Math.floor(maxSize / 4),
      // An empty text still takes an entry's overhead; lru-cache refuses a size of 0.
      sizeCalculation: (answer) => Math.max(1, answer.text.length),
    });
  }

  /** The answer every caller of this class gets. */
  platform(listing: CatalogListing): ListingAnswer {
    const full = this.#platformAnswer(listing);
    if (this.#disclosure === undefined) return full;
    let served = this.#served.get(listing);
    if (served === undefined) {
      served = this.#disclosed(full, `[${full.entries()}]`, listing.catalogVersion, listing.capabilities);
      this.#served.set(listing, served);
    }
    return served;
  }

  /** `full`, or the compact answer when its entries (`entriesJson`) are over the budget. */
  #disclosed(full: ListingAnswer, entriesJson: string, catalogVersion: string, entries: readonly CatalogEntry[], warning?: string): ListingAnswer {
    const disclosure = this.#disclosure;
    if (disclosure === undefined || withinBudget(entriesJson, disclosure.budget)) return full;
    return compactListing({ catalogVersion, entries, warning, ...disclosure });
  }

  #platformAnswer(listing: CatalogListing): PlatformAnswer {
    let answer = this.#platform.get(listing);
    if (answer === undefined) {
      answer = platformAnswer(listing);
      this.#platform.set(listing, answer);
    }
    return answer;
  }

  /**
   * The answer for a caller who may have user-defined capabilities (SPEC §8). The store is asked on
   * every call (that gives the listing); this only spares rebuilding a text as large as the catalog.
   */
  caller(listing: CallerListing): ListingAnswer {
    if (listing.user.length === 0 && listing.unavailable === undefined) return this.platform(listing.platform);
    // An outage answer is rare and carries a warning; it is built, not cached.
    if (listing.unavailable !== undefined) return this.#ownerAnswer(listing);
    const cached = this.#owners.get(listing.catalogVersion);
    if (cached !== undefined) return cached;
    const answer = this.#ownerAnswer(listing);
    this.#owners.set(listing.catalogVersion, answer);
    return answer;
  }

  /** What the owner-answer cache holds now: answers, and their text in characters. */
  get ownerCacheUsage(): { entries: number; chars: number } {
    return { entries: this.#owners.size, chars: this.#owners.calculatedSize };
  }

  #ownerAnswer(listing: CallerListing): ListingAnswer {
    const { platform, user, unavailable } = listing;
    const structured: Record<string, unknown> = {
      success: true,
      catalogVersion: listing.catalogVersion,
      capabilities: Object.freeze([...platform.capabilities, ...user]),
      ...(unavailable !== undefined ? { warning: unavailable } : {}),
    };
    const shared = this.#platformAnswer(platform).entries();
    const own = JSON.stringify(user).slice(1, -1);
    const separator = shared !== '' && own !== '' ? ',' : '';
    const text =
      `${answerHead(listing.catalogVersion)}${shared}${separator}${own}]` + `${unavailable !== undefined ? `,"warning":${JSON.stringify(unavailable)}` : ''}}`;
    // In the compact form the owner's own capabilities come first: they are few and theirs.
    return this.#disclosed({ structured, text }, `[${shared}${separator}${own}]`, listing.catalogVersion, [...user, ...platform.capabilities], unavailable);
  }
}

/** The text up to the opening bracket of `capabilities`, as JSON.stringify writes it. */
function answerHead(catalogVersion: string): string {
  return `{"success":true,"catalogVersion":${JSON.stringify(catalogVersion)},"capabilities":[`;
}

function platformAnswer(listing: CatalogListing): PlatformAnswer {
  const structured = { success: true, catalogVersion: listing.catalogVersion, capabilities: listing.capabilities };
  const text = JSON.stringify(structured);
  const start = answerHead(listing.catalogVersion).length;
  return { structured, text, entries: () => text.slice(start, -2) };
}

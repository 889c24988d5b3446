// Progressive disclosure of the catalog (SPEC §9): a caller whose full `list_capabilities` listing
// would cost more than the catalog budget (the `token-budget` rule's `catalog` option, carried in
// the manifest) gets a compact answer that fits it: entries without their triggers, as many as fit,
// then an overview of everything visible grouped by lifecyclePhase and by tag with counts, with
// `complete: false` and a pointer to `find_capabilities`. Tokens are counted with the lint's
// counter (compiler/tokens.ts). Pure; no MCP SDK code.
import type { CatalogEntry } from '../compiler/contract.js';
import { tokenBudget } from '../compiler/rules/token-budget.js';
import { countTokens } from '../compiler/tokens.js';
import type { Manifest } from '../compiler/types.js';
import { byCodeUnits } from '../compiler/order.js';

/**
 * A listing this many times the budget in UTF-8 bytes is over it without counting: JSON of catalog
 * prose averages about four bytes a token, and counting a 10,000-entry listing would take seconds.
 * Below it the count is exact.
 */
const BYTES_PER_TOKEN_CEILING = 16;

/** The catalog budget in tokens: the manifest's resolved `token-budget` setting, or the rule's default. */
export function catalogBudget(manifest: Manifest): number {
  const setting = manifest.rules?.[tokenBudget.meta.id];
  const options = setting?.options as { catalog?: unknown } | undefined;
  return typeof options?.catalog === 'number' ? options.catalog : tokenBudget.meta.defaultOptions.catalog;
}

/** Whether the `capabilities` array, as JSON, is within `budget` tokens (as token-budget prices it). */
export function withinBudget(capabilitiesJson: string, budget: number): boolean {
  const bytes = Buffer.byteLength(capabilitiesJson);
  // A BPE token is at least one byte.
  if (bytes <= budget) return true;
  if (bytes > budget * BYTES_PER_TOKEN_CEILING) return false;
  return countTokens(capabilitiesJson) <= budget;
}

export interface CompactListingInput {
  catalogVersion: string;
  /** Everything the caller sees, in the order to show it. */
  entries: readonly CatalogEntry[];
  findTool: string;
  budget: number;
  warning?: string | undefined;
}

export interface CompactListing {
  structured: Record<string, unknown>;
  text: string;
}

/** Phase of capabilities that set none, in the overview. */
export const NO_PHASE = '(none)';

export function compactListing(input: CompactListingInput): CompactListing {
  const { entries, budget } = input;
  const phases = new Map<string, number>();
  const tags = new Map<string, number>();
  for (const entry of entries) {
    const phase = entry.lifecyclePhase ?? NO_PHASE;
    phases.set(phase, (phases.get(phase) ?? 0) + 1);
    for (const tag of entry.tags ?? []) tags.set(tag, (tags.get(tag) ?? 0) + 1);
  }
  const byCount = (a: [string, number], b: [string, number]): number => b[1] - a[1] || byCodeUnits(a[0], b[0]);
  const allTags = [...tags].sort(byCount);
  const compact = entries.map(withoutTriggers);

  const build = (shown: number, tagCount: number): CompactListing => {
    const structured: Record<string, unknown> = {
      success: true,
      catalogVersion: input.catalogVersion,
      complete: false,
      note:
        `You may use ${entries.length} capabilities, too many to list in full: ${shown} are shown without their whenToUse triggers. ` +
        `Call ${input.findTool} with a query (the request in your own words), a lifecyclePhase or tags from the overview to find the one that fits.`,
      findTool: input.findTool,
      total: entries.length,
      capabilities: compact.slice(0, shown),
      overview: {
        lifecyclePhase: Object.fromEntries([...phases].sort(byCount)),
        tags: Object.fromEntries(allTags.slice(0, tagCount)),
        ...(tagCount < allTags.length ? { moreTags: allTags.length - tagCount } : {}),
      },
      ...(input.warning !== undefined ? { warning: input.warning } : {}),
    };
    return { structured, text: JSON.stringify(structured) };
  };
  const fits = (listing: CompactListing): boolean => countTokens(listing.text) <= budget;

  // The overview takes at most half the budget (the most used tags first); entries fill the rest.
  let tagCount = allTags.length;
  while (tagCount > 0 && countTokens(build(0, tagCount).text) > budget / 2) tagCount = Math.floor(tagCount / 2);
  let spent = countTokens(build(0, tagCount).text);
  let shown = 0;
  while (shown < compact.length) {
    const cost = countTokens(JSON.stringify(compact[shown])) + 1;
    if (spent + cost > budget) break;
    spent += cost;
    shown += 1;
  }
  // Token counts of parts are not exactly additive: check the whole and give back entries if needed.
  let answer = build(shown, tagCount);
  while (!fits(answer) && shown > 0) {
    shown = Math.max(0, shown - Math.max(1, Math.ceil(shown / 10)));
    answer = build(shown, tagCount);
  }
  return answer;
}

function withoutTriggers(entry: CatalogEntry): Omit<CatalogEntry, 'whenToUse'> {
  const { whenToUse: _triggers, ...rest } = entry;
  return rest;
}

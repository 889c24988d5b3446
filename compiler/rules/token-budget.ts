// token-budget: every token of a protocol body is paid for on every load, and every token of the
// catalog on every `list_capabilities` call. Counted with a real BPE tokenizer (gpt-tokenizer, the
// same count as `document.bodyTokens`).
//
// - A body (with the sections rendered from its frontmatter, as served: compiler/render.ts) over
//   `bodyWarn` tokens is reported at the rule's level (a warning by default); a body
//   over `bodyError` is always an error (Report `severity: 'error'`), whatever the level, unless the
//   rule is off: raise `bodyError` to relax that limit.
// - The whole catalog (the `capabilities` array of `list_capabilities` as JSON, for a caller who
//   sees every capability) over `catalog` tokens is reported once, on the capability with the
//   largest entry, at the bigger of its `description` and `whenToUse`.
import type { Derived } from '../derived.js';
import { countTokens, isCountedSpace, MAX_COUNTED_WORD } from '../tokens.js';
import { PROTOCOL_TOOL, catalogEntry, type CatalogEntry } from '../contract.js';
import { bodyText } from '../mentions.js';
import { renderMetadata } from '../render.js';
import { ruleDocsUrl, type LintCapability, type Rule } from '../rule.js';
import type { Range } from '../types.js';
import { rangeForPath } from '../yaml-source.js';

export interface TokenBudgetOptions {
  /** Tokens a protocol body may have before a warning. */
  bodyWarn: number;
  /** Tokens a protocol body may have before an error. */
  bodyError: number;
  /** Tokens all catalog entries together may have. */
  catalog: number;
}

export const tokenBudget: Rule<TokenBudgetOptions> = {
  meta: {
    id: 'token-budget',
    description: 'Protocol bodies and the whole catalog stay within their token budgets.',
    defaultLevel: 'warn',
    reads: 'catalog',
    docs: { url: ruleDocsUrl('token-budget') },
    optionsSchema: {
      type: 'object',
      properties: {
        bodyWarn: { type: 'integer', minimum: 1, maximum: { $data: '1/bodyError' } },
        bodyError: { type: 'integer', minimum: 1 },
        catalog: { type: 'integer', minimum: 1 },
      },
    },
    defaultOptions: { bodyWarn: 2000, bodyError: 5000, catalog: 8000 },
    messages: {
      bodyWarn:
        '{{what}} is {{tokens}} tokens, over the budget of {{budget}} (`bodyWarn`); every load pays for it: cut what a capable model would do anyway, or split the capability along a seam and link the parts with `capability:` links',
      bodyError:
        '{{what}} is {{tokens}} tokens, over the limit of {{budget}} (`bodyError`); split the capability along a seam and link the parts with `capability:` links',
      catalog:
        'the catalog ({{entries}} of `list_capabilities`) is {{tokens}} tokens, over the budget of {{budget}} (`catalog`); every listing pays for it. The largest entry is this one ({{entryTokens}} tokens): keep `description` to one or two sentences and `whenToUse` to the phrases users really say',
    },
  },
  check({ registry, options, report }) {
    const counted = registry.capabilities.map((capability) => countedCapability(registry.derived, capability));
    registry.capabilities.forEach((capability, index) => {
      const { bodyTokens, rendered } = counted[index] as CountedCapability;
      const what = rendered ? 'protocol body with its rendered constraints, evidence, scope and schemas' : 'protocol body';
      if (bodyTokens > options.bodyError) {
        const data = { what, tokens: bodyTokens, budget: options.bodyError };
        report({ capability, range: bodyRange(capability), messageId: 'bodyError', data, severity: 'error' });
      } else if (bodyTokens > options.bodyWarn) {
        const data = { what, tokens: bodyTokens, budget: options.bodyWarn };
        report({ capability, range: bodyRange(capability), messageId: 'bodyWarn', data });
      }
    });

    if (registry.capabilities.length === 0) return;
    const tokens = catalogTokens(counted);
    if (tokens <= options.catalog) return;
    let largest = 0;
    let largestTokens = -1;
    registry.capabilities.forEach((capability, index) => {
      const { json } = counted[index] as CountedCapability;
      const entryTokens = registry.derived.of(capability.document, 'token-budget:entry', undefined, () => countTokens(json));
      if (entryTokens > largestTokens) {
        largest = index;
        largestTokens = entryTokens;
      }
    });
    const capability = registry.capabilities[largest] as LintCapability;
    const { entry } = counted[largest] as CountedCapability;
    const field = countTokens(JSON.stringify(entry.whenToUse)) > countTokens(JSON.stringify(entry.description)) ? 'whenToUse' : 'description';
    const { ranges, range } = capability.document.frontmatter;
    const entries = counted.length;
    report({
      capability,
      range: rangeForPath(ranges, `/${field}`, range, 'key'),
      messageId: 'catalog',
      data: { entries: `${entries} ${entries === 1 ? 'entry' : 'entries'}`, tokens, budget: options.catalog, entryTokens: largestTokens },
    });
  },
};

/** One catalog entry as JSON, with what it adds to the catalog's token count. */
export interface CatalogPiece {
  /** `JSON.stringify(entry)`: it begins `{"id":`. */
  json: string;
  /** Tokens of this entry's piece of the catalog's JSON when another entry follows it (see {@link catalogTokens}). */
  pieceTokens: number;
  /** Characters of non-whitespace at the start and at the end of `json` (all of it when it has no whitespace). */
  lead: number;
  trail: number;
  /** Whether `json` has whitespace, and begins `{"id"` as every entry does (else the catalog is counted whole). */
  spaced: boolean;
  cut: boolean;
}

/** What the rule counts of one capability: a fact of its document (the frontmatter and the body). */
interface CountedCapability extends CatalogPiece {
  /** Tokens of the body as served, with the sections rendered from the frontmatter. */
  bodyTokens: number;
  /** Whether the frontmatter rendered any section. */
  rendered: boolean;
  entry: CatalogEntry;
}

function countedCapability(derived: Derived, capability: LintCapability): CountedCapability {
  return derived.of(capability.document, 'token-budget', undefined, () => {
    const metadata = renderMetadata(capability.document.frontmatter.data);
    const bodyTokens = capability.document.bodyTokens + (metadata === '' ? 0 : countTokens(`\n\n${metadata}`));
    const entry = listedEntry(capability);
    return { bodyTokens, rendered: metadata !== '', entry, ...catalogPiece(JSON.stringify(entry)) };
  });
}

/** Every catalog entry's JSON begins with this (`id` is its first key); a piece of the catalog starts after it. */
const ENTRY_START = '{"';
const ENTRY_SEPARATOR = `,${ENTRY_START}`;

/** What {@link catalogTokens} needs of one entry's JSON. */
export function catalogPiece(json: string): CatalogPiece {
  let lead = 0;
  while (lead < json.length && !isCountedSpace(json.charCodeAt(lead))) lead += 1;
  let trail = 0;
  while (trail < json.length && !isCountedSpace(json.charCodeAt(json.length - 1 - trail))) trail += 1;
  const pieceTokens = countTokens(`${json.slice(ENTRY_START.length)}${ENTRY_SEPARATOR}`);
  return { json, pieceTokens, lead, trail, spaced: lead < json.length, cut: json.startsWith(`${ENTRY_START}id"`) };
}

/**
 * Tokens of the catalog as JSON, `[entry,entry,…]`, the same count as `countTokens` of that text,
 * added up from a piece per entry so that an edit recounts only its own entry. The text is cut
 * before each entry's first key `id`: `[{"` | `id…},{"` | `id…},{"` | … | `id…}]`. The tokenizer
 * pre-splits text into chunks and merges bytes only inside a chunk, and a chunk always ends there:
 * the punctuation before `id` is at least `[{"` or `},{"`, which a chunk takes whole (one
 * punctuation character before a word would go with the word; several never do). countTokens also
 * counts a run of non-whitespace longer than MAX_COUNTED_WORD in pieces measured from the run's
 * start; when such a run spans a cut, the pieces would not add up, and the whole text is counted.
 */
export function catalogTokens(counted: readonly CatalogPiece[]): number {
  let run = 1; // the length of the run of non-whitespace so far, from `[` on
  let longest = 0;
  let tokens = countTokens(`[${ENTRY_START}`);
  let cut = true;
  counted.forEach((piece, index) => {
    if (!piece.cut) cut = false;
    if (!piece.spaced) {
      run += piece.lead + 1; // all of it, and the `,` or `]` after it
    } else {
      longest = Math.max(longest, run + piece.lead);
      run = piece.trail + 1;
    }
    tokens += index === counted.length - 1 ? countTokens(`${piece.json.slice(ENTRY_START.length)}]`) : piece.pieceTokens;
  });
  if (!cut || Math.max(longest, run) > MAX_COUNTED_WORD) return countTokens(`[${counted.map(({ json }) => json).join(',')}]`);
  return tokens;
}

/** The `list_capabilities` row the server will serve, from whatever frontmatter is well-typed. */
function listedEntry({ id, fm }: LintCapability): CatalogEntry {
  const facts = {
    id,
    name: fm.name ?? '',
    description: fm.description ?? '',
    whenToUse: fm.whenToUse ?? [],
    protocolVersion: fm.protocol_version ?? '',
    lifecyclePhase: fm.lifecyclePhase,
    tags: fm.tags,
  };
  return catalogEntry(facts, PROTOCOL_TOOL);
}

/** From the first non-blank character of the body to its end. */
function bodyRange(capability: LintCapability): Range {
  const { body } = capability.document;
  const start = body.search(/\S/);
  return bodyText(capability.document).range(start < 0 ? 0 : start, body.length);
}

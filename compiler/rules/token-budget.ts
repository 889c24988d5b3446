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
import { countTokens } from '../tokens.js';
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
    for (const capability of registry.capabilities) {
      const metadata = renderMetadata(capability.document.frontmatter.data);
      const bodyTokens = capability.document.bodyTokens + (metadata === '' ? 0 : countTokens(`\n\n${metadata}`));
      const what = metadata === '' ? 'protocol body' : 'protocol body with its rendered constraints, evidence, scope and schemas';
      if (bodyTokens > options.bodyError) {
        const data = { what, tokens: bodyTokens, budget: options.bodyError };
        report({ capability, range: bodyRange(capability), messageId: 'bodyError', data, severity: 'error' });
      } else if (bodyTokens > options.bodyWarn) {
        const data = { what, tokens: bodyTokens, budget: options.bodyWarn };
        report({ capability, range: bodyRange(capability), messageId: 'bodyWarn', data });
      }
    }

    if (registry.capabilities.length === 0) return;
    const entries = registry.capabilities.map(listedEntry);
    const tokens = countTokens(JSON.stringify(entries));
    if (tokens <= options.catalog) return;
    let largest = 0;
    let largestTokens = -1;
    entries.forEach((entry, index) => {
      const entryTokens = countTokens(JSON.stringify(entry));
      if (entryTokens > largestTokens) {
        largest = index;
        largestTokens = entryTokens;
      }
    });
    const capability = registry.capabilities[largest] as LintCapability;
    const entry = entries[largest] as CatalogEntry;
    const field = countTokens(JSON.stringify(entry.whenToUse)) > countTokens(JSON.stringify(entry.description)) ? 'whenToUse' : 'description';
    const { ranges, range } = capability.document.frontmatter;
    report({
      capability,
      range: rangeForPath(ranges, `/${field}`, range, 'key'),
      messageId: 'catalog',
      data: { entries: `${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}`, tokens, budget: options.catalog, entryTokens: largestTokens },
    });
  },
};

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

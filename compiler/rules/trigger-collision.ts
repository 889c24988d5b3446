// trigger-collision: two capabilities whose triggers are near-identical make routing a coin toss.
// Near-identical means: the same set of search terms after the ranker's own analysis (NFKC, case,
// stop words, English stems, Chinese words and bigrams), so "write my weekly reports" and "Write
// the weekly report" collide. A trigger exactly equal to one of an earlier capability (after
// when-to-use's normalization) is when-to-use's warning, not this one: one cause, one diagnostic.
// Reported on the capability later in file order (in a user compile: the user's own document, which
// comes after the catalog), with `related` at the other trigger.
import { ruleDocsUrl, type LintCapability, type Rule } from '../rule.js';
import { analyze } from '../search/analyze.js';
import type { Derived } from '../derived.js';
import { FirstSeen, keyNumber } from '../first-seen.js';
import { KeyOwners } from '../key-owners.js';
import type { CapabilityDocument, Range } from '../types.js';
import { listedTriggers } from './when-to-use.js';

/** The search terms of a trigger as one key; '' when it has none (only stop words or punctuation). */
export function triggerTerms(trigger: string): string {
  return [...new Set(analyze(trigger))].sort().join(' ');
}

interface Seen {
  capability: LintCapability;
  trigger: string;
  range: Range;
}

export const triggerCollision: Rule = {
  meta: {
    id: 'trigger-collision',
    description: 'No two capabilities have triggers that search cannot tell apart.',
    defaultLevel: 'warn',
    reads: 'catalog',
    docs: { url: ruleDocsUrl('trigger-collision') },
    defaultOptions: {},
    messages: {
      collision:
        'trigger "{{trigger}}" is near-identical to "{{otherTrigger}}" of capability "{{other}}" ({{file}}): search sees the same words, so it cannot tell which one to load; make one of them more specific',
    },
  },
  check({ registry, report }) {
    const facts = registry.capabilities.map((capability) =>
      registry.derived.of(capability.document, 'trigger-collision', undefined, () => termsOf(registry.derived, capability.document)),
    );
    const collision = (capability: LintCapability, { trigger, range }: OwnTerms['own'][number], other: Seen): void =>
      report({
        capability,
        range,
        messageId: 'collision',
        data: { trigger: trigger.trim(), otherTrigger: other.trigger.trim(), other: other.capability.id, file: other.capability.document.file },
        related: { file: other.capability.document.file, range: other.range, message: 'near-identical trigger here' },
      });
    if (registry.derived.keeps) {
      // --watch: the capabilities of each term key and of each exact trigger are kept, and updated
      // for the documents that changed.
      const { byTerms, exact } = registry.derived.state('trigger-collision', () => ({
        byTerms: new KeyOwners<OwnTerms>((fact) => fact.terms),
        exact: new KeyOwners<OwnTerms>((fact) => fact.exacts),
      }));
      byTerms.update(facts);
      exact.update(facts);
      if (byTerms.shared.size === 0) return;
      const position = new Map(facts.map((fact, index) => [fact, index]));
      for (const key of byTerms.shared) {
        // A capability's own term keys are distinct: one holder per capability.
        const holders = byTerms.of(key).map(({ fact, index }) => ({ at: position.get(fact) as number, own: fact.own[index] as OwnTerms['own'][number] }));
        holders.sort((a, b) => a.at - b.at);
        const first = holders[0]!;
        const other: Seen = { capability: registry.capabilities[first.at] as LintCapability, trigger: first.own.trigger, range: first.own.range };
        for (const { at, own } of holders.slice(1)) {
          // The same trigger in an earlier capability is when-to-use's warning.
          if (exact.of(own.normalized).some(({ fact }) => (position.get(fact) as number) < at)) continue;
          collision(registry.capabilities[at] as LintCapability, own, other);
        }
      }
      return;
    }
    // By term key, the first trigger that had it; and every exact trigger of earlier capabilities.
    const byTerms = new FirstSeen(registry.capabilities.length * 4);
    const firsts: Seen[] = [];
    const exact = new FirstSeen(registry.capabilities.length * 4);
    registry.capabilities.forEach((capability, capabilityIndex) => {
      const { own, termsNumbers, normalizedNumbers, exacts, exactNumbers } = facts[capabilityIndex] as OwnTerms;
      // A capability's own term keys are distinct, so it only ever finds earlier capabilities here.
      own.forEach((each, index) => {
        const first = byTerms.firstOrAdd(termsNumbers[index] as number, each.terms);
        if (first < 0) {
          firsts.push({ capability, trigger: each.trigger, range: each.range });
          return;
        }
        if (exact.find(normalizedNumbers[index] as number, each.normalized) >= 0) return;
        collision(capability, each, firsts[first] as Seen);
      });
      // Added after the loop, so that a capability is never compared with itself.
      exacts.forEach((each, index) => exact.firstOrAdd(exactNumbers[index] as number, each));
    });
  },
};

/** A capability's triggers by search terms: a fact of its document. */
interface OwnTerms {
  /** The first trigger of each term key (none with no terms): within one capability near-identical triggers are only redundant, not ambiguous. */
  own: { terms: string; trigger: string; normalized: string; range: Range }[];
  /** The `terms` of each of `own`. */
  terms: string[];
  /** Every trigger, normalized as when-to-use compares them. */
  exacts: string[];
  /** keyNumber of each own `terms` and `normalized`, and of each of `exacts`. */
  termsNumbers: Int32Array;
  normalizedNumbers: Int32Array;
  exactNumbers: Int32Array;
}

function termsOf(derived: Derived, document: CapabilityDocument): OwnTerms {
  const own = new Map<string, OwnTerms['own'][number]>();
  const exacts: string[] = [];
  for (const { trigger, key: normalized, range } of listedTriggers(derived, document)) {
    exacts.push(normalized);
    const terms = triggerTerms(trigger);
    if (terms !== '' && !own.has(terms)) own.set(terms, { terms, trigger, normalized, range });
  }
  const distinct = [...own.values()];
  return {
    own: distinct,
    terms: distinct.map(({ terms }) => terms),
    exacts,
    termsNumbers: Int32Array.from(distinct, ({ terms }) => keyNumber(terms)),
    normalizedNumbers: Int32Array.from(distinct, ({ normalized }) => keyNumber(normalized)),
    exactNumbers: Int32Array.from(exacts, keyNumber),
  };
}

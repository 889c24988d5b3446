// when-to-use: the `whenToUse` triggers are what the agent routes on. An empty trigger matches
// nothing, a repeated one is noise, and the same trigger in two capabilities makes routing a coin
// toss. Triggers are compared after trimming, collapsing whitespace, Unicode NFKC (full-width and
// half-width forms agree) and lower-casing.
//
// Within one capability: an empty trigger or a repeat is an error, at the item. Across capabilities:
// the later capability (in file order) gets a warning, pointing at the first one; it is a warning
// even when the rule is set to error, because only the authors of both can decide who owns it.
import { ruleDocsUrl, type LintCapability, type Report, type Rule } from '../rule.js';
import type { Derived } from '../derived.js';
import { FirstSeen, keyNumber } from '../first-seen.js';
import type { CapabilityDocument, Range } from '../types.js';
import { rangeForPath } from '../yaml-source.js';

export const whenToUse: Rule = {
  meta: {
    id: 'when-to-use',
    description: 'Triggers in `whenToUse` are non-empty and unique, within a capability and across the registry.',
    defaultLevel: 'error',
    reads: 'catalog',
    docs: { url: ruleDocsUrl('when-to-use') },
    defaultOptions: {},
    messages: {
      empty: 'trigger {{index}} of `whenToUse` is empty; write a phrase users say when they need this capability, or remove the item',
      duplicate: 'trigger "{{trigger}}" is listed twice in `whenToUse` (first as trigger {{firstIndex}}); remove the repeat',
      ambiguous:
        'trigger "{{trigger}}" is also a trigger of capability "{{other}}" ({{file}}); the agent cannot tell which one to load: keep the phrase in one capability and make the other more specific',
    },
  },
  check({ registry, report }) {
    // Each distinct trigger of the registry, first seen where (file order).
    const seen = new FirstSeen(registry.capabilities.length * 4);
    const where: { capability: LintCapability; range: Range }[] = [];
    for (const capability of registry.capabilities) {
      const { problems, distinct, numbers } = registry.derived.of(capability.document, 'when-to-use', undefined, () =>
        ownTriggers(registry.derived, capability.document),
      );
      for (const problem of problems) report({ capability, ...problem });
      // A capability's own triggers are distinct, so it only ever finds earlier capabilities here;
      // its own repeats are errors above, not cross-capability warnings.
      distinct.forEach(({ trigger, key, range }, index) => {
        const first = seen.firstOrAdd(numbers[index] as number, key);
        if (first < 0) {
          where.push({ capability, range });
          return;
        }
        const elsewhere = where[first] as (typeof where)[number];
        report({
          capability,
          range,
          messageId: 'ambiguous',
          data: { trigger: trigger.trim(), other: elsewhere.capability.id, file: elsewhere.capability.document.file },
          severity: 'warning',
          related: { file: elsewhere.capability.document.file, range: elsewhere.range, message: 'also a trigger here' },
        });
      });
    }
  },
};

/**
 * One capability's empty and repeated triggers (reported whatever the registry holds), and the
 * first of each of its distinct triggers, which are compared across the registry: a fact of the document.
 */
function ownTriggers(
  derived: Derived,
  document: CapabilityDocument,
): { problems: Omit<Report, 'capability'>[]; distinct: ListedTrigger[]; numbers: Int32Array } {
  const problems: Omit<Report, 'capability'>[] = [];
  const own = new Map<string, ListedTrigger>();
  for (const listed of listedTriggers(derived, document)) {
    const { trigger, index, key, range } = listed;
    if (key === '') {
      problems.push({ range, messageId: 'empty', data: { index: index + 1 } });
      continue;
    }
    const earlier = own.get(key);
    if (earlier !== undefined) {
      problems.push({
        range,
        messageId: 'duplicate',
        data: { trigger: trigger.trim(), firstIndex: earlier.index + 1 },
        related: { file: document.file, range: earlier.range, message: 'first listed here' },
      });
      continue;
    }
    own.set(key, listed);
  }
  const distinct = [...own.values()];
  return { problems, distinct, numbers: Int32Array.from(distinct, ({ key }) => keyNumber(key)) };
}

/** A string item of `whenToUse`, with its place in the list and in the file. */
export interface ListedTrigger {
  trigger: string;
  /** Its index in `whenToUse`. */
  index: number;
  /** {@link normalizeTrigger} of it. */
  key: string;
  range: Range;
}

/**
 * The string items of a document's `whenToUse` as written (none when it is not a list): a fact of
 * the document. The raw list, so that one malformed item (the schema rule's business) does not
 * hide the problems of the others.
 */
export function listedTriggers(derived: Derived, document: CapabilityDocument): readonly ListedTrigger[] {
  return derived.of(document, 'when-to-use:triggers', undefined, () => {
    const triggers: unknown = document.frontmatter.data?.whenToUse;
    if (!Array.isArray(triggers)) return [];
    const { ranges, range: frontmatterRange } = document.frontmatter;
    const listed: ListedTrigger[] = [];
    triggers.forEach((trigger: unknown, index) => {
      if (typeof trigger !== 'string') return;
      listed.push({ trigger, index, key: normalizeTrigger(trigger), range: rangeForPath(ranges, `/whenToUse/${index}`, frontmatterRange) });
    });
    return listed;
  });
}

export function normalizeTrigger(trigger: string): string {
  return trigger.normalize('NFKC').replace(/\s+/g, ' ').trim().toLowerCase();
}

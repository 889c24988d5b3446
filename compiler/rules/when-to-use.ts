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
import { KeyOwners } from '../key-owners.js';
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
    const facts = registry.capabilities.map((capability) =>
      registry.derived.of(capability.document, 'when-to-use', undefined, () => ownTriggers(registry.derived, capability.document)),
    );
    const ambiguous = (capability: LintCapability, { trigger, range }: ListedTrigger, elsewhere: { capability: LintCapability; range: Range }): void =>
      report({
        capability,
        range,
        messageId: 'ambiguous',
        data: { trigger: trigger.trim(), other: elsewhere.capability.id, file: elsewhere.capability.document.file },
        severity: 'warning',
        related: { file: elsewhere.capability.document.file, range: elsewhere.range, message: 'also a trigger here' },
      });
    facts.forEach(({ problems }, index) => {
      for (const problem of problems) report({ capability: registry.capabilities[index], ...problem });
    });
    if (registry.derived.keeps) {
      // --watch: the capabilities of each trigger are kept, and updated for the documents that changed.
      const owners = registry.derived.state('when-to-use', () => new KeyOwners<OwnTriggers>((fact) => fact.keys));
      owners.update(facts);
      if (owners.shared.size === 0) return;
      const position = new Map(facts.map((fact, index) => [fact, index]));
      for (const key of owners.shared) {
        // A capability's own triggers are distinct: one holder per capability.
        const holders = owners.of(key).map(({ fact, index }) => ({ at: position.get(fact) as number, listed: fact.distinct[index] as ListedTrigger }));
        holders.sort((a, b) => a.at - b.at);
        const first = holders[0]!;
        const elsewhere = { capability: registry.capabilities[first.at] as LintCapability, range: first.listed.range };
        for (const holder of holders.slice(1)) ambiguous(registry.capabilities[holder.at] as LintCapability, holder.listed, elsewhere);
      }
      return;
    }
    // Each distinct trigger of the registry, first seen where (file order).
    const seen = new FirstSeen(registry.capabilities.length * 4);
    const where: { capability: LintCapability; range: Range }[] = [];
    registry.capabilities.forEach((capability, capabilityIndex) => {
      const { distinct, numbers } = facts[capabilityIndex] as OwnTriggers;
      // A capability's own triggers are distinct, so it only ever finds earlier capabilities here;
      // its own repeats are errors above, not cross-capability warnings.
      distinct.forEach((listed, index) => {
        const first = seen.firstOrAdd(numbers[index] as number, listed.key);
        if (first < 0) where.push({ capability, range: listed.range });
        else ambiguous(capability, listed, where[first] as (typeof where)[number]);
      });
    });
  },
};

/** What the rule keeps of one capability's triggers. */
interface OwnTriggers {
  problems: Omit<Report, 'capability'>[];
  distinct: ListedTrigger[];
  /** The key of each of `distinct`, and its keyNumber. */
  keys: string[];
  numbers: Int32Array;
}

/**
 * One capability's empty and repeated triggers (reported whatever the registry holds), and the
 * first of each of its distinct triggers, which are compared across the registry: a fact of the document.
 */
function ownTriggers(derived: Derived, document: CapabilityDocument): OwnTriggers {
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
  const keys = distinct.map(({ key }) => key);
  return { problems, distinct, keys, numbers: Int32Array.from(keys, keyNumber) };
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

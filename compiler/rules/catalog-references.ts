// catalog-references: one protocol points at another only through an inline `[text](capability:<id>)`
// link. The manifest renders that link as an instruction to load the other protocol through the
// catalog, so the caller's permissions are checked and each procedure keeps one owner and one
// version. This rule checks that every such link targets an existing capability other than the
// protocol itself, that no relative link reaches into another capability's folder, and (as a
// warning) that other capabilities are not named in plain text where a link belongs.
//
// Plain-text mentions: by default only ids with a hyphen are looked for (`personal-automation`),
// because one-word ids (`review`) are ordinary words in prose. Inline code counts (`` `x-y` `` is a
// deliberate mention); fenced and indented code blocks, link URLs and the text of `capability:`
// links do not. Matches are case-sensitive whole words, a hyphen being part of a word.
import { suggestion } from '../did-you-mean.js';
import type { Derived } from '../derived.js';
import { keyNumber } from '../first-seen.js';
import { linkTargets, type LinkTarget } from '../link-target.js';
import { bodyText, isWordCode, runsHolding } from '../mentions.js';
import type { LineIndex } from '../positions.js';
import { ruleDocsUrl, type LintCapability, type Report, type Rule } from '../rule.js';
import type { CapabilityDocument, LinkRef } from '../types.js';

export interface CatalogReferencesOptions {
  /** Which capability ids to look for in plain text: `hyphenated` ids only, `all` ids, or `off`. */
  mentions: 'hyphenated' | 'all' | 'off';
}

/** A run of word characters; a hyphen joins words, so `non-personal-automation-x` is one word. */
const WORD = /[A-Za-z0-9_-]+/g;
export const catalogReferences: Rule<CatalogReferencesOptions> = {
  meta: {
    id: 'catalog-references',
    description: 'Protocols reference other capabilities only through inline `capability:` links to existing capabilities.',
    defaultLevel: 'error',
    reads: 'catalog',
    docs: { url: ruleDocsUrl('catalog-references') },
    optionsSchema: {
      type: 'object',
      properties: { mentions: { enum: ['hyphenated', 'all', 'off'] } },
    },
    defaultOptions: { mentions: 'hyphenated' },
    messages: {
      unknown: 'link target "capability:{{id}}" is not a capability in this registry; link to the id of an existing capability{{hint}}',
      empty: '`capability:` link has no capability id; write [text](capability:<id>) with the id of an existing capability',
      self: 'capability "{{id}}" links to itself; the agent is already reading this protocol: remove the link or point it at another capability',
      notInline:
        '`capability:{{id}}` in {{what}} is not rendered as a catalog instruction for the agent; write an inline link [{{id}}](capability:{{id}}) instead',
      relative:
        'relative link "{{url}}" points into the folder of capability "{{id}}"; reference another capability only through the catalog: [{{id}}](capability:{{id}})',
      mention:
        'capability "{{id}}" is named in plain text; make it a catalog reference [{{id}}](capability:{{id}}) so that the agent loads it through the catalog',
    },
  },
  check({ registry, options, report }) {
    const mode = options.mentions;
    let knownIds: string[] | undefined;
    // A mistyped id is usually mistyped the same way in many protocols: suggest once per id.
    const hints = new Map<string, string>();
    const hintFor = (id: string): string => {
      let hint = hints.get(id);
      if (hint === undefined) {
        knownIds ??= [...registry.byId.keys()];
        // Edit distance is at least the difference in length: skip ids that can be neither a few
        // edits away nor a prefix match (the two kinds of suggestion `didYouMean` makes).
        const allowed = Math.max(1, Math.floor(id.length / 3));
        const lower = id.toLowerCase();
        const plausible = knownIds.filter((known) => Math.abs(known.length - id.length) <= allowed || known.startsWith(lower) || lower.startsWith(known));
        hint = suggestion(id, plausible);
        hints.set(id, hint);
      }
      return hint;
    };
    // Built only when a relative link leaves its folder for a capability folder.
    let idByFolder: Map<string, string> | undefined;
    const idOfFolder = (folder: string): string | undefined => {
      if (idByFolder === undefined) {
        idByFolder = new Map();
        for (const capability of registry.capabilities) {
          if (!idByFolder.has(capability.document.folder)) idByFolder.set(capability.document.folder, capability.id);
        }
      }
      return idByFolder.get(folder);
    };
    // The same objects while the ids are the same (under --watch): the mentions found in a body
    // are kept for them.
    const { mentionable, mentionableNumbers, idsDigest } = registry.derived.across(`catalog-references:ids:${mode}`, [...registry.byId.keys()], () => {
      const ids = new Set<string>();
      if (mode !== 'off') for (const id of registry.byId.keys()) if (mode === 'all' || id.includes('-')) ids.add(id);
      // Candidates are first compared by number (kept with the facts): a word is looked up only when its number is an id's.
      const numbers = new Set<number>();
      for (const id of ids) numbers.add(wordNumber(id));
      // `all` looks at every word of every body: rather than keep them all, a body's mentions are
      // kept for one set of ids, and found again when an id is added, removed or changed.
      return { mentionable: ids, mentionableNumbers: numbers, idsDigest: mode === 'all' ? [...ids].sort().join('\n') : undefined };
    });
    const namedKey = `catalog-references:named:${mode}`;

    for (const capability of registry.capabilities) {
      const facts = registry.derived.of(capability.document, `catalog-references:${mode}`, idsDigest, () =>
        referenceFacts(registry.derived, capability, mode, mentionable),
      );
      for (const { link, id, problem } of facts.capabilityLinks) {
        const range = link.range;
        if (problem === 'empty') report({ capability, range, messageId: 'empty' });
        else if (!registry.byId.has(id)) report({ capability, range, messageId: 'unknown', data: { id, hint: hintFor(id) } });
        else if (problem === 'self') report({ capability, range, messageId: 'self', data: { id } });
        else if (problem !== undefined) report({ capability, range, messageId: 'notInline', data: { id, what: problem } });
      }
      for (const { link, folder } of facts.intoFolders) {
        const id = idOfFolder(folder);
        if (id !== undefined && id !== capability.id) report({ capability, range: link.range, messageId: 'relative', data: { url: link.url, id } });
      }
      // Most bodies have no candidate word: no second lookup for them.
      if (facts.candidates.length === 0) continue;
      const named = registry.derived.of(capability.document, namedKey, mentionable, () => {
        const { candidates, candidateNumbers } = facts;
        if (mentionable.size === 0 || !candidateNumbers.some((number) => mentionableNumbers.has(number))) return NONE;
        return candidates.filter((_, index) => mentionableNumbers.has(candidateNumbers[index] as number) && mentionable.has(candidates[index]?.[0] as string));
      });
      if (named.length > 0) reportMentions(registry.derived, capability, named, report);
    }
  },
};

/** What the rule needs of one protocol, a fact of its document (in `all` mode, also of the set of ids). */
interface ReferenceFacts {
  /**
   * Its `capability:` links, each with what is wrong with it whatever the registry holds: no id,
   * its own id (self-links are reported here only; `reference-cycle` leaves cycles of one to this
   * rule), or not an inline link (what it is instead). Whether the id exists is the registry's.
   */
  capabilityLinks: readonly { link: LinkRef; id: string; problem?: string }[];
  /** Relative links that leave the capability's folder for the folder `capabilities/<folder>`. */
  intoFolders: readonly { link: LinkRef; folder: string }[];
  /** Words that may name another capability, and the {@link wordNumber} of each. */
  candidates: readonly Candidate[];
  candidateNumbers: Int32Array;
}

const NONE: readonly never[] = Object.freeze([]);

function referenceFacts(derived: Derived, capability: LintCapability, mode: CatalogReferencesOptions['mentions'], ids: ReadonlySet<string>): ReferenceFacts {
  const { document } = capability;
  const targets = linkTargets(derived, document);
  const capabilityLinks: ReferenceFacts['capabilityLinks'][number][] = [];
  const intoFolders: ReferenceFacts['intoFolders'][number][] = [];
  document.links.forEach((link, index) => {
    const target = targets[index] as LinkTarget;
    if (target.kind === 'capability') {
      const { id } = target;
      const what = link.kind === 'image' ? 'an image' : 'a reference-style link definition';
      const problem = id.trim() === '' ? 'empty' : id === capability.id ? 'self' : link.kind !== 'link' ? what : undefined;
      capabilityLinks.push(problem === undefined ? { link, id } : { link, id, problem });
    } else if (target.kind === 'relative' && !target.inside && target.capabilityFolder !== undefined) {
      intoFolders.push({ link, folder: target.capabilityFolder });
    }
  });
  const candidates = mode === 'off' ? NONE : mode === 'all' ? wordsOf(capability, (word) => ids.has(word)) : hyphenatedWordsOf(capability);
  return {
    capabilityLinks: capabilityLinks.length > 0 ? capabilityLinks : NONE,
    intoFolders: intoFolders.length > 0 ? intoFolders : NONE,
    candidates: candidates.length > 0 ? candidates : NONE,
    candidateNumbers: Int32Array.from(candidates, ([word]) => wordNumber(word)),
  };
}

/** Body offsets [start, end) that are not prose for the purpose of mentions, in order. */
function excludedSpans(derived: Derived, document: CapabilityDocument, positions: LineIndex): readonly [number, number][] {
  return derived.of(document, 'catalog-references:excluded', undefined, () => {
    const spans: [number, number][] = [];
    const targets = linkTargets(derived, document);
    document.links.forEach((link, index) => {
      const offsets = positions.offsets(link.range);
      if (!offsets) return;
      const { start, end } = offsets;
      if (link.kind !== 'link' || targets[index]?.kind === 'capability') {
        spans.push([start, end]);
        return;
      }
      // The text of an ordinary link is prose; its destination is not. Autolinks are all destination.
      const source = document.body.slice(start, end);
      const destination = Math.max(source.lastIndexOf(']('), source.lastIndexOf(']['));
      spans.push([destination >= 0 ? start + destination : start, end]);
    });
    for (const code of document.code) {
      const offsets = code.inline ? undefined : positions.offsets(code.range);
      if (offsets) spans.push([offsets.start, offsets.end]);
    }
    return spans.sort((a, b) => a[0] - b[0]);
  });
}

/** A number for a word (a 30-bit hash: a small integer, cheap to look up). */
function wordNumber(word: string): number {
  return keyNumber(word) & 0x3fffffff;
}

/** A word of the body that may name another capability, and its offset. */
type Candidate = readonly [word: string, start: number];

/**
 * The words of a body that `keep` keeps, other than the capability's own id. Whole words only, in
 * one linear pass: a pattern for "a word with a hyphen" would backtrack over every long word
 * without one, quadratic in its length.
 */
function wordsOf({ document, id }: LintCapability, keep: (word: string) => boolean): readonly Candidate[] {
  const words: Candidate[] = [];
  for (const match of document.body.matchAll(WORD)) {
    const word = match[0];
    if (word !== id && keep(word)) words.push([word, match.index]);
  }
  return words;
}

/** wordsOf for the words with a hyphen: found from one hyphen to the next, every other word skipped unread. */
function hyphenatedWordsOf({ document, id }: LintCapability): readonly Candidate[] {
  const words: Candidate[] = [];
  const text = document.body;
  runsHolding(text, '-', isIdWordCode, (start, end) => {
    const word = text.slice(start, end);
    if (word !== id) words.push([word, start]);
  });
  return words;
}

/** A character of WORD. */
function isIdWordCode(code: number): boolean {
  return code === 45 || isWordCode(code);
}

function reportMentions(
  derived: Derived,
  capability: LintCapability,
  /** The candidates that are ids of other capabilities. */
  named: readonly Candidate[],
  report: (report: Report) => void,
): void {
  const { document } = capability;
  let positions: LineIndex | undefined;
  let spans: readonly [number, number][] = [];
  let next = 0;
  for (const [word, start] of named) {
    // Most protocols name no other capability: positions and excluded spans only when one does.
    if (positions === undefined) {
      positions = bodyText(document);
      spans = excludedSpans(derived, document, positions);
    }
    while (next < spans.length && (spans[next]?.[1] ?? 0) <= start) next += 1;
    if (next < spans.length && (spans[next]?.[0] ?? Infinity) <= start) continue;
    report({
      capability,
      range: positions.range(start, start + word.length),
      messageId: 'mention',
      data: { id: word },
      severity: 'warning',
    });
  }
}

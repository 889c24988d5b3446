// duplicate-content: a paragraph or list item copied from another capability's protocol. A copy
// freezes one version of someone else's procedure into this protocol and doubles its tokens; the
// copy drifts when the original changes. Link to the owning capability with `capability:` instead.
//
// Blocks are compared after trimming, collapsing whitespace, Unicode NFKC and lower-casing; only
// blocks at least `minLength` characters long (after that normalization) count, so that short
// stock phrases ("Ask the user.") are not flagged. Headings and table rows are not compared (tools
// tables legitimately repeat rows). Repeats inside one protocol are not this rule's concern.
// The later copy (in file order) is reported, pointing at the first occurrence.
import { sha256Hex } from '../canonical.js';
import { ruleDocsUrl, type LintCapability, type Rule } from '../rule.js';
import type { Derived } from '../derived.js';
import { FirstSeen, keyNumber } from '../first-seen.js';
import { KeyOwners } from '../key-owners.js';
import type { TextBlock } from '../types.js';

export interface DuplicateContentOptions {
  /** Minimum length, in characters after normalization, of a block that counts as copied content. */
  minLength: number;
}

export const duplicateContent: Rule<DuplicateContentOptions> = {
  meta: {
    id: 'duplicate-content',
    description: "A paragraph or list item is not copied from another capability's protocol.",
    defaultLevel: 'warn',
    reads: 'bodies',
    docs: { url: ruleDocsUrl('duplicate-content') },
    optionsSchema: {
      type: 'object',
      properties: { minLength: { type: 'integer', minimum: 1 } },
    },
    defaultOptions: { minLength: 80 },
    messages: {
      duplicate:
        '{{kind}} "{{excerpt}}" is copied from capability "{{other}}" ({{file}}:{{line}}); reference it instead of copying it: [{{other}}](capability:{{other}})',
    },
  },
  check({ registry, options, report }) {
    const facts = registry.capabilities.map((capability) => comparedBlocks(registry.derived, capability, options.minLength));
    const reportCopy = (capabilityIndex: number, block: TextBlock, originalIndex: number, originalBlock: TextBlock): void => {
      const capability = registry.capabilities[capabilityIndex] as LintCapability;
      const originalCapability = registry.capabilities[originalIndex] as LintCapability;
      const { file } = originalCapability.document;
      report({
        capability,
        range: block.range,
        messageId: 'duplicate',
        data: {
          kind: block.kind === 'listItem' ? 'list item' : 'paragraph',
          excerpt: excerpt(block.text),
          other: originalCapability.id,
          file,
          line: originalBlock.range.line,
        },
        related: { file, range: originalBlock.range, message: 'first written here' },
      });
    };
    if (registry.derived.keeps) {
      // --watch: the owners of every fingerprint are kept, and updated for the documents that changed.
      const owners = registry.derived.state(`duplicate-content:${options.minLength}`, () => new KeyOwners<ComparedBlocks>((fact) => fact.keys));
      owners.update(facts);
      if (owners.shared.size === 0) return;
      const position = new Map(facts.map((fact, index) => [fact, index]));
      for (const key of owners.shared) {
        const copies = owners.of(key).map(({ fact, index }) => ({ at: position.get(fact) as number, block: fact.blocks[index] as TextBlock, index }));
        copies.sort((a, b) => a.at - b.at || a.index - b.index);
        const first = copies[0]!;
        for (const copy of copies) if (copy.at !== first.at) reportCopy(copy.at, copy.block, first.at, first.block);
      }
      return;
    }
    // The first block (file order) of each fingerprint, looked up by its number.
    let total = 0;
    for (const { numbers } of facts) total += numbers.length;
    const seen = new FirstSeen(total);
    // Entry e of `seen` was first written at block firstBlock[e] of capability firstCapability[e].
    const firstCapability = new Int32Array(total);
    const firstBlock = new Int32Array(total);
    for (let capabilityIndex = 0; capabilityIndex < facts.length; capabilityIndex += 1) {
      const { blocks, keys, numbers } = facts[capabilityIndex] as ComparedBlocks;
      for (let blockIndex = 0; blockIndex < numbers.length; blockIndex += 1) {
        const original = seen.firstOrAdd(numbers[blockIndex] as number, keys[blockIndex] as string);
        if (original < 0) {
          firstCapability[seen.size - 1] = capabilityIndex;
          firstBlock[seen.size - 1] = blockIndex;
          continue;
        }
        if (firstCapability[original] === capabilityIndex) continue;
        const originalIndex = firstCapability[original] as number;
        const originalBlock = (facts[originalIndex] as ComparedBlocks).blocks[firstBlock[original] as number] as TextBlock;
        reportCopy(capabilityIndex, blocks[blockIndex] as TextBlock, originalIndex, originalBlock);
      }
    }
  },
};

/** The paragraphs and list items of one protocol that count, with their fingerprints. */
interface ComparedBlocks {
  blocks: TextBlock[];
  keys: string[];
  /** keyNumber of each fingerprint. */
  numbers: Int32Array;
}

/** The key of {@link comparedBlocks} begins so (the rule derives no other per-document fact): the manifest reads the same fact. */
const COMPARED_BLOCKS = 'duplicate-content:';

/** Whether a fact's key is that of {@link comparedBlocks}, for any `minLength`. */
export function isComparedBlocksKey(key: string): boolean {
  return key.startsWith(COMPARED_BLOCKS);
}

/** A fact of the document, for one `minLength`; the manifest's `paragraphs` are made of it too. */
export function comparedBlocks(derived: Derived, { document }: LintCapability, minLength: number): ComparedBlocks {
  return derived.of(document, `${COMPARED_BLOCKS}${minLength}`, undefined, () => {
    const blocks: TextBlock[] = [];
    const keys: string[] = [];
    const numbers: number[] = [];
    for (const block of document.blocks) {
      if (block.kind !== 'paragraph' && block.kind !== 'listItem') continue;
      const key = block.fingerprint ?? paragraphFingerprint(block.text, minLength);
      if (key === undefined) continue;
      blocks.push(block);
      keys.push(key);
      // Not the fingerprint's own digits: a digest's low bits can be searched for, the seeded hash's cannot.
      numbers.push(keyNumber(key));
    }
    const compared: ComparedBlocks = { blocks, keys, numbers: Int32Array.from(numbers) };
    return compared;
  });
}

/**
 * What blocks are compared by: a short digest of the normalized text, or undefined for a block too
 * short to count. The manifest carries these for user capabilities, which may not see the text.
 */
export function paragraphFingerprint(text: string, minLength: number): string | undefined {
  const key = normalize(text);
  return key.length < minLength ? undefined : sha256Hex(key).slice(0, 16);
}

export function normalize(text: string): string {
  const composed = text.normalize('NFKC');
  // Most blocks have no whitespace but single spaces: testing for any is cheaper than a replace.
  const collapsed = /[^\S ]| {2}/.test(composed) ? composed.replace(/\s+/g, ' ') : composed;
  return collapsed.trim().toLowerCase();
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const chars = [...flat];
  return chars.length > 40 ? `${chars.slice(0, 40).join('').trimEnd()}…` : flat;
}

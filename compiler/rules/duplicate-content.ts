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
    // The first block (file order) of each fingerprint: by the number its fingerprint starts with
    // (a small integer is a much cheaper map key than a string), and by the whole fingerprint for
    // the rare block whose number an earlier, different fingerprint had.
    const firstByNumber = new Map<number, Seen>();
    const firstByKey = new Map<string, Seen>();
    for (const capability of registry.capabilities) {
      const { blocks, keys, numbers } = comparedBlocks(registry.derived, capability, options.minLength);
      blocks.forEach((block, index) => {
        const key = keys[index] as string;
        const number = numbers[index] as number;
        let original = firstByNumber.get(number);
        if (original === undefined) {
          firstByNumber.set(number, { capability, block, key });
          return;
        }
        if (original.key !== key) {
          original = firstByKey.get(key);
          if (original === undefined) {
            firstByKey.set(key, { capability, block, key });
            return;
          }
        }
        if (original.capability === capability) return;
        const { file } = original.capability.document;
        report({
          capability,
          range: block.range,
          messageId: 'duplicate',
          data: {
            kind: block.kind === 'listItem' ? 'list item' : 'paragraph',
            excerpt: excerpt(block.text),
            other: original.capability.id,
            file,
            line: original.block.range.line,
          },
          related: { file, range: original.block.range, message: 'first written here' },
        });
      });
    }
  },
};

interface Seen {
  capability: LintCapability;
  block: TextBlock;
  key: string;
}

/** The paragraphs and list items of one protocol that count, with their fingerprints. */
interface ComparedBlocks {
  blocks: TextBlock[];
  keys: string[];
  /** The first seven hex digits of each fingerprint, as a number. */
  numbers: number[];
}

/** A fact of the document, for one `minLength`. */
function comparedBlocks(derived: Derived, { document }: LintCapability, minLength: number): ComparedBlocks {
  return derived.of(document, `duplicate-content:${minLength}`, undefined, () => {
    const compared: ComparedBlocks = { blocks: [], keys: [], numbers: [] };
    for (const block of document.blocks) {
      if (block.kind !== 'paragraph' && block.kind !== 'listItem') continue;
      const key = block.fingerprint ?? paragraphFingerprint(block.text, minLength);
      if (key === undefined) continue;
      compared.blocks.push(block);
      compared.keys.push(key);
      // A fingerprint from a manifest is not checked to be hex: anything else is number 0, compared by key.
      const number = Number.parseInt(key.slice(0, 7), 16);
      compared.numbers.push(Number.isNaN(number) ? 0 : number);
    }
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
  return text.normalize('NFKC').replace(/\s+/g, ' ').trim().toLowerCase();
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const chars = [...flat];
  return chars.length > 40 ? `${chars.slice(0, 40).join('').trimEnd()}…` : flat;
}

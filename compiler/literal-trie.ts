// Many literal names or phrases as one regular expression whose alternatives share their common
// beginnings (a trie of their pieces). An alternation with one branch per name makes every position
// of a text cost the names' matched beginnings together: 256 names of 60 characters that share
// most of them cost ~15,000 steps per position, and an author or a configuration chooses the names
// (states, prohibition markers). Shared, a position costs one name's length and the forks on the
// way. Each piece is the source of one character (or one class, one assertion, `\s+`), and the
// pieces at a fork are distinct, so at most one character branch can go on; the deeper branch is
// tried first and an end (the empty piece, an assertion) last, so the match at a position is the
// longest name that matches there, as with the branches sorted longest first.

/** ASCII word characters: the only ones that make a word boundary (so 禁止 is found inside Chinese text). */
export const WORD_CHAR = /[A-Za-z0-9_]/;
/** The pieces that go before a name beginning with a word character, and after one ending with one. */
export const WORD_START = '(?<![A-Za-z0-9_])';
export const WORD_END = '(?![A-Za-z0-9_])';

/** `text` as a regular expression that matches it literally. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

interface TrieNode {
  children: Map<string, TrieNode>;
  /** The most pieces below this node. */
  depth: number;
}

/** One regular expression source for the piece sequences (each a name as pieces, see above). */
export function trieAlternation(sequences: Iterable<readonly string[]>): string {
  const root: TrieNode = { children: new Map(), depth: 0 };
  for (const pieces of sequences) {
    let node = root;
    const path: TrieNode[] = [root];
    for (const piece of pieces) {
      let child = node.children.get(piece);
      if (!child) node.children.set(piece, (child = { children: new Map(), depth: 0 }));
      node = child;
      path.push(node);
    }
    path.forEach((step, index) => (step.depth = Math.max(step.depth, path.length - 1 - index)));
  }
  return sourceOf(root);
}

function sourceOf(node: TrieNode): string {
  const branches = [...node.children]
    .map(([piece, child]) => ({ source: piece + sourceOf(child), depth: child.depth + 1 }))
    .sort((a, b) => b.depth - a.depth || (a.source < b.source ? -1 : a.source > b.source ? 1 : 0))
    .map((branch) => branch.source);
  if (branches.length <= 1) return branches[0] ?? '';
  return `(?:${branches.join('|')})`;
}

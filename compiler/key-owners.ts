// Which facts hold each key, kept between the compiles of one `--watch` session and updated for
// the documents that changed. Registry-wide rules that look for the same key in two capabilities
// (a copied paragraph, a repeated or near-identical trigger) make one pass over every capability's
// keys in a one-shot compile (compiler/first-seen.ts); in a session, an edit changes the keys of one
// document, and this index changes only those: at 10,000 capabilities a pass over ~250,000
// paragraphs took ~40 ms per compile.
//
// Facts are compared by identity: a document that did not change keeps its fact objects
// (compiler/derived.ts), so a fact not seen last time is new, and one not seen now is gone.

export interface KeyOwner<F> {
  fact: F;
  /** The key's index in `keysOf(fact)`. */
  index: number;
}

export class KeyOwners<F extends object> {
  /** The facts of the last update, in its order. */
  private last: readonly F[] = [];
  private readonly owners = new Map<string, KeyOwner<F>[]>();
  /** Keys held twice or more (by two facts, or twice by one). */
  readonly shared = new Set<string>();

  constructor(private readonly keysOf: (fact: F) => readonly string[]) {}

  /** The holders of `key`, in no particular order. */
  of(key: string): readonly KeyOwner<F>[] {
    return this.owners.get(key) ?? [];
  }

  /** Now `facts` are the registry's: those gone are taken out, those new put in. */
  update(facts: readonly F[]): void {
    const last = this.last;
    this.last = [...facts];
    // Usually the same list but for a fact or two in the same places (an edit): compare place by
    // place. Whatever differs is in a changed place, in one list or in both.
    if (last.length === facts.length) {
      const before = new Set<F>();
      const after = new Set<F>();
      for (let i = 0; i < facts.length; i += 1) {
        if (last[i] === facts[i]) continue;
        before.add(last[i] as F);
        after.add(facts[i] as F);
      }
      for (const fact of before) if (!after.has(fact)) this.remove(fact);
      for (const fact of after) if (!before.has(fact)) this.add(fact);
      return;
    }
    const now = new Set(facts);
    const was = new Set(last);
    for (const fact of was) if (!now.has(fact)) this.remove(fact);
    for (const fact of now) if (!was.has(fact)) this.add(fact);
  }

  private add(fact: F): void {
    this.keysOf(fact).forEach((key, index) => {
      const list = this.owners.get(key);
      if (list === undefined) this.owners.set(key, [{ fact, index }]);
      else {
        list.push({ fact, index });
        this.shared.add(key);
      }
    });
  }

  private remove(fact: F): void {
    for (const key of new Set(this.keysOf(fact))) {
      const list = (this.owners.get(key) ?? []).filter((owner) => owner.fact !== fact);
      if (list.length === 0) this.owners.delete(key);
      else this.owners.set(key, list);
      if (list.length < 2) this.shared.delete(key);
    }
  }
}

// Facts derived from one parsed object (a capability's document, a block, an evals file, the
// toolsets) and kept for as long as that object lives. `capreg build --watch` and `capreg lint
// --watch` keep the parsed objects of unchanged files from one rebuild to the next, so a rule that
// derives something per document (paragraph fingerprints, token counts, the names a body mentions)
// computes it again only for the files that changed. A one-shot compile keeps nothing between
// compiles: its objects are new every time, and retained facts would only cost memory. Within it,
// only the facts a later step reads again are kept ({@link sharedWithinCompile}); a caller that
// wants none passes {@link NO_MEMO}.
//
// A fact is a pure function of its owner and its context: the key names what is derived (the rule
// and its options), the context is everything else it reads, compared with `===` (an object that
// is kept while its source is unchanged, such as the toolsets, or a string digest of a registry-wide
// set, such as every capability id). A different context recomputes the fact.
//
// Cost: a lookup is two hash-table reads. Build a key that is not a literal once per check, outside
// the loop over capabilities: a string made anew for every call is hashed anew for every call
// (10,000 capabilities × 20 rules: ~15 ms with keys made once, ~60–120 ms made per call).

export interface Derived {
  /** `compute()`, or what it returned before for the same owner, key and context. */
  of<T>(owner: object, key: string, context: unknown, compute: () => T): T;
  /**
   * A registry-wide fact: `compute()`, or what it returned last time for this key if `inputs` are
   * the same as then (as many, each `===`). Only the last one is kept per key.
   */
  across<T>(key: string, inputs: readonly unknown[], compute: () => T): T;
  /**
   * Whether facts are kept between compiles. A rule may then keep registry-wide state of its own
   * ({@link Derived.state}) and update it for the documents that changed, where a one-shot compile
   * builds it from nothing in the way fastest for that.
   */
  readonly keeps: boolean;
  /** The state kept under `key`, made by `create()` the first time (every time with NO_MEMO). */
  state<T>(key: string, create: () => T): T;
}

/** Computes every time and keeps nothing. */
export const NO_MEMO: Derived = {
  of: (_owner, _key, _context, compute) => compute(),
  across: (_key, _inputs, compute) => compute(),
  keeps: false,
  state: (_key, create) => create(),
};

/**
 * A compile that keeps nothing between compiles, but whose later steps read again a few facts an
 * earlier step derived (the manifest carries duplicate-content's paragraph fingerprints): those
 * whose key `shared` accepts are kept beside their owner, as {@link DerivedFacts} keeps them, for
 * as long as it lives; every other fact is computed every time, as with {@link NO_MEMO}.
 */
export function sharedWithinCompile(shared: (key: string) => boolean): Derived {
  const kept = new DerivedFacts();
  return {
    of: (owner, key, context, compute) => (shared(key) ? kept.of(owner, key, context, compute) : compute()),
    across: (key, inputs, compute) => NO_MEMO.across(key, inputs, compute),
    keeps: false,
    state: (key, create) => NO_MEMO.state(key, create),
  };
}

interface Slot {
  context: unknown;
  value: unknown;
}

/**
 * Keeps each fact beside its owner: an owner's facts hang off it under this instance's own symbol
 * (not enumerable, so neither JSON nor a structured clone carries them), one property load per
 * lookup where a WeakMap costs a hash lookup (~60 of ~300 ms per compile at 10,000 capabilities).
 * A fact goes when its owner is collected; an owner that cannot be extended keeps them in a WeakMap.
 */
export class DerivedFacts implements Derived {
  private readonly slot = Symbol('derived facts');
  private readonly sealed = new WeakMap<object, Map<string, Slot>>();
  private readonly registryWide = new Map<string, { inputs: readonly unknown[]; value: unknown }>();
  private readonly states = new Map<string, unknown>();
  readonly keeps = true;

  of<T>(owner: object, key: string, context: unknown, compute: () => T): T {
    const slots = (owner as { [slot: symbol]: Map<string, Slot> | undefined })[this.slot] ?? this.sealed.get(owner) ?? this.slotsFor(owner);
    const slot = slots.get(key);
    if (slot !== undefined && slot.context === context) return slot.value as T;
    const value = compute();
    slots.set(key, { context, value });
    return value;
  }

  across<T>(key: string, inputs: readonly unknown[], compute: () => T): T {
    const last = this.registryWide.get(key);
    if (last !== undefined && last.inputs.length === inputs.length && last.inputs.every((input, index) => input === inputs[index])) return last.value as T;
    const value = compute();
    this.registryWide.set(key, { inputs: [...inputs], value });
    return value;
  }

  state<T>(key: string, create: () => T): T {
    if (!this.states.has(key)) this.states.set(key, create());
    return this.states.get(key) as T;
  }

  private slotsFor(owner: object): Map<string, Slot> {
    const slots = new Map<string, Slot>();
    if (Object.isExtensible(owner)) Object.defineProperty(owner, this.slot, { value: slots });
    else this.sealed.set(owner, slots);
    return slots;
  }
}

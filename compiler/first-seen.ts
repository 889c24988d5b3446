// The first occurrence of each key, for the registry-wide passes of lint rules (duplicate paragraphs,
// repeated triggers): at 10,000 capabilities they look up some 10^5 keys on every compile, and a
// Map of strings to objects costs a pointer chase per key and an allocation per entry. Here each
// key comes with a number computed from it once (a hash, kept with the rule's per-document facts),
// the table holds numbers in typed arrays, and the strings are compared only when numbers are equal.

/**
 * Where every hash of this process starts: random, so that keys written to collide (paragraphs or
 * triggers whose numbers share their low bits, which would make every lookup walk the same run of
 * slots) cannot be prepared in advance. Nothing that is reported depends on the numbers: only which
 * key came first, and keys are always compared as strings.
 */
const SEED = crypto.getRandomValues(new Int32Array(1))[0] as number;

/**
 * A 32-bit FNV-1a hash of a string's UTF-16 code units from the start `seed`, with MurmurHash3's
 * finalizer. FNV-1a alone is no defence: its low bits depend only on the low bits of the start and
 * of the code units, so keys crafted to share them share them under most seeds; the finalizer makes
 * every bit of the result depend on every bit of the state.
 */
export function seededKeyNumber(key: string, seed: number): number {
  let hash = 0x811c9dc5 ^ seed;
  for (let i = 0; i < key.length; i += 1) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  return (hash ^ (hash >>> 16)) | 0;
}

/** The number of a key in this process: `seededKeyNumber` from this process's random start. */
export function keyNumber(key: string): number {
  return seededKeyNumber(key, SEED);
}

/** Keys in the order they were first seen: entry i is the i-th distinct key added. */
export class FirstSeen {
  private slots: Int32Array;
  private numbers: Int32Array;
  private readonly keys: string[] = [];

  /** @param expected how many distinct keys to make room for at first (the table grows past it) */
  constructor(expected = 256) {
    let size = 1024;
    while (size < expected * 2) size *= 2;
    this.slots = new Int32Array(size);
    this.numbers = new Int32Array(size / 2);
  }

  /** How many distinct keys were added. */
  get size(): number {
    return this.keys.length;
  }

  /** The entry of `key` (its number is `keyNumber`-like: equal keys, equal numbers), or -1 when it was never added. */
  find(number: number, key: string): number {
    const mask = this.slots.length - 1;
    for (let slot = number & mask; ; slot = (slot + 1) & mask) {
      const at = this.slots[slot] as number;
      if (at === 0) return -1;
      if (this.numbers[at - 1] === number && this.keys[at - 1] === key) return at - 1;
    }
  }

  /** The entry of `key` when it was added before; else -1, and it is added as entry `size` (before the call). */
  firstOrAdd(number: number, key: string): number {
    const mask = this.slots.length - 1;
    let slot = number & mask;
    for (let at = this.slots[slot] as number; at !== 0; slot = (slot + 1) & mask, at = this.slots[slot] as number) {
      if (this.numbers[at - 1] === number && this.keys[at - 1] === key) return at - 1;
    }
    const entry = this.keys.length;
    if (entry === this.numbers.length) {
      const numbers = new Int32Array(entry * 2);
      numbers.set(this.numbers);
      this.numbers = numbers;
    }
    this.numbers[entry] = number;
    this.keys.push(key);
    this.slots[slot] = entry + 1;
    // At most half full, so that a search ends soon at an empty slot.
    if (this.keys.length * 2 > this.slots.length) this.grow();
    return -1;
  }

  private grow(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let entry = 0; entry < this.keys.length; entry += 1) {
      let slot = (this.numbers[entry] as number) & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = entry + 1;
    }
    this.slots = slots;
  }
}

// Binary search over a sorted list, for the readers and the watch session that keep paths sorted.

/** `<` and `>` on strings: UTF-16 code units, the order `Array.prototype.sort` gives. */
export const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Where `key` is, or would go, in `list` sorted by `compare`. */
export function searchSorted<T>(list: readonly T[], key: string, keyOf: (item: T) => string, compare: (a: string, b: string) => number = byCodeUnits): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compare(keyOf(list[middle]!), key) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

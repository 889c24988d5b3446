// Binary search over a sorted list, for the readers and the watch session that keep paths sorted.

import { byCodeUnits } from '../compiler/order.js';

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

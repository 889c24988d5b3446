// Code-unit order: `<` and `>` on strings (UTF-16 code units, what Array.prototype.sort gives
// without a comparator), independent of locale. Every sorted list capreg writes or compares (ids,
// paths, diagnostics) uses it, so that the same input gives the same bytes on every machine.

/** Three-way comparison of two strings in code-unit order. */
export const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A comparator of items by one string each (`list.sort(byKey((file) => file.path))`). */
export function byKey<T>(keyOf: (item: T) => string): (a: T, b: T) => number {
  return (a, b) => byCodeUnits(keyOf(a), keyOf(b));
}

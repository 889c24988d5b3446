// "Did you mean" suggestions for near-miss names. A dozen lines of edit distance did not warrant a
// dependency; candidates are short field, rule, tool and file names (longer ones get no suggestion).
/** Edit distance where swapping two neighbouring letters counts as one edit (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  // Three rows of the table (the one before last, the last, this one): memory grows with b, not a × b.
  let before = new Int32Array(b.length + 1);
  let last = Int32Array.from({ length: b.length + 1 }, (_, j) => j);
  let row = new Int32Array(b.length + 1);
  for (let i = 1; i <= a.length; i += 1) {
    row[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(last[j]! + 1, row[j - 1]! + 1, last[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, before[j - 2]! + 1);
      row[j] = best;
    }
    [before, last, row] = [last, row, before];
  }
  return last[b.length]!;
}

/**
 * Names longer than this get no suggestion and are suggested for nothing: the edit distance costs
 * the product of two lengths, and a name or path this long is not a typo of another.
 */
export const MAX_SUGGESTED_LENGTH = 256;

/** Counts per UTF-16 code unit for {@link bagDistance}; every count is back to 0 when it returns. */
const unitCounts = new Int32Array(0x10000);

/**
 * A lower bound of {@link editDistance} in linear time: the characters one string has that the
 * other lacks, counted as multisets, on the side with more. An insertion, deletion or substitution
 * changes each side by at most one and a swap changes neither, so fewer edits cannot close the gap.
 */
export function bagDistance(a: string, b: string): number {
  for (let i = 0; i < a.length; i += 1) unitCounts[a.charCodeAt(i)]! += 1;
  for (let i = 0; i < b.length; i += 1) unitCounts[b.charCodeAt(i)]! -= 1;
  let surplus = 0;
  let deficit = 0;
  for (const text of [a, b]) {
    for (let i = 0; i < text.length; i += 1) {
      const unit = text.charCodeAt(i);
      const count = unitCounts[unit]!;
      if (count > 0) surplus += count;
      else deficit -= count;
      unitCounts[unit] = 0;
    }
  }
  return Math.max(surplus, deficit);
}

/**
 * The closest candidate, if it is a plausible typo (case-insensitive): a few edits away, or one
 * name a prefix of the other ("warning" for "warn", "input" for "inputSchema"). A candidate whose
 * {@link bagDistance} already rules it out is skipped without its edit distance, so a search among
 * thousands of tool names stays cheap; the answer is the same.
 */
export function didYouMean(input: string, candidates: Iterable<string>): string | undefined {
  if (input.length > MAX_SUGGESTED_LENGTH) return undefined;
  let best: string | undefined;
  let bestDistance = Infinity;
  const lower = input.toLowerCase();
  const allowed = Math.max(1, Math.floor(input.length / 3));
  for (const candidate of candidates) {
    if (candidate.length > MAX_SUGGESTED_LENGTH) continue;
    const other = candidate.toLowerCase();
    const prefix = Math.min(lower.length, other.length) >= 3 && (lower.startsWith(other) || other.startsWith(lower));
    const bound = bagDistance(lower, other);
    if ((bound > allowed && !prefix) || bound >= bestDistance) continue;
    const distance = editDistance(lower, other);
    if ((distance <= allowed || prefix) && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

export function suggestion(input: string, candidates: Iterable<string>): string {
  return suggestionText(didYouMean(input, candidates));
}

/** A match of {@link didYouMean} as the end of a message. */
export function suggestionText(match: string | undefined): string {
  return match ? `; did you mean "${match}"?` : '';
}

/**
 * Missing names one capability gets a "did you mean" for, per rule. Each search reads every
 * candidate, and a protocol can name thousands of missing toolsets, tools or files against
 * thousands of candidates: 2,000 unknown toolsets against 20,000 took toolset-exists 8.7 s. The
 * names past it are reported all the same, without a hint.
 */
export const MAX_HINTED_NAMES = 16;

/**
 * {@link didYouMean} for the names of one capability against the same candidates: each name is
 * searched once, and only the first {@link MAX_HINTED_NAMES} names are searched.
 */
export function didYouMeanEach(candidates: () => Iterable<string>): (input: string) => string | undefined {
  const found = new Map<string, string | undefined>();
  return (input) => {
    if (found.has(input) || found.size >= MAX_HINTED_NAMES) return found.get(input);
    const match = didYouMean(input, candidates());
    found.set(input, match);
    return match;
  };
}

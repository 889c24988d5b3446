// Porter's stemmer (M.F. Porter, "An algorithm for suffix stripping", 1980), steps 1a–5b as
// published, for lower-case ASCII words. No stemmer package is installed and this one is small,
// well known and deterministic; words with anything but a–z are returned unchanged.

const isVowel = (c: string | undefined): boolean => c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u';

/**
 * Porter's consonant, for every letter of `word`: a letter other than a, e, i, o, u, and other than a
 * y after a consonant. In one pass, each y the opposite of the letter before it: the definition
 * recursed once per y, and a word of 12,000 y's in a served heading overflowed the stack and took
 * `capreg serve` down.
 */
function consonants(word: string): boolean[] {
  const result: boolean[] = [];
  for (let i = 0; i < word.length; i += 1) {
    const c = word[i];
    result.push(isVowel(c) ? false : c === 'y' ? i === 0 || !result[i - 1] : true);
  }
  return result;
}

/** m: the number of VC sequences in `stem` ([C](VC)^m[V]). */
function measure(stem: string): number {
  const consonant = consonants(stem);
  let m = 0;
  let i = 0;
  const n = stem.length;
  while (i < n && consonant[i] === true) i += 1;
  while (i < n) {
    while (i < n && consonant[i] !== true) i += 1;
    if (i >= n) break;
    while (i < n && consonant[i] === true) i += 1;
    m += 1;
  }
  return m;
}

function hasVowel(stem: string): boolean {
  return consonants(stem).includes(false);
}

function endsDoubleConsonant(word: string): boolean {
  const n = word.length;
  return n >= 2 && word[n - 1] === word[n - 2] && consonants(word)[n - 1] === true;
}

/** *o: the stem ends consonant-vowel-consonant, the last not w, x or y. */
function endsCvc(word: string): boolean {
  const n = word.length;
  if (n < 3) return false;
  const consonant = consonants(word);
  if (!consonant[n - 1] || consonant[n - 2] || !consonant[n - 3]) return false;
  const last = word[n - 1];
  return last !== 'w' && last !== 'x' && last !== 'y';
}

/** Replace `suffix` by `replacement` when the stem before it has measure > `minMeasure`. */
function replaceSuffixes(word: string, table: readonly (readonly [string, string])[], minMeasure: number): string {
  for (const [suffix, replacement] of table) {
    if (!word.endsWith(suffix)) continue;
    const stem = word.slice(0, -suffix.length);
    return measure(stem) > minMeasure ? stem + replacement : word;
  }
  return word;
}

const STEP2: readonly (readonly [string, string])[] = [
  ['ational', 'ate'],
  ['tional', 'tion'],
  ['enci', 'ence'],
  ['anci', 'ance'],
  ['izer', 'ize'],
  ['abli', 'able'],
  ['alli', 'al'],
  ['entli', 'ent'],
  ['eli', 'e'],
  ['ousli', 'ous'],
  ['ization', 'ize'],
  ['ation', 'ate'],
  ['ator', 'ate'],
  ['alism', 'al'],
  ['iveness', 'ive'],
  ['fulness', 'ful'],
  ['ousness', 'ous'],
  ['aliti', 'al'],
  ['iviti', 'ive'],
  ['biliti', 'ble'],
];

const STEP3: readonly (readonly [string, string])[] = [
  ['icate', 'ic'],
  ['ative', ''],
  ['alize', 'al'],
  ['iciti', 'ic'],
  ['ical', 'ic'],
  ['ful', ''],
  ['ness', ''],
];

const STEP4 = ['al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ion', 'ou', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize'];

function step1ab(word: string): string {
  let w = word;
  if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('ies')) w = w.slice(0, -2);
  else if (!w.endsWith('ss') && w.endsWith('s')) w = w.slice(0, -1);

  if (w.endsWith('eed')) return measure(w.slice(0, -3)) > 0 ? w.slice(0, -1) : w;
  let stem: string | undefined;
  if (w.endsWith('ed') && hasVowel(w.slice(0, -2))) stem = w.slice(0, -2);
  else if (w.endsWith('ing') && hasVowel(w.slice(0, -3))) stem = w.slice(0, -3);
  if (stem === undefined) return w;
  if (stem.endsWith('at') || stem.endsWith('bl') || stem.endsWith('iz')) return `${stem}e`;
  if (endsDoubleConsonant(stem) && !/[lsz]$/.test(stem)) return stem.slice(0, -1);
  if (measure(stem) === 1 && endsCvc(stem)) return `${stem}e`;
  return stem;
}

function step4(word: string): string {
  // Longest suffix first: `ement` before `ment` before `ent`.
  const suffix = STEP4.filter((each) => word.endsWith(each)).sort((a, b) => b.length - a.length)[0];
  if (suffix === undefined) return word;
  const stem = word.slice(0, -suffix.length);
  if (measure(stem) <= 1) return word;
  if (suffix === 'ion' && !/[st]$/.test(stem)) return word;
  return stem;
}

export function porterStem(word: string): string {
  if (word.length <= 2 || !/^[a-z]+$/.test(word)) return word;
  let w = step1ab(word);
  if (w.endsWith('y') && hasVowel(w.slice(0, -1))) w = `${w.slice(0, -1)}i`;
  w = replaceSuffixes(w, STEP2, 0);
  w = replaceSuffixes(w, STEP3, 0);
  w = step4(w);
  if (w.endsWith('e')) {
    const stem = w.slice(0, -1);
    const m = measure(stem);
    if (m > 1 || (m === 1 && !endsCvc(stem))) w = stem;
  }
  if (measure(w) > 1 && endsDoubleConsonant(w) && w.endsWith('l')) w = w.slice(0, -1);
  return w;
}

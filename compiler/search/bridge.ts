// The English↔Chinese bridge: a query's words are looked up in a curated bilingual list of the
// domain's concepts (bilingual.json), and the other words of each concept it names are added to the
// query, so a Chinese request finds a capability whose triggers are all English and the reverse
// (same-language synonyms come along: "recap" also asks for "summary"). Pure; the list ships with
// the code and is read once.
import bilingual from './bilingual.json' with { type: 'json' };
import { analyze, isHan, normalizeText } from './analyze.js';

interface Concept {
  /** Each English word or phrase as its analyzed terms. */
  english: readonly (readonly string[])[];
  /** Each Chinese word, normalized (matched as a substring of the query: no segmentation to disagree with). */
  chinese: readonly string[];
  /** Every term the concept stands for. */
  terms: readonly string[];
}

interface Bridge {
  concepts: readonly Concept[];
  /** English phrases by their first term: a query is looked up by its own terms, not against every concept. */
  phrasesByFirstTerm: ReadonlyMap<string, readonly { concept: number; phrase: readonly string[] }[]>;
  /** Chinese words by their first two characters: a query is looked up by the pairs it has, not against every concept. */
  wordsByFirstPair: ReadonlyMap<string, readonly { concept: number; word: string }[]>;
}

let bridge: Bridge | undefined;

function loadBridge(): Bridge {
  const concepts = bilingual.groups.map((group) => {
    const english: string[][] = [];
    const chinese: string[] = [];
    for (const word of group) {
      // One character is too common a substring to name a concept ("月" is in every date).
      if (isHan(word)) {
        if ([...word].length > 1) chinese.push(normalizeText(word));
      } else {
        const terms = analyze(word);
        if (terms.length > 0) english.push(terms);
      }
    }
    const terms = [...new Set([...english.flat(), ...group.filter(isHan).flatMap((word) => analyze(word))])];
    return { english, chinese, terms };
  });
  const phrasesByFirstTerm = new Map<string, { concept: number; phrase: readonly string[] }[]>();
  concepts.forEach(({ english }, concept) => {
    for (const phrase of english) {
      const first = phrase[0] as string;
      phrasesByFirstTerm.set(first, [...(phrasesByFirstTerm.get(first) ?? []), { concept, phrase }]);
    }
  });
  const wordsByFirstPair = new Map<string, { concept: number; word: string }[]>();
  concepts.forEach(({ chinese }, concept) => {
    for (const word of chinese) {
      const pair = [...word].slice(0, 2).join('');
      wordsByFirstPair.set(pair, [...(wordsByFirstPair.get(pair) ?? []), { concept, word }]);
    }
  });
  return { concepts, phrasesByFirstTerm, wordsByFirstPair };
}

function runAt(haystack: readonly string[], at: number, needle: readonly string[]): boolean {
  if (at + needle.length > haystack.length) return false;
  for (let j = 0; j < needle.length; j += 1) if (haystack[at + j] !== needle[j]) return false;
  return true;
}

/**
 * The terms the bridge adds to a query: every term of each concept the query names (a Chinese
 * word of the concept in the query's text, or an English phrase of it in the query's terms), less
 * the query's own terms, in a stable order (the list's). `terms` is `analyze(query)`.
 */
export function bridgeTerms(query: string, terms: readonly string[]): string[] {
  bridge ??= loadBridge();
  const named = new Set<number>();
  terms.forEach((term, at) => {
    for (const { concept, phrase } of bridge?.phrasesByFirstTerm.get(term) ?? []) if (runAt(terms, at, phrase)) named.add(concept);
  });
  const normalized = normalizeText(query);
  if (isHan(normalized)) {
    // Every Chinese word has at least two characters: each position of the query that starts one
    // starts one of its pairs.
    const chars = [...normalized];
    let offset = 0;
    for (let i = 0; i + 1 < chars.length; i += 1) {
      for (const { concept, word } of bridge.wordsByFirstPair.get(`${chars[i] ?? ''}${chars[i + 1] ?? ''}`) ?? []) {
        if (normalized.startsWith(word, offset)) named.add(concept);
      }
      offset += (chars[i] as string).length;
    }
  }
  const own = new Set(terms);
  const added = new Set<string>();
  for (const index of [...named].sort((a, b) => a - b)) {
    for (const term of (bridge.concepts[index] as Concept).terms) if (!own.has(term)) added.add(term);
  }
  return [...added];
}

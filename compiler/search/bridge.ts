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

let concepts: readonly Concept[] | undefined;

function loadConcepts(): readonly Concept[] {
  return bilingual.groups.map((group) => {
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
}

function containsRun(haystack: readonly string[], needle: readonly string[]): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i += 1) {
    for (let j = 0; j < needle.length; j += 1) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/**
 * The terms the bridge adds to a query: every term of each concept the query names, less the
 * query's own terms, in a stable order (the list's). `terms` is `analyze(query)`.
 */
export function bridgeTerms(query: string, terms: readonly string[]): string[] {
  concepts ??= loadConcepts();
  const normalized = normalizeText(query);
  const own = new Set(terms);
  const added = new Set<string>();
  for (const concept of concepts) {
    const named = concept.chinese.some((word) => normalized.includes(word)) || concept.english.some((phrase) => containsRun(terms, phrase));
    if (!named) continue;
    for (const term of concept.terms) if (!own.has(term)) added.add(term);
  }
  return [...added];
}

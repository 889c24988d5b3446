// What search knows of a capability: the fields a query can match, their weights, and a
// capability after text analysis. Shared by the index (postings.ts), the ranker and the MiniSearch
// reference. Pure.
import { analyze } from './analyze.js';

/** What describes a capability to search: its catalog facts and the text of its protocol that names what it does. */
export interface SearchSource {
  id: string;
  name: string;
  description: string;
  whenToUse: readonly string[];
  lifecyclePhase?: string | undefined;
  tags?: readonly string[] | undefined;
  /** Headings, tools table and tool descriptions (see protocolSearchText); '' when there is none. */
  protocolText: string;
}

/** The catalog fields a query can match, named as the entry names them (`protocol`: the protocol text). */
export const SEARCH_FIELDS = ['whenToUse', 'name', 'tags', 'description', 'protocol'] as const;
export type SearchField = (typeof SEARCH_FIELDS)[number];

/** Which fields matched: a query match in a search field, or a filter that applied. */
export type MatchedField = SearchField | 'lifecyclePhase';

/** Field weights: triggers, name and tags over the description, the description over the protocol. */
export const BOOST: Readonly<Record<SearchField, number>> = { whenToUse: 3, name: 3, tags: 3, description: 2, protocol: 1 };

/** A capability after analysis: each field as its terms joined by spaces (terms never hold a space). */
export interface AnalyzedCapability {
  id: string;
  lifecyclePhase: string | undefined;
  tags: readonly string[];
  fields: Readonly<Record<SearchField, string>>;
}

export function analyzeCapability(source: SearchSource): AnalyzedCapability {
  const terms = (text: string): string => analyze(text).join(' ');
  return Object.freeze({
    id: source.id,
    lifecyclePhase: source.lifecyclePhase,
    tags: Object.freeze([...(source.tags ?? [])]),
    fields: Object.freeze({
      whenToUse: terms(source.whenToUse.join('\n')),
      name: terms(source.name),
      tags: terms((source.tags ?? []).join('\n')),
      description: terms(source.description),
      protocol: terms(source.protocolText),
    }),
  });
}

/** A field's terms, in order, repeated as often as they occur. */
export const splitTerms = (text: string): string[] => (text === '' ? [] : text.split(' '));

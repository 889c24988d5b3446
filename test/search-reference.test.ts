// The ranker (compiler/search/ranker.ts) against MiniSearch itself (compiler/search/minisearch-reference.ts):
// on random registries, visible sets, user segments, queries (known words, typos, Chinese, words the
// bridge knows, numbers), filters and limits, every answer must be the one an index built with
// MiniSearch over exactly the visible capabilities gives — same ids, same order, same rounded
// scores, same matched fields.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { byCodeUnits } from '../compiler/order.js';
import { analyzeCapability, type AnalyzedCapability, type MatchedField, type SearchSource } from '../compiler/search/fields.js';
import { MiniSearchReference } from '../compiler/search/minisearch-reference.js';
import { Segment } from '../compiler/search/postings.js';
import { CapabilityIndex, TermScoreCache, type SearchHit } from '../compiler/search/ranker.js';
import { runs } from './support/property.js';

// A small vocabulary, so that terms are shared, frequent and rare; with near-misses for typos.
const WORDS = [
  'report',
  'reporting',
  'weekly',
  'deploy',
  'deployment',
  'invoice',
  'invoices',
  'database',
  'migrate',
  'migration',
  'schema',
  'release',
  'ticket',
  'incident',
  'outage',
  'budget',
  'summary',
  'recap',
  'review',
  'automation',
  'reminder',
  'calendar',
  'team12',
  '2024',
  '周报',
  '发票',
  '数据库迁移',
  '故障',
  '写周报',
  '线上故障',
];
const TYPOS = ['reprot', 'deplyo', 'invoce', 'databse', 'migrat', 'automaton', 'remnider', 'calender', 'relase', 'tickte'];
const PHASES = ['define', 'plan', 'build', 'verify', 'review', 'ship'];
const TAGS = ['ops', 'finance', 'data', 'people'];

const text = (max: number): fc.Arbitrary<string> => fc.array(fc.constantFrom(...WORDS), { maxLength: max }).map((words) => words.join(' '));

const sourceArb = (id: string): fc.Arbitrary<SearchSource> =>
  fc.record({
    id: fc.constant(id),
    name: text(3),
    description: text(8),
    whenToUse: fc.array(text(5), { maxLength: 3 }),
    lifecyclePhase: fc.option(fc.constantFrom(...PHASES), { nil: undefined }),
    tags: fc.option(fc.uniqueArray(fc.constantFrom(...TAGS), { maxLength: 3 }), { nil: undefined }),
    protocolText: text(20),
  });

const registryArb = (prefix: string, max: number): fc.Arbitrary<SearchSource[]> =>
  fc.integer({ min: 0, max }).chain((count) => fc.tuple(...Array.from({ length: count }, (_, i) => sourceArb(`${prefix}${String(i).padStart(3, '0')}`))));

const queryArb = fc.array(fc.constantFrom(...WORDS, ...TYPOS, 'the', 'please', 'xyzzy', '#17'), { minLength: 1, maxLength: 6 }).map((words) => words.join(' '));

/** What CapabilityIndex must answer, from MiniSearch over exactly the visible capabilities. */
function expected(
  visible: readonly AnalyzedCapability[],
  query: string,
  limit: number,
  filter: (c: AnalyzedCapability) => boolean,
  filterFields: MatchedField[],
): SearchHit[] {
  const byId = new Map(visible.map((capability) => [capability.id, capability]));
  return new MiniSearchReference(visible)
    .search(query)
    .filter((hit) => filter(byId.get(hit.id) as AnalyzedCapability))
    .map((hit) => ({ id: hit.id, score: Number(hit.score.toFixed(6)), matched: [...hit.fields, ...filterFields] as MatchedField[] }))
    .sort((a, b) => b.score - a.score || byCodeUnits(a.id, b.id))
    .slice(0, limit)
    .map((hit) => ({ ...hit, matched: ORDER.filter((field) => hit.matched.includes(field)) }));
}
const ORDER: MatchedField[] = ['whenToUse', 'name', 'tags', 'description', 'protocol', 'lifecyclePhase'];

describe('CapabilityIndex agrees with MiniSearch', () => {
  it('over random registries, visible sets, user segments, queries, filters and limits', () => {
    let answered = 0;
    fc.assert(
      fc.property(
        registryArb('p-', 40),
        registryArb('u-', 4),
        fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
        fc.array(queryArb, { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 50 }),
        fc.option(fc.constantFrom(...PHASES), { nil: undefined }),
        fc.option(fc.constantFrom(...TAGS), { nil: undefined }),
        (platform, user, shown, queries, limit, phase, tag) => {
          const platformAnalyzed = platform.map(analyzeCapability);
          const userAnalyzed = user.map(analyzeCapability);
          const visiblePlatform = platformAnalyzed.filter((_, i) => shown[i] === true);
          const parts = [{ segment: Segment.of(platformAnalyzed), visible: visiblePlatform.map((capability) => capability.id) }];
          if (userAnalyzed.length > 0) parts.push({ segment: Segment.of(userAnalyzed), visible: userAnalyzed.map((capability) => capability.id) });
          // A small shared cache: term scores are kept, evicted and recomputed while the queries run.
          const cache = new TermScoreCache(64);
          const view = CapabilityIndex.view(parts, { cache, key: 'view' });
          const visible = [...visiblePlatform, ...userAnalyzed];
          expect(view.size).toBe(visible.length);
          const filter = (capability: AnalyzedCapability): boolean =>
            (phase === undefined || capability.lifecyclePhase === phase) && (tag === undefined || capability.tags.includes(tag));
          const filterFields: MatchedField[] = [
            ...(phase !== undefined ? (['lifecyclePhase'] as const) : []),
            ...(tag !== undefined ? (['tags'] as const) : []),
          ];
          for (const query of queries) {
            const request = { query, limit, lifecyclePhase: phase, tags: tag === undefined ? undefined : [tag] };
            const answer = view.search(request);
            if (answer.length > 0) answered += 1;
            expect(answer).toEqual(expected(visible, query, limit, filter, filterFields));
            // Again, with the terms' scores from the cache, which never holds more than its bound.
            expect(view.search(request)).toEqual(answer);
            expect(cache.size).toBeLessThanOrEqual(64);
          }
        },
      ),
      { numRuns: runs(300) },
    );
    // The property compared real answers, not mostly empty ones.
    expect(answered).toBeGreaterThan(300);
  });

  it('a capability the caller cannot see changes no answer, no order and no score', () => {
    fc.assert(
      fc.property(registryArb('p-', 30), fc.array(fc.boolean(), { minLength: 30, maxLength: 30 }), queryArb, (platform, shown, query) => {
        const analyzed = platform.map(analyzeCapability);
        const visible = analyzed.filter((_, i) => shown[i] === true);
        const shared = CapabilityIndex.view([{ segment: Segment.of(analyzed), visible: visible.map((capability) => capability.id) }]);
        const alone = CapabilityIndex.of(visible);
        expect(shared.search({ query, limit: 50 })).toEqual(alone.search({ query, limit: 50 }));
      }),
      { numRuns: runs(200) },
    );
  });

  it('refuses one capability in two parts of a view', () => {
    const one = analyzeCapability({ id: 'same', name: 'x', description: '', whenToUse: [], protocolText: '' });
    expect(() => CapabilityIndex.view([{ segment: Segment.of([one]) }, { segment: Segment.of([one]) }])).toThrow(/two parts/);
  });
});

// The ranker behind find_capabilities (compiler/search): text analysis, field weights, the
// English↔Chinese bridge, typos, filters and the order of ties, through its public functions.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyze, MAX_REMEMBERED_WORD, MAX_SEGMENTED_RUN, normalizeText, rememberedStemChars } from '../compiler/search/analyze.js';
import { bridgeTerms } from '../compiler/search/bridge.js';
import { porterStem } from '../compiler/search/porter.js';
import { analyzeCapability, type SearchSource } from '../compiler/search/fields.js';
import { Segment } from '../compiler/search/postings.js';
import { CapabilityIndex, headingText, protocolSearchText } from '../compiler/search/ranker.js';
import { runs } from './support/property.js';

function source(id: string, facts: Partial<SearchSource> = {}): SearchSource {
  return { id, name: `Capability ${id}`, description: '', whenToUse: [], protocolText: '', ...facts };
}

function index(sources: SearchSource[]): CapabilityIndex {
  return CapabilityIndex.of(sources.map(analyzeCapability));
}

const REGISTRY: SearchSource[] = [
  source('work-reporting', {
    name: 'Work reporting',
    description: 'Write the weekly work report from the log.',
    whenToUse: ['write my weekly report', 'summarize what I did this week'],
    tags: ['productivity', 'reporting'],
  }),
  source('test-driven-development', {
    name: 'Test-driven development',
    description: 'Red, green, refactor: write a failing test first.',
    whenToUse: ['implement a feature test first', 'fix a bug with a regression test'],
    lifecyclePhase: 'build',
    tags: ['engineering', 'testing'],
  }),
  source('personal-automation', {
    name: 'Personal automation',
    description: 'Set up reminders and recurring automations.',
    whenToUse: ['remind me every morning', 'automate a recurring chore'],
    tags: ['productivity', 'reminders'],
  }),
  source('incident-response', {
    name: 'Incident response',
    description: 'Handle a production outage.',
    whenToUse: ['production is down', 'handle an outage'],
    lifecyclePhase: 'ship',
    tags: ['engineering', 'operations'],
  }),
];

describe('porterStem', () => {
  it.each([
    ['caresses', 'caress'],
    ['ponies', 'poni'],
    ['cats', 'cat'],
    ['agreed', 'agre'],
    ['plastered', 'plaster'],
    ['motoring', 'motor'],
    ['hopping', 'hop'],
    ['filing', 'file'],
    ['happy', 'happi'],
    ['relational', 'relat'],
    ['conditional', 'condit'],
    ['digitizer', 'digit'],
    ['generalizations', 'gener'],
    ['hopefulness', 'hope'],
    ['electrical', 'electr'],
    ['adjustment', 'adjust'],
    ['adoption', 'adopt'],
    ['controlling', 'control'],
    ['reporting', 'report'],
    ['reports', 'report'],
  ])('%s → %s', (word, stem) => {
    expect(porterStem(word)).toBe(stem);
  });

  it('leaves short words and words with non-ASCII letters alone', () => {
    expect(porterStem('is')).toBe('is');
    expect(porterStem('café')).toBe('café');
  });

  it.each([
    ['yyyy', 'yyyi'],
    ['ayyyy', 'ayyyi'],
    ['yaying', 'yai'],
    ['sayyyed', 'sayi'],
    ['played', 'plai'],
    ['trying', 'try'],
    ['toyyyyness', 'toyyyy'],
    ['yyyational', 'yyyat'],
    ['eyyyyies', 'eyyyyi'],
  ])('reads a run of y as alternating consonants and vowels: %s → %s', (word, stem) => {
    expect(porterStem(word)).toBe(stem);
  });

  it('stems a word of 100,000 y’s in linear time (one recursion per y overflowed the stack at ~12,000)', () => {
    const start = process.cpuUsage();
    expect(porterStem('y'.repeat(100_000))).toBe(`${'y'.repeat(99_999)}i`);
    expect(porterStem(`${'ay'.repeat(50_000)}ing`)).toBe(`${'ay'.repeat(49_999)}ai`);
    const used = process.cpuUsage(start);
    expect((used.user + used.system) / 1000).toBeLessThan(500);
  });
});

describe('analyze', () => {
  it('remembers the stems of short words only: distinct long words in requests keep no memory', () => {
    const before = rememberedStemChars();
    for (let i = 0; i < 2_000; i += 1) analyze(`${'report'.repeat(80)}${i.toString(26).replace(/\d/g, (d) => 'qrstuvwxyz'[Number(d)] ?? 'q')}`);
    // 2,000 words of ~480 characters: ~1.9 million characters remembered before.
    expect(rememberedStemChars() - before).toBeLessThanOrEqual(2_000 * 2 * MAX_REMEMBERED_WORD);
    expect(analyze(`${'report'.repeat(80)}s`)).toEqual([`${'report'.repeat(80)}`]);
  });

  it('folds case and width (NFKC), drops stop words and stems', () => {
    expect(normalizeText('ＲＥＰＯＲＴ')).toBe('report');
    expect(analyze('Writing THE weekly Reports')).toEqual(['write', 'weekli', 'report']);
  });

  it('makes Chinese words and their character bigrams', () => {
    const terms = analyze('写周报');
    expect(terms).toContain('周报');
    expect(terms).toContain('写周');
  });
});

describe('analyze: long Han runs', () => {
  it('segments a long run in pieces, in time that grows with its length, with every bigram of the run', () => {
    // Whole, 66,000 characters took ~38 s in ICU's segmenter, and 120,000 did not end in 2 minutes.
    const run = '写日报'.repeat(40_000);
    const start = performance.now();
    const terms = analyze(run);
    expect(performance.now() - start).toBeLessThan(10_000);
    expect(new Set(terms)).toEqual(new Set(analyze('写日报'.repeat(1_000))));
    expect(analyze('写'.repeat(MAX_SEGMENTED_RUN))).toContain('写写');
  });

  it('never cuts a character outside the BMP in two', () => {
    const run = `${'写'.repeat(MAX_SEGMENTED_RUN - 1)}${'𠀀'.repeat(4)}`;
    // The piece ends after the first 𠀀, not inside it: the segmenter finds all four (a cut pair loses one).
    expect(analyze(run).filter((term) => term === '𠀀')).toHaveLength(4);
  });
});

describe('bridgeTerms', () => {
  it('adds the English words of a Chinese concept and the Chinese words of an English one', () => {
    expect(bridgeTerms('帮我写周报', analyze('帮我写周报'))).toEqual(expect.arrayContaining(['weekli', 'report']));
    expect(bridgeTerms('weekly report', analyze('weekly report'))).toContain('周报');
  });

  it('adds nothing for words it does not know', () => {
    expect(bridgeTerms('xyzzy plugh', analyze('xyzzy plugh'))).toEqual([]);
  });
});

describe('CapabilityIndex.search', () => {
  const registry = index(REGISTRY);

  it('ranks by triggers, with the fields that matched', () => {
    const hits = registry.search({ query: 'write my weekly report', limit: 10 });
    expect(hits[0]?.id).toBe('work-reporting');
    expect(hits[0]?.matched).toEqual(expect.arrayContaining(['whenToUse', 'name', 'description']));
  });

  it('weighs triggers, name and tags above the description, and the description above the protocol', () => {
    const sources = [
      source('a-protocol', { protocolText: 'deploy' }),
      source('b-description', { description: 'deploy' }),
      source('c-trigger', { whenToUse: ['deploy'] }),
    ];
    expect(
      index(sources)
        .search({ query: 'deploy', limit: 10 })
        .map((hit) => hit.id),
    ).toEqual(['c-trigger', 'b-description', 'a-protocol']);
  });

  it('finds an English capability from a Chinese request and the reverse', () => {
    expect(registry.search({ query: '帮我写这周的周报', limit: 3 })[0]?.id).toBe('work-reporting');
    expect(registry.search({ query: '线上故障了，服务宕机', limit: 3 })[0]?.id).toBe('incident-response');
    const chinese = index([source('zh-report', { name: '周报', whenToUse: ['写周报'] }), source('zh-other', { name: '请假', whenToUse: ['申请休假'] })]);
    expect(chinese.search({ query: 'weekly report', limit: 3 })[0]?.id).toBe('zh-report');
  });

  it('tolerates a typo in a longer word', () => {
    expect(registry.search({ query: 'atuomation remnider', limit: 3 })[0]?.id).toBe('personal-automation');
  });

  it('answers a typo it has looked up before as the first time, also once the lookups a segment keeps (1,024) were emptied', () => {
    const sources = ['deployment', 'automation', 'reminder', 'invoices', 'calendar'].map((word) =>
      source(`c-${word}`, { name: word, whenToUse: [`${word} help`] }),
    );
    const kept = index(sources);
    const typo = (i: number): string => `zq${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + (Math.floor(i / 26) % 26))}x`;
    const first = kept.search({ query: 'atuomation remnider', limit: 3 });
    expect(first.map((hit) => hit.id).sort()).toEqual(['c-automation', 'c-reminder']);
    expect(kept.search({ query: 'atuomation remnider', limit: 3 })).toEqual(first);
    // 1,100 other typos fill the segment's lookups, which are emptied: the first are looked up again.
    for (let i = 0; i < 1_100; i += 1) kept.search({ query: typo(i), limit: 3 });
    expect(kept.search({ query: 'atuomation remnider', limit: 3 })).toEqual(first);
    expect(index(sources).search({ query: 'remnider atuomation', limit: 3 })).toEqual(kept.search({ query: 'remnider atuomation', limit: 3 }));
  });

  it('narrows by lifecyclePhase and tags; without a query answers in id order with score 0', () => {
    expect(registry.search({ tags: ['productivity'], limit: 10 })).toEqual([
      { id: 'personal-automation', score: 0, matched: ['tags'] },
      { id: 'work-reporting', score: 0, matched: ['tags'] },
    ]);
    expect(registry.search({ lifecyclePhase: 'build', tags: ['engineering'], limit: 10 }).map((hit) => hit.id)).toEqual(['test-driven-development']);
    expect(registry.search({ query: 'production outage', tags: ['productivity'], limit: 10 }).map((hit) => hit.id)).not.toContain('incident-response');
  });

  it('breaks ties by id and honours the limit', () => {
    const twins = index([source('b'), source('c'), source('a')].map((each) => ({ ...each, name: 'same', whenToUse: ['same words'] })));
    expect(twins.search({ query: 'same words', limit: 2 }).map((hit) => hit.id)).toEqual(['a', 'b']);
  });

  it('cuts at the limit exactly where the full ranking would, ties across the cut included', () => {
    // Ids inserted in reverse, one better capability and twelve tied ones: every limit is a prefix of the full answer.
    const tied = Array.from({ length: 12 }, (_, i) => source(`t${String(11 - i).padStart(2, '0')}`, { name: 'same', whenToUse: ['same words'] }));
    const ranked = index([...tied, source('best', { name: 'same words', whenToUse: ['same words', 'same'] })]);
    const full = ranked.search({ query: 'same words', limit: 50 });
    expect(full.map((hit) => hit.id)).toEqual(['best', ...tied.map((each) => each.id).sort()]);
    for (const limit of [1, 2, 5, 12, 13]) expect(ranked.search({ query: 'same words', limit })).toEqual(full.slice(0, limit));
  });

  it('still ranks on known words when a query also holds words no capability has', () => {
    // "productivity" stems to a term in 3 of the 4 capabilities; "gizmo" and "widgets" are in none.
    // Unknown words must not crowd the known ones out of the query (the answer used to be empty).
    const known = registry.search({ query: 'productivity', limit: 10 });
    expect(known.length).toBeGreaterThan(0);
    expect(registry.search({ query: 'productivity gizmo widgets', limit: 10 }).map((hit) => hit.id)).toEqual(known.map((hit) => hit.id));
    expect(registry.search({ query: 'weekly report for my nightly gizmo', limit: 1 }).map((hit) => hit.id)).toEqual(['work-reporting']);
  });

  it('answers nothing for a query of stop words alone', () => {
    expect(registry.search({ query: 'the and of', limit: 10 })).toEqual([]);
  });
});

describe('protocolSearchText', () => {
  it('takes headings, the tools table and the tools’ descriptions, not prose or code', () => {
    const protocol = [
      '# Weekly report',
      '',
      'Some prose that is not indexed.',
      '',
      '| Tool | Use |',
      '| --- | --- |',
      '| `submit_report` | send it |',
      '',
      '| Step | Why |',
      '| --- | --- |',
      '| ignored | row |',
      '```',
      '# not a heading',
      '```',
    ].join('\n');
    const text = protocolSearchText(protocol, (tool) => (tool === 'submit_report' ? 'Submit a report to the manager' : undefined));
    expect(text.split('\n')).toEqual(['Weekly report', '`submit_report` send it', 'Submit a report to the manager']);
  });

  it('reads a heading with a long run of spaces in linear time (the expression it replaces took 7 s at 4,000)', () => {
    const protocol = Array.from({ length: 2 }, () => `## a${' '.repeat(4_000)}b`).join('\n\n');
    const start = process.cpuUsage();
    const text = protocolSearchText(protocol, () => undefined);
    const used = process.cpuUsage(start);
    expect(text.split('\n')).toEqual(Array.from({ length: 2 }, () => `a${' '.repeat(4_000)}b`));
    expect((used.user + used.system) / 1000).toBeLessThan(500);
  });

  it('takes from a line exactly what /^#{1,6}\\s+(.+?)\\s*#*\\s*$/ captures', () => {
    const HEADING = /^#{1,6}\s+(.+?)\s*#*\s*$/;
    const line = fc.string({ unit: fc.constantFrom('#', ' ', '\t', 'a', 'b', '\r', '\u2028', '\u3000', '\u00a0'), maxLength: 14 });
    fc.assert(
      fc.property(line, (text) => headingText(text) === HEADING.exec(text)?.[1]),
      { numRuns: runs(20_000) },
    );
    for (const text of ['# a', '#  ', '# \u2028', '####### a', '# ##', '# a #b', '#\ta ## ', '## x\r', '# \r a'])
      expect(headingText(text)).toBe(HEADING.exec(text)?.[1]);
  });
});

describe('Segment.build', () => {
  it('yields between documents and builds the segment Segment.of builds', () => {
    const sources = Array.from({ length: 300 }, (_, i) =>
      source(`cap-${String(i).padStart(3, '0')}`, { name: `report ${i % 7}`, whenToUse: [`write the ${['weekly', 'monthly', '周报'][i % 3]} report`] }),
    );
    const analyzed = sources.map(analyzeCapability);
    const steps = Segment.build(analyzed);
    let yields = 0;
    let step = steps.next();
    while (step.done !== true) {
      yields += 1;
      step = steps.next();
    }
    // 300 documents, two passes over them: the build gave way several times.
    expect(yields).toBeGreaterThanOrEqual(8);
    const stepped = CapabilityIndex.view([{ segment: step.value }]);
    const whole = CapabilityIndex.view([{ segment: Segment.of(analyzed) }]);
    for (const query of ['weekly report', '周报', 'monthly', 'reprot 3']) {
      expect(stepped.search({ query, limit: 50 })).toEqual(whole.search({ query, limit: 50 }));
    }
  });
});

describe('analyze on ASCII text', () => {
  it('gives the terms the Unicode path gives (the fast path for ASCII changes nothing)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'abcXYZ019 -_.,;:!?\'"()[]{}/\\|@#$%^&*+=~`<>\t\n'.split('')), maxLength: 80 }), (text) => {
        // A non-ASCII character that analyze drops (not a letter, mark or digit) forces the Unicode path.
        expect(analyze(text)).toEqual(analyze(`${text}\u2003`));
      }),
      { numRuns: runs(500) },
    );
  });
});

describe('the bilingual dictionary (compiler/search/bilingual.json)', () => {
  const file = JSON.parse(readFileSync(fileURLToPath(new URL('../compiler/search/bilingual.json', import.meta.url)), 'utf8')) as {
    about: unknown;
    groups: unknown;
  };
  const groups = file.groups as string[][];

  it('is {"about", "groups"} with groups of strings', () => {
    expect(Object.keys(file).sort()).toEqual(['about', 'groups']);
    expect(typeof file.about).toBe('string');
    expect(Array.isArray(groups)).toBe(true);
    expect(groups.length).toBeGreaterThan(0);
    for (const group of groups) {
      expect(Array.isArray(group)).toBe(true);
      for (const word of group) expect(typeof word).toBe('string');
    }
  });

  it('has no empty or padded word and no word twice in a group', () => {
    const bad = groups.filter((group) => group.some((word) => word.trim() === '' || word !== word.trim()) || new Set(group).size !== group.length);
    expect(bad).toEqual([]);
  });

  it('gives every group an English word the analyzer keeps and a Chinese word of two characters or more', () => {
    const han = /\p{Script=Han}/u;
    const bad = groups.filter(
      (group) => !group.some((word) => !han.test(word) && analyze(word).length > 0) || !group.some((word) => han.test(word) && [...word].length > 1),
    );
    expect(bad).toEqual([]);
  });

  it('has no group twice (the same words in any order)', () => {
    const keys = groups.map((group) => [...group].map(normalizeText).sort().join('\u0000'));
    expect(keys.filter((key, i) => keys.indexOf(key) !== i)).toEqual([]);
  });
});

// The decision table of docs/gate.md, one row per case: a change to the fixture protocol, the level
// it needs and the reasons given (pure: no Git, no disk).
import { describe, expect, it } from 'vitest';
import { compareRegistries, requiredBump, type BumpLevel } from '../../compiler/gate/index.js';
import { parseCapability } from '../../compiler/parse.js';
import { REPORTS, REPORTS_FILE } from './fixture.js';

type Edit = [search: string | RegExp, replacement: string];

function changed(...edits: Edit[]): string {
  return edits.reduce((text, [search, replacement]) => {
    const next = text.replace(search, replacement);
    if (next === text) throw new Error(`edit not applied: ${String(search)}`);
    return next;
  }, REPORTS);
}

const cases: { name: string; after: string; level: BumpLevel | 'none'; reasons: string[] }[] = [
  { name: 'identical', after: REPORTS, level: 'none', reasons: [] },
  { name: 'CRLF line endings only', after: REPORTS.replace(/\n/g, '\r\n'), level: 'none', reasons: [] },
  {
    name: 'YAML layout and comments only',
    after: changed(['requiredToolsets: [work-logs]', '# who may see it\nrequiredToolsets:\n  - work-logs']),
    level: 'none',
    reasons: [],
  },
  { name: 'version fields only', after: changed(['1.2.3', '1.2.4'], ['2026-01-10', '2026-02-01']), level: 'none', reasons: [] },
  // major
  { name: 'requiredToolsets gained', after: changed(['[work-logs]', '[work-logs, billing]']), level: 'major', reasons: ['requiredToolsets gained `billing`'] },
  {
    name: 'tool removed from the tools table',
    after: changed(['| `work_log_list` | list entries |\n', '']),
    level: 'major',
    reasons: ['tools table lost `work_log_list`', 'protocol wording changed'],
  },
  { name: 'state removed', after: changed(['[PENDING, DONE]', '[PENDING]']), level: 'major', reasons: ['states lost `DONE`'] },
  {
    // What state-machine requires, in a registry that may have turned it off.
    name: "a declared state's entry removed from the body",
    after: changed(['- **DONE**: show the report exactly as returned.\n', '']),
    level: 'major',
    reasons: ['the body no longer names state `DONE`', 'protocol wording changed'],
  },
  { name: 'trigger removed', after: changed(['  - log my work\n', '']), level: 'major', reasons: ['whenToUse lost `log my work`'] },
  {
    name: 'retiredTools gained',
    after: changed(['states:', 'retiredTools: [work_log_archive]\nstates:']),
    level: 'major',
    reasons: ['retiredTools gained `work_log_archive`'],
  },
  {
    name: 'outputSchema added (judgement: minor)',
    after: changed(['states:', 'outputSchema: { type: object }\nstates:']),
    level: 'minor',
    reasons: ['outputSchema added'],
  },
  // minor
  {
    name: 'trigger added',
    after: changed(['  - log my work\n', '  - log my work\n  - send my report\n']),
    level: 'minor',
    reasons: ['whenToUse gained `send my report`'],
  },
  { name: 'optional toolset added', after: changed(['[calendar]', '[calendar, billing]']), level: 'minor', reasons: ['optionalToolsets gained `billing`'] },
  {
    name: 'optional toolset removed (judgement: minor)',
    after: changed(['optionalToolsets: [calendar]\n', '']),
    level: 'minor',
    reasons: ['optionalToolsets lost `calendar`'],
  },
  {
    name: 'requiredToolsets lost (judgement: minor, more callers see it)',
    after: changed(['[work-logs]', '[]']),
    level: 'minor',
    reasons: ['requiredToolsets lost `work-logs` (more callers can see it)'],
  },
  { name: 'state added', after: changed(['[PENDING, DONE]', '[PENDING, DONE, FAILED]']), level: 'minor', reasons: ['states gained `FAILED`'] },
  {
    name: 'tool added to the tools table',
    after: changed(['| `work_log_generate` | start a report |\n', '| `work_log_generate` | start a report |\n| `calendar_list` | find the week |\n']),
    level: 'minor',
    reasons: ['tools table gained `calendar_list`', 'protocol wording changed'],
  },
  {
    name: 'section added',
    after: `${REPORTS}\n## Sources\n\nCite the date of every entry.\n`,
    level: 'minor',
    reasons: ['section added: `Sources`', 'protocol wording changed'],
  },
  {
    name: 'section removed (judgement: minor)',
    after: changed(['## Rules\n\n', '']),
    level: 'minor',
    reasons: ['section removed: `Rules`', 'protocol wording changed'],
  },
  // patch
  { name: 'wording', after: changed(['add an entry', 'add one entry']), level: 'patch', reasons: ['protocol wording changed'] },
  {
    name: 'section renamed',
    after: changed(['## Rules', '## Ground rules']),
    level: 'patch',
    reasons: ['section renamed: `Rules → Ground rules`', 'protocol wording changed'],
  },
  {
    name: 'trigger reworded in case only',
    after: changed(['write my report', 'Write my report']),
    level: 'patch',
    reasons: ['whenToUse reworded (case or spacing): `write my report → Write my report`'],
  },
  {
    name: 'triggers reordered',
    after: changed(['  - write my report\n  - log my work', '  - log my work\n  - write my report']),
    level: 'patch',
    reasons: ['whenToUse reordered'],
  },
  {
    name: 'description changed',
    after: changed(['Writes work reports', 'Writes work reports and summaries']),
    level: 'patch',
    reasons: ['description changed'],
  },
  { name: 'tags added', after: changed(['states:', 'tags: [reports]\nstates:']), level: 'patch', reasons: ['tags changed'] },
];

describe('requiredBump', () => {
  const before = parseCapability(REPORTS_FILE, REPORTS);
  for (const testCase of cases) {
    it(testCase.name, () => {
      const result = requiredBump(before, parseCapability(REPORTS_FILE, testCase.after));
      expect({ level: result.level, reasons: result.reasons.map((reason) => reason.text) }).toEqual({ level: testCase.level, reasons: testCase.reasons });
    });
  }

  it('a long heading renamed is quoted cut on each side of the arrow, so the new name shows', () => {
    // Each item was cut at 100 characters whole: a heading of 150 renamed to "Ground rules" read
    // `RRR…RRR…`, the arrow and the new name gone.
    const long = 'R'.repeat(150);
    const result = requiredBump(
      parseCapability(REPORTS_FILE, changed(['## Rules', `## ${long}`])),
      parseCapability(REPORTS_FILE, changed(['## Rules', '## Ground rules'])),
    );
    expect(result.reasons.map((reason) => reason.text)).toEqual([`section renamed: \`${'R'.repeat(47)}… → Ground rules\``, 'protocol wording changed']);
  });

  const withExtras = changed(['states:', 'retiredTools: [work_log_archive]\nscopeConstraints: [work log, reports]\noutputSchema: { type: object }\nstates:']);
  const extrasBefore = parseCapability(REPORTS_FILE, withExtras);
  const judged: { name: string; edit: Edit; level: BumpLevel; reason: string }[] = [
    { name: 'retiredTools entry dropped', edit: ['retiredTools: [work_log_archive]\n', ''], level: 'minor', reason: 'retiredTools lost `work_log_archive`' },
    { name: 'scopeConstraints lost (narrower reach)', edit: ['[work log, reports]', '[work log]'], level: 'major', reason: 'scopeConstraints lost `reports`' },
    {
      name: 'scopeConstraints gained',
      edit: ['[work log, reports]', '[work log, reports, calendar]'],
      level: 'minor',
      reason: 'scopeConstraints gained `calendar`',
    },
    { name: 'outputSchema changed', edit: ['{ type: object }', '{ type: array }'], level: 'major', reason: 'outputSchema changed' },
    { name: 'outputSchema removed', edit: ['outputSchema: { type: object }\n', ''], level: 'major', reason: 'outputSchema removed' },
  ];
  for (const testCase of judged) {
    it(testCase.name, () => {
      const result = requiredBump(extrasBefore, parseCapability(REPORTS_FILE, withExtras.replace(testCase.edit[0], testCase.edit[1])));
      expect(result.level).toBe(testCase.level);
      expect(result.reasons[0]?.text).toBe(testCase.reason);
    });
  }

  it('compares constraints item by item: two unchanged constraints and a reworded body need only a patch', () => {
    const constraints = [
      'constraints:',
      '  - { rationalization: "the user is in a hurry", rebuttal: "a wrong report costs more", severity: block }',
      '  - { rationalization: "the log looks complete", rebuttal: "ask for missing days", severity: warn }',
      '  - { rationalization: "it is only a draft", rebuttal: "drafts get sent", severity: must-ignore }',
      'states:',
    ].join('\n');
    const withConstraints = changed(['states:', constraints]);
    const result = requiredBump(
      parseCapability(REPORTS_FILE, withConstraints),
      parseCapability(REPORTS_FILE, withConstraints.replace('add an entry', 'add one entry')),
    );
    expect({ level: result.level, reasons: result.reasons.map((reason) => reason.text) }).toEqual({ level: 'patch', reasons: ['protocol wording changed'] });
  });

  it('a list field that is not a list of names on one side (a lowered schema rule) needs a major bump when it changed', () => {
    for (const [field, edit] of [
      ['requiredToolsets', ['[work-logs]', '[work-logs, billing, 0]']],
      ['whenToUse', ['  - log my work\n', '  - { log: my work }\n']],
      ['states', ['[PENDING, DONE]', '[PENDING, [DONE]]']],
    ] as const) {
      const result = requiredBump(before, parseCapability(REPORTS_FILE, changed([edit[0], edit[1]])));
      expect(result.level, field).toBe('major');
      expect(result.reasons[0]?.text, field).toBe(`${field} changed and is not a list of names on both sides, so what it gained or lost is unknown`);
    }
  });

  it('a schema whose properties only changed order: the served protocol lists them as written, so a patch', () => {
    const total = 'total: { type: number }';
    const rows = 'rows: { type: array }';
    const schema = (first: string, second: string): string =>
      changed(['states:', `outputSchema: { type: object, properties: { ${first}, ${second} } }\nstates:`]);
    const result = requiredBump(parseCapability(REPORTS_FILE, schema(total, rows)), parseCapability(REPORTS_FILE, schema(rows, total)));
    expect({ level: result.level, reasons: result.reasons.map((reason) => reason.text) }).toEqual({
      level: 'patch',
      reasons: ['outputSchema properties reordered'],
    });
    // And the gate does not take it for YAML layout: unbumped, it fails.
    const gate = compareRegistries([parseCapability(REPORTS_FILE, schema(total, rows))], [parseCapability(REPORTS_FILE, schema(rows, total))]);
    expect(gate.changes[0]).toMatchObject({ kind: 'changed', verdict: 'fail', required: { level: 'patch' } });
  });

  it('puts the decisive reasons first and keeps the lesser ones', () => {
    const result = requiredBump(
      before,
      parseCapability(REPORTS_FILE, changed(['add an entry', 'add one entry'], ['  - log my work\n', ''], ['[calendar]', '[calendar, billing]'])),
    );
    expect(result.reasons.map((reason) => [reason.level, reason.text])).toEqual([
      ['major', 'whenToUse lost `log my work`'],
      ['minor', 'optionalToolsets gained `billing`'],
      ['patch', 'protocol wording changed'],
    ]);
  });

  it('lists at most five items and counts the rest', () => {
    const many = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((t) => `  - trigger ${t}\n`).join('');
    const result = requiredBump(before, parseCapability(REPORTS_FILE, changed(['  - log my work\n', `  - log my work\n${many}`])));
    expect(result.reasons[0]?.text).toBe('whenToUse gained `trigger a`, `trigger b`, `trigger c`, `trigger d`, `trigger e` and 2 more');
  });
});

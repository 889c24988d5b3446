import { describe, expect, it } from 'vitest';
import { catalogReferences } from '../../compiler/rules/catalog-references.js';
import { protocol, registryInput } from '../support/registry.js';
import { lintWith, ruleTable } from './harness.js';
import { lintWithoutPositions } from './without-positions.js';

// protocol() writes 9 frontmatter lines plus two fences: the body starts on line 11.
const DR = 'capabilities/daily-report/PROTOCOL.md';
const PA = 'capabilities/personal-automation/PROTOCOL.md';
const pa = (body = 'Never guess.\n'): string => protocol({ id: 'personal-automation' }, body);

ruleTable(catalogReferences, {
  valid: [
    {
      name: 'an inline capability: link to an existing capability',
      files: { [PA]: pa(), [DR]: protocol({ id: 'daily-report' }, 'Load [personal-automation](capability:personal-automation).\n') },
    },
    {
      name: 'the text of a capability: link with a label',
      files: { [PA]: pa(), [DR]: protocol({ id: 'daily-report' }, 'Load [the personal-automation protocol](capability:personal-automation).\n') },
    },
    {
      name: 'a capability naming its own id',
      files: { [DR]: protocol({ id: 'daily-report' }, 'The daily-report protocol. Never guess.\n') },
    },
    {
      name: 'a relative link inside its own folder, even through ../',
      files: {
        [DR]: protocol({ id: 'daily-report' }, 'See [notes](references/a.md) and [again](../daily-report/references/a.md).\n'),
        'capabilities/daily-report/references/a.md': 'notes',
      },
    },
    {
      name: 'ids inside longer words, URLs and fenced code',
      files: {
        [PA]: pa(),
        [DR]: protocol(
          { id: 'daily-report' },
          'A non-personal-automation-x word, personal-automation_tool, personal-automations.\n\n' +
            '-personal-automation, personal-automation-, x_personal-automation, personal--automation.\n\n' +
            'See [docs](https://example.com/personal-automation) and <https://example.com/personal-automation>.\n\n' +
            '```\npersonal-automation\n```\n',
        ),
      },
    },
    {
      name: 'a one-word id in prose is not looked for by default',
      files: {
        'capabilities/review/PROTOCOL.md': protocol({ id: 'review' }),
        [DR]: protocol({ id: 'daily-report' }, 'Review the report before you send it. Never guess.\n'),
      },
    },
    {
      name: 'mentions off',
      options: { mentions: 'off' },
      files: { [PA]: pa(), [DR]: protocol({ id: 'daily-report' }, 'Then use personal-automation.\n') },
    },
    {
      name: 'a case-different spelling is not the id',
      files: { [PA]: pa(), [DR]: protocol({ id: 'daily-report' }, 'Personal-Automation is a product name here.\n') },
    },
    {
      name: 'empty body and broken frontmatter do not crash',
      files: {
        [PA]: '---\nid: personal-automation\n---\n',
        [DR]: '---\nname: [unclosed\n---\nUse [x](capability:personal-automation).\n',
        'capabilities/no-frontmatter/PROTOCOL.md': '',
      },
    },
  ],
  invalid: [
    {
      name: 'unknown target, with a suggestion',
      files: { [PA]: pa(), [DR]: protocol({ id: 'daily-report' }, 'Then load [it](capability:personal-automaton).\n') },
      errors: [
        {
          messageId: 'unknown',
          file: DR,
          line: 11,
          column: 11,
          endColumn: 46,
          message:
            'link target "capability:personal-automaton" is not a capability in this registry; link to the id of an existing capability; did you mean "personal-automation"?',
        },
      ],
    },
    {
      name: 'unknown target, nothing close',
      files: { [DR]: protocol({ id: 'daily-report' }, 'Intro.\n\n- Load [x](capability:expenses).\n') },
      errors: [{ messageId: 'unknown', line: 13, column: 8, message: '"capability:expenses" is not a capability in this registry; link to the id' }],
    },
    {
      name: 'unknown target that is a prefix of an id',
      files: { [PA]: pa(), [DR]: protocol({ id: 'daily-report' }, 'Load [x](capability:personal).\n') },
      errors: [
        {
          messageId: 'unknown',
          file: DR,
          line: 11,
          column: 6,
          message: '"capability:personal" is not a capability in this registry; link to the id of an existing capability; did you mean "personal-automation"?',
        },
      ],
    },
    {
      name: 'empty capability: target',
      files: { [DR]: protocol({ id: 'daily-report' }, 'Load [x](capability:).\n') },
      errors: [{ messageId: 'empty', line: 11, column: 6 }],
    },
    {
      name: 'a link to itself',
      files: { [DR]: protocol({ id: 'daily-report' }, 'Start over with [this](capability:daily-report).\n') },
      errors: [{ messageId: 'self', line: 11, column: 17, message: 'capability "daily-report" links to itself' }],
    },
    {
      name: "relative links into another capability's folder",
      files: {
        [PA]: pa(),
        'capabilities/personal-automation/references/a.md': 'x',
        [DR]: protocol(
          { id: 'daily-report' },
          'Read [it](../personal-automation/PROTOCOL.md).\n\n![diagram](../personal-automation/references/a.md)\n\n[def]: ./../personal-automation\n',
        ),
      },
      errors: [
        {
          messageId: 'relative',
          file: DR,
          line: 11,
          column: 6,
          message:
            'relative link "../personal-automation/PROTOCOL.md" points into the folder of capability "personal-automation"; reference another capability only through the catalog: [personal-automation](capability:personal-automation)',
        },
        {
          messageId: 'relative',
          file: DR,
          line: 13,
          column: 1,
          message: '"../personal-automation/references/a.md" points into the folder of capability "personal-automation"',
        },
        { messageId: 'relative', file: DR, line: 15, column: 1, message: '"./../personal-automation" points into the folder' },
      ],
    },
    {
      name: 'reference-style definition and image with a capability: URL are not rendered',
      files: {
        [PA]: pa(),
        [DR]: protocol({ id: 'daily-report' }, 'Load [automation][pa].\n\n[pa]: capability:personal-automation\n\n![x](capability:personal-automation)\n'),
      },
      errors: [
        {
          messageId: 'notInline',
          file: DR,
          line: 13,
          column: 1,
          message: '`capability:personal-automation` in a reference-style link definition is not rendered',
        },
        { messageId: 'notInline', file: DR, line: 15, column: 1, message: 'in an image is not rendered' },
      ],
    },
    {
      name: 'plain-text mention: a warning at the exact word, even when the rule is an error',
      files: { [PA]: pa(), [DR]: protocol({ id: 'daily-report' }, 'Intro.\n\nFor schedules use personal-automation, then stop.\n') },
      errors: [
        {
          messageId: 'mention',
          file: DR,
          line: 13,
          column: 19,
          endLine: 13,
          endColumn: 38,
          severity: 'warning',
          message: 'capability "personal-automation" is named in plain text; make it a catalog reference [personal-automation](capability:personal-automation)',
        },
      ],
    },
    {
      name: 'mentions in Chinese text, inline code, link text and list items; a linked one is fine',
      files: {
        [PA]: pa(),
        [DR]: protocol(
          { id: 'daily-report' },
          '定时任务请使用personal-automation。\n\n' +
            '- Call `personal-automation` first.\n' +
            '- See [personal-automation docs](https://example.com/x) or [personal-automation](capability:personal-automation).\n',
        ),
      },
      errors: [
        {
          messageId: 'mention',
          file: DR,
          line: 11,
          column: 8,
          endColumn: 27,
          severity: 'warning',
          message: 'capability "personal-automation" is named in plain text',
        },
        { messageId: 'mention', file: DR, line: 13, column: 9, severity: 'warning', message: 'capability "personal-automation"' },
        { messageId: 'mention', file: DR, line: 14, column: 8, severity: 'warning', message: 'capability "personal-automation"' },
      ],
    },
    {
      name: 'mentions: all looks for one-word ids too',
      options: { mentions: 'all' },
      files: {
        'capabilities/review/PROTOCOL.md': protocol({ id: 'review' }),
        [DR]: protocol({ id: 'daily-report' }, 'Then review it; a Review is not the id.\n'),
      },
      errors: [{ messageId: 'mention', file: DR, line: 11, column: 6, severity: 'warning', message: 'capability "review" is named in plain text' }],
    },
    {
      name: 'every problem in one run, each once',
      files: {
        [PA]: pa('Link back to [daily-report](capability:daily-report), not [x](capability:nope).\n'),
        [DR]: protocol({ id: 'daily-report' }, 'Use [pa](capability:personal-automation) and personal-automation.\n'),
      },
      errors: [
        { messageId: 'mention', file: DR, line: 11, column: 46, severity: 'warning', message: 'capability "personal-automation" is named in plain text' },
        { messageId: 'unknown', file: PA, line: 11, column: 59, message: '"capability:nope" is not a capability' },
      ],
    },
  ],
});

describe('catalog-references documented example and without positions', () => {
  const files = {
    [PA]: pa(),
    'capabilities/personal-automation/references/times.md': 'x',
    'capabilities/work-reporting/PROTOCOL.md': protocol(
      { id: 'work-reporting', name: 'Work reporting', description: 'Writes reports from the work log.', whenToUse: ['write my weekly report'] },
      '# Work reporting\n\nFor reports on a schedule, load [automation](capability:personal-automaton).\n' +
        'Time zones are explained in [the notes](../personal-automation/references/times.md).\n' +
        'If a reminder is wanted too, use personal-automation.\n\nNever invent figures.\n',
    ),
  };

  it('prints what docs/rules/catalog-references.md shows', () => {
    expect(lintWith(catalogReferences, registryInput(files)).map((d) => `${d.line}:${d.column} ${d.severity} ${d.message}`)).toEqual([
      '13:33 error link target "capability:personal-automaton" is not a capability in this registry; link to the id of an existing capability; did you mean "personal-automation"?',
      '14:29 error relative link "../personal-automation/references/times.md" points into the folder of capability "personal-automation"; reference another capability only through the catalog: [personal-automation](capability:personal-automation)',
      '15:34 warning capability "personal-automation" is named in plain text; make it a catalog reference [personal-automation](capability:personal-automation) so that the agent loads it through the catalog',
    ]);
  });

  it('does not crash when the parser gives no positions', () => {
    // Without link ranges, the id inside the relative link's URL is found as a mention too.
    expect(lintWithoutPositions(catalogReferences, files).length).toBe(4);
  });
});

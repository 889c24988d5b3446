import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../compiler/config.js';
import { DEFAULT_PROHIBITION_MARKERS, isProhibition, splitSentences } from '../../compiler/prohibitions.js';
import { negativeRules } from '../../compiler/rules/negative-rules.js';
import { protocol } from '../support/registry.js';
import { ruleTable } from './harness.js';
import { optionsEditCase } from './kept-facts.js';
import { EVERYTHING, lintWithoutPositions } from './without-positions.js';

const FILE = 'capabilities/alpha/PROTOCOL.md';
// protocol({id}) puts 9 frontmatter lines between the fences: the body starts on line 11.
const withBody = (body: string): Record<string, string> => ({ [FILE]: protocol({ id: 'alpha' }, body) });

ruleTable(negativeRules, {
  valid: [
    { name: '"do not" in a paragraph', files: withBody('Do not guess.\n') },
    { name: 'upper-case NEVER', files: withBody('# Rules\n\nNEVER invent figures.\n') },
    { name: 'curly apostrophe', files: withBody('Don’t invent figures.\n') },
    { name: 'marker wrapped across lines', files: withBody('You must\nnot invent figures.\n') },
    { name: 'in a list item', files: withBody('## Rules\n\n- Ask first.\n- Never delete entries in bulk.\n') },
    { name: 'in a table row', files: withBody('| Case | Rule |\n| --- | --- |\n| bulk delete | is not allowed |\n') },
    { name: 'in a heading', files: withBody('## Never\n\n- delete entries in bulk.\n') },
    { name: 'Chinese 不要', files: withBody('不要编造数据。\n') },
    { name: 'Chinese 切勿 inside a sentence', files: withBody('- 记录时切勿添加用户没有说过的内容。\n') },
    { name: 'Chinese 禁止 after other characters', files: withBody('严格禁止删除条目。\n') },
    { name: 'configured markers', files: withBody('Avoid guessing.\n'), options: { markers: ['avoid'] } },
    {
      name: 'one capability of two with a prohibition each',
      files: { [FILE]: protocol({ id: 'alpha' }), 'capabilities/beta/PROTOCOL.md': protocol({ id: 'beta' }, '勿删除。\n') },
    },
  ],
  invalid: [
    {
      name: 'no prohibition at all',
      files: withBody('Be helpful.\n'),
      errors: [{ messageId: 'missing', line: 11, column: 1, endLine: 11, endColumn: 12, message: 'the protocol states no explicit prohibition' }],
    },
    {
      name: 'the message lists markers, English and Chinese',
      files: withBody('Be helpful.\n'),
      errors: [{ messageId: 'missing', line: 11, column: 1, message: /add at least one rule .*"do not", "don't", "never", "不要", "禁止"/ }],
    },
    {
      name: 'words that contain a marker are not markers',
      files: withBody('Nevertheless, whenever asked, answer. Donate nothing.\n'),
      errors: [{ messageId: 'missing', line: 11, column: 1 }],
    },
    {
      name: 'a marker inside a fenced code block is not a rule',
      files: withBody('# Title\n\n```text\ndo not guess\n```\n'),
      errors: [{ messageId: 'missing', line: 11, column: 1, endColumn: 8 }],
    },
    {
      name: 'reported at the first non-blank line of the body',
      files: withBody('\n\n  Be kind.\n'),
      errors: [{ messageId: 'missing', line: 13, column: 3, endColumn: 11 }],
    },
    {
      name: 'empty body: reported at the start of the file',
      files: withBody(''),
      errors: [{ messageId: 'missing', line: 1, column: 1 }],
    },
    {
      name: 'frontmatter that fails the schema',
      files: { [FILE]: '---\nname: A\nstates: 3\n---\nBe kind.\n' },
      errors: [{ messageId: 'missing', line: 5, column: 1 }],
    },
    {
      name: 'no frontmatter at all',
      files: { [FILE]: 'Be kind.\n' },
      errors: [{ messageId: 'missing', line: 1, column: 1 }],
    },
    {
      name: 'Chinese without a marker (不能 is "unable to", not a default marker)',
      files: withBody('如果不能连接，请重试。\n'),
      errors: [{ messageId: 'missing', line: 11, column: 1, message: '不要' }],
    },
    {
      name: 'configured markers replace the defaults',
      files: withBody('Do not guess.\n'),
      options: { markers: ['avoid', '别'] },
      errors: [{ messageId: 'missing', line: 11, column: 1, message: '"avoid", "别"' }],
    },
    {
      name: 'level warn',
      files: withBody('Be helpful.\n'),
      level: 'warn',
      errors: [{ messageId: 'missing', line: 11, column: 1, severity: 'warning' }],
    },
  ],
});

describe('prohibitions', () => {
  it('splits English and Chinese sentences, keeping abbreviations and decimals', () => {
    expect(splitSentences('Poll every 1.5 s. Never loop, e.g. more than twice! 不要重试。继续？ok').map((s) => s.text)).toEqual([
      'Poll every 1.5 s.',
      'Never loop, e.g. more than twice!',
      '不要重试。',
      '继续？',
      'ok',
    ]);
  });

  it('matches markers on word boundaries, case-insensitively', () => {
    expect(isProhibition('You MUST NOT call it')).toBe(true);
    expect(isProhibition('whenever it fails')).toBe(false);
    expect(isProhibition('调用前切勿猜测')).toBe(true);
    expect(isProhibition('Avoid it')).toBe(false);
    expect(DEFAULT_PROHIBITION_MARKERS).toContain('绝不');
  });
});

describe('negative-rules options', () => {
  const config =
    (options: string): (() => unknown) =>
    () =>
      parseConfig(`rules:\n  negative-rules: [error, ${options}]\n`);

  it('accepts a list of markers', () => {
    expect(parseConfig('rules:\n  negative-rules: [error, {markers: [avoid, 别]}]\n').rules.get('negative-rules')?.options).toEqual({
      markers: ['avoid', '别'],
    });
  });

  it('refuses an empty list, empty strings and unknown options', () => {
    expect(config('{markers: []}')).toThrow(ConfigError);
    expect(config('{markers: [""]}')).toThrow(ConfigError);
    expect(config('{markers: ["  "]}')).toThrow(ConfigError);
    expect(config('{markers: avoid}')).toThrow(ConfigError);
    expect(config('{marker: [avoid]}')).toThrow(/unknown option "marker"; did you mean "markers"/);
  });
});

// Whether a protocol forbids something rests on the markers: a fact whose key missed them would
// keep the answer for the old markers (the rule-table harness derives every fact with the case's
// options first, so it cannot show this).
describe('negative-rules with facts kept across an options edit', () => {
  optionsEditCase(negativeRules, 'default markers, then only "avoid"', withBody('Never guess.\n'), {}, { markers: ['avoid'] });
  optionsEditCase(negativeRules, '"avoid", then the default markers', withBody('Never guess.\n'), { markers: ['avoid'] }, {});
});

describe('negative-rules without positions', () => {
  it('does not crash when the parser gives no positions', () => {
    expect(lintWithoutPositions(negativeRules, EVERYTHING).length).toBeGreaterThan(0);
  });
});

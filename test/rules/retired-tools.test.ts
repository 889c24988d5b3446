import { describe, expect, it } from 'vitest';
import { matchesRetiredEntry, retiredEntryPattern } from '../../compiler/mentions.js';
import { retiredTools } from '../../compiler/rules/retired-tools.js';
import { protocol } from '../support/registry.js';
import { ruleTable } from './harness.js';
import { optionsEditCase } from './kept-facts.js';
import { EVERYTHING, lintWithoutPositions } from './without-positions.js';

const FILE = 'capabilities/alpha/PROTOCOL.md';
// With one `retiredTools` entry the entry is on line 11 (column 5) and the body starts on line 13;
// with two entries they are on lines 11 and 12 and the body starts on line 14.
const glob = (body: string): Record<string, string> => ({ [FILE]: protocol({ id: 'alpha', retiredTools: ['work_log_schedule_*'] }, body) });
const named = (body: string): Record<string, string> => ({ [FILE]: protocol({ id: 'alpha', retiredTools: ['old_tool'] }, body) });

ruleTable(retiredTools, {
  valid: [
    { name: 'glob forbidden by name', files: glob('Never call the retired `work_log_schedule_*` tools; they no longer exist.\n') },
    { name: 'glob forbidden through one of its tools', files: glob('Do not call `work_log_schedule_create`.\n') },
    { name: 'escaped star in the source', files: glob('Never call work_log_schedule_\\* tools.\n') },
    { name: 'in a list item', files: glob('## Never\n\n- Never call `work_log_schedule_*`: schedules live elsewhere.\n') },
    { name: 'in a table row', files: glob('| Retired | Rule |\n| --- | --- |\n| `work_log_schedule_*` | must not be called |\n') },
    { name: 'Chinese prohibition', files: glob('切勿调用已退役的 `work_log_schedule_*` 工具。\n') },
    { name: 'Chinese text around the name, no spaces', files: named('禁止调用old_tool工具。\n') },
    { name: 'exact name', files: named('Never use old_tool; use new_tool instead.\n') },
    { name: 'one forbidding sentence is enough', files: named('`old_tool` was removed. Never call old_tool.\n') },
    { name: 'an abbreviation does not end the sentence', files: named('Never call the retired tools, e.g. `old_tool`.\n') },
    { name: 'configured markers', files: named('Avoid old_tool.\n'), options: { markers: ['avoid'] } },
    { name: 'no retiredTools', files: { [FILE]: protocol({ id: 'alpha' }, 'Use old_tool.\n') } },
    {
      name: "retiredTools of the wrong type is the schema rule's business",
      files: { [FILE]: protocol({ id: 'alpha', retiredTools: 'old_tool' }, 'Use old_tool.\n') },
    },
    { name: 'no frontmatter', files: { [FILE]: 'Use old_tool.\n' } },
    { name: "malformed entries are the schema rule's business", files: { [FILE]: protocol({ id: 'alpha', retiredTools: ['*', 'bad tool!', ''] }) } },
  ],
  invalid: [
    {
      name: 'not named: reported at the entry',
      files: glob('Do not guess.\n'),
      errors: [
        { messageId: 'notNamed', line: 11, column: 5, endColumn: 24, message: 'retired tool `work_log_schedule_*` is not named in the body; forbid it' },
      ],
    },
    {
      name: 'named outside a prohibition: reported at the mention',
      files: glob('Use `work_log_schedule_create` for schedules.\nDo not guess.\n'),
      errors: [
        {
          messageId: 'notForbidden',
          line: 13,
          column: 6,
          endColumn: 30,
          message: '`work_log_schedule_create` is a retired tool (`retiredTools: work_log_schedule_*`) but no sentence that names it forbids it',
        },
      ],
    },
    {
      name: 'marker in another sentence of the same paragraph',
      files: named('The `old_tool` tool is retired. Do not guess.\n'),
      errors: [{ messageId: 'notForbidden', line: 13, column: 6, endColumn: 14, message: 'no sentence that names it forbids it' }],
    },
    {
      name: 'marker in another block',
      files: named('Never guess.\n\n- old_tool: retired\n'),
      errors: [{ messageId: 'notForbidden', line: 15, column: 3, message: '`old_tool` is a retired tool' }],
    },
    {
      name: 'named only in a code block',
      files: named('Never guess.\n\n```js\nold_tool()\n```\n'),
      errors: [{ messageId: 'notForbidden', line: 16, column: 1 }],
    },
    {
      name: 'a word that contains a marker is not a marker',
      files: named('Nevertheless old_tool works.\n'),
      errors: [{ messageId: 'notForbidden', line: 13, column: 14 }],
    },
    {
      name: 'the prefix without the glob star is not a mention',
      files: glob('Never call work_log_schedule tools.\n'),
      errors: [{ messageId: 'notNamed', line: 11, column: 5, message: 'not named in the body' }],
    },
    {
      name: 'a longer name is not a mention of an exact entry',
      files: named('Never call old_tools or my_old_tool.\n'),
      errors: [{ messageId: 'notNamed', line: 11, column: 5, message: 'retired tool `old_tool` is not named' }],
    },
    {
      name: 'Chinese without a marker',
      files: named('使用 `old_tool` 创建计划。\n'),
      errors: [{ messageId: 'notForbidden', line: 13, column: 5, message: '`old_tool` is a retired tool' }],
    },
    {
      name: 'configured markers replace the defaults',
      files: named('Never call old_tool.\n'),
      options: { markers: ['avoid'] },
      errors: [{ messageId: 'notForbidden', line: 13, column: 12, message: 'a marker such as "avoid"' }],
    },
    {
      name: 'each entry on its own',
      files: { [FILE]: protocol({ id: 'alpha', retiredTools: ['old_tool', 'work_log_schedule_*'] }, 'Never call old_tool.\nUse work_log_schedule_x.\n') },
      errors: [{ messageId: 'notForbidden', line: 15, column: 5, message: '`work_log_schedule_x` is a retired tool' }],
    },
    {
      name: 'two entries, both missing: each at its own YAML item',
      files: { [FILE]: protocol({ id: 'alpha', retiredTools: ['old_tool', 'work_log_schedule_*'] }, 'Do not guess.\n') },
      errors: [
        { messageId: 'notNamed', line: 11, column: 5, message: '`old_tool`' },
        { messageId: 'notNamed', line: 12, column: 5, message: '`work_log_schedule_*`' },
      ],
    },
    {
      name: 'level warn',
      files: named('Do not guess.\n'),
      level: 'warn',
      errors: [{ messageId: 'notNamed', line: 11, column: 5, severity: 'warning' }],
    },
  ],
});

describe('retired entry matching', () => {
  it('matches globs by prefix and names exactly', () => {
    expect(matchesRetiredEntry('work_log_schedule_create', 'work_log_schedule_*')).toBe(true);
    expect(matchesRetiredEntry('work_log_schedule', 'work_log_schedule_*')).toBe(false);
    expect(matchesRetiredEntry('old_tool', 'old_tool')).toBe(true);
    expect(matchesRetiredEntry('old_tools', 'old_tool')).toBe(false);
  });

  it('finds glob mentions in text', () => {
    const found = (text: string): string[] => [...text.matchAll(retiredEntryPattern('work_log_schedule_*'))].map((m) => m[0]);
    expect(found('a work_log_schedule_* b work_log_schedule_run. my_work_log_schedule_x')).toEqual(['work_log_schedule_*', 'work_log_schedule_run']);
  });
});

describe('retired-tools without positions', () => {
  it('does not crash when the parser gives no positions', () => {
    expect(lintWithoutPositions(retiredTools, EVERYTHING).length).toBeGreaterThan(0);
  });
});

describe('retired-tools with facts kept between compiles', () => {
  // Forbidden with the default markers, not with `avoid`: facts kept from the defaults would say nothing.
  optionsEditCase(retiredTools, 'markers changed: they are part of the fact', named('Never call old_tool.\n'), {}, { markers: ['avoid'] });
});

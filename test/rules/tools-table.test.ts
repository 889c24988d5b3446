import { describe, expect, it } from 'vitest';
import { toolsTable } from '../../compiler/rules/tools-table.js';
import { protocol } from '../support/registry.js';
import { ruleTable } from './harness.js';
import { toolsetsEditCase } from './kept-facts.js';
import { EVERYTHING, lintWithoutPositions } from './without-positions.js';

const FILE = 'capabilities/alpha/PROTOCOL.md';
// protocol({id, requiredToolsets: [work-logs]}): `requiredToolsets:` on line 7, its item on line 8,
// body from line 12. With TABLE the header row is line 14 and the rows are lines 16-18.
const TABLE = (rows: string[]): string =>
  `## Tools\n\n| Tool | Use it to |\n| --- | --- |\n${rows.map((row) => `| ${row} | do it |\n`).join('')}\nDo not guess.\n`;
const ALL = ['`work_log_record`', '`work_log_list`', '`work_log_generate`'];
const workLogs = (body: string, fields: Record<string, unknown> = {}): Record<string, string> => ({
  [FILE]: protocol({ id: 'alpha', requiredToolsets: ['work-logs'], ...fields }, body),
});

ruleTable(toolsTable, {
  valid: [
    { name: 'every tool of the required toolset', files: workLogs(TABLE(ALL)) },
    { name: 'trailing () and no backticks', files: workLogs(TABLE(['work_log_record()', 'work_log_list', 'work_log_generate'])) },
    {
      name: 'a tool of an optional toolset',
      files: workLogs(TABLE([...ALL, '`automation_list_tasks`']), { optionalToolsets: ['automation'] }),
    },
    { name: 'tools spread over two tables', files: workLogs(`${TABLE(ALL.slice(0, 1))}\n${TABLE(ALL.slice(1))}`) },
    {
      name: '"Tool name" header and Chinese text',
      files: workLogs(
        '## 工具\n\n| Tool name | 用途 |\n| --- | --- |\n| work_log_record | 记录 |\n| work_log_list | 列出 |\n| work_log_generate | 生成 |\n\n不要猜测。\n',
      ),
    },
    { name: 'no toolsets and no table', files: { [FILE]: protocol({ id: 'alpha' }) } },
    { name: 'a table that is not a tools table', files: { [FILE]: protocol({ id: 'alpha' }, '| Name | Use |\n| --- | --- |\n| nothing_here | x |\n') } },
    {
      name: 'requiredToolsets that failed the schema: toolsets unknown, nothing checked',
      files: { [FILE]: protocol({ id: 'alpha', requiredToolsets: 'work-logs' }, TABLE(['`no_such_tool`'])) },
    },
    { name: 'no frontmatter', files: { [FILE]: TABLE(['`no_such_tool`']) } },
    { name: 'empty body, no toolsets', files: { [FILE]: protocol({ id: 'alpha' }, '') } },
    {
      name: 'toolsets.yaml missing: toolsets-schema reports it',
      files: { 'capabilities/toolsets.yaml': null, [FILE]: protocol({ id: 'alpha', requiredToolsets: ['work-logs'] }, TABLE(['`x`'])) },
    },
  ],
  invalid: [
    {
      name: 'a tool that no toolset defines, with a suggestion',
      files: workLogs(TABLE(['`work_log_recrod`', '`work_log_list`', '`work_log_generate`'])),
      errors: [
        {
          messageId: 'omitted',
          line: 14,
          column: 1,
          severity: 'warning',
          message: 'the tools table has no row for `work_log_record` of required toolset work-logs',
        },
        {
          messageId: 'unknownTool',
          line: 16,
          column: 4,
          endColumn: 19,
          message:
            'tool `work_log_recrod` is not defined in any toolset of capabilities/toolsets.yaml; list only tools of this capability\'s toolsets (work-logs); did you mean "work_log_record"?',
        },
      ],
    },
    {
      name: 'a tool of a toolset the capability does not use',
      files: workLogs(TABLE([...ALL, 'automation_create_task()'])),
      errors: [
        {
          messageId: 'foreignTool',
          line: 19,
          column: 3,
          endColumn: 25,
          message:
            'tool `automation_create_task` belongs to toolset automation, which this capability neither requires nor lists as optional (work-logs); add automation to `optionalToolsets`',
        },
      ],
    },
    {
      name: 'a capability without toolsets lists a tool',
      files: { [FILE]: protocol({ id: 'alpha' }, TABLE(['`work_log_list`'])) },
      errors: [{ messageId: 'foreignTool', line: 15, column: 4, message: 'neither requires nor lists as optional (it has none)' }],
    },
    {
      name: 'omitted tools of the required toolset: one warning at the table',
      files: workLogs(TABLE(ALL.slice(0, 1))),
      errors: [
        {
          messageId: 'omitted',
          line: 14,
          column: 1,
          endLine: 16,
          severity: 'warning',
          message: 'the tools table has no row for `work_log_list`, `work_log_generate` of required toolset work-logs; add a row for each',
        },
      ],
    },
    {
      name: 'no tools table at all: one warning at requiredToolsets',
      files: workLogs('Do not guess.\n'),
      errors: [
        {
          messageId: 'noTable',
          line: 8,
          column: 3,
          severity: 'warning',
          message:
            'the protocol has no tools table; add a `## Tools` section with a table whose first header cell is `Tool`, listing `work_log_record`, `work_log_list`, `work_log_generate` of required toolset work-logs',
        },
      ],
    },
    {
      name: 'tools of two required toolsets omitted',
      files: workLogs(TABLE(ALL.slice(0, 2)), { requiredToolsets: ['work-logs', 'automation'] }),
      errors: [
        {
          messageId: 'omitted',
          line: 15,
          column: 1,
          severity: 'warning',
          message: '`work_log_generate`, `automation_create_task`, `automation_list_tasks` of required toolsets work-logs, automation',
        },
      ],
    },
    {
      name: 'tools of optional toolsets may be omitted; a foreign one may not be listed',
      files: workLogs(TABLE([...ALL, '`vcs_diff`']), {
        optionalToolsets: ['automation'],
      }),
      errors: [{ messageId: 'unknownTool', line: 21, column: 4, message: 'tool `vcs_diff` is not defined in any toolset' }],
    },
    {
      name: 'the frontmatter failed the schema elsewhere: the table is still checked',
      files: workLogs(TABLE([...ALL, '`nope`']), { states: 'PENDING' }),
      errors: [{ messageId: 'unknownTool', line: 20, column: 4, message: 'tool `nope` is not defined' }],
    },
    {
      name: 'level warn: errors become warnings',
      files: workLogs(TABLE([...ALL, '`nope`'])),
      level: 'warn',
      errors: [{ messageId: 'unknownTool', line: 19, column: 4, severity: 'warning' }],
    },
  ],
});

describe('tools-table without positions', () => {
  it('does not crash when the parser gives no positions', () => {
    expect(lintWithoutPositions(toolsTable, EVERYTHING).length).toBeGreaterThan(0);
  });
});

// The findings read the tools of each toolset: a fact kept without the toolsets in its context
// would still see the old toolsets (a rule-table case cannot show it: without toolsets the rule
// reports nothing).
describe('tools-table with facts kept across a toolsets edit', () => {
  toolsetsEditCase(
    toolsTable,
    'a toolset that gained a tool, and a tool that moved',
    workLogs(TABLE([...ALL.slice(0, 2), '`automation_list_tasks`'])),
    'work-logs:\n  description: W.\n  tools:\n    work_log_record: { action: write, description: R. }\n    work_log_list: { action: read, description: L. }\n    automation_list_tasks: { action: read, description: A. }\n',
  );
});

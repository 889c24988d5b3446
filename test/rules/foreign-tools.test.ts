import { describe, expect, it } from 'vitest';
import { foreignTools } from '../../compiler/rules/foreign-tools.js';
import { protocol } from '../support/registry.js';
import { ruleTable } from './harness.js';
import { toolsetsEditCase } from './kept-facts.js';
import { EVERYTHING, lintWithoutPositions } from './without-positions.js';

const ALPHA = 'capabilities/alpha/PROTOCOL.md';
// protocol({id, requiredToolsets: [one toolset]}) starts the body on line 12.
const alpha = (body: string, fields: Record<string, unknown> = {}): string => protocol({ id: 'alpha', requiredToolsets: ['work-logs'], ...fields }, body);
const owner = (id: string, field = 'requiredToolsets'): Record<string, string> => ({
  [`capabilities/${id}/PROTOCOL.md`]: protocol({ id, [field]: ['automation'] }),
});

ruleTable(foreignTools, {
  valid: [
    { name: 'own tools', files: { [ALPHA]: alpha('Call `work_log_record`, then `work_log_list`.\n') } },
    {
      name: 'tools of an optional toolset',
      files: { [ALPHA]: alpha('Call `automation_create_task` when the caller has it.\n', { optionalToolsets: ['automation'] }) },
    },
    {
      name: 'retired tools are left to retired-tools',
      files: { [ALPHA]: alpha('Never call `automation_create_task` or automation_*.\n', { retiredTools: ['automation_*'] }) },
    },
    {
      name: 'retired exact name',
      files: { [ALPHA]: alpha('Never call `automation_list_tasks`.\n', { retiredTools: ['automation_list_tasks'] }) },
    },
    {
      name: 'whole words only, case-sensitive',
      files: { [ALPHA]: alpha('automation_create_tasks, my_automation_create_task, AUTOMATION_CREATE_TASK, automation_create.\n') },
    },
    {
      name: 'rows of the tools table are left to tools-table',
      files: { [ALPHA]: alpha('| Tool | Use |\n| --- | --- |\n| `work_log_record` | add |\n| `automation_create_task` | schedule |\n') },
    },
    {
      name: 'a link to the owning capability',
      files: { [ALPHA]: alpha('For schedules, load [beta](capability:beta).\n'), ...owner('beta') },
    },
    {
      name: 'requiredToolsets that failed the schema: own toolsets unknown, nothing checked',
      files: { [ALPHA]: protocol({ id: 'alpha', requiredToolsets: 'work-logs' }, 'Call automation_create_task.\n') },
    },
    { name: 'no frontmatter', files: { [ALPHA]: 'Call automation_create_task.\n' } },
    { name: 'empty body', files: { [ALPHA]: alpha('') } },
    {
      name: 'a tool that two toolsets define, one of them own',
      files: {
        'capabilities/toolsets.yaml':
          'a:\n  description: A.\n  tools:\n    shared_tool: { description: S. }\nb:\n  description: B.\n  tools:\n    shared_tool: { description: S. }\n',
        [ALPHA]: protocol({ id: 'alpha', requiredToolsets: ['a'] }, 'Call shared_tool.\n'),
      },
    },
  ],
  invalid: [
    {
      name: 'a tool of a toolset another capability requires',
      files: { [ALPHA]: alpha('Use `automation_create_task` to schedule.\nDo not guess.\n'), ...owner('beta') },
      errors: [
        {
          messageId: 'foreignOwned',
          line: 12,
          column: 6,
          endLine: 12,
          endColumn: 28,
          file: ALPHA,
          message:
            'tool `automation_create_task` belongs to toolset automation, which this capability neither requires nor lists as optional; do not name it here: link the capability that owns it, [beta](capability:beta), and let that protocol say how to use it',
        },
      ],
    },
    {
      name: 'no capability requires the toolset',
      files: { [ALPHA]: alpha('Use automation_create_task.\n') },
      errors: [
        {
          messageId: 'foreignUnowned',
          line: 12,
          column: 5,
          message: 'link the capability that uses that toolset with a `capability:` link (none requires it yet), or add automation to `optionalToolsets`',
        },
      ],
    },
    {
      name: 'second best: a capability that lists the toolset as optional',
      files: { [ALPHA]: alpha('Use automation_create_task.\n'), ...owner('gamma', 'optionalToolsets') },
      errors: [{ messageId: 'foreignOwned', line: 12, column: 5, file: ALPHA, message: '[gamma](capability:gamma)' }],
    },
    {
      name: 'several owning capabilities, sorted',
      files: { [ALPHA]: alpha('Use automation_create_task.\n'), ...owner('delta'), ...owner('beta') },
      errors: [{ messageId: 'foreignOwned', line: 12, column: 5, file: ALPHA, message: '[beta](capability:beta) or [delta](capability:delta)' }],
    },
    {
      name: 'Chinese text around the name',
      files: { [ALPHA]: alpha('调用automation_create_task创建任务，不要猜测。\n') },
      errors: [{ messageId: 'foreignUnowned', line: 12, column: 3, endColumn: 25 }],
    },
    {
      name: 'every mention, code included',
      files: { [ALPHA]: alpha('Call `automation_list_tasks`.\n\n```json\n{"tool": "automation_create_task"}\n```\n') },
      errors: [
        { messageId: 'foreignUnowned', line: 12, column: 7, message: 'tool `automation_list_tasks`' },
        { messageId: 'foreignUnowned', line: 15, column: 11, message: 'tool `automation_create_task`' },
      ],
    },
    {
      name: 'a mention in another cell of a tools table row is prose',
      files: { [ALPHA]: alpha('| Tool | Use |\n| --- | --- |\n| `work_log_record` | add; never `automation_create_task` |\n') },
      errors: [{ messageId: 'foreignUnowned', line: 14, column: 35 }],
    },
    {
      name: 'a capability without toolsets',
      files: { [ALPHA]: protocol({ id: 'alpha' }, 'Call work_log_record.\n') },
      errors: [{ messageId: 'foreignUnowned', line: 11, column: 6, message: 'belongs to toolset work-logs' }],
    },
    {
      name: 'a dotted tool name',
      files: {
        'capabilities/toolsets.yaml':
          'fs:\n  description: Files.\n  tools:\n    files.read: { description: Read. }\nown:\n  description: Own.\n  tools:\n    own_tool: { description: O. }\n',
        [ALPHA]: protocol({ id: 'alpha', requiredToolsets: ['own'] }, 'Call own_tool, then files.read. Not files.readme.\n'),
      },
      errors: [{ messageId: 'foreignUnowned', line: 12, column: 21, endColumn: 31, message: 'tool `files.read` belongs to toolset fs' }],
    },
    {
      name: 'compound tokens: the longest tool names, left to right, in a chain the scan walks once',
      files: {
        'capabilities/toolsets.yaml':
          'fs:\n  description: Files.\n  tools:\n    files.read: { description: Read. }\n    files.read-all: { description: All. }\n    x-y: { description: X. }\nown:\n  description: Own.\n  tools:\n    own_tool: { description: O. }\n',
        [ALPHA]: protocol({ id: 'alpha', requiredToolsets: ['own'] }, `q-files.read-all-files.read.x-y-x-z ${'ab-'.repeat(20_000)}files.read\n`),
      },
      errors: [
        { messageId: 'foreignUnowned', line: 12, column: 3, endColumn: 17, message: 'tool `files.read-all`' },
        { messageId: 'foreignUnowned', line: 12, column: 18, endColumn: 28, message: 'tool `files.read`' },
        { messageId: 'foreignUnowned', line: 12, column: 29, endColumn: 32, message: 'tool `x-y`' },
        { messageId: 'foreignUnowned', line: 12, column: 37 + 60_000, message: 'tool `files.read`' },
      ],
    },
    {
      name: 'a malformed retiredTools entry hides nothing',
      files: { [ALPHA]: alpha('Use automation_create_task.\n', { retiredTools: ['*'] }) },
      errors: [{ messageId: 'foreignUnowned', line: 14, column: 5, message: 'tool `automation_create_task`' }],
    },
    {
      name: 'level warn',
      files: { [ALPHA]: alpha('Use automation_create_task.\n') },
      level: 'warn',
      errors: [{ messageId: 'foreignUnowned', line: 12, column: 5, severity: 'warning' }],
    },
  ],
});

describe('foreign-tools without positions', () => {
  it('does not crash when the parser gives no positions', () => {
    expect(lintWithoutPositions(foreignTools, EVERYTHING).length).toBeGreaterThan(0);
  });
});

// A fact that read the tool owners but was kept without them in its context would still see
// `automation_create_task` as an own tool (a rule-table case cannot show it: without toolsets the
// rule derives nothing).
describe('foreign-tools with facts kept across a toolsets edit', () => {
  toolsetsEditCase(
    foreignTools,
    'a tool that moved to a foreign toolset',
    { [ALPHA]: alpha('Use `automation_create_task`.\nDo not guess.\n'), ...owner('beta') },
    'work-logs:\n  description: W.\n  tools:\n    work_log_record: { description: R. }\n    automation_create_task: { description: C. }\nautomation:\n  description: A.\n  tools:\n    automation_list_tasks: { description: L. }\n',
  );
});

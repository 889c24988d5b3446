import { describe, expect, it } from 'vitest';
import { lintAgainstCatalog } from '../../compiler/compile-one.js';
import { parseCapability } from '../../compiler/parse.js';
import { unknownTools } from '../../compiler/rules/unknown-tools.js';
import { protocol, registryInput } from '../support/registry.js';
import { lintWith, ruleTable } from './harness.js';
import { toolsetsEditCase } from './kept-facts.js';

const ALPHA = 'capabilities/alpha/PROTOCOL.md';
// protocol({id, requiredToolsets: [one toolset]}) starts the body on line 12.
const alpha = (body: string, fields: Record<string, unknown> = {}): string => protocol({ id: 'alpha', requiredToolsets: ['work-logs'], ...fields }, body);
const EXPENSES =
  'expenses:\n  description: Expenses.\n  tools:\n    expense_submit: { action: write, description: Submit. }\n    expense_list: { action: read, description: List. }\n';

ruleTable(unknownTools, {
  valid: [
    { name: 'defined tools, own and foreign', files: { [ALPHA]: alpha('Call `work_log_record`, then work_log_list; never automation_create_task.\n') } },
    {
      name: 'ordinary snake_case words and camelCase fields are not tools',
      files: {
        [ALPHA]: alpha(
          'Read `protocol_version` and `protocol_updated`. On `period_invalid` or no_entries, wait `retryAfterSeconds`.\nThe result has `entry_id`, `created_at` and `report_status`.\n',
        ),
      },
    },
    {
      name: 'a word whose first segment is a tool prefix but not the shared prefix (bare)',
      files: { [ALPHA]: alpha('Keep the work_item and the automation level apart.\n') },
    },
    {
      name: 'retired tools, exact and globs',
      files: { [ALPHA]: alpha('Never call `work_log_archive` or work_log_schedule_create.\n', { retiredTools: ['work_log_archive', 'work_log_schedule_*'] }) },
    },
    {
      name: 'file names, paths and dotted names',
      files: { [ALPHA]: alpha('Export to work_log_dump.csv under /data/work_log_files/ or work_log_x.y.\n') },
    },
    {
      name: 'the tool cell of a tools table is tools-table’s finding',
      files: { [ALPHA]: alpha('| Tool | Use |\n| --- | --- |\n| `work_log_recrod` | add |\n') },
    },
    {
      name: 'no toolsets.yaml: nothing is known',
      files: { 'capabilities/toolsets.yaml': null, [ALPHA]: protocol({ id: 'alpha' }, 'Call `work_log_recrod`.\n') },
    },
  ],
  invalid: [
    {
      name: 'a misspelt tool in a code span, with did-you-mean',
      files: {
        'capabilities/toolsets.yaml': EXPENSES,
        [ALPHA]: protocol({ id: 'alpha', requiredToolsets: ['expenses'] }, 'Then call `expense_sumbit` with the total.\n'),
      },
      errors: [
        {
          messageId: 'unknown',
          line: 12,
          column: 12,
          endColumn: 26,
          message:
            '`expense_sumbit` looks like a tool but no toolset in capabilities/toolsets.yaml defines it; name a tool that exists, or declare a removed one in `retiredTools` and forbid it; did you mean "expense_submit"?',
        },
      ],
    },
    {
      name: 'a bare word with a toolset’s shared prefix, and a tool name without its last segment',
      files: { [ALPHA]: alpha('Call work_log_recrod first.\nThen automation_create_tsak.\n') },
      errors: [
        { messageId: 'unknown', line: 12, column: 6, message: 'did you mean "work_log_record"?' },
        { messageId: 'unknown', line: 13, column: 6, message: 'did you mean "automation_create_task"?' },
      ],
    },
    {
      name: 'a call in a code span, a name in another cell of a tools table; every mention',
      files: {
        [ALPHA]: alpha('Run `work_log_purge(id)`.\n\n| Tool | Use |\n| --- | --- |\n| `work_log_record` | not `work_lgo_list` |\n\nAgain `work_log_purge`.\n'),
      },
      errors: [
        { messageId: 'unknown', line: 12, column: 6, message: '`work_log_purge` looks like a tool' },
        { messageId: 'unknown', line: 16, column: 28, message: 'did you mean "work_log_list"?' },
        { messageId: 'unknown', line: 18, column: 8, message: '`work_log_purge`' },
      ],
    },
    {
      name: 'without a close tool, no suggestion',
      files: { [ALPHA]: alpha('Use `work_log_compress_everything_now`.\n') },
      errors: [{ messageId: 'unknown', line: 12, column: 6, message: /and forbid it$/ }],
    },
    {
      name: 'without frontmatter the body is still checked against every toolset',
      files: { [ALPHA]: 'Do not call `work_log_lsit` without asking.\n' },
      errors: [{ messageId: 'unknown', line: 1, column: 14, message: 'did you mean "work_log_list"?' }],
    },
    {
      name: 'error level when configured',
      level: 'error',
      files: { [ALPHA]: alpha('Call work_log_recrod.\n') },
      errors: [{ messageId: 'unknown', line: 12, column: 6, severity: 'error', message: 'work_log_recrod' }],
    },
  ],
});

describe('unknown-tools bounds', () => {
  it('reports the first 50 distinct names and counts the rest; linear in the body (a 2 MB body in well under a second)', () => {
    const names = Array.from({ length: 80 }, (_, index) => `work_log_fake${index}`);
    const diagnostics = lintWith(unknownTools, registryInput({ [ALPHA]: alpha(`${names.map((name) => `\`${name}\``).join(' ')}\n`) }));
    expect(diagnostics).toHaveLength(51);
    expect(diagnostics.at(-1)?.message).toBe('30 more names look like tools that no toolset defines (only the first 50 are reported)');

    const line = 'Call `work_log_record`, read protocol_version and work_log_list, then work_item_a_b_c_d_e_f_g_h.\n';
    const big = alpha(line.repeat(Math.ceil(2_000_000 / line.length)));
    const started = performance.now();
    expect(lintWith(unknownTools, registryInput({ [ALPHA]: big }))).toEqual([]);
    expect(performance.now() - started).toBeLessThan(3000);
  });
});

describe('unknown-tools on a user capability', () => {
  it('checks against the toolsets the author can see, and suggests only those', () => {
    const document = parseCapability(ALPHA, alpha('Call `work_log_recrod`, then `billing_invioce`.\n'));
    const toolsets = { 'work-logs': { description: 'W', tools: { work_log_record: { action: 'write' as const, description: 'R' } } } };
    const diagnostics = lintAgainstCatalog(
      document,
      { capabilities: [], toolsets },
      { rules: [unknownTools], settings: new Map([['unknown-tools', { level: 'warn', options: {} }]]) },
    );
    // `billing_invioce`: no visible tool starts with `billing`, so it is not tool-like here, and no hidden name leaks.
    expect(diagnostics.map((d) => [d.line, d.column, d.severity, d.message.endsWith('did you mean "work_log_record"?')])).toEqual([[12, 7, 'warning', true]]);
  });
});

// A fact kept without the toolsets in its context would still hold what the old toolsets made of
// the body (a rule-table case cannot show it: without toolsets the rule derives nothing).
describe('unknown-tools with facts kept across a toolsets edit', () => {
  toolsetsEditCase(
    unknownTools,
    'a tool that is no longer defined, and a hint that changed',
    { [ALPHA]: alpha('Call `work_log_recrod`, then `work_log_lst`.\n') },
    'work-logs:\n  description: W.\n  tools:\n    work_log_recrod: { action: write, description: R. }\n    work_log_last: { action: read, description: L. }\n',
  );
});

import { describe, expect, it } from 'vitest';
import { MAX_CASE_HINT_CHARS, stateMachine } from '../../compiler/rules/state-machine.js';
import { protocol, registryInput } from '../support/registry.js';
import { lintWith, ruleTable } from './harness.js';
import { toolsetsEditCase } from './kept-facts.js';
import { EVERYTHING, lintWithoutPositions } from './without-positions.js';

const FILE = 'capabilities/alpha/PROTOCOL.md';
// declared(): `states` items PENDING and DONE on lines 11 and 12 (column 5), body from line 14.
const declared = (body: string, states: unknown = ['PENDING', 'DONE']): Record<string, string> => ({
  [FILE]: protocol({ id: 'alpha', states }, body),
});
// withTool(): requires work-logs (whose `work_log_generate` has states PENDING and DONE), body from line 12.
const withTool = (body: string, fields: Record<string, unknown> = {}): Record<string, string> => ({
  [FILE]: protocol({ id: 'alpha', requiredToolsets: ['work-logs'], ...fields }, body),
});
const ENTRIES = '## States\n\n- **PENDING** — keep polling.\n- **DONE** — show the result.\n';
const TOOLS = '| Tool | Use |\n| --- | --- |\n| `work_log_generate` | start a report |\n';

ruleTable(stateMachine, {
  valid: [
    { name: 'a list item per declared state', files: declared(ENTRIES) },
    { name: 'a table row per state', files: declared('| State | What to do |\n| --- | --- |\n| PENDING | keep polling |\n| DONE | show the result |\n') },
    { name: 'states of a tool in the tools table', files: withTool(`${TOOLS}\n${ENTRIES}`) },
    { name: 'Chinese entries', files: declared('## 状态\n\n- **PENDING**：继续轮询。\n- **DONE**：展示结果。\n') },
    { name: 'the state named inside the entry', files: declared('- Keep polling while the report is PENDING.\n- When it is DONE, show it.\n') },
    { name: 'one entry for two states', files: declared('- PENDING or DONE: poll until it is done, then show it.\n') },
    {
      name: 'ALL-CAPS words in sections that are not about states',
      files: declared(`${ENTRIES}\n## Rules\n\n- IMPORTANT: never guess.\n- CSV export only when asked.\n`),
    },
    { name: 'a state of an own tool that the table does not list is declared', files: withTool('## States\n\n- **PENDING** — keep polling.\n') },
    {
      name: 'a heading that only contains "state" in a longer word is not a state section',
      files: declared(`${ENTRIES}\n## Statements\n\n- STALE: regenerate.\n`),
    },
    { name: "an empty state name is the schema rule's business", files: declared('- Do not guess.\n', ['']) },
    { name: 'no states, no tools table', files: { [FILE]: protocol({ id: 'alpha' }) } },
    { name: 'empty body, no states', files: { [FILE]: protocol({ id: 'alpha' }, '') } },
    { name: "states that failed the schema are the schema rule's business", files: declared('Do not guess.\n', 'PENDING') },
    { name: 'no frontmatter', files: { [FILE]: '- Do not guess.\n' } },
  ],
  invalid: [
    {
      name: 'an entry that writes a declared state in another case gets a case hint, not "no entry"',
      files: declared('## States\n\n- **PENDING** — keep polling.\n- **Done** — show the result.\n'),
      errors: [
        {
          messageId: 'caseMismatch',
          line: 17,
          column: 5,
          endColumn: 9,
          message: 'the entry for state "DONE" writes it "Done"; state names are case-sensitive: write "DONE"',
        },
      ],
    },
    {
      name: 'a declared state without an entry: reported at its `states` item',
      files: declared('## States\n\n- **PENDING** — keep polling.\n'),
      errors: [
        {
          messageId: 'missingDeclared',
          line: 12,
          column: 5,
          endColumn: 9,
          message:
            'state "DONE" (declared in `states`) has no entry in the body; add a list item or table row that names it and says what the agent does, e.g. "- **DONE** — what it means; what to do and what not to do"',
        },
      ],
    },
    {
      name: 'empty body',
      files: declared(''),
      errors: [
        { messageId: 'missingDeclared', line: 11, column: 5, message: 'state "PENDING"' },
        { messageId: 'missingDeclared', line: 12, column: 5, message: 'state "DONE"' },
      ],
    },
    {
      name: 'names are case-sensitive: an entry in another case is reported where it is, with the right spelling',
      files: declared('- Pending: keep polling.\n- Done: show it.\n'),
      errors: [
        {
          messageId: 'caseMismatch',
          line: 14,
          column: 3,
          message: 'the entry for state "PENDING" writes it "Pending"; state names are case-sensitive: write "PENDING"',
        },
        {
          messageId: 'caseMismatch',
          line: 15,
          column: 3,
          message: 'the entry for state "DONE" writes it "Done"; state names are case-sensitive: write "DONE"',
        },
      ],
    },
    {
      name: 'states of a listed tool: reported at the tool in its row',
      files: withTool(TOOLS),
      errors: [
        {
          messageId: 'missingToolState',
          line: 14,
          column: 4,
          endColumn: 21,
          message: 'state "DONE" of tool `work_log_generate` (listed in the tools table) has no entry in the body',
        },
        { messageId: 'missingToolState', line: 14, column: 4, message: 'state "PENDING" of tool `work_log_generate`' },
      ],
    },
    {
      name: 'the tools table row is not an entry',
      files: withTool('| Tool | Use |\n| --- | --- |\n| `work_log_generate` | returns PENDING, then DONE; poll it |\n'),
      errors: [
        { messageId: 'missingToolState', line: 14, column: 4, message: 'state "DONE"' },
        { messageId: 'missingToolState', line: 14, column: 4, message: 'state "PENDING"' },
      ],
    },
    {
      name: 'a state both declared and of a tool is reported once, at `states`',
      files: withTool(TOOLS, { states: ['PENDING'] }),
      errors: [
        { messageId: 'missingDeclared', line: 12, column: 5, message: 'state "PENDING" (declared in `states`)' },
        { messageId: 'missingToolState', line: 16, column: 4, message: 'state "DONE" of tool `work_log_generate`' },
      ],
    },
    {
      name: 'an entry that only names the state',
      files: declared('- **PENDING** — keep polling.\n- **DONE**\n'),
      errors: [
        {
          messageId: 'bare',
          line: 15,
          column: 5,
          endColumn: 9,
          message: 'the entry for state "DONE" only names it; say what the agent does in that state (and what it must not do)',
        },
      ],
    },
    {
      name: 'a list of names is not an entry',
      files: declared('- PENDING, DONE\n'),
      errors: [
        { messageId: 'bare', line: 14, column: 3, message: 'state "PENDING" only names it' },
        { messageId: 'bare', line: 14, column: 12, message: 'state "DONE" only names it' },
      ],
    },
    {
      name: 'a table row with nothing to do',
      files: declared('| State | Do |\n| --- | --- |\n| PENDING | 1 |\n| DONE | keep it |\n'),
      errors: [{ messageId: 'bare', line: 16, column: 3, message: 'state "PENDING" only names it' }],
    },
    {
      name: 'a Chinese entry too short to say anything',
      files: declared('- **PENDING**：等\n- **DONE**：展示结果。\n'),
      errors: [{ messageId: 'bare', line: 14, column: 5, message: 'state "PENDING" only names it' }],
    },
    {
      name: 'an entry for a state nothing declares: a warning, even at level error',
      files: declared(`${ENTRIES}- **STALE** — regenerate.\n`),
      errors: [
        {
          messageId: 'undeclared',
          line: 18,
          column: 5,
          endColumn: 10,
          severity: 'warning',
          message:
            'entry for state "STALE", but neither `states` nor a tool of this capability declares it; add "STALE" to `states` (or to the tool\'s `states` in capabilities/toolsets.yaml), or remove the entry if no tool returns it',
        },
      ],
    },
    {
      name: 'undeclared, in a section that holds declared entries',
      files: declared('## Polling\n\n- **PENDING** — keep polling.\n- **DONE** — show it.\n- STALE: regenerate.\n'),
      errors: [{ messageId: 'undeclared', line: 18, column: 3, severity: 'warning', message: 'entry for state "STALE"' }],
    },
    {
      name: 'undeclared, in a table under a Chinese 状态 heading',
      files: { [FILE]: protocol({ id: 'alpha' }, '## 报告状态\n\n| 状态 | 处理 |\n| --- | --- |\n| STALE | 重新生成 |\n') },
      errors: [{ messageId: 'undeclared', line: 15, column: 3, severity: 'warning', message: 'entry for state "STALE"' }],
    },
    {
      name: 'the frontmatter failed the schema elsewhere: states are still checked',
      files: { [FILE]: '---\nid: alpha\nstates: [PENDING]\n---\nDo not guess.\n' },
      errors: [{ messageId: 'missingDeclared', line: 3, column: 10, message: 'state "PENDING"' }],
    },
    {
      name: 'level warn',
      files: declared(ENTRIES.replace('- **DONE** — show the result.\n', '')),
      level: 'warn',
      errors: [{ messageId: 'missingDeclared', line: 12, column: 5, severity: 'warning' }],
    },
  ],
});

describe('state-machine without positions', () => {
  it('does not crash when the parser gives no positions', () => {
    expect(lintWithoutPositions(stateMachine, EVERYTHING).length).toBeGreaterThan(0);
  });
});

// The findings read the tools' states in the toolsets: a fact kept without the toolsets in its
// context would still know only the old states. The rule-table cases with a tools table catch that
// too (through the harness's compile without any toolsets); this case edits the toolsets instead.
describe('state-machine with facts kept across a toolsets edit', () => {
  toolsetsEditCase(
    stateMachine,
    'a tool that gained a state',
    withTool(`${TOOLS}\n## States\n\n- **PENDING** — keep polling.\n- **STALE** — regenerate.\n`),
    'work-logs:\n  description: W.\n  tools:\n    work_log_generate: { action: write, description: G., states: [PENDING, STALE] }\n',
  );
});

describe('state-machine: the case hint reads a bounded amount of text', () => {
  // 256 states without an entry, each looked for in every entry in any case: 256 × 40 KB of entries
  // is over MAX_CASE_HINT_CHARS, so the states looked for after the budget ran out get no hint.
  const states = Array.from({ length: 256 }, (_, index) => `STATE_${String(index).padStart(3, '0')}`);
  const filler = Array.from({ length: 200 }, (_, index) => `- Item ${index}: ${'keep going and report what happened '.repeat(5)}\n`).join('');
  const body = `## States\n\n- **state_000** — the first, in another case.\n${filler}- **state_255** — the last, in another case.\n`;
  const diagnostics = lintWith(stateMachine, registryInput({ [FILE]: protocol({ id: 'alpha', states }, body) }));
  const byState = new Map(diagnostics.map((d) => [/state "(\w+)"/.exec(d.message)?.[1], d.message]));

  it('hints for the states looked for within the budget', () => {
    expect(filler.length * 256).toBeGreaterThan(MAX_CASE_HINT_CHARS);
    expect(byState.get('STATE_000')).toBe('the entry for state "STATE_000" writes it "state_000"; state names are case-sensitive: write "STATE_000"');
  });

  it('reports a state looked for past it as missing, without the hint', () => {
    expect(byState.get('STATE_255')).toMatch(/^state "STATE_255" \(declared in `states`\) has no entry in the body/);
    expect(diagnostics).toHaveLength(256);
  });
});

describe('state-machine: many states with a long common beginning', () => {
  it('costs one name per position of the entries, not all the names together', () => {
    // 256 states of 125 characters sharing 120, and 400 KB of entries that almost name each: as
    // one branch per state (and one case-insensitive pass per state) this took ~3 s of CPU.
    const states = Array.from({ length: 256 }, (_, index) => `${'a-'.repeat(60)}x${index}`);
    const body = `## States\n\n${`- ${'a-'.repeat(4000)}\n`.repeat(50)}`;
    const input = registryInput({ [FILE]: protocol({ id: 'alpha', states }, body) });
    const started = process.cpuUsage();
    const diagnostics = lintWith(stateMachine, input);
    const used = process.cpuUsage(started);
    expect(diagnostics).toHaveLength(256);
    expect((used.user + used.system) / 1000).toBeLessThan(1_500);
  });
});

import { describe, expect, it } from 'vitest';
import { whenToUse } from '../../compiler/rules/when-to-use.js';
import { protocol, registryInput } from '../support/registry.js';
import { lintWith, ruleTable } from './harness.js';
import { lintWithoutPositions } from './without-positions.js';

// protocol() puts `whenToUse:` on line 5 and its items on lines 6, 7, … (each `  - ` item at column 5).
const A = 'capabilities/alpha/PROTOCOL.md';
const B = 'capabilities/beta/PROTOCOL.md';

ruleTable(whenToUse, {
  valid: [
    { name: 'distinct triggers', files: { [A]: protocol({ id: 'alpha', whenToUse: ['write my daily report', '写日报'] }) } },
    {
      name: 'distinct across capabilities',
      files: { [A]: protocol({ id: 'alpha', whenToUse: ['daily report'] }), [B]: protocol({ id: 'beta', whenToUse: ['weekly report'] }) },
    },
    { name: "missing whenToUse is the schema rule's business", files: { [A]: '---\nid: alpha\n---\nNever.\n' } },
    { name: "a non-list whenToUse is the schema rule's business", files: { [A]: '---\nid: alpha\nwhenToUse: write it\n---\n' } },
    { name: 'broken YAML', files: { [A]: '---\nwhenToUse: [a, a\n---\n' } },
  ],
  invalid: [
    {
      name: 'empty and blank triggers',
      files: { [A]: protocol({ id: 'alpha', whenToUse: ['ok', '', '   '] }) },
      errors: [
        { messageId: 'empty', line: 7, column: 5, message: 'trigger 2 of `whenToUse` is empty; write a phrase users say' },
        { messageId: 'empty', line: 8, column: 5, message: 'trigger 3 of `whenToUse` is empty' },
      ],
    },
    {
      name: 'a duplicate within a capability, ignoring case, spacing and full-width forms',
      files: { [A]: protocol({ id: 'alpha', whenToUse: ['Write my report', 'other', ' write  MY report ', 'ｗｒｉｔｅ my report'] }) },
      errors: [
        {
          messageId: 'duplicate',
          line: 8,
          column: 5,
          message: 'trigger "write  MY report" is listed twice in `whenToUse` (first as trigger 1); remove the repeat',
        },
        { messageId: 'duplicate', line: 9, column: 5, message: 'is listed twice in `whenToUse` (first as trigger 1)' },
      ],
    },
    {
      name: 'the same trigger in two capabilities: a warning at the later one, also in Chinese',
      files: {
        [A]: protocol({ id: 'alpha', whenToUse: ['写日报', 'daily report'] }),
        [B]: protocol({ id: 'beta', whenToUse: ['weekly', 'Daily Report', '写日报', '写日报'] }),
      },
      errors: [
        {
          messageId: 'ambiguous',
          file: B,
          line: 7,
          column: 5,
          severity: 'warning',
          message: 'trigger "Daily Report" is also a trigger of capability "alpha" (capabilities/alpha/PROTOCOL.md); the agent cannot tell which one to load',
        },
        { messageId: 'ambiguous', file: B, line: 8, column: 5, severity: 'warning', message: 'trigger "写日报" is also a trigger of capability "alpha"' },
        { messageId: 'duplicate', file: B, line: 9, column: 5, message: 'trigger "写日报" is listed twice' },
      ],
    },
    {
      name: 'a malformed item does not hide the others',
      files: { [A]: '---\nid: alpha\nwhenToUse:\n  - go\n  -\n  - 3\n  - go\n---\n' },
      errors: [{ messageId: 'duplicate', line: 7, column: 5, message: 'trigger "go" is listed twice in `whenToUse` (first as trigger 1)' }],
    },
    {
      name: 'flow-style list',
      level: 'warn',
      files: { [A]: '---\nid: alpha\nwhenToUse: [a b, "A  B"]\n---\n' },
      errors: [{ messageId: 'duplicate', line: 3, column: 18, severity: 'warning', message: 'trigger "A  B" is listed twice' }],
    },
  ],
});

describe('when-to-use related places', () => {
  it('points at the first occurrence', () => {
    const diagnostics = lintWith(
      whenToUse,
      registryInput({ [A]: protocol({ id: 'alpha', whenToUse: ['x y', 'x  y'] }), [B]: protocol({ id: 'beta', whenToUse: ['X Y'] }) }),
    );
    expect(diagnostics.map((d) => [d.file, d.line, d.severity, d.related?.file, d.related?.line, d.related?.message])).toEqual([
      [A, 7, 'error', A, 6, 'first listed here'],
      [B, 6, 'warning', A, 6, 'also a trigger here'],
    ]);
  });
});

describe('when-to-use documented example and without positions', () => {
  const files = {
    'capabilities/personal-automation/PROTOCOL.md': protocol({ id: 'personal-automation', whenToUse: ['every Friday'] }),
    'capabilities/work-reporting/PROTOCOL.md': protocol({
      id: 'work-reporting',
      whenToUse: ['write my weekly report', 'Write my  Weekly Report', '', 'every Friday'],
    }),
  };

  it('prints what docs/rules/when-to-use.md shows', () => {
    expect(lintWith(whenToUse, registryInput(files)).map((d) => `${d.line}:${d.column} ${d.severity} ${d.message}`)).toEqual([
      '7:5 error trigger "Write my  Weekly Report" is listed twice in `whenToUse` (first as trigger 1); remove the repeat',
      '8:5 error trigger 3 of `whenToUse` is empty; write a phrase users say when they need this capability, or remove the item',
      '9:5 warning trigger "every Friday" is also a trigger of capability "personal-automation" (capabilities/personal-automation/PROTOCOL.md); the agent cannot tell which one to load: keep the phrase in one capability and make the other more specific',
    ]);
  });

  it('does not crash when the parser gives no positions', () => {
    expect(lintWithoutPositions(whenToUse, files).length).toBe(3);
  });
});

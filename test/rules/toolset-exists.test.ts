import { describe } from 'vitest';
import { toolsetExists } from '../../compiler/rules/toolset-exists.js';
import { protocol } from '../support/registry.js';
import { ruleTable } from './harness.js';
import { toolsetsEditCase } from './kept-facts.js';

const A = 'capabilities/alpha/PROTOCOL.md';
const TOOLSETS = 'capabilities/toolsets.yaml';
// protocol() writes `requiredToolsets` on line 7 and then the fields given, in order, after
// protocol_updated (line 9): flow lists stay on one line, block lists start on the next.
const alpha = (fields: Record<string, unknown>): string => protocol({ id: 'alpha', ...fields });

ruleTable(toolsetExists, {
  valid: [
    { name: 'no toolsets at all', files: { [A]: alpha({}) } },
    { name: 'required and optional toolsets that exist', files: { [A]: alpha({ requiredToolsets: ['work-logs'], optionalToolsets: ['automation'] }) } },
    {
      name: 'a toolset that is defined but malformed exists (toolsets-schema reports what is wrong with it)',
      files: { [A]: alpha({ requiredToolsets: ['calendar'] }), [TOOLSETS]: 'calendar:\n  description: Events.\n' },
    },
    {
      name: 'a missing toolsets.yaml is reported once, by toolsets-schema',
      files: { [A]: alpha({ requiredToolsets: ['work-logs', 'automation'] }), [TOOLSETS]: null },
    },
    {
      name: 'an unparsable toolsets.yaml is reported once, by toolsets-schema',
      files: { [A]: alpha({ requiredToolsets: ['work-logs'] }), [TOOLSETS]: 'work-logs: [\n' },
    },
    { name: "a requiredToolsets that is not a list is frontmatter-schema's business", files: { [A]: alpha({ requiredToolsets: 'work-logs' }) } },
  ],
  invalid: [
    {
      name: 'a typo in requiredToolsets, with a "did you mean"',
      files: { [A]: alpha({ requiredToolsets: ['work-log'] }) },
      errors: [
        {
          messageId: 'unknown',
          line: 8,
          column: 5,
          endColumn: 13,
          message: 'toolset "work-log" in `requiredToolsets` is not defined in capabilities/toolsets.yaml; did you mean "work-logs"?',
        },
      ],
    },
    {
      name: 'unknown optional toolsets, each at its own item',
      files: { [A]: alpha({ optionalToolsets: ['calendar', 'automaton'] }) },
      errors: [
        { messageId: 'unknown', line: 11, column: 5, message: /^toolset "calendar" in `optionalToolsets` is not defined in capabilities\/toolsets.yaml$/ },
        {
          messageId: 'unknown',
          line: 12,
          column: 5,
          message: 'toolset "automaton" in `optionalToolsets` is not defined in capabilities/toolsets.yaml; did you mean "automation"?',
        },
      ],
    },
    {
      name: 'names of Object.prototype members are not toolsets',
      files: {
        [A]: `---\nid: alpha\nname: A\ndescription: D.\nwhenToUse: [a]\nrequiredToolsets: [constructor, toString, __proto__]\nprotocol_version: 1.0.0\nprotocol_updated: 2026-11-29\n---\nDo not.\n`,
      },
      errors: [
        { messageId: 'unknown', line: 6, column: 20, message: 'toolset "constructor"' },
        { messageId: 'unknown', line: 6, column: 33, message: 'toolset "toString"' },
        { messageId: 'unknown', line: 6, column: 43, message: 'toolset "__proto__"' },
      ],
    },
    {
      name: 'in every capability',
      files: { [A]: alpha({ requiredToolsets: ['nope'] }), 'capabilities/beta/PROTOCOL.md': protocol({ id: 'beta', requiredToolsets: ['nada'] }) },
      errors: [
        { messageId: 'unknown', file: A, line: 8, column: 5, message: 'toolset "nope"' },
        { messageId: 'unknown', file: 'capabilities/beta/PROTOCOL.md', line: 8, column: 5, message: 'toolset "nada"' },
      ],
    },
  ],
});

describe('toolset-exists with facts kept between compiles', () => {
  // The toolset was defined before the edit: facts kept without the toolsets in their context would still find it.
  toolsetsEditCase(toolsetExists, 'a toolset removed', { [A]: alpha({ requiredToolsets: ['calendar'] }) }, 'calendar:\n  description: Events.\n  tools: {}\n');
});

import { describe, expect, it } from 'vitest';
import { toolsetsSchemaRule } from '../../compiler/rules/toolsets-schema.js';
import { DEFAULT_TOOLSETS, protocol, registryInput } from '../support/registry.js';
import { lintWith, ruleTable } from './harness.js';

const A = 'capabilities/alpha/PROTOCOL.md';
const FILE = 'capabilities/toolsets.yaml';
const withToolsets = (toolsets: string | null): Record<string, string | null> => ({ [A]: protocol({ id: 'alpha' }), [FILE]: toolsets });
/** The error at each place of toolset "a" in a file that defines it more than once. */
const duplicateA = (line: number) => ({
  messageId: 'yaml',
  file: FILE,
  line,
  column: 1,
  message: 'duplicate key "a": a key may appear only once in a mapping',
});

ruleTable(toolsetsSchemaRule, {
  valid: [
    { name: 'the default toolsets', files: withToolsets(DEFAULT_TOOLSETS) },
    { name: 'an empty mapping', files: withToolsets('{}\n') },
    { name: 'an empty file (no toolsets)', files: withToolsets('') },
    {
      name: 'every field of a tool; action defaults to read',
      files: withToolsets(
        'work-logs:\n  description: Work logs.\n  tools:\n    work_log.generate-v2:\n      action: admin\n      description: Generate.\n      states: [PENDING, DONE]\n    work_log_list:\n      description: List.\n',
      ),
    },
    { name: 'a toolset with no tools yet', files: withToolsets('calendar:\n  description: Events.\n  tools: {}\n') },
  ],
  invalid: [
    {
      name: 'no toolsets.yaml',
      files: withToolsets(null),
      errors: [
        {
          messageId: 'missing',
          file: FILE,
          line: 1,
          column: 1,
          message:
            'capabilities/toolsets.yaml is missing: every registry defines its toolsets there, or in capabilities/toolsets/*.yaml (one or more toolsets per file); an empty mapping `{}` is allowed',
        },
      ],
    },
    {
      name: 'malformed YAML',
      files: withToolsets('work-logs:\n  description: [Work logs\n  tools: {}\n'),
      errors: [
        {
          messageId: 'yaml',
          file: FILE,
          line: 3,
          column: 3,
          message: 'invalid YAML: flow sequence in block collection must be sufficiently indented and end with a ]',
        },
      ],
    },
    {
      name: 'a duplicate toolset, at both places',
      files: withToolsets('a:\n  description: A.\n  tools: {}\na:\n  description: B.\n  tools: {}\n'),
      errors: [duplicateA(1), duplicateA(4)],
    },
    {
      name: 'a toolset three times: each later place once, the first place once',
      files: withToolsets('a:\n  tools: {}\na:\n  tools: {}\na:\n  tools: {}\n'),
      errors: [duplicateA(1), duplicateA(3), duplicateA(5)],
    },
    {
      name: 'tab indentation',
      files: withToolsets('a:\n\tdescription: A.\n'),
      errors: [{ messageId: 'yaml', file: FILE, line: 2, column: 1, message: 'tab characters are not allowed for indentation in YAML; indent with spaces' }],
    },
    {
      name: 'a __proto__ toolset',
      files: withToolsets('__proto__:\n  description: A.\n  tools: {}\n'),
      errors: [{ messageId: 'yaml', file: FILE, line: 1, column: 1, message: 'key "__proto__" is not allowed: it could change object prototypes; rename it' }],
    },
    {
      name: 'a list instead of a mapping',
      files: withToolsets('- work-logs\n- automation\n'),
      errors: [{ messageId: 'schema', file: FILE, line: 1, column: 1, message: 'the document must be a mapping, not a list' }],
    },
    {
      name: 'toolset ids and tool names of the wrong form, with what is expected',
      files: withToolsets('Work_Logs:\n  description: A.\n  tools:\n    1st-tool: { description: T. }\n'),
      errors: [
        {
          messageId: 'schema',
          file: FILE,
          line: 1,
          column: 1,
          endColumn: 10,
          message: 'name "Work_Logs" has the wrong form: a toolset id is lowercase letters and digits in words joined by single hyphens, e.g. "work-logs"',
        },
        {
          messageId: 'schema',
          file: FILE,
          line: 4,
          column: 5,
          message: 'name "1st-tool" in `Work_Logs.tools` has the wrong form: a tool name starts with a letter and has only letters, digits, "_", "." and "-"',
        },
      ],
    },
    {
      name: 'misspelt keys, with "did you mean", not again as the required field they leave out',
      files: withToolsets('a:\n  descripton: A.\n  tools:\n    t:\n      acton: write\n      description: T.\n'),
      errors: [
        { messageId: 'schema', file: FILE, line: 2, column: 3, endColumn: 13, message: 'unknown field "descripton" in `a`; did you mean "description"?' },
        { messageId: 'schema', file: FILE, line: 5, column: 7, message: 'unknown field "acton" in `a.tools.t`; did you mean "action"?' },
      ],
    },
    {
      name: 'an action that does not exist, with "did you mean"',
      files: withToolsets('a:\n  description: A.\n  tools:\n    t: { action: wrte, description: T. }\n'),
      errors: [
        {
          messageId: 'schema',
          file: FILE,
          line: 4,
          column: 18,
          message: '`a.tools.t.action` must be one of "read", "write", "admin", not "wrte"; did you mean "write"?',
        },
      ],
    },
    {
      name: 'wrong types and a repeated state',
      files: withToolsets(
        'a:\n  description: 42\n  tools:\n    t: { description: T., states: [PENDING, DONE, PENDING] }\nb:\n  description: B.\n  tools: [t]\n',
      ),
      errors: [
        { messageId: 'schema', file: FILE, line: 2, column: 16, message: '`a.description` must be a string, not number 42' },
        { messageId: 'schema', file: FILE, line: 4, column: 51, message: '`a.tools.t.states` lists "PENDING" twice (items 1 and 3); remove one' },
        { messageId: 'schema', file: FILE, line: 7, column: 10, message: '`b.tools` must be a mapping, not a list' },
      ],
    },
    {
      name: 'positions after a byte order mark and CRLF line endings',
      files: withToolsets('\uFEFFWork_Logs:\r\n  description: A.\r\n  tools: {}\r\n'),
      errors: [{ messageId: 'schema', file: FILE, line: 1, column: 1, endColumn: 10, message: 'name "Work_Logs" has the wrong form' }],
    },
    {
      name: 'YAML nested over the limit: one diagnostic at the token that goes too deep',
      files: withToolsets(`${': '.repeat(2048)}\n  y\n`),
      errors: [
        {
          messageId: 'yaml',
          file: FILE,
          line: 1,
          column: 129,
          message: 'YAML nested more than 64 levels deep (mappings, lists and brackets, aliases expanded); flatten the structure',
        },
      ],
    },
    {
      name: 'YAML-only types and keys that are not text, one diagnostic each',
      files: withToolsets('a:\n  description: !!binary QQ==\n  tools: !!set { t }\n2:\n  description: B.\n  tools: {}\n'),
      errors: [
        { messageId: 'yaml', file: FILE, line: 2, column: 25, message: 'YAML tag !!binary is not allowed' },
        { messageId: 'yaml', file: FILE, line: 3, column: 16, message: 'YAML tag !!set is not allowed' },
        { messageId: 'yaml', file: FILE, line: 4, column: 1, message: 'a key must be text, not the number 2; quote it: "2"' },
      ],
    },
    {
      name: 'a tool without a description',
      files: withToolsets('a:\n  description: A.\n  tools:\n    t: { action: read }\n'),
      errors: [{ messageId: 'schema', file: FILE, line: 4, column: 8, message: 'missing required field "description" in `a.tools.t`' }],
    },
  ],
});

describe('toolsets-schema: a refused toolsets.yaml', () => {
  it('is reported by registry-files, not again as missing', () => {
    const input = registryInput({ [A]: protocol({ id: 'alpha' }), [FILE]: null });
    input.files.push({ path: FILE, problem: 'file is binary (NUL byte at offset 3); it must be UTF-8 text' });
    expect(lintWith(toolsetsSchemaRule, input)).toEqual([]);
  });
});

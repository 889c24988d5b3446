import { describe, expect, it } from 'vitest';
import { parseCapability } from '../../compiler/parse.js';
import { frontmatterSchema } from '../../compiler/rules/frontmatter-schema.js';
import { LineIndex } from '../../compiler/positions.js';
import { parseYamlSource } from '../../compiler/yaml-source.js';
import { registryInput } from '../support/registry.js';
import { lintWith, ruleTable } from './harness.js';

const A = 'capabilities/alpha/PROTOCOL.md';

// The valid frontmatter every case starts from: `---` on line 1, fields on lines 2-9, so `extra`
// starts on line 10 and the closing `---` follows it.
const BASE = [
  'id: alpha', // 2
  'name: Alpha', // 3
  'description: Does alpha things.', // 4
  'whenToUse:', // 5
  '  - use alpha', // 6
  'requiredToolsets: []', // 7
  'protocol_version: 1.0.0', // 8
  'protocol_updated: 2026-11-29', // 9
];

/** A PROTOCOL.md with the base fields, `replace` applied to them, and `extra` lines after them. */
function doc(extra: string[] = [], replace: Record<string, string | null> = {}): string {
  const lines = BASE.flatMap((line) => {
    const key = line.split(':')[0]!;
    if (!(key in replace)) return [line];
    const replacement = replace[key];
    return replacement === null || replacement === undefined ? [] : [replacement];
  });
  return `---\n${[...lines, ...extra].join('\n')}\n---\n\nDo not guess.\n`;
}

const only = (content: string): Record<string, string> => ({ [A]: content });

/** Nine levels of nine aliases each: 9^7 strings once expanded. */
const BILLION_LAUGHS = [
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
  'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
  'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
  'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
  'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
  'g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]',
];

ruleTable(frontmatterSchema, {
  valid: [
    { name: 'the required fields', files: only(doc()) },
    {
      name: 'every optional field',
      files: only(
        doc([
          'optionalToolsets: [automation]',
          'states: [PENDING, DONE]',
          'retiredTools: [work_log_schedule_*, old_tool]',
          'lifecyclePhase: verify',
          'tags: [reports, 日报]',
          'inputSchema:',
          '  type: object',
          '  properties:',
          '    day: { type: string, format: date }',
          '  required: [day]',
          'outputSchema: { type: object }',
          'evidenceTypes: [test-results, build-output]',
          'constraints:',
          '  - rationalization: "Just this once."',
          '    rebuttal: "Every time is just this once."',
          '    severity: block',
          'scopeConstraints: [only files under src/]',
          'metadata:',
          '  owner: team-reports',
          '  x-vendor: "1"',
        ]),
      ),
    },
    {
      name: 'a yaml-language-server comment, CRLF line endings and a BOM',
      files: only(`\uFEFF${doc(['# yaml-language-server: $schema=../../compiler/schema/capability.schema.json']).replace(/\n/g, '\r\n')}`),
    },
    { name: 'a display name in Chinese', files: only(doc([], { name: 'name: 工作汇报' })) },
    {
      name: 'a leap day in a leap year (2024, 2000)',
      files: {
        [A]: doc([], { protocol_updated: 'protocol_updated: 2024-02-29' }),
        'capabilities/beta/PROTOCOL.md': doc([], { id: 'id: beta', protocol_updated: 'protocol_updated: 2000-02-29' }),
      },
    },
    {
      name: 'schemas in each dialect ajv checks: draft-07 (named or not), 2019-09, 2020-12',
      files: only(
        doc([
          'inputSchema: { $schema: "https://json-schema.org/draft/2020-12/schema", type: array, prefixItems: [{ type: string }] }',
          'outputSchema: { $schema: "https://json-schema.org/draft/2019-09/schema", type: object, dependentRequired: { a: [b] } }',
          'metadata: { schema: "draft-07" }',
        ]),
      ),
    },
    {
      name: 'a draft-07 $schema without the trailing #',
      files: only(doc(['inputSchema: { $schema: "http://json-schema.org/draft-07/schema", type: object }'])),
    },
    {
      name: 'two capabilities whose schemas share an $id (compiled schemas are not kept)',
      files: {
        [A]: doc(['inputSchema: { $id: "https://example.com/in.json", type: object }']),
        'capabilities/beta/PROTOCOL.md': doc(['inputSchema: { $id: "https://example.com/in.json", type: object }'], { id: 'id: beta' }),
      },
    },
  ],
  invalid: [
    // --- YAML that does not parse -------------------------------------------------------------
    {
      name: 'malformed YAML (an unclosed flow sequence)',
      files: only(doc(['tags: [reports, daily'])),
      // Reported where the `]` is missing: the end of the line.
      errors: [
        { messageId: 'yaml', line: 10, column: 22, message: 'invalid YAML: flow sequence in block collection must be sufficiently indented and end with a ]' },
      ],
    },
    {
      name: 'a duplicate key, at its second occurrence',
      files: only(doc(['name: Alpha again'])),
      errors: [{ messageId: 'yaml', line: 10, column: 1, message: 'duplicate key "name": a key may appear only once in a mapping' }],
    },
    {
      name: 'tab indentation',
      files: only(doc(['metadata:', '\towner: me'])),
      errors: [{ messageId: 'yaml', line: 11, column: 1, message: 'tab characters are not allowed for indentation in YAML; indent with spaces' }],
    },
    {
      name: 'no frontmatter',
      files: only('# Alpha\n\nDo not guess.\n'),
      errors: [{ messageId: 'yaml', line: 1, column: 1, message: 'no YAML frontmatter: a PROTOCOL.md must start with a `---` line' }],
    },
    {
      name: 'a frontmatter that is never closed',
      files: only('---\nid: alpha\nname: Alpha\n\n# Alpha\n'),
      errors: [
        {
          messageId: 'yaml',
          line: 1,
          column: 1,
          message: 'the frontmatter opened with `---` on line 1 is never closed; add a `---` line after the last field',
        },
      ],
    },
    {
      name: 'frontmatter that is a list, not a mapping',
      files: only('---\n- id\n- alpha\n---\nDo not.\n'),
      errors: [
        { messageId: 'yaml', line: 1, column: 1, endLine: 4, endColumn: 4, message: 'frontmatter must be a YAML mapping of fields (`key: value` lines)' },
      ],
    },
    {
      name: 'frontmatter that is a plain string',
      files: only('---\njust some text\n---\nDo not.\n'),
      errors: [{ messageId: 'yaml', line: 1, column: 1, message: 'frontmatter must be a YAML mapping' }],
    },
    {
      name: 'an empty frontmatter block',
      files: only('---\n---\nDo not.\n'),
      errors: [{ messageId: 'yaml', line: 1, column: 1, message: 'frontmatter must be a YAML mapping' }],
    },
    {
      name: 'a YAML alias bomb ("billion laughs") is refused at its first alias',
      files: only(doc(BILLION_LAUGHS)),
      errors: [
        {
          messageId: 'yaml',
          line: 11,
          column: 8,
          message: 'YAML aliases expand too much (over 100 alias expansions); write the values out instead of anchors',
        },
      ],
    },
    {
      name: 'a __proto__ key',
      files: only(doc(['__proto__:', '  polluted: yes'])),
      errors: [
        { messageId: 'yaml', line: 10, column: 1, endColumn: 10, message: 'key "__proto__" is not allowed: it could change object prototypes; rename it' },
      ],
    },
    {
      name: 'constructor and prototype keys, nested too',
      files: only(doc(['constructor:', '  prototype:', '    polluted: yes'])),
      errors: [
        { messageId: 'yaml', line: 10, column: 1, message: 'key "constructor" is not allowed' },
        { messageId: 'yaml', line: 11, column: 3, message: 'key "prototype" is not allowed' },
      ],
    },
    {
      name: 'a __proto__ key inside metadata',
      files: only(doc(['metadata:', '  __proto__: { polluted: "yes" }'])),
      errors: [{ messageId: 'yaml', line: 11, column: 3, message: 'key "__proto__" is not allowed' }],
    },

    // --- the schema ---------------------------------------------------------------------------
    {
      name: 'an unknown key with a "did you mean"',
      files: only(doc(['whenToUes:', '  - another trigger'])),
      errors: [{ messageId: 'schema', line: 10, column: 1, endColumn: 10, message: 'unknown field "whenToUes"; did you mean "whenToUse"?' }],
    },
    {
      name: 'an unknown key with no near miss',
      files: only(doc(['colour: blue'])),
      errors: [{ messageId: 'schema', line: 10, column: 1, message: /^unknown field "colour"$/ }],
    },
    {
      name: 'missing required fields, reported at the frontmatter',
      files: only('---\nid: alpha\nname: Alpha\n---\nDo not.\n'),
      errors: [
        { messageId: 'schema', line: 2, column: 1, message: 'missing required field "description"' },
        { messageId: 'schema', line: 2, column: 1, message: 'missing required field "protocol_updated"' },
        { messageId: 'schema', line: 2, column: 1, message: 'missing required field "protocol_version"' },
        { messageId: 'schema', line: 2, column: 1, message: 'missing required field "requiredToolsets"' },
        { messageId: 'schema', line: 2, column: 1, message: 'missing required field "whenToUse"' },
      ],
    },
    {
      name: 'wrong types',
      files: only(doc(['tags: reports'], { name: 'name: 42', whenToUse: 'whenToUse: use alpha', '  - use alpha': null })),
      errors: [
        { messageId: 'unquoted', line: 3, column: 7, message: '`name` must be a quoted string, not 42 (YAML reads it as the number 42): write "42"' },
        { messageId: 'schema', line: 5, column: 12, message: '`whenToUse` must be a list, not string "use alpha"' },
        { messageId: 'schema', line: 9, column: 7, message: '`tags` must be a list, not string "reports"' },
      ],
    },
    {
      name: 'protocol_version "latest"',
      files: only(doc([], { protocol_version: 'protocol_version: latest' })),
      errors: [
        {
          messageId: 'schema',
          line: 8,
          column: 19,
          endColumn: 25,
          message: '`protocol_version` "latest" has the wrong form: use a semantic version MAJOR.MINOR.PATCH such as "1.2.0"',
        },
      ],
    },
    {
      name: 'protocol_version a range "^1.2.0"',
      files: only(doc([], { protocol_version: 'protocol_version: "^1.2.0"' })),
      errors: [
        { messageId: 'schema', line: 8, column: 19, message: '`protocol_version` "^1.2.0" has the wrong form: use a semantic version MAJOR.MINOR.PATCH' },
      ],
    },
    {
      name: 'protocol_version with a part of 16 digits, which a JavaScript number cannot hold exactly (the gate could not compare it)',
      files: only(doc([], { protocol_version: 'protocol_version: 9007199254740993.0.0' })),
      errors: [
        {
          messageId: 'schema',
          line: 8,
          column: 19,
          message:
            '`protocol_version` "9007199254740993.0.0" has the wrong form: use a semantic version MAJOR.MINOR.PATCH such as "1.2.0" (no ranges, no "latest", no "v" prefix, at most 15 digits a part)',
        },
      ],
    },
    {
      name: 'protocol_version "1.2" (quoted)',
      files: only(doc([], { protocol_version: 'protocol_version: "1.2"' })),
      errors: [{ messageId: 'schema', line: 8, column: 19, message: '`protocol_version` "1.2" has the wrong form' }],
    },
    {
      name: 'protocol_version 1.2 (a YAML number) says what is expected',
      files: only(doc([], { protocol_version: 'protocol_version: 1.2' })),
      errors: [
        {
          messageId: 'unquotedVersion',
          line: 8,
          column: 19,
          message: '`protocol_version` must be a quoted semver string like "1.2.0", not 1.2 (YAML reads it as the number 1.2)',
        },
      ],
    },
    {
      name: 'protocol_version 1.0 is quoted as written, not as the number 1 YAML makes of it',
      files: only(doc([], { protocol_version: 'protocol_version: 1.0' })),
      errors: [
        {
          messageId: 'unquotedVersion',
          line: 8,
          column: 19,
          endColumn: 22,
          message: /^`protocol_version` must be a quoted semver string like "1\.0\.0", not 1\.0 \(YAML reads it as the number 1\)$/,
        },
      ],
    },
    {
      name: 'protocol_version 2 and other scalars that YAML reads as numbers or booleans',
      files: only(doc([], { protocol_version: 'protocol_version: 0x2', name: 'name: true' })),
      errors: [
        { messageId: 'unquoted', line: 3, column: 7, message: '`name` must be a quoted string, not true (YAML reads it as the boolean true): write "true"' },
        {
          messageId: 'unquotedVersion',
          line: 8,
          column: 19,
          message: '`protocol_version` must be a quoted semver string like "1.0.0", not 0x2 (YAML reads it as the number 2)',
        },
      ],
    },
    {
      name: 'protocol_version with a "v" prefix',
      files: only(doc([], { protocol_version: 'protocol_version: v1.2.0' })),
      errors: [{ messageId: 'schema', line: 8, column: 19, message: '`protocol_version` "v1.2.0" has the wrong form' }],
    },
    {
      name: 'a month that does not exist',
      files: only(doc([], { protocol_updated: 'protocol_updated: 2026-13-01' })),
      errors: [
        {
          messageId: 'schema',
          line: 9,
          column: 19,
          endColumn: 29,
          message: '`protocol_updated` "2026-13-01" has the wrong form: use an ISO date YYYY-MM-DD such as "2026-11-29"',
        },
      ],
    },
    {
      name: 'a date in another format',
      files: only(doc([], { protocol_updated: 'protocol_updated: 29.11.2026' })),
      errors: [{ messageId: 'schema', line: 9, column: 19, message: '`protocol_updated` "29.11.2026" has the wrong form: use an ISO date YYYY-MM-DD' }],
    },
    {
      name: "an $id equal to a meta-schema's does not break the next capability's check",
      files: {
        [A]: doc(['inputSchema: { $id: "http://json-schema.org/draft-07/schema", type: object }']),
        'capabilities/beta/PROTOCOL.md': doc(['inputSchema: { type: object, properties: { a: { $id: "https://example.com/a", type: string } } }'], {
          id: 'id: beta',
        }),
        'capabilities/gamma/PROTOCOL.md': doc(['inputSchema: { type: object, properties: { a: { $id: "https://example.com/a", type: string } } }'], {
          id: 'id: gamma',
        }),
      },
      // The first is refused (it would replace the meta-schema); the two same nested $ids are fine.
      errors: [
        {
          messageId: 'invalidJsonSchema',
          file: A,
          line: 10,
          column: 14,
          message: '`inputSchema` is not a valid JSON Schema: schema with key or id "http://json-schema.org/draft-07/schema" already exists',
        },
      ],
    },
    {
      name: 'a day that does not exist in its month (February 31)',
      files: only(doc([], { protocol_updated: 'protocol_updated: 2026-02-31' })),
      errors: [
        {
          messageId: 'schema',
          line: 9,
          column: 19,
          endColumn: 29,
          message: '`protocol_updated` "2026-02-31" is not a real calendar date: use an ISO date YYYY-MM-DD such as "2026-11-29"',
        },
      ],
    },
    {
      name: 'February 29 of years that are not leap years (2025, 2100), April 31',
      files: {
        [A]: doc([], { protocol_updated: 'protocol_updated: 2025-02-29' }),
        'capabilities/beta/PROTOCOL.md': doc([], { id: 'id: beta', protocol_updated: 'protocol_updated: 2100-02-29' }),
        'capabilities/gamma/PROTOCOL.md': doc([], { id: 'id: gamma', protocol_updated: 'protocol_updated: "2026-04-31"' }),
      },
      errors: [
        { messageId: 'schema', file: A, line: 9, column: 19, message: '`protocol_updated` "2025-02-29" is not a real calendar date' },
        {
          messageId: 'schema',
          file: 'capabilities/beta/PROTOCOL.md',
          line: 9,
          column: 19,
          message: '`protocol_updated` "2100-02-29" is not a real calendar date',
        },
        {
          messageId: 'schema',
          file: 'capabilities/gamma/PROTOCOL.md',
          line: 9,
          column: 19,
          message: '`protocol_updated` "2026-04-31" is not a real calendar date',
        },
      ],
    },
    {
      name: 'YAML-only types are refused, not rewritten: !!binary, !!omap, !!set, !!timestamp',
      files: only(
        doc(['metadata: { logo: !!binary aGVsbG8= }', 'tags: !!set { a, b }', 'constraints: !!omap', '  - a: 1', 'evidenceTypes: [!!timestamp 2026-11-29]']),
      ),
      errors: [
        { messageId: 'yaml', line: 10, column: 28, message: 'YAML tag !!binary is not allowed: only JSON-compatible YAML is read' },
        { messageId: 'yaml', line: 11, column: 13, message: 'YAML tag !!set is not allowed' },
        { messageId: 'yaml', line: 13, column: 3, message: 'YAML tag !!omap is not allowed' },
        { messageId: 'yaml', line: 14, column: 29, message: 'YAML tag !!timestamp is not allowed' },
      ],
    },
    {
      name: 'NaN, infinity and keys that are not text',
      files: only(doc(['metadata: { a: .nan, 2: b }'])),
      errors: [
        { messageId: 'yaml', line: 10, column: 16, message: '.nan is not a finite number' },
        { messageId: 'yaml', line: 10, column: 22, message: 'a key must be text, not the number 2; quote it: "2"' },
      ],
    },
    {
      name: 'a whole number past 2^53, which would be served rounded',
      files: only(doc(['inputSchema: { type: integer, maximum: 18446744073709551615 }'])),
      errors: [{ messageId: 'yaml', line: 10, column: 40, message: '18446744073709551615 is a whole number too large to be read exactly' }],
    },
    {
      name: 'frontmatter nested deeper than the YAML limit, at the token that goes too deep',
      files: only(doc([`metadata: ${'{a: '.repeat(400)}1${'}'.repeat(400)}`])),
      errors: [{ messageId: 'yaml', line: 10, column: 11 + 4 * 63, message: 'YAML nested more than 64 levels deep' }],
    },
    {
      name: 'an inputSchema in draft-04 (not checked by capreg), and one whose $schema is not a URI',
      files: only(doc(['inputSchema: { $schema: "http://json-schema.org/draft-04/schema#", type: object }', 'outputSchema: { $schema: 4, type: object }'])),
      errors: [
        {
          messageId: 'invalidJsonSchema',
          line: 10,
          column: 25,
          message:
            '`inputSchema` is not a valid JSON Schema: `$schema` "http://json-schema.org/draft-04/schema#" names no JSON Schema dialect capreg checks; use one of draft-07 ("http://json-schema.org/draft-07/schema#"), 2019-09 ("https://json-schema.org/draft/2019-09/schema"), 2020-12 ("https://json-schema.org/draft/2020-12/schema"), or leave `$schema` out for draft-07',
        },
        {
          messageId: 'invalidJsonSchema',
          line: 11,
          column: 26,
          message: '`outputSchema` is not a valid JSON Schema: `$schema` that is not a URI names no JSON Schema dialect',
        },
      ],
    },
    {
      name: 'an invalid 2020-12 schema is checked against the 2020-12 meta-schema',
      files: only(doc(['inputSchema: { $schema: "https://json-schema.org/draft/2020-12/schema", prefixItems: 3 }'])),
      errors: [
        {
          messageId: 'invalidJsonSchema',
          line: 10,
          column: 86,
          message: '`inputSchema` is not a valid JSON Schema: `inputSchema.prefixItems` must be a list, not number 3',
        },
      ],
    },
    {
      name: 'a $ref to a remote URL is unresolved, not fetched',
      files: only(doc(['inputSchema: { $ref: "https://example.com/schema.json" }'])),
      errors: [
        {
          messageId: 'invalidJsonSchema',
          line: 10,
          column: 14,
          message: "`inputSchema` is not a valid JSON Schema: can't resolve reference https://example.com/schema.json",
        },
      ],
    },
    {
      name: 'an inputSchema too big to compile in reasonable time',
      files: only(doc([`inputSchema: { type: object, properties: { ${Array.from({ length: 600 }, (_, i) => `p${i}: { type: string }`).join(', ')} } }`])),
      errors: [
        {
          messageId: 'invalidJsonSchema',
          line: 10,
          column: 14,
          message: '`inputSchema` is not a valid JSON Schema: it holds over 1000 values, more than capreg checks',
        },
      ],
    },
    {
      name: 'an id that breaks the pattern',
      files: only(doc([], { id: 'id: Alpha_1' })),
      errors: [
        {
          messageId: 'schema',
          line: 2,
          column: 5,
          endColumn: 12,
          message: '`id` "Alpha_1" has the wrong form: use lowercase letters and digits in words joined by single hyphens',
        },
      ],
    },
    {
      name: 'an id over 64 characters',
      files: only(doc([], { id: `id: ${'a'.repeat(65)}` })),
      errors: [{ messageId: 'schema', line: 2, column: 5, message: '`id` is too long (65 characters, at most 64)' }],
    },
    {
      name: 'an empty name and an empty trigger list',
      files: only(doc([], { name: 'name: ""', whenToUse: 'whenToUse: []', '  - use alpha': null })),
      errors: [
        { messageId: 'schema', line: 3, column: 7, message: '`name` must not be empty' },
        { messageId: 'schema', line: 5, column: 12, message: '`whenToUse` must have at least 1 item' },
      ],
    },
    {
      // Also "has the wrong form: a tag is one word without spaces" once the pattern became ^\S+$.
      name: 'an empty tag is one problem, not also one of form',
      files: only(doc(['tags: [reports, ""]'])),
      errors: [{ messageId: 'schema', line: 10, column: 17, message: '`tags.1` must not be empty' }],
    },
    {
      name: 'a toolset listed twice, reported at the second',
      files: only(doc([], { requiredToolsets: 'requiredToolsets: [work-logs, automation, work-logs]' })),
      errors: [{ messageId: 'schema', line: 7, column: 43, message: '`requiredToolsets` lists "work-logs" twice (items 1 and 3); remove one' }],
    },
    {
      name: 'lifecyclePhase with a "did you mean"',
      files: only(doc(['lifecyclePhase: verfy'])),
      errors: [
        {
          messageId: 'schema',
          line: 10,
          column: 17,
          message: '`lifecyclePhase` must be one of "define", "plan", "build", "verify", "review", "ship", not "verfy"; did you mean "verify"?',
        },
      ],
    },
    {
      name: 'metadata values must be strings',
      files: only(doc(['metadata:', '  priority: 3'])),
      errors: [
        {
          messageId: 'unquoted',
          line: 11,
          column: 13,
          message: '`metadata.priority` must be a quoted string, not 3 (YAML reads it as the number 3): write "3"',
        },
      ],
    },
    {
      name: 'a constraint with a bad severity (did you mean) and a misspelt key',
      files: only(
        doc([
          'constraints:',
          '  - rationalization: "Just this once."',
          '    rebuttal: "No."',
          '    severity: blok',
          '  - rationalisation: "Tests can wait."',
          '    rebuttal: "They cannot."',
          '    severity: warn',
        ]),
      ),
      errors: [
        {
          messageId: 'schema',
          line: 13,
          column: 15,
          message: '`constraints.0.severity` must be one of "must-ignore", "warn", "block", not "blok"; did you mean "block"?',
        },
        {
          messageId: 'schema',
          line: 14,
          column: 5,
          endColumn: 20,
          message: 'unknown field "rationalisation" in `constraints.1`; did you mean "rationalization"?',
        },
      ],
    },
    {
      name: 'an inputSchema that is not a JSON Schema, at the offending node',
      files: only(doc(['inputSchema:', '  type: object', '  properties:', '    day: { type: strng }'])),
      errors: [
        {
          messageId: 'invalidJsonSchema',
          line: 13,
          column: 18,
          message:
            '`inputSchema` is not a valid JSON Schema: `inputSchema.properties.day.type` must be one of "array", "boolean", "integer", "null", "number", "object", "string", not "strng"; did you mean "string"?',
        },
      ],
    },
    {
      name: 'an outputSchema with a $ref that does not resolve',
      files: only(doc(['outputSchema:', '  $ref: "#/definitions/missing"'])),
      errors: [
        {
          messageId: 'invalidJsonSchema',
          line: 11,
          column: 3,
          message: "`outputSchema` is not a valid JSON Schema: can't resolve reference #/definitions/missing",
        },
      ],
    },
    {
      name: 'an inputSchema that is a list',
      files: only(doc(['inputSchema: [string]'])),
      errors: [{ messageId: 'schema', line: 10, column: 14, message: '`inputSchema` must be a mapping, not a list' }],
    },
    {
      name: 'every problem of a document in one run, in file order',
      files: only(doc(['tags: reports', 'lifecyclePhase: ship-it'], { id: 'id: Alpha', protocol_version: 'protocol_version: latest' })),
      errors: [
        { messageId: 'schema', line: 2, column: 5, message: '`id` "Alpha" has the wrong form' },
        { messageId: 'schema', line: 8, column: 19, message: '`protocol_version` "latest" has the wrong form' },
        { messageId: 'schema', line: 10, column: 7, message: '`tags` must be a list' },
        { messageId: 'schema', line: 11, column: 17, message: '`lifecyclePhase` must be one of' },
      ],
    },
    {
      name: 'problems of two capabilities',
      files: { [A]: doc(['colour: blue']), 'capabilities/beta/PROTOCOL.md': doc(['whenToUes: [x]'], { id: 'id: beta' }) },
      errors: [
        { messageId: 'schema', file: A, line: 10, column: 1, message: 'unknown field "colour"' },
        { messageId: 'schema', file: 'capabilities/beta/PROTOCOL.md', line: 10, column: 1, message: 'did you mean "whenToUse"?' },
      ],
    },
  ],
});

describe('frontmatter-schema: hostile YAML', () => {
  it('leaves Object.prototype alone whatever the keys', () => {
    const hostile = [
      doc(['__proto__:', '  polluted: yes']),
      doc(['constructor:', '  prototype:', '    polluted: yes']),
      doc(['metadata: { __proto__: { polluted: "yes" } }']),
      doc(['tags: &t [a]', '__proto__: *t']),
    ];
    for (const content of hostile) {
      const diagnostics = lintWith(frontmatterSchema, registryInput(only(content)));
      expect(diagnostics.length).toBeGreaterThan(0);
      expect(diagnostics.every((d) => d.message.includes('is not allowed: it could change object prototypes; rename it'))).toBe(true);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('keeps no data from a document with a prototype key', () => {
    const source = parseYamlSource('a: 1\n__proto__:\n  polluted: yes\n', new LineIndex(''));
    expect(source.data).toBeUndefined();
    expect(source.problems.map((p) => p.code)).toEqual(['forbidden-key']);
  });

  it('refuses an alias bomb quickly, without expanding it', () => {
    const started = performance.now();
    const document = parseCapability(A, doc(BILLION_LAUGHS));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(document.frontmatter.data).toBeUndefined();
    expect(document.frontmatter.problems.map((p) => p.code)).toEqual(['alias-limit']);
  });

  it('allows a few honest aliases', () => {
    const diagnostics = lintWith(frontmatterSchema, registryInput(only(doc(['tags: &tags [a, b]', 'scopeConstraints: *tags']))));
    expect(diagnostics).toEqual([]);
  });
});

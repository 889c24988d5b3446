import { userFrontmatter } from '../../compiler/user/rules/user-frontmatter.js';
import { ruleTable } from './harness.js';

const MINE = 'capabilities/mine/PROTOCOL.md';
const GOOD = 'name: Mine\ndescription: My workflow.\nwhenToUse:\n  - my friday report\nuses: [work-reporting]\n';
const user = (frontmatter: string): Record<string, string> => ({ [MINE]: `---\n${frontmatter}---\nNever guess.\n` });

ruleTable(userFrontmatter, {
  valid: [
    { name: 'the required fields', files: user(GOOD) },
    { name: 'with tool bindings', files: user(`${GOOD}toolBindings:\n  - step: report\n    capability: work-reporting\n    tools: [work_log_generate]\n`) },
  ],
  invalid: [
    {
      name: 'a misspelled field: unknown, with did-you-mean (which covers the required one it misses)',
      files: user('name: Mine\ndescription: My workflow.\nwhenToUes: [my friday report]\nuses: [work-reporting]\n'),
      errors: [{ messageId: 'problem', line: 4, column: 1, data: { message: 'unknown field "whenToUes"; did you mean "whenToUse"?' }, file: MINE }],
    },
    {
      name: 'an id: the server assigns it',
      files: user(`id: mine\n${GOOD}`),
      errors: [{ messageId: 'problem', line: 2, column: 1, message: 'unknown field "id"', file: MINE }],
    },
    {
      name: 'a trigger over 200 characters (an owner indexes up to 100 capabilities of 50 triggers each)',
      files: user(`name: Mine\ndescription: My workflow.\nwhenToUse:\n  - ${'x'.repeat(201)}\nuses: [work-reporting]\n`),
      errors: [{ messageId: 'problem', line: 5, column: 5, file: MINE }],
    },
    {
      name: 'a name or description of only spaces, refused as an empty one is',
      files: user('name: "  "\ndescription: "\\t"\nwhenToUse:\n  - my friday report\nuses: [work-reporting]\n'),
      errors: [
        { messageId: 'problem', line: 2, column: 7, data: { message: '`name` "  " has the wrong form: it is blank; write the name users see' }, file: MINE },
        {
          messageId: 'problem',
          line: 3,
          column: 14,
          data: { message: '`description` "\\t" has the wrong form: it is blank; write one or two sentences on what the capability does' },
          file: MINE,
        },
      ],
    },
    {
      name: 'YAML that does not parse',
      files: user('name: [unclosed\n'),
      errors: [{ messageId: 'problem', line: 2, column: 16, file: MINE }],
    },
  ],
});

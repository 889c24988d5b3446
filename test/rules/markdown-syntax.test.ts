import { markdownSyntax } from '../../compiler/rules/markdown-syntax.js';
import { protocol } from '../support/registry.js';
import { ruleTable } from './harness.js';

const A = 'capabilities/alpha/PROTOCOL.md';
// protocol() writes 9 frontmatter lines between the fences: the body starts on line 11.
const withBody = (body: string): Record<string, string> => ({ [A]: protocol({ id: 'alpha' }, body) });

ruleTable(markdownSyntax, {
  valid: [
    { name: 'a closed fence', files: withBody('Do not.\n\n```sh\nnpm test\n```\n') },
    { name: 'a closed fence at the very end, without a newline', files: withBody('```\ncode\n```') },
    { name: 'closed by a longer fence', files: withBody('```\ncode\n`````\n') },
    { name: 'a tilde fence', files: withBody('~~~\ncode\n~~~\n') },
    { name: 'a fence inside a longer fence', files: withBody('````md\n```\ninner\n```\n````\n') },
    { name: 'an indented code block', files: withBody('Text.\n\n    code\n') },
    { name: 'closed inside a block quote', files: withBody('> ```\n> code\n> ```\n') },
    { name: 'closed inside a nested list item', files: withBody('- a\n  - b\n\n    ```\n    code\n    ```\n') },
    { name: 'closed inside an ordered list item', files: withBody('10. a\n\n    ```\n    code\n    ```\n') },
    { name: 'a closing fence with trailing spaces', files: withBody('```\ncode\n```   \n') },
  ],
  invalid: [
    {
      name: 'an unclosed fence at the end of the body',
      files: withBody('Do not.\n\n```js\nconst a = 1;\n'),
      errors: [
        {
          messageId: 'problem',
          line: 13,
          column: 1,
          endLine: 15,
          message: 'code fence opened with ``` on line 13 is never closed, so the text after it is read as code, not as instructions; close it with a ``` line',
        },
      ],
    },
    {
      name: 'a fence that swallows the rest of the protocol',
      files: withBody('```\na\n```\n\n## Rules\n\n```sh\nb\n\n## More rules\n\n- Never guess.\n'),
      errors: [{ messageId: 'problem', line: 17, column: 1, message: 'code fence opened with ``` on line 17 is never closed' }],
    },
    {
      name: 'closed by a shorter fence (which does not close it)',
      files: withBody('~~~~\ncode\n~~~\n'),
      errors: [
        {
          messageId: 'problem',
          line: 11,
          column: 1,
          message:
            'code fence opened with ~~~~ on line 11 is never closed, so the text after it is read as code, not as instructions; close it with a ~~~~ line',
        },
      ],
    },
    {
      name: 'a fence that is only an opening line',
      files: withBody('```'),
      errors: [{ messageId: 'problem', line: 11, column: 1, endLine: 11, endColumn: 4, message: 'is never closed' }],
    },
    {
      name: 'indented four spaces, the closing line is code, not a fence',
      files: withBody('```\ncode\n    ```\n'),
      errors: [{ messageId: 'problem', line: 11, column: 1, message: 'is never closed' }],
    },
    {
      name: 'unclosed inside a block quote',
      files: withBody('> ```\n> code\n\nAfter.\n'),
      errors: [{ messageId: 'problem', line: 11, column: 3, endLine: 12, message: 'code fence opened with ``` on line 11 is never closed' }],
    },
    {
      name: 'unclosed inside a list item',
      files: withBody('- item\n\n  ```js\n  code\n'),
      errors: [{ messageId: 'problem', line: 13, column: 3, message: 'code fence opened with ``` on line 13 is never closed' }],
    },
    {
      name: 'in a file without frontmatter',
      files: { [A]: '```\nx\n' },
      errors: [{ messageId: 'problem', line: 1, column: 1, message: 'code fence opened with ``` on line 1 is never closed' }],
    },
  ],
});

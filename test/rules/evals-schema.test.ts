import { evalsSchema } from '../../compiler/rules/evals-schema.js';
import { protocol } from '../support/registry.js';
import { ruleTable } from './harness.js';

const A = 'capabilities/alpha/PROTOCOL.md';
const EVALS = 'capabilities/alpha/evals.yaml';
const alpha = protocol({ id: 'alpha' });
const long = 'x'.repeat(501);

ruleTable(evalsSchema, {
  valid: [
    { name: 'no evals file', files: { [A]: alpha } },
    {
      name: 'shouldMatch, shouldNotMatch and top',
      files: { [A]: alpha, [EVALS]: 'top: 5\nshouldMatch: [write my report, 写日报]\nshouldNotMatch:\n  - remind me\n' },
    },
  ],
  invalid: [
    {
      name: 'a misspelled key: did you mean',
      files: { [A]: alpha, [EVALS]: 'shouldMatch: [a]\nshouldNotMatchh: [b]\n' },
      errors: [{ messageId: 'schema', file: EVALS, line: 2, column: 1, data: { message: 'unknown field "shouldNotMatchh"; did you mean "shouldNotMatch"?' } }],
    },
    {
      name: 'shouldMatch missing, at the file start',
      files: { [A]: alpha, [EVALS]: 'top: 2\n' },
      errors: [{ messageId: 'schema', file: EVALS, line: 1, column: 1, data: { message: 'missing required field "shouldMatch"' } }],
    },
    {
      name: 'an empty request, a request over the length limit and a top out of range, each at its node',
      files: { [A]: alpha, [EVALS]: `top: 11\nshouldMatch:\n  - ok\n  - ""\n  - ${long}\n` },
      errors: [
        { messageId: 'schema', file: EVALS, line: 1, column: 6, message: '`top` must be <= 10' },
        { messageId: 'schema', file: EVALS, line: 4, column: 5, data: { message: '`shouldMatch.1` must not be empty' } },
        { messageId: 'schema', file: EVALS, line: 5, column: 5, data: { message: '`shouldMatch.2` is too long (501 characters, at most 500)' } },
      ],
    },
    {
      name: 'more requests than the limit',
      files: { [A]: alpha, [EVALS]: `shouldMatch:\n${Array.from({ length: 101 }, (_, i) => `  - request ${i}\n`).join('')}` },
      errors: [{ messageId: 'schema', file: EVALS, line: 2, column: 3, data: { message: '`shouldMatch` has 101 items, at most 100' } }],
    },
    {
      name: 'a duplicate key is a YAML problem',
      files: { [A]: alpha, [EVALS]: 'shouldMatch: [a]\nshouldMatch: [b]\n' },
      errors: [{ messageId: 'yaml', file: EVALS, line: 2, column: 1, message: 'shouldMatch' }],
    },
    {
      name: 'a request that is not a string',
      files: { [A]: alpha, [EVALS]: 'shouldMatch:\n  - [nested]\n' },
      errors: [{ messageId: 'schema', file: EVALS, line: 2, column: 5, message: '`shouldMatch.0` must be a string, not a list' }],
    },
  ],
});

import { idMatchesFolder } from '../../compiler/rules/id-matches-folder.js';
import { protocol } from '../support/registry.js';
import { ruleTable } from './harness.js';

ruleTable(idMatchesFolder, {
  valid: [
    { name: 'id equals folder', files: { 'capabilities/alpha/PROTOCOL.md': protocol({ id: 'alpha' }) } },
    { name: "id missing is the schema rule's business", files: { 'capabilities/alpha/PROTOCOL.md': '---\nname: A\n---\nDo not.\n' } },
  ],
  invalid: [
    {
      name: 'id differs from folder',
      files: { 'capabilities/alpha/PROTOCOL.md': protocol({ id: 'beta' }) },
      errors: [{ messageId: 'mismatch', line: 2, column: 5, message: 'id "beta" does not match its folder "alpha"' }],
    },
    {
      name: 'two capabilities with one id',
      files: {
        'capabilities/alpha/PROTOCOL.md': protocol({ id: 'alpha' }),
        'capabilities/beta/PROTOCOL.md': protocol({ id: 'alpha' }),
      },
      errors: [
        { messageId: 'mismatch', line: 2, column: 5, file: 'capabilities/beta/PROTOCOL.md', message: 'does not match its folder "beta"' },
        { messageId: 'duplicate', line: 2, column: 5, file: 'capabilities/beta/PROTOCOL.md', message: 'also used by capabilities/alpha/PROTOCOL.md' },
      ],
    },
  ],
});

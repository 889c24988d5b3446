import { userUses } from '../../compiler/user/rules/user-uses.js';
import { protocol } from '../support/registry.js';
import { ruleTable } from './harness.js';

// A user capability checked inside a registry that holds the capabilities it may use; its
// frontmatter lines: 2 name, 3 description, 4 whenToUse, 5 its item, 6 uses; the body from line 8.
const MINE = 'capabilities/mine/PROTOCOL.md';
const user = (uses: string, body: string): Record<string, string> => ({
  'capabilities/work-reporting/PROTOCOL.md': protocol({ id: 'work-reporting' }),
  'capabilities/personal-automation/PROTOCOL.md': protocol({ id: 'personal-automation' }),
  [MINE]: `---\nname: Mine\ndescription: My workflow.\nwhenToUse:\n  - my friday report\nuses: ${uses}\n---\n${body}`,
});

ruleTable(userUses, {
  valid: [
    {
      name: 'every link declared in uses',
      files: user('[work-reporting, personal-automation]', 'Load [report](capability:work-reporting), then [automation](capability:personal-automation).\n'),
    },
    {
      name: 'uses wider than the links (declared vs delivered)',
      files: user('[work-reporting, personal-automation]', 'Load [report](capability:work-reporting).\n'),
    },
    { name: "no uses field is the frontmatter rule's business", files: { [MINE]: '---\nname: Mine\n---\nLoad [x](capability:work-reporting).\n' } },
  ],
  invalid: [
    {
      name: 'a link to a capability not listed in uses, at the link',
      files: user('[work-reporting]', 'Never schedule without asking.\nLoad [automation](capability:personal-automation).\n'),
      errors: [{ messageId: 'notDeclared', line: 9, column: 6, data: { id: 'personal-automation' }, file: MINE }],
    },
    {
      name: 'an unknown uses entry, at the entry (the same words as one the author cannot see)',
      files: user('[work-reporting, payroll]', 'Load [report](capability:work-reporting).\n'),
      errors: [{ messageId: 'unknown', line: 6, column: 24, data: { id: 'payroll' }, file: MINE }],
    },
  ],
});

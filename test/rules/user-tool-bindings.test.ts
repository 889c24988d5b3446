import { userToolBindings } from '../../compiler/user/rules/user-tool-bindings.js';
import { protocol } from '../support/registry.js';
import { ruleTable } from './harness.js';

// A user capability in a registry whose personal-automation requires the default `automation`
// toolset; frontmatter lines: 6 uses, 7 toolBindings, 8 step, 9 capability, 10 tools.
const MINE = 'capabilities/mine/PROTOCOL.md';
const user = (capability: string, tools: string, body: string): Record<string, string> => ({
  'capabilities/personal-automation/PROTOCOL.md': protocol({ id: 'personal-automation', requiredToolsets: ['automation'] }),
  'capabilities/work-reporting/PROTOCOL.md': protocol({ id: 'work-reporting', requiredToolsets: ['work-logs'] }),
  [MINE]: `---\nname: Mine\ndescription: My workflow.\nwhenToUse:\n  - my friday report\nuses: [personal-automation, work-reporting]\ntoolBindings:\n  - step: schedule\n    capability: ${capability}\n    tools: ${tools}\n---\n${body}`,
});
const LINKED = 'Load [automation](capability:personal-automation) to schedule it.\n';

ruleTable(userToolBindings, {
  valid: [
    { name: 'a tool of a toolset of the linked capability', files: user('personal-automation', '[automation_create_task, automation_list_tasks]', LINKED) },
    { name: 'no bindings', files: { [MINE]: '---\nname: Mine\nuses: [personal-automation]\n---\nNever guess.\n' } },
  ],
  invalid: [
    {
      name: 'a bound tool outside the linked capability toolsets, at the tool, with did-you-mean',
      files: user('personal-automation', '[automation_create_tsk]', LINKED),
      errors: [
        {
          messageId: 'foreignTool',
          line: 10,
          column: 13,
          data: {
            tool: 'automation_create_tsk',
            step: 'schedule',
            id: 'personal-automation',
            toolsets: 'automation',
            hint: '; did you mean "automation_create_task"?',
          },
          file: MINE,
        },
      ],
    },
    {
      name: 'a binding to a capability the workflow does not link to, at its capability',
      files: user('work-reporting', '[work_log_generate]', LINKED),
      errors: [{ messageId: 'notLinked', line: 9, column: 17, data: { step: 'schedule', id: 'work-reporting' }, file: MINE }],
    },
  ],
});

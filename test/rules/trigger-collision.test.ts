import { triggerCollision } from '../../compiler/rules/trigger-collision.js';
import { protocol } from '../support/registry.js';
import { ruleTable } from './harness.js';

// protocol() puts `whenToUse:` on line 5 and its items on lines 6, 7, … (each `  - ` item at column 5).
const A = 'capabilities/alpha/PROTOCOL.md';
const B = 'capabilities/beta/PROTOCOL.md';

ruleTable(triggerCollision, {
  valid: [
    { name: 'different words', files: { [A]: protocol({ id: 'alpha', whenToUse: ['weekly report'] }), [B]: protocol({ id: 'beta', whenToUse: ['daily report'] }) } },
    { name: 'an exact duplicate is when-to-use\'s warning, not this one', files: { [A]: protocol({ id: 'alpha', whenToUse: ['Weekly report'] }), [B]: protocol({ id: 'beta', whenToUse: ['weekly  REPORT'] }) } },
    { name: 'near-identical triggers within one capability', files: { [A]: protocol({ id: 'alpha', whenToUse: ['write my reports', 'write the report'] }) } },
    {
      name: "an exact duplicate of another capability's second near-identical trigger is still when-to-use's alone",
      files: { [A]: protocol({ id: 'alpha', whenToUse: ['Weekly report', 'the weekly reports'] }), [B]: protocol({ id: 'beta', whenToUse: ['The weekly reports'] }) },
    },
    { name: 'triggers of stop words only say nothing to search', files: { [A]: protocol({ id: 'alpha', whenToUse: ['do it for me'] }), [B]: protocol({ id: 'beta', whenToUse: ['for me, do it'] }) } },
    { name: 'a shared word is not a collision', files: { [A]: protocol({ id: 'alpha', whenToUse: ['写周报'] }), [B]: protocol({ id: 'beta', whenToUse: ['写日报'] }) } },
  ],
  invalid: [
    {
      name: 'stems, stop words and order: the later capability, pointing at the first',
      files: { [A]: protocol({ id: 'alpha', whenToUse: ['write my weekly reports', '写周报'] }), [B]: protocol({ id: 'beta', whenToUse: ['other', 'Weekly report: write the', '周报写'] }) },
      errors: [
        { messageId: 'collision', file: B, line: 7, column: 5, data: { trigger: 'Weekly report: write the', otherTrigger: 'write my weekly reports', other: 'alpha', file: A } },
      ],
    },
    {
      name: 'Chinese: the same words in another order and punctuation',
      files: { [A]: protocol({ id: 'alpha', whenToUse: ['写，周报'] }), [B]: protocol({ id: 'beta', whenToUse: ['周报 写！'] }) },
      errors: [{ messageId: 'collision', file: B, line: 6, column: 5, data: { trigger: '周报 写！', otherTrigger: '写，周报', other: 'alpha', file: A } }],
    },
    {
      name: 'three capabilities: each later one points at the first',
      files: {
        [A]: protocol({ id: 'alpha', whenToUse: ['plan the sprint'] }),
        [B]: protocol({ id: 'beta', whenToUse: ['sprint planning'] }),
        'capabilities/gamma/PROTOCOL.md': protocol({ id: 'gamma', whenToUse: ['Plan a sprint'] }),
      },
      errors: [
        { messageId: 'collision', file: B, line: 6, column: 5, data: { trigger: 'sprint planning', otherTrigger: 'plan the sprint', other: 'alpha', file: A } },
        { messageId: 'collision', file: 'capabilities/gamma/PROTOCOL.md', line: 6, column: 5, data: { trigger: 'Plan a sprint', otherTrigger: 'plan the sprint', other: 'alpha', file: A } },
      ],
    },
  ],
});

import { describe, expect, it } from 'vitest';
import { triggerCollision } from '../../compiler/rules/trigger-collision.js';
import type { ManifestCapability } from '../../compiler/types.js';
import { USER_CAPABILITY_FILE, compileUserCapability } from '../../compiler/user/compile-user.js';
import { protocol } from '../support/registry.js';
import { ruleTable } from './harness.js';

// protocol() puts `whenToUse:` on line 5 and its items on lines 6, 7, … (each `  - ` item at column 5).
const A = 'capabilities/alpha/PROTOCOL.md';
const B = 'capabilities/beta/PROTOCOL.md';

ruleTable(triggerCollision, {
  valid: [
    {
      name: 'different words',
      files: { [A]: protocol({ id: 'alpha', whenToUse: ['weekly report'] }), [B]: protocol({ id: 'beta', whenToUse: ['daily report'] }) },
    },
    {
      name: "an exact duplicate is when-to-use's warning, not this one",
      files: { [A]: protocol({ id: 'alpha', whenToUse: ['Weekly report'] }), [B]: protocol({ id: 'beta', whenToUse: ['weekly  REPORT'] }) },
    },
    { name: 'near-identical triggers within one capability', files: { [A]: protocol({ id: 'alpha', whenToUse: ['write my reports', 'write the report'] }) } },
    {
      name: "an exact duplicate of another capability's second near-identical trigger is still when-to-use's alone",
      files: {
        [A]: protocol({ id: 'alpha', whenToUse: ['Weekly report', 'the weekly reports'] }),
        [B]: protocol({ id: 'beta', whenToUse: ['The weekly reports'] }),
      },
    },
    {
      name: 'triggers of stop words only say nothing to search',
      files: { [A]: protocol({ id: 'alpha', whenToUse: ['do it for me'] }), [B]: protocol({ id: 'beta', whenToUse: ['for me, do it'] }) },
    },
    {
      name: 'a shared word is not a collision',
      files: { [A]: protocol({ id: 'alpha', whenToUse: ['写周报'] }), [B]: protocol({ id: 'beta', whenToUse: ['写日报'] }) },
    },
  ],
  invalid: [
    {
      name: 'stems, stop words and order: the later capability, pointing at the first',
      files: {
        [A]: protocol({ id: 'alpha', whenToUse: ['write my weekly reports', '写周报'] }),
        [B]: protocol({ id: 'beta', whenToUse: ['other', 'Weekly report: write the', '周报写'] }),
      },
      errors: [
        {
          messageId: 'collision',
          file: B,
          line: 7,
          column: 5,
          data: { trigger: 'Weekly report: write the', otherTrigger: 'write my weekly reports', other: 'alpha', file: A },
        },
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
        {
          messageId: 'collision',
          file: 'capabilities/gamma/PROTOCOL.md',
          line: 6,
          column: 5,
          data: { trigger: 'Plan a sprint', otherTrigger: 'plan the sprint', other: 'alpha', file: A },
        },
      ],
    },
  ],
});

// The rule reads the catalog only (meta.reads), so it also runs on a user capability compiled
// against the manifest: the user's trigger is the one reported, never the platform's.
describe('trigger-collision on a user capability', () => {
  const platform: ManifestCapability = {
    id: 'work-reporting',
    name: 'Work reporting',
    description: 'Writes reports from the work log.',
    whenToUse: ['write my weekly reports'],
    requiredToolsets: [],
    optionalToolsets: [],
    protocolVersion: '1.0.0',
    protocolUpdated: '2026-11-29',
    digest: `sha256:${'0'.repeat(64)}`,
    references: [],
    protocol: 'Never invent figures.\n',
  };
  const user = (trigger: string): string =>
    `---\nname: My reports\ndescription: My weekly report routine.\nwhenToUse:\n  - ${JSON.stringify(trigger)}\nuses: [work-reporting]\n---\nLoad [reports](capability:work-reporting). Never send a report unread.\n`;

  it('warns at the user trigger, naming the platform capability', () => {
    const result = compileUserCapability(user('Weekly report: write the'), { capabilities: [platform], toolsets: {} });
    expect(result.diagnostics.filter((d) => d.ruleId === 'trigger-collision')).toEqual([
      expect.objectContaining({ file: USER_CAPABILITY_FILE, line: 5, column: 5, severity: 'warning' }),
    ]);
    expect(result.diagnostics.find((d) => d.ruleId === 'trigger-collision')?.message).toContain('"write my weekly reports" of capability "work-reporting"');
  });

  it('says nothing for a trigger with other words', () => {
    const result = compileUserCapability(user('write my daily summary'), { capabilities: [platform], toolsets: {} });
    expect(result.diagnostics.filter((d) => d.ruleId === 'trigger-collision')).toEqual([]);
  });
});

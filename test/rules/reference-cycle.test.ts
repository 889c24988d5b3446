import { describe, expect, it } from 'vitest';
import { referenceCycle, stronglyConnected } from '../../compiler/rules/reference-cycle.js';
import { protocol, registryInput } from '../support/registry.js';
import { lintWith, ruleTable } from './harness.js';
import { lintWithoutPositions } from './without-positions.js';

// protocol() writes 9 frontmatter lines plus two fences: the body starts on line 11.
const file = (id: string): string => `capabilities/${id}/PROTOCOL.md`;
const linking = (id: string, ...targets: string[]): Record<string, string> => ({
  [file(id)]: protocol({ id }, `${targets.map((target) => `Then load [${target}](capability:${target}).`).join('\n')}\nNever guess.\n`),
});

ruleTable(referenceCycle, {
  valid: [
    { name: 'a chain', files: { ...linking('a', 'b'), ...linking('b', 'c'), ...linking('c') } },
    { name: 'a diamond', files: { ...linking('a', 'b', 'c'), ...linking('b', 'd'), ...linking('c', 'd'), ...linking('d') } },
    { name: "a self-link is catalog-references' business", files: { ...linking('a', 'a') } },
    { name: 'links to unknown ids are ignored', files: { ...linking('a', 'zz'), ...linking('zz-not-here') } },
    {
      name: 'broken frontmatter and empty bodies do not crash',
      files: { [file('a')]: '---\nid: [\n---\nSee [b](capability:b).\n', ...linking('b'), [file('c')]: '' },
    },
  ],
  invalid: [
    {
      name: 'two capabilities linking each other',
      files: { ...linking('beta', 'alpha'), ...linking('alpha', 'beta') },
      errors: [
        {
          messageId: 'cycle',
          file: file('alpha'),
          line: 11,
          column: 11,
          endColumn: 34,
          message: 'capability references form a cycle: alpha -> beta -> alpha; references must run one way',
        },
      ],
    },
    {
      name: 'a longer cycle is reported once, in its first capability, at the link that starts the cycle',
      files: { ...linking('c', 'a'), ...linking('a', 'x', 'b'), ...linking('b', 'c'), ...linking('x') },
      errors: [{ messageId: 'cycle', file: file('a'), line: 12, column: 11, message: 'a -> b -> c -> a' }],
    },
    {
      name: 'two separate cycles; a shortest cycle is shown and the rest of the tangle named',
      files: {
        ...linking('a', 'b'),
        ...linking('b', 'a', 'c'),
        ...linking('c', 'b'),
        ...linking('m', 'n'),
        ...linking('n', 'm'),
      },
      errors: [
        { messageId: 'cycleWithOthers', file: file('a'), line: 11, column: 11, message: 'a -> b -> a (also tangled with: c)' },
        { messageId: 'cycle', file: file('m'), line: 11, column: 11, message: 'm -> n -> m;' },
      ],
    },
    {
      name: 'a cycle through Chinese text, rule set to warn',
      level: 'warn',
      files: {
        [file('work-notes')]: protocol({ id: 'work-notes' }, '定时请加载[自动化](capability:auto-tasks)。\n'),
        [file('auto-tasks')]: protocol({ id: 'auto-tasks' }, '完成后返回[笔记](capability:work-notes)。\n'),
      },
      errors: [{ messageId: 'cycle', file: file('auto-tasks'), line: 11, column: 6, severity: 'warning', message: 'auto-tasks -> work-notes -> auto-tasks' }],
    },
  ],
});

describe('reference-cycle details', () => {
  it('points at the link that closes the cycle as the related place', () => {
    const files = { ...linking('c', 'a'), ...linking('a', 'b'), ...linking('b', 'c') };
    const [diagnostic] = lintWith(referenceCycle, registryInput(files));
    expect(diagnostic?.related).toEqual({ file: file('c'), line: 11, column: 11, message: 'the cycle closes here (c -> a)' });
  });

  it('finds components without recursion on a long chain', () => {
    const n = 20_000;
    const nodes = Array.from({ length: n }, (_, i) => `n${i}`);
    const components = stronglyConnected(nodes, (node) => {
      const i = Number(node.slice(1));
      return i + 1 < n ? [`n${i + 1}`] : ['n0'];
    });
    expect(components).toHaveLength(1);
    expect(components[0]).toHaveLength(n);
  });
});

describe('reference-cycle documented example and without positions', () => {
  const doc = (id: string, target: string): string =>
    protocol({ id, name: id, description: `Does ${id} things.` }, `# ${id}\n\nNever guess. For the next step, load [${target}](capability:${target}).\n`);
  const files = {
    [file('calendar-sync')]: doc('calendar-sync', 'work-reporting'),
    [file('work-reporting')]: doc('work-reporting', 'personal-automation'),
    [file('personal-automation')]: doc('personal-automation', 'calendar-sync'),
  };

  it('prints what docs/rules/reference-cycle.md shows', () => {
    const diagnostics = lintWith(referenceCycle, registryInput(files));
    expect(
      diagnostics.map(
        (d) => `${d.file}:${d.line}:${d.column} ${d.message} | ${d.related?.message}: ${d.related?.file}:${d.related?.line}:${d.related?.column}`,
      ),
    ).toEqual([
      'capabilities/calendar-sync/PROTOCOL.md:13:38 capability references form a cycle: calendar-sync -> work-reporting -> personal-automation -> calendar-sync; references must run one way (the specific capability links to the general one): remove one of these links | the cycle closes here (personal-automation -> calendar-sync): capabilities/personal-automation/PROTOCOL.md:13:38',
    ]);
  });

  it('does not crash when the parser gives no positions', () => {
    expect(lintWithoutPositions(referenceCycle, files).length).toBe(1);
  });
});

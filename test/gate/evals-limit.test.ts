// compareRouting on two compiled trees, in memory: it skips when nothing search ranks on changed,
// and refuses to search more requests than its limit, with a warning that says so.
import { describe, expect, it } from 'vitest';
import { compileRegistry } from '../../compiler/compile.js';
import { MAX_ROUTING_REQUESTS, compareRouting } from '../../compiler/gate/routing.js';
import type { LintRegistry } from '../../compiler/rule.js';
import { protocol, registryInput } from '../support/registry.js';

const EVALS = 'shouldMatch:\n  - write my weekly report\n  - weekly report please\nshouldNotMatch:\n  - take a note\n';

function tree(reportTriggers: string[]): LintRegistry {
  return compileRegistry(
    registryInput({
      'capabilities/reports/PROTOCOL.md': protocol({ id: 'reports', whenToUse: reportTriggers }, 'Never invent figures.\n'),
      'capabilities/reports/evals.yaml': EVALS,
      'capabilities/notes/PROTOCOL.md': protocol({ id: 'notes', whenToUse: ['take a note'] }, 'Never add words.\n'),
    }),
  ).registry;
}

describe('compareRouting', () => {
  const base = tree(['write my weekly report']);
  const changed = tree(['write my weekly report', 'weekly report summary']);

  it('skips when no name, description, trigger or tag changed', () => {
    expect(compareRouting(base, tree(['write my weekly report']), 'base')).toEqual({ status: 'unchanged', requests: 0, moved: [], diagnostics: [] });
  });

  it('compares every request when a trigger changed', () => {
    expect(compareRouting(base, changed, 'base')).toEqual({ status: 'compared', requests: 3, moved: [], diagnostics: [] });
  });

  it(`searches at most ${MAX_ROUTING_REQUESTS} requests: over the limit, a warning and no comparison`, () => {
    const result = compareRouting(base, changed, 'base', { maxRequests: 2 });
    expect(result).toMatchObject({ status: 'too-many-requests', requests: 3, moved: [] });
    expect(result.diagnostics).toEqual([
      {
        file: 'capabilities/reports/evals.yaml',
        line: 1,
        column: 1,
        endLine: 1,
        endColumn: 1,
        severity: 'warning',
        ruleId: 'routing-moved',
        message:
          'routing not compared: the evals of both trees hold 3 requests, over the limit of 2 the gate searches twice each; run `capreg eval` on both sides instead, or keep fewer requests',
      },
    ]);
    expect(compareRouting(base, changed, 'base', { maxRequests: 3 }).status).toBe('compared');
  });
});

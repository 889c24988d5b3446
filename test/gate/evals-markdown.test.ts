// The routing section of the markdown summary, from a gate report built in memory: each status,
// cells escaped, and the table bounded (a trigger edit can move every request of a large registry).
import { describe, expect, it } from 'vitest';
import { formatMarkdown } from '../../compiler/formatters/markdown.js';
import type { GateReport, MovedRequest, RoutingSummary } from '../../compiler/gate/index.js';

function report(routing: RoutingSummary): GateReport {
  return {
    diagnostics: [],
    errorCount: 0,
    warningCount: 0,
    gate: {
      against: 'origin/main',
      baseCommit: '0123456789abcdef0123456789abcdef01234567',
      passed: true,
      changes: [],
      lint: { errorCount: 0, warningCount: 0 },
      routing,
    },
  };
}

function moved(index: number, overrides: Partial<MovedRequest> = {}): MovedRequest {
  return {
    capabilityId: 'notes',
    kind: 'shouldMatch',
    request: `note ${index}`,
    file: 'capabilities/notes/evals.yaml',
    line: index + 2,
    column: 5,
    before: 'archive',
    after: 'reports',
    lost: false,
    ...overrides,
  };
}

describe('markdown summary: routing', () => {
  it('says why the evals were not re-run', () => {
    expect(formatMarkdown(report({ status: 'unchanged', requests: 0, moved: [] }))).toContain(
      'Routing: no name, description, trigger or tag changed, so the evals were not re-run.\n',
    );
    expect(formatMarkdown(report({ status: 'lint-errors', requests: 0, moved: [] }))).toContain('Routing: not compared, the new tree has lint errors.\n');
    expect(formatMarkdown(report({ status: 'too-many-requests', requests: 20001, moved: [] }))).toContain(
      'Routing: not compared, the evals hold 20001 requests, over the limit.\n',
    );
    expect(formatMarkdown(report({ status: 'compared', requests: 12, moved: [] }))).toContain(
      'Routing: the first answer of every one of the 12 eval requests stayed the same.\n',
    );
  });

  it('one row per moved request: a pipe in a request stays in its cell, nothing is a first answer too', () => {
    const text = formatMarkdown(
      report({
        status: 'compared',
        requests: 5,
        moved: [moved(0, { request: 'a | b', lost: true, before: 'notes', after: null }), moved(1, { kind: 'shouldNotMatch' })],
      }),
    );
    expect(text).toContain(
      'Routing: 2 eval requests of 5 now go first to another capability.\n\n' +
        '| Capability | Request | First answer | Verdict |\n| --- | --- | --- | --- |\n' +
        '| `notes` | a \\| b | `notes` → nothing | ❌ moved away |\n' +
        '| `notes` | note 1 | `archive` → `reports` | ℹ️ moved (shouldNotMatch) |\n',
    );
  });

  it('lists at most 100 moved requests and says how many more there are', () => {
    const text = formatMarkdown(report({ status: 'compared', requests: 150, moved: Array.from({ length: 130 }, (_, index) => moved(index)) }));
    expect(text.split('\n').filter((line) => line.startsWith('| `notes` |'))).toHaveLength(100);
    expect(text).toContain('| `notes` | note 99 |');
    expect(text).not.toContain('| `notes` | note 100 |');
    expect(text).toContain('… and 30 more (`--format json` lists them all).');
  });
});

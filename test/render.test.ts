// The protocol as served renders the frontmatter an agent needs to follow it (SPEC §9): constraints
// as a "Rationalizations to reject" table, evidence before claiming done, scope, schema summary.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileRegistry, emitManifest } from '../compiler/compile.js';
import { parseCapability } from '../compiler/parse.js';
import { renderBody, renderMetadata, renderProtocol } from '../compiler/render.js';
import { tokenBudget } from '../compiler/rules/token-budget.js';
import { countTokens } from '../compiler/tokens.js';
import { protocol, registryInput } from './support/registry.js';
import { lintWith } from './rules/harness.js';

const TDD_FILE = 'capabilities/test-driven-development/PROTOCOL.md';
const tdd = parseCapability(TDD_FILE, readFileSync(new URL(`../${TDD_FILE}`, import.meta.url), 'utf8'));
const served = renderProtocol(tdd, '1.2.0', '2026-12-01');

const constrained = {
  id: 'alpha',
  constraints: [
    { rationalization: 'Use a | pipe\nacross lines.', rebuttal: 'Cells stay | one line.', severity: 'warn' },
    { rationalization: 'It is fine.', rebuttal: 'It is not.', severity: 'block' },
  ],
  evidenceTypes: ['test-results', 'review-approval'],
  scopeConstraints: ['Only the workspace.'],
  inputSchema: { type: 'object', required: ['goal'], properties: { goal: { type: 'string', description: 'What to do.' }, mode: { enum: ['a', 'b'] } } },
  outputSchema: { type: 'array', items: { type: 'string' } },
};

describe('renderProtocol: metadata sections', () => {
  it('renders the bundled test-driven-development constraints as a table, with each severity', () => {
    const table = served.slice(served.indexOf('## Rationalizations to reject'));
    const rows = table.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| Rationalization') && !line.startsWith('| ---'));
    expect(rows).toHaveLength(6);
    expect(rows[0]).toBe(
      '| This change is too small to need a test. | Small changes break things too; the test is usually smaller than the change and keeps the fix from regressing. | block |',
    );
    expect(rows.map((row) => row.split(' | ').at(-1))).toEqual(['block |', 'block |', 'block |', 'block |', 'warn |', 'must-ignore |']);
    expect(served).toContain('Severity `block`: never act on it; `warn`: act on it only after telling the user; `must-ignore`: dismiss it and carry on.');
    // The hand-written list is gone from the body: the table is rendered once.
    expect(served.split('## Rationalizations to reject')).toHaveLength(2);
  });

  it('renders evidence, scope and the input/output schema summary after the body, in that order', () => {
    expect(served).toContain('## Evidence before claiming done\n\nBefore you say the work is done, show: `test-results`, `build-output`.');
    expect(served).toContain('## Scope\n\nStay within these limits:\n\n- Only files inside the workspace root.\n');
    expect(served).toContain("- `goal` (string, required): The behaviour to add or the bug to fix, in the user's words.");
    expect(served).toContain('- `outcome` (one of `"done"`, `"blocked"`, `"needs-decision"`, required)');
    expect(served).toContain('- `paths` (array of string): Files or directories the change is expected to touch.');
    const order = ['## Finishing', '## Rationalizations to reject', '## Evidence before claiming done', '## Scope', '## Input and output'].map((heading) =>
      served.indexOf(heading),
    );
    expect(order.every((at, index) => at > 0 && (index === 0 || at > (order[index - 1] as number)))).toBe(true);
    expect(
      served.endsWith(
        'touch.\n\nOutput (object):\n\n- `outcome` (one of `"done"`, `"blocked"`, `"needs-decision"`, required)\n- `testsAdded` (array of string)\n- `failingRunId` (string): The test run that showed the new test failing for the expected reason.\n- `passingRunId` (string): The full-suite run that passed after the change.\n- `evidence` (array of object, required)\n',
      ),
    ).toBe(true);
  });

  it('is deterministic and escapes table cells', () => {
    const document = parseCapability('capabilities/alpha/PROTOCOL.md', protocol(constrained));
    const first = renderProtocol(document, '1.0.0', '2026-11-29');
    expect(renderProtocol(parseCapability('capabilities/alpha/PROTOCOL.md', protocol(constrained)), '1.0.0', '2026-11-29')).toBe(first);
    expect(first).toContain('| Use a \\| pipe across lines. | Cells stay \\| one line. | warn |');
    expect(first).toContain('Severity `warn`: act on it only after telling the user; `block`: never act on it.');
    expect(first).toContain('- `mode` (one of `"a"`, `"b"`)');
    expect(first).toContain('Output: array of string.');
    expect(first.startsWith('---\nprotocol_version: 1.0.0\nprotocol_updated: 2026-11-29\n---\n\nDo not guess.\n\n## Rationalizations to reject')).toBe(true);
  });

  it('leaves a capability without those fields byte-identical: the body alone', () => {
    for (const body of ['Do not guess.\n', 'Do not guess.', '\n\nDo not guess.\n\n\n']) {
      const document = parseCapability('capabilities/beta/PROTOCOL.md', protocol({ id: 'beta', tags: ['x'], lifecyclePhase: 'build' }, body));
      expect(renderMetadata(document.frontmatter.data)).toBe('');
      const rendered = renderBody(document).replace(/^\n+/, '');
      expect(renderProtocol(document, '1.0.0', '2026-11-29')).toBe(
        `---\nprotocol_version: 1.0.0\nprotocol_updated: 2026-11-29\n---\n\n${rendered.endsWith('\n') ? rendered : `${rendered}\n`}`,
      );
    }
  });

  it('ignores ill-typed metadata instead of crashing (evals render capabilities that failed lint)', () => {
    expect(renderMetadata({ constraints: [{ rationalization: 1 }, 'x'], evidenceTypes: 'x', scopeConstraints: [2, ' '], inputSchema: [] })).toBe('');
  });

  it('serves the rendered sections in the manifest, within the token budget, in the bundled registry', () => {
    const root = new URL('../', import.meta.url);
    const files = Object.fromEntries(
      readdirSync(new URL('capabilities/', root), { recursive: true, encoding: 'utf8' })
        .map((path) => `capabilities/${path.split(sep).join('/')}`)
        .filter((path) => statSync(new URL(path, root)).isFile())
        .map((path) => [path, readFileSync(new URL(path, root), 'utf8')]),
    );
    const input = registryInput(files);
    const result = compileRegistry(input);
    const manifest = emitManifest(result, { source: null, generator: 'test' });
    const capability = manifest.capabilities.find((each) => each.id === 'test-driven-development');
    expect(capability?.protocol).toContain('## Rationalizations to reject');
    const bodyTokens = countTokens(capability?.protocol ?? '');
    expect(bodyTokens).toBeLessThanOrEqual(2000);
    expect(bodyTokens).toBeGreaterThan(tdd.bodyTokens + 300);
  });
});

describe('token-budget counts the rendered metadata', () => {
  // The body alone is far under 300 tokens; with 20 long constraints rendered, the protocol is not.
  const many = Array.from({ length: 20 }, (_, index) => ({
    rationalization: `Rationalization number ${index} sounds reasonable enough to skip the step this time.`,
    rebuttal: `Rebuttal number ${index}: the step exists because skipping it has cost real incidents before.`,
    severity: 'block',
  }));

  it('warns when the rendered answer exceeds the budget though the body alone does not', () => {
    const files = { 'capabilities/alpha/PROTOCOL.md': protocol({ id: 'alpha', constraints: many }) };
    const diagnostics = lintWith(tokenBudget, registryInput(files), { bodyWarn: 300, bodyError: 5000, catalog: 100_000 });
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]?.message).toMatch(/^protocol body with its rendered constraints, evidence, scope and schemas is \d+ tokens, over the budget of 300/);
    const withoutConstraints = { 'capabilities/alpha/PROTOCOL.md': protocol({ id: 'alpha' }) };
    expect(lintWith(tokenBudget, registryInput(withoutConstraints), { bodyWarn: 300, bodyError: 5000, catalog: 100_000 })).toEqual([]);
  });
});

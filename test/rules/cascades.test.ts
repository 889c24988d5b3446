// One cause, one diagnostic: a fact an earlier rule reported as broken (an unparsed frontmatter, a
// toolset that does not exist or failed its schema, a malformed tool) is not reported again by the
// rules that depend on it. Each case breaks one thing in an otherwise clean registry and runs every rule.
import { describe, expect, it } from 'vitest';
import { compileRegistry } from '../../compiler/compile.js';
import { defaultConfig } from '../../compiler/config.js';
import { DEFAULT_TOOLSETS, protocol, registryInput } from '../support/registry.js';

const A = 'capabilities/alpha/PROTOCOL.md';
const TOOLSETS = 'capabilities/toolsets.yaml';

const BODY = `## Tools

| Tool | Use it to |
| --- | --- |
| \`work_log_record\` | record an entry |
| \`work_log_list\` | list entries |
| \`work_log_generate\` | generate a report |

Record with \`work_log_record\`; never invent an entry.

## States

- **PENDING** — tell the user it is being generated; do not start another.
- **DONE** — show the report.
`;

const clean = (fields: Record<string, unknown> = {}): string => protocol({ id: 'alpha', requiredToolsets: ['work-logs'], ...fields }, BODY);

function lint(files: Record<string, string | null>, rules?: Record<string, 'off' | 'warn' | 'error'>): string[] {
  const config = defaultConfig();
  for (const [id, level] of Object.entries(rules ?? {})) config.rules.set(id, { level, options: {} });
  return compileRegistry(registryInput(files), { config }).diagnostics.map((d) => `${d.file}:${d.line}:${d.column} ${d.ruleId} ${d.message}`);
}

describe('lint cascades: one cause, one diagnostic', () => {
  it('the clean registry has no diagnostic', () => {
    expect(lint({ [A]: clean() })).toEqual([]);
  });

  it('an unknown toolset is reported once, not again for every tool the protocol names', () => {
    const found = lint({ [A]: clean({ requiredToolsets: ['work-log'] }) });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/toolset-exists toolset "work-log" .*did you mean "work-logs"/);
  });

  it('an unknown optional toolset next to a known required one is reported once', () => {
    const found = lint({ [A]: clean({ requiredToolsets: [], optionalToolsets: ['work-log'] }) });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/toolset-exists/);
  });

  it('a toolset id that fails the frontmatter schema is not also an unknown toolset', () => {
    const found = lint({ [A]: clean({ requiredToolsets: [''] }) });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/frontmatter-schema/);
  });

  it('an unclosed frontmatter is reported once, without state-machine or tools errors', () => {
    const text = clean().replace(/\n---\n/, '\n\n');
    const found = lint({ [A]: text });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/frontmatter-schema .*never closed/);
  });

  it('a frontmatter that is not YAML is reported once', () => {
    const text = clean().replace('name: Capability alpha', 'name: [Capability alpha');
    const found = lint({ [A]: text });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/frontmatter-schema/);
  });

  it('a mistyped tool action is reported once, not also as an undefined tool', () => {
    const found = lint({ [A]: clean(), [TOOLSETS]: DEFAULT_TOOLSETS.replace('work_log_record: { action: write', 'work_log_record: { action: writ') });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/toolsets-schema .*"writ"; did you mean "write"/);
  });

  it('a malformed tool with states is reported once, not also through its states', () => {
    const found = lint({ [A]: clean(), [TOOLSETS]: DEFAULT_TOOLSETS.replace('work_log_generate: { action: write', 'work_log_generate: { action: wirte') });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/toolsets-schema/);
  });

  it('a toolset with `toolz` for `tools` is reported once, not as a missing field nor again for every tool a protocol lists', () => {
    const toolsets = DEFAULT_TOOLSETS.replace(
      /work-logs:\n {2}description: Work log entries and reports.\n {2}tools:/,
      'work-logs:\n  description: Work log entries and reports.\n  toolz:',
    );
    const found = lint({ [A]: clean(), [TOOLSETS]: toolsets });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/toolsets-schema/);
  });

  it('an unparsable toolsets.yaml is reported once, not through tool states', () => {
    const found = lint({ [A]: clean(), [TOOLSETS]: 'work-logs: [\n' });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/toolsets-schema/);
  });

  it('a `states` that is not a list is reported once, not again as undeclared state entries', () => {
    const found = lint({ [A]: protocol({ id: 'alpha', states: 'PAID' }, '## States\n\n- **PAID** — thank the user; do not charge again.\n') });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/frontmatter-schema/);
  });

  it('a misspelled required key is one unknown field with a "did you mean", not also a missing field', () => {
    const found = lint({ [A]: clean().replace('protocol_updated:', 'protocol_updatd:') });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/frontmatter-schema unknown field "protocol_updatd"; did you mean "protocol_updated"\?/);
  });

  it('with the reporting rule off, the dependent rules still report (fail closed)', () => {
    const found = lint({ [A]: clean({ requiredToolsets: ['work-log'] }) }, { 'toolset-exists': 'off' });
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((line) => !line.includes('toolset-exists'))).toBe(true);
  });
});

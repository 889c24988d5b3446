// capreg check and toolsets.yaml: a change of a toolset (a tool's action, a tool removed or added,
// its states, the toolset removed) changes every capability that requires or optionally uses it,
// and needs that capability's bump. Real Git repositories, one commit per scenario.
import { describe, it } from 'vitest';
import type { CapabilityChange } from '../../compiler/gate/index.js';
import { toolsetChanges } from '../../compiler/gate/required-bump.js';
import type { Diagnostic, Toolsets } from '../../compiler/types.js';
import { commitAll, edit, git, read, REPORTS_FILE, runCli, write, gateScenarios, setVersion } from './fixture.js';

const TOOLSETS_FILE = 'capabilities/toolsets.yaml';
const { scenario } = gateScenarios();

interface JsonOutput {
  diagnostics: Diagnostic[];
  gate: { passed: boolean; unchanged: number; changes: CapabilityChange[] };
}

async function check(dir: string): Promise<{ code: number; json: JsonOutput; gate: Diagnostic[] }> {
  const result = await runCli(['check', '--against', 'base', '--format', 'json'], dir);
  if (result.code === 2) throw new Error(`capreg check failed: ${result.stderr}`);
  const json = JSON.parse(result.stdout) as JsonOutput;
  const gate = json.diagnostics.filter((d) => d.ruleId === 'version-bump' || d.ruleId === 'version-date');
  return { code: result.code, json, gate };
}

const cases: { name: string; apply: (root: string) => void; level: 'major' | 'minor'; reason: string; expected: string; lintClean: boolean }[] = [
  {
    name: 'a tool of a required toolset now needs write (read → write)',
    apply: (root) => edit(root, TOOLSETS_FILE, 'work_log_list: { action: read', 'work_log_list: { action: write'),
    level: 'major',
    reason: 'toolset `work-logs`: tool `work_log_list` action read → write',
    expected: '2.0.0',
    lintClean: true,
  },
  {
    name: 'a tool of a required toolset needs less (write → read)',
    apply: (root) => edit(root, TOOLSETS_FILE, 'work_log_record: { action: write', 'work_log_record: { action: read'),
    level: 'minor',
    reason: 'toolset `work-logs`: tool `work_log_record` action write → read (more callers can use it)',
    expected: '1.3.0',
    lintClean: true,
  },
  {
    name: 'a tool removed from a toolset the capability uses',
    apply: (root) => edit(root, TOOLSETS_FILE, '    work_log_generate: { action: write, description: Generate a report. }\n', ''),
    level: 'major',
    reason: 'toolset `work-logs` lost tool `work_log_generate`',
    expected: '2.0.0',
    lintClean: false, // the tools table still lists it: lint says so too
  },
  {
    name: 'a tool added to an optional toolset',
    apply: (root) =>
      edit(
        root,
        TOOLSETS_FILE,
        '    calendar_list: { action: read, description: List events. }\n',
        '    calendar_list: { action: read, description: List events. }\n    calendar_create: { action: write, description: Create an event. }\n',
      ),
    level: 'minor',
    reason: 'toolset `calendar` gained tool `calendar_create`',
    expected: '1.3.0',
    lintClean: true,
  },
  {
    name: 'a tool gained states',
    apply: (root) => edit(root, TOOLSETS_FILE, 'work_log_generate: { action: write,', 'work_log_generate: { action: write, states: [PENDING, DONE],'),
    level: 'minor',
    reason: 'toolset `work-logs`: tool `work_log_generate` states gained `PENDING`, `DONE`',
    expected: '1.3.0',
    lintClean: true,
  },
  {
    name: 'a toolset the capability uses removed',
    apply: (root) => edit(root, TOOLSETS_FILE, /calendar:\n[\s\S]*$/, ''),
    level: 'major',
    reason: 'toolset `calendar` removed from the toolsets',
    expected: '2.0.0',
    lintClean: false, // optionalToolsets names an unknown toolset
  },
];

describe.concurrent('capreg check: toolsets.yaml changes are changes of the capabilities that use them', () => {
  for (const testCase of cases) {
    it(`${testCase.name}: needs ${testCase.level} for the capability, not for the others`, async ({ expect }) => {
      const dir = scenario();
      testCase.apply(dir);
      commitAll(dir, `${testCase.name}, no bump`);
      const failing = await check(dir);
      expect(failing.code).toBe(1);
      expect(failing.gate.map((d) => [d.ruleId, d.file, d.line, d.message])).toEqual([
        [
          'version-bump',
          REPORTS_FILE,
          11,
          `needs ${testCase.level}: ${testCase.reason}; protocol_version is still 1.2.3 (expected ${testCase.expected} or higher)`,
        ],
        [
          'version-date',
          REPORTS_FILE,
          11,
          `protocol_updated is still 2026-01-10 though the capability changed (${testCase.reason}); set it to the date of this change (YYYY-MM-DD) as you bump protocol_version`,
        ],
      ]);
      const entry = failing.json.gate.changes.find((c) => c.id === 'reports');
      expect(entry).toMatchObject({ kind: 'changed', verdict: 'fail', move: 'none', required: { level: testCase.level } });
      expect(entry?.required.reasons.map((r) => r.text)).toEqual([testCase.reason]);
      // notes and archive use no toolset: unchanged.
      expect(failing.json.gate.changes.map((c) => c.id)).toEqual(['reports']);
      expect(failing.json.gate.unchanged).toBe(2);

      const markdown = await runCli(['check', '--against', 'base', '--format', 'markdown'], dir);
      expect(markdown.stdout).toContain(`| \`reports\` | 1.2.3 → 1.2.3 | ${testCase.level} | ${testCase.reason} | ❌ fail (got no bump) |`);

      setVersion(dir, testCase.level === 'major' ? '1.3.0' : '1.2.4');
      commitAll(dir, `${testCase.name}, too small a bump`);
      const tooSmall = await check(dir);
      expect(tooSmall.gate.map((d) => d.message)).toEqual([
        `needs ${testCase.level}: ${testCase.reason}; got ${testCase.level === 'major' ? 'minor 1.2.3 → 1.3.0' : 'patch 1.2.3 → 1.2.4'} (expected ${testCase.expected} or higher)`,
      ]);

      setVersion(dir, testCase.expected);
      commitAll(dir, `${testCase.name}, the right bump`);
      const passing = await check(dir);
      expect(passing.gate).toEqual([]);
      expect(passing.json.gate.changes.find((c) => c.id === 'reports')).toMatchObject({ verdict: 'pass', move: testCase.level });
      expect(passing.code).toBe(testCase.lintClean ? 0 : 1);
    });
  }

  it('a toolset change mixed with an edit of the capability: every reason, the highest decides', async ({ expect }) => {
    const dir = scenario();
    edit(dir, TOOLSETS_FILE, 'work_log_list: { action: read', 'work_log_list: { action: admin');
    edit(dir, REPORTS_FILE, '  - log my work\n', '  - log my work\n  - send my report\n');
    setVersion(dir, '1.3.0');
    commitAll(dir, 'mixed');
    const result = await check(dir);
    expect(result.code).toBe(1);
    expect(result.json.gate.changes.find((c) => c.id === 'reports')?.required.reasons.map((r) => r.text)).toEqual([
      'toolset `work-logs`: tool `work_log_list` action read → admin',
      'whenToUse gained `send my report`',
    ]);
    expect(result.gate.map((d) => d.message)).toEqual([
      'needs major: toolset `work-logs`: tool `work_log_list` action read → admin; got minor 1.2.3 → 1.3.0 (expected 2.0.0 or higher)',
    ]);
  });

  it('a capability that starts using a changed toolset gets its own reason, not the toolset’s', async ({ expect }) => {
    const dir = scenario();
    edit(dir, TOOLSETS_FILE, 'billing_invoice: { action: read', 'billing_invoice: { action: write');
    edit(dir, REPORTS_FILE, '[calendar]', '[calendar, billing]');
    setVersion(dir, '1.3.0');
    commitAll(dir, 'uses billing now');
    const result = await check(dir);
    expect(result.gate).toEqual([]);
    expect(result.json.gate.changes.find((c) => c.id === 'reports')?.required.reasons.map((r) => r.text)).toEqual(['optionalToolsets gained `billing`']);
  });

  it('descriptions and unused toolsets need no bump; a broken toolsets.yaml is lint’s to report, not a removal of every toolset', async ({ expect }) => {
    const dir = scenario();
    edit(dir, TOOLSETS_FILE, 'List entries.', 'List the entries.');
    edit(dir, TOOLSETS_FILE, 'billing_invoice: { action: read', 'billing_invoice: { action: admin');
    commitAll(dir, 'wording and an unused toolset');
    const quiet = await check(dir);
    expect(quiet.code).toBe(0);
    expect(quiet.json.gate.changes).toEqual([]);

    write(dir, TOOLSETS_FILE, `${read(dir, TOOLSETS_FILE)}\n  : [unclosed\n`);
    commitAll(dir, 'broken toolsets.yaml');
    const broken = await check(dir);
    expect(broken.code).toBe(1);
    expect(broken.gate).toEqual([]);
    expect(broken.json.diagnostics.some((d) => d.file === TOOLSETS_FILE && d.severity === 'error')).toBe(true);
  });

  it("a capability that names a changed toolset's tool uses that toolset, even where foreign-tools is off", async ({ expect }) => {
    const dir = scenario();
    // archive requires no toolset but, with the rule off, tells the agent to call a work-logs tool.
    write(dir, 'capreg.config.yaml', 'rules:\n  foreign-tools: off\n');
    edit(dir, 'capabilities/archive/PROTOCOL.md', 'Answer from the archive only.', 'Answer from the archive only; list with `work_log_list` first.');
    setVersion(dir, '2.0.1', '2026-02-01', 'capabilities/archive/PROTOCOL.md');
    commitAll(dir, 'archive names a work-logs tool');
    git(dir, 'tag', '-f', 'base');
    edit(dir, TOOLSETS_FILE, 'work_log_list: { action: read', 'work_log_list: { action: admin');
    setVersion(dir, '2.0.0');
    const result = await check(dir);
    expect(result.code).toBe(1);
    expect(result.gate.filter((d) => d.ruleId === 'version-bump').map((d) => [d.file, d.message])).toEqual([
      [
        'capabilities/archive/PROTOCOL.md',
        'needs major: toolset `work-logs`: tool `work_log_list` action read → admin; protocol_version is still 2.0.1 (expected 3.0.0 or higher)',
      ],
    ]);
  });

  it('a registry that lowered toolsets-schema serves the toolsets that parse: those are compared', async ({ expect }) => {
    const dir = scenario();
    write(dir, 'capreg.config.yaml', 'rules:\n  toolsets-schema: warn\n');
    write(dir, 'capabilities/toolsets/scratch.yaml', 'scratch: [\n');
    edit(dir, TOOLSETS_FILE, 'work_log_list: { action: read', 'work_log_list: { action: admin');
    commitAll(dir, 'an action raised beside a file that does not parse');
    const result = await check(dir);
    expect(result.json.diagnostics.filter((d) => d.ruleId === 'toolsets-schema').map((d) => d.severity)).toEqual(['warning']);
    expect(result.code).toBe(1);
    expect(result.gate.map((d) => d.message)[0]).toBe(
      'needs major: toolset `work-logs`: tool `work_log_list` action read → admin; protocol_version is still 1.2.3 (expected 2.0.0 or higher)',
    );
  });
});

describe('toolsetChanges', () => {
  const tool = (action: 'read' | 'write' | 'admin', states?: string[]) => ({ action, description: '', ...(states ? { states } : {}) });
  it('levels: raised action, lost tool or state, removed toolset are major; the reverse minor; descriptions nothing', ({ expect }) => {
    const before: Toolsets = {
      a: { description: 'A', tools: { a_one: tool('write', ['X', 'Y']), a_two: tool('read') } },
      b: { description: 'B', tools: { b_one: tool('read') } },
      c: { description: 'C', tools: { c_one: tool('read') } },
    };
    const after: Toolsets = {
      a: { description: 'A changed', tools: { a_one: tool('read', ['X', 'Z']), a_three: tool('read') } },
      c: { description: 'C', tools: { c_one: { action: 'read', description: 'now described' } } },
    };
    const changes = toolsetChanges(before, after);
    expect([...changes.keys()]).toEqual(['a', 'b']);
    expect(changes.get('a')?.map((r) => [r.level, r.text])).toEqual([
      ['major', 'toolset `a` lost tool `a_two`'],
      ['major', 'toolset `a`: tool `a_one` states lost `Y`'],
      ['minor', 'toolset `a` gained tool `a_three`'],
      ['minor', 'toolset `a`: tool `a_one` action write → read (more callers can use it)'],
      ['minor', 'toolset `a`: tool `a_one` states gained `Z`'],
    ]);
    expect(changes.get('b')?.map((r) => [r.level, r.text])).toEqual([['major', 'toolset `b` removed from the toolsets']]);
  });

  it('a capability that uses 40 edited toolsets keeps 16 of their reasons, the decisive first, and counts the rest', async ({ expect }) => {
    const dir = scenario();
    const wide = (action: string): string =>
      Array.from(
        { length: 40 },
        (_, t) =>
          `wide${t}:\n  description: W.\n  tools:\n${Array.from({ length: 9 }, (_, k) => `    wide${t}_tool${k}: { action: ${action}, description: D. }\n`).join('')}`,
      ).join('');
    const toolsets = read(dir, TOOLSETS_FILE);
    write(dir, TOOLSETS_FILE, toolsets + wide('read'));
    edit(dir, REPORTS_FILE, 'optionalToolsets: [calendar]', `optionalToolsets: [calendar, ${Array.from({ length: 40 }, (_, t) => `wide${t}`).join(', ')}]`);
    commitAll(dir, 'wide toolsets');
    git(dir, 'tag', 'wide');
    write(dir, TOOLSETS_FILE, toolsets + wide('write'));
    const result = await runCli(['check', '--against', 'wide', '--format', 'json'], dir);
    const reports = (JSON.parse(result.stdout) as JsonOutput).gate.changes.find((change) => change.id === 'reports')!;
    // All 360 were carried into the row and both messages: 1,000 such capabilities made a JSON report too long for a string.
    expect(reports.required.reasons).toHaveLength(17);
    expect(reports.required.reasons[0]).toMatchObject({ level: 'major', text: 'toolset `wide0`: tool `wide0_tool0` action read → write' });
    expect(reports.required.reasons.at(-1)).toMatchObject({ level: 'patch', text: '344 more reasons from the toolsets it uses' });
    expect(reports.required.level).toBe('major');
    expect(result.code).toBe(1);
  });

  it('a toolset rewritten wholesale gives at most 8 reasons, the decisive first, and counts the rest', ({ expect }) => {
    const many = (action: 'read' | 'write'): Toolsets => ({
      big: { description: 'B', tools: Object.fromEntries(Array.from({ length: 1000 }, (_, index) => [`big_tool${index}`, tool(index < 3 ? 'read' : action)])) },
    });
    const reasons = toolsetChanges(many('write'), { big: { description: 'B', tools: { ...many('read').big!.tools, big_new: tool('read') } } }).get('big')!;
    expect(reasons).toHaveLength(9);
    expect(reasons[0]).toMatchObject({ level: 'minor', text: 'toolset `big` gained tool `big_new`' });
    expect(reasons.at(-1)).toMatchObject({ level: 'patch', text: 'toolset `big`: 990 more tool changes' });

    const raised = toolsetChanges(many('read'), { big: { description: 'B', tools: { ...many('write').big!.tools, big_new: tool('read') } } }).get('big')!;
    expect(raised[0]).toMatchObject({ level: 'major', text: 'toolset `big`: tool `big_tool3` action read → write' });
    expect(raised.filter((r) => r.level === 'minor')).toEqual([]);
  });
});

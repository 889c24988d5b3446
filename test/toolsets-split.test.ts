// Toolsets split over capabilities/toolsets/*.yaml (alone or next to capabilities/toolsets.yaml):
// the manifest is byte-identical to the same toolsets in one file, a toolset defined in two files is
// an error at both places, each file is checked (positions in that file) and bounded like any other.
// Through the real executable.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_TOOLSETS_FILES, toolsetsDefinedTwice } from '../compiler/toolsets.js';
import type { Diagnostic } from '../compiler/types.js';
import { runBin, tempDir, writeFiles } from './cli/helpers.js';
import { ARCHIVE, NOTES, REPORTS, REPORTS_FILE, TOOLSETS } from './gate/fixture.js';

const WORK_LOGS = TOOLSETS.slice(0, TOOLSETS.indexOf('billing:'));
const BILLING = TOOLSETS.slice(TOOLSETS.indexOf('billing:'), TOOLSETS.indexOf('calendar:'));
const CALENDAR = TOOLSETS.slice(TOOLSETS.indexOf('calendar:'));

/** The gate fixture's clean registry with the toolsets files given instead of toolsets.yaml. */
function registry(toolsets: Record<string, string>): string {
  const root = tempDir('capreg-toolsets-split-');
  writeFiles(root, {
    [REPORTS_FILE]: REPORTS,
    'capabilities/notes/PROTOCOL.md': NOTES,
    'capabilities/archive/PROTOCOL.md': ARCHIVE,
    'capabilities/archive/references/sources.md': 'Where the archive comes from.\n',
    ...toolsets,
  });
  return root;
}

function build(root: string): { manifest: string; stderr: string } {
  const result = runBin(['build', '--no-cache'], { cwd: root });
  expect(result.stderr).toMatch(/^capreg build: wrote /);
  expect(result.code).toBe(0);
  return { manifest: fs.readFileSync(path.join(root, 'dist/manifest.json'), 'utf8'), stderr: result.stderr };
}

function lint(root: string): { code: number; lines: string[]; stderr: string } {
  const result = runBin(['lint', '--no-cache', '--format', 'json'], { cwd: root });
  const report = JSON.parse(result.stdout) as { diagnostics: Diagnostic[] };
  const lines = report.diagnostics.map((d) => {
    const related = d.related ? ` (related ${d.related.file}:${d.related.line}:${d.related.column})` : '';
    return `${d.file}:${d.line}:${d.column} ${d.ruleId} ${d.message}${related}`;
  });
  return { code: result.code, lines, stderr: result.stderr };
}

describe('split toolsets: capreg build', () => {
  it('writes the same manifest, byte for byte, from one file, from the folder, and from both layouts at once', () => {
    const single = build(registry({ 'capabilities/toolsets.yaml': TOOLSETS })).manifest;
    const split = build(registry({ 'capabilities/toolsets/a-work.yaml': WORK_LOGS, 'capabilities/toolsets/b-money.yaml': BILLING + CALENDAR })).manifest;
    const both = build(
      registry({ 'capabilities/toolsets.yaml': WORK_LOGS, 'capabilities/toolsets/more.yaml': BILLING, 'capabilities/toolsets/z.yaml': CALENDAR }),
    ).manifest;
    expect((JSON.parse(single) as { toolsets: object }).toolsets).toHaveProperty('calendar');
    expect(split).toBe(single);
    expect(both).toBe(single);
  });

  it('merges in path order (toolsets.yaml first, then the folder by name), as one file in that order would be', () => {
    const reordered = build(registry({ 'capabilities/toolsets.yaml': CALENDAR + BILLING + WORK_LOGS })).manifest;
    const split = build(
      registry({ 'capabilities/toolsets/1.yaml': CALENDAR, 'capabilities/toolsets/2.yaml': BILLING, 'capabilities/toolsets/3.yaml': WORK_LOGS }),
    ).manifest;
    expect(split).toBe(reordered);
  });
});

describe('split toolsets: capreg lint', () => {
  it('reports a toolset defined in two files at both definitions, each pointing at the other, and builds nothing', () => {
    const root = registry({ 'capabilities/toolsets/a.yaml': TOOLSETS, 'capabilities/toolsets/b.yaml': `# moved here\n${BILLING}` });
    expect(lint(root)).toEqual({
      code: 1,
      stderr: '',
      lines: [
        'capabilities/toolsets/a.yaml:7:1 toolsets-schema toolset "billing" is also defined in capabilities/toolsets/b.yaml; define each toolset in one file (related capabilities/toolsets/b.yaml:2:1)',
        'capabilities/toolsets/b.yaml:2:1 toolsets-schema toolset "billing" is also defined in capabilities/toolsets/a.yaml; define each toolset in one file (related capabilities/toolsets/a.yaml:7:1)',
      ],
    });
    const result = runBin(['build', '--no-cache'], { cwd: root });
    expect(result.code).toBe(1);
    expect(fs.existsSync(path.join(root, 'dist/manifest.json'))).toBe(false);
  });

  it('reports a toolset defined twice in one file at both places too, each pointing at the other, in either layout', () => {
    for (const file of ['capabilities/toolsets.yaml', 'capabilities/toolsets/a.yaml']) {
      const { code, lines } = lint(registry({ [file]: TOOLSETS + BILLING }));
      const second = TOOLSETS.split('\n').length;
      expect(code).toBe(1);
      expect(lines).toEqual([
        `${file}:${TOOLSETS.split('\n').indexOf('billing:') + 1}:1 toolsets-schema duplicate key "billing": a key may appear only once in a mapping (related ${file}:${second}:1)`,
        `${file}:${second}:1 toolsets-schema duplicate key "billing": a key may appear only once in a mapping (related ${file}:${TOOLSETS.split('\n').indexOf('billing:') + 1}:1)`,
      ]);
    }
  });

  it('reports a duplicate between toolsets.yaml and the folder the same way', () => {
    const root = registry({ 'capabilities/toolsets.yaml': TOOLSETS, 'capabilities/toolsets/extra.yaml': CALENDAR });
    expect(lint(root).lines).toEqual([
      'capabilities/toolsets.yaml:11:1 toolsets-schema toolset "calendar" is also defined in capabilities/toolsets/extra.yaml; define each toolset in one file (related capabilities/toolsets/extra.yaml:1:1)',
      'capabilities/toolsets/extra.yaml:1:1 toolsets-schema toolset "calendar" is also defined in capabilities/toolsets.yaml; define each toolset in one file (related capabilities/toolsets.yaml:11:1)',
    ]);
  });

  it('checks every file against the schema, with positions in that file', () => {
    const root = registry({
      'capabilities/toolsets/a.yaml': WORK_LOGS,
      'capabilities/toolsets/b.yaml': BILLING + CALENDAR.replace('description', 'descripton'),
    });
    const { code, lines } = lint(root);
    expect(code).toBe(1);
    expect(lines.filter((line) => line.includes('toolsets-schema'))).toEqual([
      expect.stringMatching(/^capabilities\/toolsets\/b\.yaml:6:\d+ toolsets-schema .*descripton/),
    ]);
  });

  it('says which toolsets are known in the split layout when a capability names an unknown one', () => {
    const root = registry({ 'capabilities/toolsets/a.yaml': WORK_LOGS + BILLING + CALENDAR.replace('calendar:', 'calendars:') });
    expect(lint(root).lines).toContainEqual(expect.stringContaining('toolset "calendar" in `optionalToolsets` is not defined in capabilities/toolsets/*.yaml'));
  });

  it('refuses a toolsets file over limits.maxFileBytes (registry-files) without also calling the toolsets missing', () => {
    const root = registry({
      'capreg.config.yaml': 'limits:\n  maxFileBytes: 4096\n',
      'capabilities/toolsets/big.yaml': `${TOOLSETS}# ${'x'.repeat(5000)}\n`,
    });
    const { code, lines } = lint(root);
    expect(code).toBe(1);
    expect(lines).toContainEqual(expect.stringMatching(/^capabilities\/toolsets\/big\.yaml:1:1 registry-files file is 5\.\d KiB, over the 4\.0 KiB limit/));
    expect(lines.filter((line) => line.includes('is missing'))).toEqual([]);
  });

  it('reports a refused split file once, as toolsets.yaml refused is: its toolsets are unknown, not undefined', () => {
    const config = { 'capreg.config.yaml': 'limits:\n  maxFileBytes: 4096\n' };
    const padding = `# ${'x'.repeat(5000)}\n`;
    // The capabilities require billing and calendar, which only the refused file defines.
    const split = lint(registry({ ...config, 'capabilities/toolsets/a.yaml': WORK_LOGS, 'capabilities/toolsets/b.yaml': BILLING + CALENDAR + padding }));
    const single = lint(registry({ ...config, 'capabilities/toolsets.yaml': TOOLSETS + padding }));
    for (const [result, file] of [
      [split, 'capabilities/toolsets/b.yaml'],
      [single, 'capabilities/toolsets.yaml'],
    ] as const) {
      expect(result.code).toBe(1);
      expect(result.lines).toEqual([expect.stringMatching(new RegExp(`^${file.replace(/[./]/g, '\\$&')}:1:1 registry-files file is 5\\.\\d KiB, over`))]);
    }
  });

  it('calls no tool undefined or foreign when the file that defines it is refused and registry-files is off', () => {
    const config = { 'capreg.config.yaml': 'limits:\n  maxFileBytes: 4096\nrules:\n  registry-files: off\n' };
    const padding = `# ${'x'.repeat(5000)}\n`;
    // The refused file defines work-logs, whose tools the reports capability's table and prose name.
    const split = lint(registry({ ...config, 'capabilities/toolsets/a.yaml': WORK_LOGS + padding, 'capabilities/toolsets/b.yaml': BILLING + CALENDAR }));
    const single = lint(registry({ ...config, 'capabilities/toolsets.yaml': TOOLSETS + padding }));
    for (const result of [split, single]) expect(result).toEqual({ code: 0, lines: [], stderr: '' });
  });

  it('calls no state undeclared when the tool that declares it is in a refused file and registry-files is off', () => {
    const config = { 'capreg.config.yaml': 'limits:\n  maxFileBytes: 4096\nrules:\n  registry-files: off\n' };
    // The tool declares the states; the capability does not repeat them in `states`.
    const workLogs = WORK_LOGS.replace('Generate a report. }', 'Generate a report., states: [PENDING, DONE] }');
    const reports = REPORTS.replace('states: [PENDING, DONE]\n', '');
    expect(workLogs).not.toBe(WORK_LOGS);
    expect(
      lint(registry({ 'capabilities/toolsets/a.yaml': workLogs, 'capabilities/toolsets/b.yaml': BILLING + CALENDAR, [REPORTS_FILE]: reports })).lines,
    ).toEqual([]);
    const root = registry({
      ...config,
      'capabilities/toolsets/a.yaml': `${workLogs}# ${'x'.repeat(5000)}\n`,
      'capabilities/toolsets/b.yaml': BILLING + CALENDAR,
    });
    writeFiles(root, { [REPORTS_FILE]: reports });
    expect(lint(root)).toEqual({ code: 0, lines: [], stderr: '' });
  });

  it('reports a refused toolsets folder once: its toolsets are unknown, not undefined', () => {
    const outside = tempDir('capreg-toolsets-outside-');
    writeFiles(outside, { 'more.yaml': BILLING + CALENDAR });
    const root = registry({ 'capabilities/toolsets.yaml': WORK_LOGS });
    fs.symlinkSync(outside, path.join(root, 'capabilities/toolsets'));
    const { code, lines } = lint(root);
    expect(code).toBe(1);
    expect(lines).toEqual([expect.stringMatching(/^capabilities\/toolsets:1:1 registry-files .*outside/)]);
  });

  it('still calls a toolset undefined when only a folder below capabilities/toolsets/ is refused (no toolsets are read there)', () => {
    const root = registry({ 'capabilities/toolsets/a.yaml': BILLING + CALENDAR });
    // A folder whose name is not UTF-8: the reader refuses it.
    fs.mkdirSync(Buffer.concat([Buffer.from(path.join(root, 'capabilities/toolsets/')), Buffer.from([0x6d, 0xff])]));
    const { lines } = lint(root);
    expect(lines).toContainEqual(expect.stringMatching(/^capabilities\/toolsets\/m.*registry-files /));
    expect(lines).toContainEqual(expect.stringContaining('toolset "work-logs" in `requiredToolsets` is not defined'));
  });

  it('calls no tool undefined when the file that defines it does not parse and toolsets-schema is off', () => {
    const root = registry({
      'capreg.config.yaml': 'rules:\n  toolsets-schema: off\n',
      'capabilities/toolsets/a.yaml': `${WORK_LOGS}broken: [unclosed\n`,
      'capabilities/toolsets/b.yaml': BILLING + CALENDAR,
    });
    expect(lint(root)).toEqual({ code: 0, lines: [], stderr: '' });
  });

  it('does not call a toolset undefined when the file that defines it is past the folder limit', () => {
    const files: Record<string, string> = { 'capabilities/toolsets/0000.yaml': WORK_LOGS };
    for (let i = 1; i < MAX_TOOLSETS_FILES; i += 1) files[`capabilities/toolsets/${String(i).padStart(4, '0')}.yaml`] = '{}\n';
    files[`capabilities/toolsets/${String(MAX_TOOLSETS_FILES)}.yaml`] = BILLING + CALENDAR;
    const { lines } = lint(registry(files));
    expect(lines).toEqual([
      expect.stringContaining(`capabilities/toolsets/${String(MAX_TOOLSETS_FILES)}.yaml:1:1 toolsets-schema more than ${MAX_TOOLSETS_FILES}`),
    ]);
  });

  it('reads capabilities/toolsets/evals.yaml as a toolsets file, not as the evals of a capability', () => {
    const root = registry({ 'capabilities/toolsets/a.yaml': WORK_LOGS, 'capabilities/toolsets/evals.yaml': BILLING + CALENDAR });
    expect(lint(root)).toEqual({ code: 0, lines: [], stderr: '' });
    expect(build(root).manifest).toBe(build(registry({ 'capabilities/toolsets.yaml': TOOLSETS })).manifest);
  });

  it('refuses a PROTOCOL.md in capabilities/toolsets/: no capability is named toolsets', () => {
    const root = registry({ 'capabilities/toolsets/a.yaml': TOOLSETS, 'capabilities/toolsets/PROTOCOL.md': NOTES.replace(/^id: .*$/m, 'id: toolsets') });
    const { code, lines } = lint(root);
    expect(code).toBe(1);
    expect(lines).toEqual([
      'capabilities/toolsets/PROTOCOL.md:1:1 registry-files capabilities/toolsets/ holds toolsets files, not a capability, so this file is not read; move the capability to a folder of its own, capabilities/<id>/',
    ]);
  });

  it(`refuses more than ${MAX_TOOLSETS_FILES} files in capabilities/toolsets/, naming the first one not read`, () => {
    const files: Record<string, string> = { 'capabilities/toolsets/0000.yaml': TOOLSETS };
    for (let i = 1; i <= MAX_TOOLSETS_FILES; i += 1) files[`capabilities/toolsets/${String(i).padStart(4, '0')}.yaml`] = '{}\n';
    const { code, lines } = lint(registry(files));
    expect(code).toBe(1);
    expect(lines).toEqual([
      `capabilities/toolsets/${String(MAX_TOOLSETS_FILES)}.yaml:1:1 toolsets-schema more than ${MAX_TOOLSETS_FILES} toolsets files in capabilities/toolsets/; this one and the ones after it are not read: merge toolsets into fewer files`,
    ]);
  });

  it('treats a registry with neither layout as missing its toolsets', () => {
    const { code, lines } = lint(registry({}));
    expect(code).toBe(1);
    expect(lines).toContainEqual(expect.stringContaining('capabilities/toolsets.yaml:1:1 toolsets-schema capabilities/toolsets.yaml is missing'));
  });
});

describe('split toolsets: toolsets defined in many files', () => {
  it('lists the files of each id in merge order, in time linear in the definitions', () => {
    // 1,000 toolsets each in all 1,000 files (the folder's limit): the list of an id was copied once
    // per file, 500,000 copies an id; 2,000 ids took 31 s.
    const data = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`t${i}`, { description: 'd', tools: {} }]));
    const parts = Array.from({ length: MAX_TOOLSETS_FILES }, (_, i) => ({
      file: `capabilities/toolsets/f${i}.yaml`,
      present: true,
      data,
      ranges: {},
      problems: [],
    }));
    const start = process.cpuUsage();
    const twice = toolsetsDefinedTwice(parts);
    const used = process.cpuUsage(start);
    expect(twice.size).toBe(1000);
    expect(twice.get('t999')).toEqual(parts);
    expect((used.user + used.system) / 1000).toBeLessThan(1_500);
  });
});

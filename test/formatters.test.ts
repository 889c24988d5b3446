// Golden output of every formatter for one fixed list of diagnostics: the exact text CI logs,
// GitHub annotations and code-scanning dashboards receive.
import { describe, expect, it } from 'vitest';
import { FORMATS, countsOf, formatNames } from '../compiler/formatters/index.js';
import { formatGithub } from '../compiler/formatters/github.js';
import { formatJson } from '../compiler/formatters/json.js';
import { formatMarkdown } from '../compiler/formatters/markdown.js';
import { formatSarif } from '../compiler/formatters/sarif.js';
import { formatStylish } from '../compiler/formatters/stylish.js';
import { GATE_RULE_DESCRIPTIONS, GATE_RULES } from '../compiler/gate/compare.js';
import type { Diagnostic } from '../compiler/types.js';

const DIAGNOSTICS: Diagnostic[] = [
  {
    file: 'capabilities/alpha/PROTOCOL.md',
    line: 8,
    column: 19,
    endLine: 8,
    endColumn: 25,
    severity: 'error',
    ruleId: 'frontmatter-schema',
    message: '`protocol_version` "latest" has the wrong form',
    capabilityId: 'alpha',
  },
  {
    file: 'capabilities/alpha/PROTOCOL.md',
    line: 12,
    column: 3,
    endLine: 12,
    endColumn: 40,
    severity: 'warning',
    ruleId: 'duplicate-content',
    message: 'paragraph copied from beta',
    capabilityId: 'alpha',
    related: { file: 'capabilities/beta/PROTOCOL.md', line: 14, column: 1, message: 'first written here' },
  },
  {
    file: 'capabilities/odd,name:x/PROTOCOL.md',
    line: 1,
    column: 1,
    endLine: 1,
    endColumn: 1,
    severity: 'error',
    ruleId: 'registry-files',
    message: '100% wrong: line one\r\nline two, with: colons',
  },
  {
    file: 'capabilities/toolsets.yaml',
    line: 3,
    column: 5,
    endLine: 3,
    endColumn: 9,
    severity: 'warning',
    ruleId: 'toolsets-schema',
    message: '工具 "x" 不存在',
  },
];

const REPORT = countsOf(DIAGNOSTICS);

describe('formatters', () => {
  it('are one table: the four of the contract everywhere, markdown for the gate only, each loading its own module', async () => {
    expect(formatNames({ gate: false })).toEqual(['stylish', 'json', 'github', 'sarif']);
    expect(formatNames({ gate: true })).toEqual(['stylish', 'json', 'github', 'sarif', 'markdown']);
    expect(await FORMATS.stylish.load()).toBe(formatStylish);
    expect(await FORMATS.json.load()).toBe(formatJson);
    expect(await FORMATS.github.load()).toBe(formatGithub);
    expect(await FORMATS.sarif.load()).toBe(formatSarif);
    expect(await FORMATS.markdown.load()).toBe(formatMarkdown);
    expect(REPORT).toMatchObject({ errorCount: 2, warningCount: 2 });
  });

  it('share one input: a gate report goes through every formatter, and only json and markdown show the summary', () => {
    const gateDiagnostic: Diagnostic = { ...DIAGNOSTICS[0]!, ruleId: GATE_RULES.versionBump, message: 'needs minor' };
    const gate = { against: 'main', baseCommit: '0123456789abcdef', passed: false, changes: [], lint: { errorCount: 1, warningCount: 1 } };
    const report = { ...countsOf([...DIAGNOSTICS, gateDiagnostic]), gate };
    const json = JSON.parse(formatJson(report)) as Record<string, unknown>;
    expect(json['gate']).toEqual({
      against: 'main',
      baseCommit: '0123456789abcdef',
      passed: false,
      lint: { errorCount: 1, warningCount: 1 },
      unchanged: 0,
      changes: [],
    });
    expect(formatJson({ ...report, gate: undefined })).not.toContain('"gate"');
    expect(formatMarkdown(report)).toContain('Compared with `main` (`0123456789ab`)');
    expect(formatStylish(report)).toBe(formatStylish({ ...report, gate: undefined }));
    expect(formatGithub(report)).toBe(formatGithub({ ...report, gate: undefined }));
    // SARIF describes the gate's rule ids as it does the lint rules'.
    const sarif = JSON.parse(formatSarif(report)) as { runs: { tool: { driver: { rules: { id: string; shortDescription: { text: string } }[] } } }[] };
    const rule = sarif.runs[0]!.tool.driver.rules.find((entry) => entry.id === GATE_RULES.versionBump);
    expect(rule?.shortDescription.text).toBe(GATE_RULE_DESCRIPTIONS[GATE_RULES.versionBump]);
  });

  it('stylish: grouped by file, aligned, with the related place and a summary; a line break in a message shown as an escape', () => {
    expect(formatStylish(REPORT)).toBe(
      [
        'capabilities/alpha/PROTOCOL.md',
        '  8:19  error    `protocol_version` "latest" has the wrong form  frontmatter-schema',
        '  12:3  warning  paragraph copied from beta  duplicate-content',
        '                 ↳ first written here: capabilities/beta/PROTOCOL.md:14:1',
        '',
        'capabilities/odd,name:x/PROTOCOL.md',
        '  1:1  error  100% wrong: line one\\r\\nline two, with: colons  registry-files',
        '',
        'capabilities/toolsets.yaml',
        '  3:5  warning  工具 "x" 不存在  toolsets-schema',
        '',
        '✖ 4 problems (2 errors, 2 warnings)',
        '',
      ].join('\n'),
    );
  });

  it('stylish: nothing at all for a clean report, singular words for one problem', () => {
    expect(formatStylish(countsOf([]))).toBe('');
    expect(formatStylish(countsOf([DIAGNOSTICS[3]!]))).toBe(
      'capabilities/toolsets.yaml\n  3:5  warning  工具 "x" 不存在  toolsets-schema\n\n✖ 1 problem (0 errors, 1 warning)\n',
    );
  });

  it('json: exactly one JSON object of the SPEC shape, on one line', () => {
    const text = formatJson(REPORT);
    expect(text.endsWith('\n')).toBe(true);
    expect(text.slice(0, -1)).not.toContain('\n');
    expect(text).toBe(
      `${JSON.stringify({
        diagnostics: [
          {
            file: 'capabilities/alpha/PROTOCOL.md',
            line: 8,
            column: 19,
            endLine: 8,
            endColumn: 25,
            severity: 'error',
            ruleId: 'frontmatter-schema',
            message: '`protocol_version` "latest" has the wrong form',
            capabilityId: 'alpha',
          },
          {
            file: 'capabilities/alpha/PROTOCOL.md',
            line: 12,
            column: 3,
            endLine: 12,
            endColumn: 40,
            severity: 'warning',
            ruleId: 'duplicate-content',
            message: 'paragraph copied from beta',
            capabilityId: 'alpha',
            related: { file: 'capabilities/beta/PROTOCOL.md', line: 14, column: 1, message: 'first written here' },
          },
          {
            file: 'capabilities/odd,name:x/PROTOCOL.md',
            line: 1,
            column: 1,
            endLine: 1,
            endColumn: 1,
            severity: 'error',
            ruleId: 'registry-files',
            message: '100% wrong: line one\r\nline two, with: colons',
          },
          {
            file: 'capabilities/toolsets.yaml',
            line: 3,
            column: 5,
            endLine: 3,
            endColumn: 9,
            severity: 'warning',
            ruleId: 'toolsets-schema',
            message: '工具 "x" 不存在',
          },
        ],
        errorCount: 2,
        warningCount: 2,
      })}\n`,
    );
    expect(formatJson(countsOf([]))).toBe('{"diagnostics":[],"errorCount":0,"warningCount":0}\n');
  });

  it('github: one workflow command per diagnostic, with %, CR, LF escaped everywhere and , : in properties', () => {
    expect(formatGithub(REPORT)).toBe(
      [
        '::error file=capabilities/alpha/PROTOCOL.md,line=8,col=19,endLine=8,endColumn=25,title=frontmatter-schema::`protocol_version` "latest" has the wrong form',
        '::warning file=capabilities/alpha/PROTOCOL.md,line=12,col=3,endLine=12,endColumn=40,title=duplicate-content::paragraph copied from beta',
        '::error file=capabilities/odd%2Cname%3Ax/PROTOCOL.md,line=1,col=1,endLine=1,endColumn=1,title=registry-files::100%25 wrong: line one%0D%0Aline two, with: colons',
        '::warning file=capabilities/toolsets.yaml,line=3,col=5,endLine=3,endColumn=9,title=toolsets-schema::工具 "x" 不存在',
        '',
      ].join('\n'),
    );
    expect(formatGithub(countsOf([]))).toBe('');
    // ESC and a bidi override in an author's name reach the Actions log as escapes, not as themselves.
    const hostile = countsOf([
      {
        file: 'capabilities/x\u001b[31mred\u202e/PROTOCOL.md',
        line: 1,
        column: 1,
        endLine: 1,
        endColumn: 1,
        severity: 'error',
        ruleId: 'registry-files',
        message: 'a\u001b[0m b',
      },
    ]);
    expect(formatGithub(hostile)).toBe(
      '::error file=capabilities/x\\u001b[31mred\\u202e/PROTOCOL.md,line=1,col=1,endLine=1,endColumn=1,title=registry-files::a\\u001b[0m b\n',
    );
  });

  it('sarif: a valid SARIF 2.1.0 log', () => {
    const log = JSON.parse(formatSarif(REPORT)) as {
      $schema: string;
      version: string;
      runs: {
        tool: { driver: { name: string; informationUri: string; rules: { id: string; shortDescription: { text: string }; helpUri: string }[] } };
        results: {
          ruleId: string;
          ruleIndex: number;
          level: string;
          message: { text: string };
          locations: { physicalLocation: { artifactLocation: { uri: string; uriBaseId: string }; region: Record<string, number> } }[];
          relatedLocations?: unknown[];
        }[];
      }[];
    };
    expect(log.$schema).toBe('https://json.schemastore.org/sarif-2.1.0.json');
    expect(log.version).toBe('2.1.0');
    expect(log.runs).toHaveLength(1);
    const run = log.runs[0]!;
    expect(run.tool.driver.name).toBe('capreg');
    expect(run.tool.driver.rules.map((rule) => rule.id)).toEqual(['duplicate-content', 'frontmatter-schema', 'registry-files', 'toolsets-schema']);
    for (const rule of run.tool.driver.rules) {
      expect(rule.shortDescription.text.length).toBeGreaterThan(0);
      expect(rule.helpUri).toBe(`https://github.com/capreg/capreg/blob/main/docs/rules/${rule.id}.md`);
    }
    expect(run.results).toHaveLength(4);
    for (const result of run.results) {
      expect(run.tool.driver.rules[result.ruleIndex]?.id).toBe(result.ruleId);
      expect(['error', 'warning']).toContain(result.level);
      for (const value of Object.values(result.locations[0]!.physicalLocation.region)) {
        expect(Number.isInteger(value) && value >= 1).toBe(true);
      }
    }
    expect(run.results[0]).toEqual({
      ruleId: 'frontmatter-schema',
      ruleIndex: 1,
      level: 'error',
      message: { text: '`protocol_version` "latest" has the wrong form' },
      locations: [
        {
          physicalLocation: {
            artifactLocation: { uri: 'capabilities/alpha/PROTOCOL.md', uriBaseId: '%SRCROOT%' },
            region: { startLine: 8, startColumn: 19, endLine: 8, endColumn: 25 },
          },
        },
      ],
    });
    expect(run.results[1]!.relatedLocations).toEqual([
      {
        id: 0,
        message: { text: 'first written here' },
        physicalLocation: {
          artifactLocation: { uri: 'capabilities/beta/PROTOCOL.md', uriBaseId: '%SRCROOT%' },
          region: { startLine: 14, startColumn: 1 },
        },
      },
    ]);
    // A path is a URI reference: characters outside the URI syntax are percent-encoded.
    expect(run.results[2]!.locations[0]!.physicalLocation.artifactLocation.uri).toBe('capabilities/odd%2Cname%3Ax/PROTOCOL.md');
    expect(run.results[2]!.message.text).toBe('100% wrong: line one\r\nline two, with: colons');
  });

  it('stylish and sarif: a report of 300,000 diagnostics in one file, of many rule ids, each result pointing at its rule', () => {
    const many: Diagnostic[] = Array.from({ length: 300_000 }, (_, i) => ({ ...DIAGNOSTICS[0]!, line: i + 1, ruleId: `rule-${i % 5000}`, related: undefined }));
    const report = countsOf(many);
    const stylish = formatStylish(report);
    expect(stylish.split('\n').filter((line) => line.includes('rule-4999'))).toHaveLength(60);
    const log = JSON.parse(formatSarif(report)) as {
      runs: { tool: { driver: { rules: { id: string }[] } }; results: { ruleId: string; ruleIndex: number }[] }[];
    };
    const [run] = log.runs;
    expect(run!.tool.driver.rules).toHaveLength(5000);
    expect(run!.results.every((result) => run!.tool.driver.rules[result.ruleIndex]!.id === result.ruleId)).toBe(true);
  });

  it('sarif: an empty run for a clean report', () => {
    const log = JSON.parse(formatSarif(countsOf([]))) as { runs: { tool: { driver: { rules: unknown[] } }; results: unknown[] }[] };
    expect(log.runs[0]!.results).toEqual([]);
    expect(log.runs[0]!.tool.driver.rules).toEqual([]);
  });
});

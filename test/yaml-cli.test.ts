// The real `bin/capreg.js lint` on hostile YAML in each file it reads: a positioned diagnostic and
// exit 1 (exit 2 with a positioned message for capreg.config.yaml), never an internal error, the
// same verdict for byte-identical files in one run (also across parse workers), no network fetch.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrincipals } from '../server/principals.js';
import { cleanProtocol, runBin, tempRegistry, TOOLSETS_YAML, type JsonReport } from './cli/helpers.js';

const COLONS = `${': '.repeat(2048)}\n  y\n`;
const DEPTH_MESSAGE = 'YAML nested more than 64 levels deep (mappings, lists and brackets, aliases expanded); flatten the structure';

/** A clean PROTOCOL.md with another date and extra frontmatter lines (they start on line 10). */
function withFrontmatter(id: string, extra: string[], date = '2026-11-29'): string {
  return cleanProtocol(id).replace('protocol_updated: 2026-11-29\n---\n', `protocol_updated: ${date}\n${extra.map((line) => `${line}\n`).join('')}---\n`);
}

function lint(root: string): { code: number; stderr: string; report: JsonReport; lines: string[] } {
  const result = runBin(['lint', '--format', 'json', '--no-cache'], { cwd: root });
  expect(result.stderr).not.toMatch(/internal error|RangeError|\n\s+at /);
  const report = JSON.parse(result.stdout) as JsonReport;
  return { ...result, report, lines: report.diagnostics.map((d) => `${d.file}:${d.line}:${d.column} ${d.ruleId} ${d.message}`) };
}

describe('capreg lint on YAML nested too deep', () => {
  it('toolsets.yaml: a 4 KB line of ": : :" then an indented line is a diagnostic, exit 1', () => {
    const root = tempRegistry({ 'capabilities/toolsets.yaml': COLONS, 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha') });
    const { code, lines } = lint(root);
    expect(code).toBe(1);
    expect(lines).toEqual([`capabilities/toolsets.yaml:1:129 toolsets-schema ${DEPTH_MESSAGE}`]);
  });

  it('frontmatter: 400 nested flow mappings get the same diagnostic in every one of 70 identical files (parse workers too)', () => {
    const deep = `metadata: ${'{a: '.repeat(400)}1${'}'.repeat(400)}`;
    const files: Record<string, string> = {};
    for (let i = 0; i < 70; i += 1) files[`capabilities/c${i}/PROTOCOL.md`] = withFrontmatter(`c${i}`, [deep]);
    const { code, report } = lint(tempRegistry(files));
    expect(code).toBe(1);
    const verdicts = report.diagnostics.map((d) => `${d.line}:${d.column} ${d.ruleId} ${d.message}`);
    expect(verdicts).toHaveLength(70);
    expect(new Set(verdicts)).toEqual(new Set([`10:${11 + 4 * 63} frontmatter-schema ${DEPTH_MESSAGE}`]));
  });

  it('capreg.config.yaml: exit 2 with the file, line and column, not an internal error', () => {
    const root = tempRegistry({ 'capreg.config.yaml': COLONS, 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha') });
    const result = runBin(['lint', '--no-cache'], { cwd: root });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`invalid configuration: capreg.config.yaml:1:129: ${DEPTH_MESSAGE}`);
    expect(result.stderr).not.toMatch(/internal error|RangeError|\n\s+at /);
  });

  it('capreg.config.yaml: a YAML-only type is refused at its position', () => {
    const root = tempRegistry({
      'capreg.config.yaml': 'limits:\n  maxFileBytes: !!binary aGVsbG8=\n',
      'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'),
    });
    const result = runBin(['lint', '--no-cache'], { cwd: root });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('invalid configuration: capreg.config.yaml:2:26: YAML tag !!binary is not allowed');
  });
});

describe('capreg lint on frontmatter values JSON cannot hold', () => {
  it('an impossible date, !!binary, !!omap and !!set: one diagnostic each, exit 1', () => {
    const root = tempRegistry({
      'capabilities/alpha/PROTOCOL.md': withFrontmatter('alpha', [], '2026-02-31'),
      'capabilities/beta/PROTOCOL.md': withFrontmatter('beta', [
        'metadata: { logo: !!binary aGVsbG8= }',
        'tags: !!set { a }',
        'constraints: !!omap [ { a: 1 } ]',
      ]),
    });
    const { code, lines } = lint(root);
    expect(code).toBe(1);
    expect(lines).toEqual([
      'capabilities/alpha/PROTOCOL.md:9:19 frontmatter-schema `protocol_updated` "2026-02-31" is not a real calendar date: use an ISO date YYYY-MM-DD such as "2026-11-29"',
      'capabilities/beta/PROTOCOL.md:10:28 frontmatter-schema YAML tag !!binary is not allowed: only JSON-compatible YAML is read (text, numbers, true/false, null, mappings, lists)',
      'capabilities/beta/PROTOCOL.md:11:13 frontmatter-schema YAML tag !!set is not allowed: only JSON-compatible YAML is read (text, numbers, true/false, null, mappings, lists)',
      'capabilities/beta/PROTOCOL.md:12:21 frontmatter-schema YAML tag !!omap is not allowed: only JSON-compatible YAML is read (text, numbers, true/false, null, mappings, lists)',
    ]);
  });
});

describe('capreg lint on inputSchema/outputSchema', () => {
  let server: http.Server;
  let requests = 0;
  let base = '';
  beforeAll(async () => {
    server = http.createServer((_request, response) => {
      requests += 1;
      response.setHeader('content-type', 'application/json');
      response.end('{"type":"object"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('draft-04 and draft-06 are refused with the supported dialects; 2019-09 and 2020-12 are checked; a remote $ref is not fetched', () => {
    const root = tempRegistry({
      'capabilities/alpha/PROTOCOL.md': withFrontmatter('alpha', ['inputSchema: { $schema: "http://json-schema.org/draft-04/schema#", type: object }']),
      'capabilities/beta/PROTOCOL.md': withFrontmatter('beta', ['outputSchema: { $schema: "http://json-schema.org/draft-06/schema#", type: object }']),
      'capabilities/gamma/PROTOCOL.md': withFrontmatter('gamma', [
        'inputSchema: { $schema: "https://json-schema.org/draft/2020-12/schema", type: array, prefixItems: [{ type: string }] }',
      ]),
      'capabilities/delta/PROTOCOL.md': withFrontmatter('delta', ['inputSchema: { $schema: "https://json-schema.org/draft/2019-09/schema", type: objekt }']),
      'capabilities/eps/PROTOCOL.md': withFrontmatter('eps', [`inputSchema: { $ref: "${base}/schema.json" }`]),
    });
    const { code, lines } = lint(root);
    expect(code).toBe(1);
    const supported =
      'use one of draft-07 ("http://json-schema.org/draft-07/schema#"), 2019-09 ("https://json-schema.org/draft/2019-09/schema"), 2020-12 ("https://json-schema.org/draft/2020-12/schema"), or leave `$schema` out for draft-07';
    expect(lines).toEqual([
      `capabilities/alpha/PROTOCOL.md:10:25 frontmatter-schema \`inputSchema\` is not a valid JSON Schema: \`$schema\` "http://json-schema.org/draft-04/schema#" names no JSON Schema dialect capreg checks; ${supported}`,
      `capabilities/beta/PROTOCOL.md:10:26 frontmatter-schema \`outputSchema\` is not a valid JSON Schema: \`$schema\` "http://json-schema.org/draft-06/schema#" names no JSON Schema dialect capreg checks; ${supported}`,
      'capabilities/delta/PROTOCOL.md:10:79 frontmatter-schema `inputSchema` is not a valid JSON Schema: `inputSchema.type` must be one of "array", "boolean", "integer", "null", "number", "object", "string", not "objekt"; did you mean "object"?',
      `capabilities/eps/PROTOCOL.md:10:14 frontmatter-schema \`inputSchema\` is not a valid JSON Schema: can't resolve reference ${base}/schema.json from id #`,
    ]);
    expect(requests).toBe(0);
  });
});

describe('principals file', () => {
  it('goes through the same reader: depth and non-JSON types are refused with a position', () => {
    expect(parsePrincipals(COLONS)).toEqual({ ok: false, error: `principals file is not valid YAML: 1:129: ${DEPTH_MESSAGE}` });
    const tagged = parsePrincipals(`principals:\n  - id: a\n    keySha256: !!binary ${'a'.repeat(64)}\n    scopes: []\n`);
    expect(tagged.ok).toBe(false);
    expect(!tagged.ok && tagged.error).toMatch(/^principals file is not valid YAML: 3:25: YAML tag !!binary is not allowed/);
    // The message names the tag and the position, never the value (a key hash stays out of logs).
    expect(JSON.stringify(tagged)).not.toContain('a'.repeat(64));
    expect(parsePrincipals(`principals:\n  - &p { id: a, keySha256: "${'a'.repeat(64)}", scopes: [] }\n  - *p\n`)).toEqual({
      ok: false,
      error: 'principals file is not valid YAML: 3:5: YAML aliases are not allowed in this file; write the values out instead of anchors',
    });
  });
});

describe('capreg lint on YAML of too many values', () => {
  // 500,000 one-character values in 1 MB (within limits.maxFileBytes): 9 s and 93 MB each before
  // the limit, and 128 such files (within limits.maxTotalBytes) ended the lint out of memory.
  const manyValues = (prefix: string): string => `${prefix}[${'1,'.repeat(500_000)}1]\n`;
  const SIZE_MESSAGE =
    'YAML holds more than 100000 values (keys, scalars, list items), more than is read from one text; make it smaller (toolsets can be split into several capabilities/toolsets/*.yaml files)';

  it('a toolsets file, an evals file and a frontmatter are refused at the value past the limit, each in well under a second', () => {
    const root = tempRegistry({
      'capabilities/toolsets.yaml': null,
      'capabilities/toolsets/a.yaml': TOOLSETS_YAML,
      'capabilities/toolsets/b.yaml': manyValues('many: '),
      'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'),
      'capabilities/alpha/evals.yaml': manyValues('shouldMatch: '),
      'capabilities/beta/PROTOCOL.md': withFrontmatter('beta', [manyValues('tags: ').trimEnd()]),
    });
    const started = performance.now();
    const { code, lines } = lint(root);
    expect(code).toBe(1);
    // At the 100,001st value: keys, `[` and `-` count, so in b.yaml (`many: [1,1,…`) the 99,999th
    // `1`, at column 8 + 2 × 99,998; the frontmatter holds 15 values before `tags: [`.
    expect(lines).toEqual([
      `capabilities/alpha/evals.yaml:1:${15 + 2 * 99_998} evals-schema ${SIZE_MESSAGE}`,
      `capabilities/beta/PROTOCOL.md:10:${8 + 2 * 99_983} frontmatter-schema ${SIZE_MESSAGE}`,
      `capabilities/toolsets/b.yaml:1:${8 + 2 * 99_998} toolsets-schema ${SIZE_MESSAGE}`,
    ]);
    // Three files that took ~9 s each to read; the process's start and the other files included.
    expect(performance.now() - started).toBeLessThan(15_000);
  }, 60_000);

  it('a toolsets file written as usual is read whatever its size, within a raised limits.maxFileBytes', () => {
    // ~2.2 MB, ~12 bytes a value (~190,000 values): read before the limit came, and refused by it
    // with no setting to raise, though the registry raised the file size limit for it.
    const toolsets = Array.from({ length: 3_000 }, (_, set) => {
      const tools = Array.from({ length: 10 }, (_, tool) => `    set${set}_tool${tool}: { action: read, description: Reads entry ${tool} of set ${set}. }\n`);
      return `set${set}:\n  description: Toolset number ${set} of the generated registry.\n  tools:\n${tools.join('')}`;
    }).join('');
    expect(toolsets.length).toBeGreaterThan(2 * 1024 * 1024);
    const root = tempRegistry({
      'capreg.config.yaml': 'limits:\n  maxFileBytes: 4194304\n',
      'capabilities/toolsets.yaml': `${TOOLSETS_YAML}${toolsets}`,
      'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'),
    });
    expect(lint(root).lines.filter((line) => line.includes('YAML holds'))).toEqual([]);
  }, 60_000);

  it('ordinary toolsets and evals files are read as before', () => {
    const root = tempRegistry({
      'capabilities/toolsets.yaml': `${TOOLSETS_YAML}extra:\n  description: d\n  tools:\n    extra_tool: { description: d, states: [${Array.from({ length: 256 }, (_, i) => `s${i}`).join(', ')}] }\n`,
      'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'),
      'capabilities/alpha/evals.yaml': `shouldMatch: [${Array.from({ length: 100 }, (_, i) => `keep alpha entry ${i}`).join(', ')}]\n`,
    });
    expect(lint(root)).toMatchObject({ code: 0, lines: [] });
  });
});

// The lint record (cli/lint-record.ts): a lint whose configuration and files are what the last lint
// read prints that lint's report again, with nothing parsed, counted or linted; anything the compile
// reads that changed makes it lint again. Through the real executable.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRecord } from '../../cli/build-cache.js';
import { lintRecordFile } from '../../cli/lint-record.js';
import { cleanProtocol, runBin, tempRegistry, writeFiles, type JsonReport } from './helpers.js';

const ALPHA = 'capabilities/alpha/PROTOCOL.md';
const BETA = 'capabilities/beta/PROTOCOL.md';
/** beta links a file of its folder that is not there: one `links` error, until the file exists. */
const BETA_LINKING = cleanProtocol('beta', { body: 'Read [the notes](references/notes.md) first.\n\n- Never invent an entry.\n' });

/** Node options under which importing the tokenizer (which counts every body) or MiniSearch (trigger-collision) fails. */
function withoutCounting(): string[] {
  const hooks = `export async function resolve(specifier, context, next) { if (/^(gpt-tokenizer|minisearch)(\\/|$)/.test(specifier)) throw new Error('loaded ' + specifier); return next(specifier, context); }`;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
  return ['--import', `data:text/javascript,${encodeURIComponent(register)}`];
}

const lint = (root: string, extra: string[] = [], nodeOptions: string[] = []) => runBin(['lint', ...extra], { cwd: root, nodeOptions });
const clean = ({ code, stdout }: { code: number; stdout: string }): boolean => code === 0 && (JSON.parse(stdout) as JsonReport).diagnostics.length === 0;
const messages = (stdout: string): string[] => (JSON.parse(stdout) as JsonReport).diagnostics.map((d) => `${d.file} ${d.ruleId}`);

describe('capreg lint: the lint record', () => {
  it('answers a lint with nothing changed from the record: the same output and exit code, nothing parsed or counted', () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha'), [BETA]: BETA_LINKING });
    const first = lint(root);
    expect(first.code).toBe(1);
    expect(first.stdout).toContain('references/notes.md');
    expect(fs.existsSync(lintRecordFile(root))).toBe(true);
    const again = lint(root, [], withoutCounting());
    expect(again).toEqual(first);
    // Read, then answered: no parse and no lint phase.
    const timed = runBin(['lint'], { cwd: root, env: { CAPREG_TIMING: '1' } });
    expect(timed.stderr).toMatch(/^read +\|/m);
    expect(timed.stderr).not.toMatch(/^(parse|lint) +\|/m);
    // Formats and --max-warnings apply to the recorded report.
    const json = lint(root, ['--format', 'json'], withoutCounting());
    expect(json.code).toBe(1);
    expect(messages(json.stdout)).toEqual([`${BETA} links`]);
  });

  it('lints again when a file, the configuration, or a path that is never read changed', () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha'), [BETA]: BETA_LINKING });
    expect(messages(lint(root, ['--format', 'json']).stdout)).toEqual([`${BETA} links`]);
    // A path only listed (never read) makes the link resolve.
    writeFiles(root, { 'capabilities/beta/references/notes.md': 'Notes.\n' });
    expect(clean(lint(root, ['--format', 'json']))).toBe(true);
    // A file's content.
    writeFiles(root, { [ALPHA]: cleanProtocol('alpha', { body: 'See [the guide](missing.md).\n\n- Never guess.\n' }) });
    expect(messages(lint(root, ['--format', 'json']).stdout)).toEqual([`${ALPHA} links`]);
    // The configuration.
    writeFiles(root, { 'capreg.config.yaml': 'rules:\n  links: off\n' });
    expect(clean(lint(root, ['--format', 'json']))).toBe(true);
    // And back: the record of a configuration that changed since is not used.
    fs.rmSync(path.join(root, 'capreg.config.yaml'));
    expect(messages(lint(root, ['--format', 'json']).stdout)).toEqual([`${ALPHA} links`]);
  });

  it('uses the record only when its key is the input read, and never with --no-cache', () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha'), [BETA]: BETA_LINKING });
    const real = lint(root);
    // A record whose report says something else, under the same key, is what the next lint prints:
    // the record is trusted as much as .capreg/ (as the build record and the parse cache are).
    const record = JSON.parse(fs.readFileSync(lintRecordFile(root), 'utf8')) as { report: JsonReport };
    record.report.diagnostics[0]!.message = 'from the record';
    fs.writeFileSync(lintRecordFile(root), JSON.stringify(record));
    expect(lint(root).stdout).toContain('from the record');
    // --no-cache reads no record (nor writes one).
    expect(lint(root, ['--no-cache'])).toEqual(real);
    expect(fs.readFileSync(lintRecordFile(root), 'utf8')).toContain('from the record');
    const fresh = tempRegistry({ [ALPHA]: cleanProtocol('alpha') });
    expect(lint(fresh, ['--no-cache']).code).toBe(0);
    expect(fs.existsSync(lintRecordFile(fresh))).toBe(false);
  });

  it('takes a damaged, forged or linked record for a miss, lints, and writes a good one', () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha'), [BETA]: BETA_LINKING });
    const real = lint(root);
    const good = fs.readFileSync(lintRecordFile(root), 'utf8');
    const record = JSON.parse(good) as { format: number; key: string; report: JsonReport };
    const elsewhere = path.join(root, 'elsewhere.json');
    fs.writeFileSync(elsewhere, good);
    const damaged: [string, () => void][] = [
      ['not JSON', () => fs.writeFileSync(lintRecordFile(root), good.slice(0, 40))],
      [
        'counts that are not its diagnostics',
        () => fs.writeFileSync(lintRecordFile(root), JSON.stringify({ ...record, report: { ...record.report, errorCount: 0 } })),
      ],
      ['a diagnostic without a line', () => fs.writeFileSync(lintRecordFile(root), good.replace(/"line":\d+,/, ''))],
      ['another format', () => fs.writeFileSync(lintRecordFile(root), JSON.stringify({ ...record, format: record.format + 1 }))],
      ['its key, then another', () => fs.writeFileSync(lintRecordFile(root), `${good.slice(0, -1)},"key":"other"}`)],
      ['a folder', () => fs.mkdirSync(lintRecordFile(root))],
      ['a link to a good record', () => fs.symlinkSync(elsewhere, lintRecordFile(root))],
    ];
    for (const [what, damage] of damaged) {
      fs.rmSync(lintRecordFile(root), { recursive: true, force: true });
      damage();
      expect(lint(root), what).toEqual(real);
      // A folder in its place stays (nothing is removed to write a cache); anything else is replaced.
      if (what === 'a folder') continue;
      expect(fs.lstatSync(lintRecordFile(root)).isFile(), what).toBe(true);
      expect(fs.readFileSync(lintRecordFile(root), 'utf8'), what).toBe(good);
    }
  });

  it('reads a record nested deeper than a report, or made of more objects than a report has, as a miss without parsing it', () => {
    const root = tempRegistry({ [ALPHA]: cleanProtocol('alpha'), [BETA]: BETA_LINKING });
    const real = lint(root);
    const good = fs.readFileSync(lintRecordFile(root), 'utf8');
    const start = good.slice(0, good.indexOf('"report":') + '"report":'.length);
    // 32 MiB each: as JSON.parse input, the first took gigabytes.
    for (const body of ['['.repeat(32 << 20), `{"diagnostics":[${'{},'.repeat(11 << 20)}{}]}`]) {
      fs.writeFileSync(lintRecordFile(root), `${start}${body}}`);
      expect(lint(root)).toEqual(real);
      expect(fs.readFileSync(lintRecordFile(root), 'utf8')).toBe(good);
    }
  });

  it("parses records of a report's nesting, brackets in strings and escaped quotes included", () => {
    expect(parseRecord('{"a":[{"b":{"c":[[[1]]]}}]}')).toEqual({ a: [{ b: { c: [[[1]]] } }] });
    expect(parseRecord('[[[[[[[[[]]]]]]]]]')).toBeUndefined();
    expect(parseRecord(JSON.stringify({ message: '[[[[[[[[[[{{{{{{{{{{ \\" "]]' }))).toEqual({ message: '[[[[[[[[[[{{{{{{{{{{ \\" "]]' });
    expect(parseRecord('{"a":')).toBeUndefined();
    expect(parseRecord(`[${'{},'.repeat(100)}{}]`)).toHaveLength(101);
    expect(parseRecord(`[${'{},'.repeat(100_000)}{}]`)).toBeUndefined();
  });

  it('does not record a lint that stopped a protocol over the parse budget (a finding of that run, not of the files)', () => {
    const body = Array.from({ length: 800 }, (_, i) => `Step ${i}: read the *record* number ${i} and \`check\` it against [the notes](#step-${i}).`)
      .concat(['Never guess a record.'])
      .join('\n\n');
    // 64 KiB of prose is far over 1 ms.
    const root = tempRegistry({ 'capreg.config.yaml': 'limits:\n  maxParseMs: 1\n', [ALPHA]: cleanProtocol('alpha', { body }) });
    const result = lint(root, ['--format', 'json']);
    expect(messages(result.stdout)).toEqual([`${ALPHA} registry-files`]);
    expect(fs.existsSync(lintRecordFile(root))).toBe(false);
  });
});

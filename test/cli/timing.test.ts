// CAPREG_TIMING: the phases and the slowest rules of one lint, build or check, on standard error;
// standard output the same with or without it; a value that is not a setting refused.
import { describe, expect, it } from 'vitest';
import { DEFAULT_RULE_ROWS, Timings, formatTimings, timingsFromEnv } from '../../cli/timing.js';
import { UsageError } from '../../cli/context.js';
import { rules } from '../../compiler/rules/index.js';
import { commitAll, createBaseRepository, runCli, setVersion } from '../gate/fixture.js';
import { cleanProtocol, forgetLastLint, run, runBin, tempRegistry, writeFiles } from './helpers.js';

/** The rows of the table under `heading` ("Phase" or "Rule"): name and milliseconds. */
function rowsOf(stderr: string, heading: string): [string, number][] {
  const lines = stderr.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`${heading} `) && line.includes('| Time (ms) | Relative'));
  if (start < 0) return [];
  const rows: [string, number][] = [];
  for (const line of lines.slice(start + 2)) {
    const cells = line.split('|').map((cell) => cell.trim());
    if (cells.length !== 3) break;
    rows.push([cells[0]!, Number(cells[1])]);
  }
  return rows;
}

const ruleIds = rules.map((rule) => rule.meta.id);

describe('CAPREG_TIMING values', () => {
  it('is off when unset, empty or 0', () => {
    expect(timingsFromEnv({})).toBeUndefined();
    expect(timingsFromEnv({ CAPREG_TIMING: '' })).toBeUndefined();
    expect(timingsFromEnv({ CAPREG_TIMING: ' 0 ' })).toBeUndefined();
  });

  it('lists at least the 10 slowest rules, more when asked, and all for all', () => {
    expect(timingsFromEnv({ CAPREG_TIMING: '1' })?.rows).toBe(DEFAULT_RULE_ROWS);
    expect(timingsFromEnv({ CAPREG_TIMING: '3' })?.rows).toBe(DEFAULT_RULE_ROWS);
    expect(timingsFromEnv({ CAPREG_TIMING: '25' })?.rows).toBe(25);
    expect(timingsFromEnv({ CAPREG_TIMING: 'all' })?.rows).toBe(Number.POSITIVE_INFINITY);
    expect(timingsFromEnv({ CAPREG_TIMING: 'ALL' })?.rows).toBe(Number.POSITIVE_INFINITY);
  });

  it.each(['yes', 'true', '-1', '1.5', '01', '1e3', '10000000', 'all rules'])('refuses %j instead of taking it for off', (value) => {
    expect(() => timingsFromEnv({ CAPREG_TIMING: value })).toThrow(UsageError);
    expect(() => timingsFromEnv({ CAPREG_TIMING: value })).toThrow(/CAPREG_TIMING=.* is not a setting: give 1 .*, a number of rules, or all/);
  });
});

describe('the tables', () => {
  it('lists the phases in the order they ran with their total, and the slowest rules first', () => {
    const timings = new Timings(2);
    timings.phases.set('start', 50).set('parse', 150);
    timings.rules.set('links', 1).set('state-machine', 30).set('token-budget', 10);
    expect(formatTimings(timings)).toBe(
      [
        'Phase | Time (ms) | Relative',
        ':-----|----------:|--------:',
        'start |      50.0 |    25.0%',
        'parse |     150.0 |    75.0%',
        'total |     200.0 |   100.0%',
        '',
        'Rule          | Time (ms) | Relative',
        ':-------------|----------:|--------:',
        'state-machine |      30.0 |    73.2%',
        'token-budget  |      10.0 |    24.4%',
        '(1 more rule: CAPREG_TIMING=all lists every one)',
        '',
      ].join('\n'),
    );
  });

  it('gives each phase the time since the last one ended', async () => {
    const timings = new Timings(DEFAULT_RULE_ROWS);
    timings.mark('start');
    await new Promise((resolve) => setTimeout(resolve, 30));
    timings.mark('read');
    const start = timings.phases.get('start')!;
    expect(start).toBeGreaterThan(0);
    expect(start).toBeLessThanOrEqual(performance.now());
    expect(timings.phases.get('read')).toBeGreaterThanOrEqual(25);
  });
});

describe('capreg lint with CAPREG_TIMING', () => {
  const root = tempRegistry({
    'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha'),
    'capabilities/beta/PROTOCOL.md': cleanProtocol('beta', { version: 'latest' }),
  });

  it('writes the same report and exit code, and the tables after it on standard error', async () => {
    const plain = await run(['lint', '-f', 'json'], { cwd: root });
    forgetLastLint(root);
    const timed = await run(['lint', '-f', 'json'], { cwd: root, env: { CAPREG_TIMING: 'all' } });
    expect(plain.code).toBe(1);
    expect(timed.code).toBe(plain.code);
    expect(timed.stdout).toBe(plain.stdout);
    expect(plain.stderr).toBe('');
    expect(rowsOf(timed.stderr, 'Phase').map(([name]) => name)).toEqual(['start', 'read', 'parse', 'lint', 'output', 'total']);
    const ruleRows = rowsOf(timed.stderr, 'Rule');
    // Every rule that ran, once, slowest first.
    expect(ruleRows.map(([name]) => name).sort()).toEqual([...ruleIds].sort());
    const times = ruleRows.map(([, ms]) => ms);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(timed.stderr).not.toContain('more rule');
  });

  it('leaves out the rules that are off, and lists 10 with CAPREG_TIMING=1', async () => {
    writeFiles(root, { 'capreg.config.yaml': 'rules:\n  state-machine: off\n  links: off\n' });
    try {
      const all = rowsOf((await run(['lint'], { cwd: root, env: { CAPREG_TIMING: 'all' } })).stderr, 'Rule').map(([name]) => name);
      expect(all).toHaveLength(ruleIds.length - 2);
      expect(all).not.toContain('state-machine');
      expect(all).not.toContain('links');
      forgetLastLint(root);
      const ten = await run(['lint'], { cwd: root, env: { CAPREG_TIMING: '1' } });
      expect(rowsOf(ten.stderr, 'Rule')).toHaveLength(DEFAULT_RULE_ROWS);
      expect(ten.stderr).toContain(`(${ruleIds.length - 2 - DEFAULT_RULE_ROWS} more rules: CAPREG_TIMING=all lists every one)`);
    } finally {
      writeFiles(root, { 'capreg.config.yaml': 'rules: {}\n' });
    }
  });

  it('refuses a value that is not a setting before it reads anything (exit 2)', async () => {
    const result = await run(['lint'], { cwd: root, env: { CAPREG_TIMING: 'on' } });
    expect(result).toEqual({ code: 2, stdout: '', stderr: expect.stringContaining('CAPREG_TIMING=on is not a setting') as unknown });
  });

  it('times a lint answered from its record as its start, its read and its output', async () => {
    await run(['lint'], { cwd: root });
    const again = await run(['lint'], { cwd: root, env: { CAPREG_TIMING: 'all' } });
    expect(again.code).toBe(1);
    expect(rowsOf(again.stderr, 'Phase').map(([name]) => name)).toEqual(['start', 'read', 'output', 'total']);
    expect(rowsOf(again.stderr, 'Rule')).toEqual([]);
  });

  it('works through the real executable', () => {
    forgetLastLint(root);
    const result = runBin(['lint'], { cwd: root, env: { CAPREG_TIMING: '1' } });
    expect(result.code).toBe(1);
    expect(rowsOf(result.stderr, 'Phase').map(([name]) => name)).toEqual(['start', 'read', 'parse', 'lint', 'output', 'total']);
    const [start] = rowsOf(result.stderr, 'Phase');
    // Node's own start and capreg's modules: a real process takes some time before it reads anything.
    expect(start![1]).toBeGreaterThan(1);
  });
});

describe('capreg build with CAPREG_TIMING', () => {
  it('times the outputs too, and an up-to-date build as its start alone', async () => {
    const root = tempRegistry({ 'capabilities/alpha/PROTOCOL.md': cleanProtocol('alpha') });
    const first = await run(['build'], { cwd: root, env: { CAPREG_TIMING: '1' } });
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(/^capreg build: wrote dist\/manifest\.json/);
    expect(rowsOf(first.stderr, 'Phase').map(([name]) => name)).toEqual(['start', 'read', 'parse', 'lint', 'output', 'total']);
    const again = await run(['build'], { cwd: root, env: { CAPREG_TIMING: '1' } });
    expect(again.stderr).toContain('is up to date');
    expect(rowsOf(again.stderr, 'Phase').map(([name]) => name)).toEqual(['start', 'total']);
    expect(rowsOf(again.stderr, 'Rule')).toEqual([]);
  });
});

describe('capreg check with CAPREG_TIMING', () => {
  it('times the gate after the new tree, with the same report', async () => {
    const repo = createBaseRepository();
    setVersion(repo, '1.0.1');
    commitAll(repo, 'wording');
    const plain = await runCli(['check', '--against', 'base', '-f', 'json'], repo);
    const timed = await runCli(['check', '--against', 'base', '-f', 'json'], repo, { CAPREG_TIMING: '1' });
    expect(timed.code).toBe(plain.code);
    expect(timed.stdout).toBe(plain.stdout);
    expect(timed.stderr.startsWith(plain.stderr)).toBe(true);
    expect(rowsOf(timed.stderr, 'Phase').map(([name]) => name)).toEqual(['start', 'read', 'parse', 'lint', 'gate', 'total']);
    expect(rowsOf(timed.stderr, 'Rule')).toHaveLength(DEFAULT_RULE_ROWS);
  });
});

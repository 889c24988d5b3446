// capreg eval through the real bin: the ranker over the whole catalog, every format, exit codes.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runBin, tempRegistry } from './helpers.js';

function capability(id: string, name: string, description: string, triggers: string[]): string {
  return `---
id: ${id}
name: ${name}
description: ${description}
whenToUse:
${triggers.map((trigger) => `  - ${trigger}`).join('\n')}
requiredToolsets: []
protocol_version: 1.0.0
protocol_updated: 2026-11-29
---
# ${name}

Never act without asking the user first.
`;
}

const REPORTS = capability('work-reporting', 'Work reporting', 'Writes daily and weekly reports from the work log.', ['write my weekly report', '写日报']);
const REMINDERS = capability('personal-automation', 'Personal automation', 'Creates reminders and scheduled tasks.', ['remind me to do something', '提醒我']);

describe('capreg eval', () => {
  it('passes: recall and MRR per capability, exit 0, nothing on stderr', () => {
    const root = tempRegistry({
      'capabilities/work-reporting/PROTOCOL.md': REPORTS,
      'capabilities/work-reporting/evals.yaml': 'shouldMatch:\n  - weekly report please\n  - 帮我写日报\nshouldNotMatch:\n  - remind me to call mum\n',
      'capabilities/personal-automation/PROTOCOL.md': REMINDERS,
      'capabilities/personal-automation/evals.yaml': 'shouldMatch: [remind me to call mum, 提醒我开会]\n',
    });
    const result = runBin(['eval', '--no-cache'], { cwd: root });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('personal-automation  recall@1 1.00  recall@3 1.00  MRR 1.00  2 + 0 requests');
    expect(result.stdout).toContain('work-reporting       recall@1 1.00  recall@3 1.00  MRR 1.00  2 + 1 requests');
    expect(result.stdout).toContain('5 requests of 2 capabilities: recall@1 1.00  recall@3 1.00  MRR 1.00; every expectation met');
  });

  // Found by an attack pass: with id-matches-folder off, two folders of one id lint clean, and eval
  // died with "internal error: Segment: duplicate capability id" and a stack trace.
  it('two folders of one id (id-matches-folder off): the first in path order is ranked, no crash', () => {
    const root = tempRegistry({
      'capreg.config.yaml': 'rules:\n  id-matches-folder: off\n',
      'capabilities/work-reporting/PROTOCOL.md': REPORTS,
      'capabilities/work-reporting/evals.yaml': 'shouldMatch: [weekly report please]\n',
      'capabilities/zz-copy/PROTOCOL.md': REPORTS,
    });
    const result = runBin(['eval', '--no-cache'], { cwd: root });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('1 requests of 1 capabilities: recall@1 1.00');
  });

  it('a miss: exit 1, the request at its line with what came first instead; json and markdown agree', () => {
    const root = tempRegistry({
      'capabilities/work-reporting/PROTOCOL.md': REPORTS,
      'capabilities/work-reporting/evals.yaml': 'top: 1\nshouldMatch:\n  - weekly report please\n  - remind me to call mum\n',
      'capabilities/personal-automation/PROTOCOL.md': REMINDERS,
      'capabilities/personal-automation/evals.yaml': 'shouldMatch: [提醒我开会]\nshouldNotMatch: [remind me to call mum]\n',
    });
    const stylish = runBin(['eval', '--no-cache'], { cwd: root });
    expect(stylish.code).toBe(1);
    const json = runBin(['eval', '--format', 'json', '--no-cache'], { cwd: root });
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as {
      requests: { request: string; passed: boolean; rank: number | null; ranking: string[]; line: number; column: number; file: string }[];
      total: { failed: number };
    };
    const failed = report.requests.filter((request) => !request.passed);
    expect(report.total.failed).toBe(failed.length);
    expect(failed.map((miss) => `${miss.file}:${miss.line} ${miss.request}`)).toEqual([
      'capabilities/personal-automation/evals.yaml:2 remind me to call mum',
      'capabilities/work-reporting/evals.yaml:4 remind me to call mum',
    ]);
    for (const miss of failed) {
      expect(stylish.stdout).toContain(`${miss.file}:${miss.line}:${miss.column}  ${JSON.stringify(miss.request)}`);
      expect(stylish.stdout).toContain(`"${miss.ranking[0]}"`);
    }
    const markdown = runBin(['eval', '-f', 'markdown', '--no-cache'], { cwd: root });
    expect(markdown.code).toBe(1);
    expect(stylish.stdout).toContain('shouldMatch request not found (expected in the top 1); "personal-automation" came first');
    expect(stylish.stdout).toContain('shouldNotMatch request put "personal-automation" first');
    expect(markdown.stdout).toContain('### capreg routing evals: ❌ 2 failed');
    expect(markdown.stdout).toContain('| `work-reporting` | 2 + 0 |');
  });

  it('usage errors exit 2; a registry with lint errors (a bad evals.yaml included) exits 1 and says why', () => {
    const root = tempRegistry({
      'capabilities/work-reporting/PROTOCOL.md': REPORTS,
      'capabilities/work-reporting/evals.yaml': 'shouldMatchh: [weekly report]\n',
    });
    const usage = runBin(['eval', '--format', 'sarif'], { cwd: root });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('unknown --format "sarif"; expected one of stylish, json, markdown');
    const lint = runBin(['lint', '--no-cache'], { cwd: root });
    expect(lint.code).toBe(1);
    expect(lint.stdout).toContain('1:1  error  unknown field "shouldMatchh"; did you mean "shouldMatch"?  evals-schema');
    const result = runBin(['eval', '--no-cache'], { cwd: root });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('capreg eval: the registry has 1 lint error; run `capreg lint` and fix them first\n');
  });

  it('a blank request is refused as an empty one is: as a shouldNotMatch it passed without testing anything', () => {
    const root = tempRegistry({
      'capabilities/work-reporting/PROTOCOL.md': REPORTS,
      'capabilities/work-reporting/evals.yaml': 'shouldMatch: [write my weekly report]\nshouldNotMatch: ["   "]\n',
    });
    const lint = runBin(['lint', '--no-cache'], { cwd: root });
    expect(lint.code).toBe(1);
    expect(lint.stdout).toContain('error  `shouldNotMatch.0` "   " has the wrong form: a request as a user would say it, not blank  evals-schema');
    const result = runBin(['eval', '--no-cache'], { cwd: root });
    expect({ code: result.code, stderr: result.stderr }).toEqual({
      code: 1,
      stderr: 'capreg eval: the registry has 1 lint error; run `capreg lint` and fix them first\n',
    });
  });

  it('the bundled capabilities meet their evals (>= 10 requests each, English and Chinese)', () => {
    const result = runBin(['eval', '--format', 'json', '--no-cache'], { cwd: REPO_ROOT });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as {
      capabilities: { id: string; shouldMatch: number; shouldNotMatch: number }[];
      requests: { capabilityId: string; request: string }[];
    };
    const bundled = fs
      .readdirSync(path.join(REPO_ROOT, 'capabilities'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(report.capabilities.map((each) => each.id).sort()).toEqual(bundled.sort());
    for (const id of bundled) {
      const requests = report.requests.filter((request) => request.capabilityId === id);
      expect(requests.length).toBeGreaterThanOrEqual(10);
      expect(requests.some((request) => /\p{Script=Han}/u.test(request.request))).toBe(true);
      expect(requests.some((request) => /^[\x20-\x7e]+$/.test(request.request))).toBe(true);
    }
  });
});

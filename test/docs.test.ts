// The repository's docs stand alone: every relative link in a tracked Markdown file resolves to a
// file inside the repository, no page cites a contract kept outside it, and every rule id a command
// can report (lint rules and the gate's) has the docs page that SARIF's helpUri points at.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatSarif } from '../compiler/formatters/sarif.js';
import { GATE_RULES } from '../compiler/gate/compare.js';
import { rules } from '../compiler/rules/index.js';
import type { Diagnostic } from '../compiler/types.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function trackedMarkdown(): string[] {
  const listed = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '*.md'], { cwd: ROOT, encoding: 'utf8' });
  return listed.split('\n').filter((file) => file !== '' && !file.startsWith('node_modules/') && fs.existsSync(path.join(ROOT, file)));
}

/** Markdown links outside code blocks and code spans: `[text](target)`. */
function linksOf(text: string): string[] {
  const prose = text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
}

describe('the docs', () => {
  const files = trackedMarkdown();

  it('are found', () => {
    expect(files).toContain('README.md');
    expect(files).toContain('docs/reference.md');
  });

  it.each(files)('%s: relative links resolve inside the repository', (file) => {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    const broken: string[] = [];
    for (const link of linksOf(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('#')) continue;
      const target = path.resolve(path.dirname(path.join(ROOT, file)), decodeURI(link.split('#')[0]!));
      if (!target.startsWith(ROOT + path.sep) || !fs.existsSync(target)) broken.push(link);
    }
    expect(broken).toEqual([]);
  });

  it.each(files)('%s: cites no contract kept outside the repository', (file) => {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    expect(text).not.toMatch(/SPEC §|SPEC\.md/);
  });
});

describe('SARIF help links', () => {
  const ruleIds = [...rules.map((rule) => rule.meta.id), ...Object.values(GATE_RULES)];
  const report = {
    diagnostics: ruleIds.map((ruleId): Diagnostic => ({
      file: 'capabilities/x/PROTOCOL.md',
      line: 1,
      column: 1,
      endLine: 1,
      endColumn: 2,
      severity: 'error',
      ruleId,
      message: 'm',
      capabilityId: 'x',
    })),
    errorCount: ruleIds.length,
    warningCount: 0,
  };
  const driver = (
    JSON.parse(formatSarif(report)) as {
      runs: [{ tool: { driver: { informationUri: string; rules: { id: string; helpUri: string; shortDescription: { text: string } }[] } } }];
    }
  ).runs[0].tool.driver;
  const packageJson = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { repository: { url: string } };

  it('name the repository package.json names', () => {
    expect(packageJson.repository.url).toBe(`git+${driver.informationUri}.git`);
  });

  it.each(ruleIds)('%s: has a description and a helpUri to a docs page that exists', (id) => {
    const rule = driver.rules.find((entry) => entry.id === id)!;
    expect(rule.shortDescription.text).not.toBe(id);
    const prefix = `${driver.informationUri}/blob/main/`;
    expect(rule.helpUri.startsWith(prefix)).toBe(true);
    const docs = rule.helpUri.slice(prefix.length);
    expect(fs.existsSync(path.join(ROOT, docs)), `${docs} is missing`).toBe(true);
    expect(fs.readFileSync(path.join(ROOT, docs), 'utf8').split('\n')[0]).toBe(`# ${id}`);
  });
});

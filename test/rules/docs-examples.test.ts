// Every rule docs page's examples, run through the rule (remark-lint's habit), so the docs cannot
// drift from the code: each "Not ok" example must print exactly the diagnostics its `text` block
// shows, and each "Ok" example must give no diagnostic of the rule.
//
// How a page states its examples:
// - a `markdown` or `yaml` block is a file of the example; `<!-- file: PATH -->` or a caption line
//   "`PATH`:" right before it names the file, otherwise a yaml block is capabilities/toolsets.yaml and a markdown block is the
//   PROTOCOL.md the output names (or the first one the page named);
// - `<!-- also: PATH -->` adds an (empty) file that only needs to exist;
// - a markdown block without frontmatter is the body of the page's last PROTOCOL.md (its
//   frontmatter and the other files kept), so a fix can be shown as the changed lines only;
// - a `text` block is the output (stylish, or `file:line:column  severity  message  rule` rows) of
//   the files given since the previous output (one after no new file only illustrates the wording).
// User-rule pages (user-*.md) show one user capability, compiled against USER_CATALOG.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { CatalogContext } from '../../compiler/compile-one.js';
import { rulesById } from '../../compiler/rules/index.js';
import type { AnyRule } from '../../compiler/rule.js';
import type { Diagnostic, ManifestCapability } from '../../compiler/types.js';
import { USER_CAPABILITY_FILE, USER_CAPABILITY_RULES, compileUserCapability } from '../../compiler/user/compile-user.js';
import { registryInput } from '../support/registry.js';
import { lintWith } from './harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOCS = path.join(ROOT, 'docs/rules');

/** Pages whose examples need a Git history (the version gate's): docs/gate.md's tests cover them. */
const GATE_PAGES = new Set(['capability-removed', 'routing-moved', 'version-bump', 'version-date']);

/** The catalog the user-rule pages' examples are compiled against. */
function userCapability(id: string, requiredToolsets: string[]): ManifestCapability {
  return {
    id,
    name: id,
    description: `${id} capability`,
    whenToUse: [`use ${id}`],
    requiredToolsets,
    optionalToolsets: [],
    protocolVersion: '1.0.0',
    protocolUpdated: '2026-11-29',
    digest: `sha256:${'0'.repeat(64)}`,
    references: [],
    protocol: 'Never guess.\n',
  };
}
const USER_CATALOG: CatalogContext = {
  capabilities: [userCapability('work-reporting', ['work-logs']), userCapability('personal-automation', ['automation'])],
  toolsets: {
    'work-logs': { description: 'logs', tools: { work_log_generate_report: { action: 'write', description: 'generate' } } },
    automation: { description: 'automation', tools: { automation_create_task: { action: 'write', description: 'create' } } },
  },
};

interface Row {
  file: string | undefined;
  line: number;
  column: number;
  severity: string;
  message: string;
  ruleId: string;
}

interface Example {
  section: 'Not ok' | 'Ok';
  /** Where on the page it ends (1-based line), for the test's name. */
  line: number;
  files: Record<string, string>;
  main: string;
  /** Undefined for an "Ok" example: no diagnostic of the rule. */
  output?: Row[];
}

const ROW = /^\s*(?:(\S+?):)?(\d+):(\d+)\s+(error|warning)\s+(.*\S)\s{2,}([a-z]+(?:-[a-z]+)*)\s*$/;

/** The diagnostics a `text` block shows; a stylish file header names the file of the rows under it. */
function parseOutput(text: string): Row[] {
  const rows: Row[] = [];
  let header: string | undefined;
  for (const line of text.split('\n')) {
    const row = ROW.exec(line);
    if (row) {
      rows.push({ file: row[1] ?? header, line: Number(row[2]), column: Number(row[3]), severity: row[4]!, message: row[5]!, ruleId: row[6]! });
    } else if (/^\S+$/.test(line)) header = line;
  }
  return rows;
}

function frontmatterOf(id: string, content: string): string {
  const end = /^---\n[^]*?^---\n/m.exec(content);
  if (!end || end.index !== 0) throw new Error(`docs/rules/${id}.md: a body-only example needs a PROTOCOL.md before it`);
  return end[0];
}

function examples(id: string, user: boolean): Example[] {
  const page = fs.readFileSync(path.join(DOCS, `${id}.md`), 'utf8');
  const lines = page.split('\n');
  const found: Example[] = [];
  let section: Example['section'] | undefined;
  const files: Record<string, string> = {};
  let main: string | undefined = user ? USER_CAPABILITY_FILE : undefined;
  let named: string | undefined;
  let pending: { file: string | undefined; content: string }[] = [];
  const place = (file: string | undefined, content: string, output?: Row[]): void => {
    const whole = content.startsWith('---\n');
    const target = file ?? (whole ? output?.find((row) => row.file)?.file : undefined) ?? main;
    if (!target) throw new Error(`docs/rules/${id}.md: name the file of the example (<!-- file: PATH -->)`);
    files[target] = whole || !target.endsWith('PROTOCOL.md') ? content : frontmatterOf(id, files[target] ?? '') + content;
    if (target.endsWith('PROTOCOL.md')) main = target;
  };
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    const heading = /^## (.+)$/.exec(line);
    if (heading) {
      section = heading[1] === 'Not ok' || heading[1] === 'Ok' ? heading[1] : undefined;
      continue;
    }
    if (!section) continue;
    const comment = /^<!-- (file|also): (\S+) -->$/.exec(line);
    const caption = /^`(capabilities\/\S+)`:$/.exec(line);
    if (caption) named = caption[1];
    if (comment?.[1] === 'file') named = comment[2];
    if (comment?.[1] === 'also') files[comment[2]!] = '';
    const fence = /^(`{3,})(markdown|yaml|text)$/.exec(line);
    if (!fence) continue;
    const end = lines.findIndex((other, at) => at > index && other === fence[1]);
    const content = `${lines.slice(index + 1, end).join('\n')}\n`;
    const kind = fence[2]!;
    index = end;
    if (kind === 'text') {
      if (pending.length === 0) continue;
      const output = parseOutput(content);
      if (output.length === 0) throw new Error(`docs/rules/${id}.md:${end + 1}: the output shows no diagnostic`);
      for (const input of pending) place(input.file, input.content, output);
      pending = [];
      found.push({ section: 'Not ok', line: end + 1, files: { ...files }, main: main!, output });
      continue;
    }
    const file = named ?? (kind === 'yaml' && !user ? 'capabilities/toolsets.yaml' : undefined);
    named = undefined;
    if (section === 'Not ok') {
      pending.push({ file, content });
      continue;
    }
    place(file, content);
    found.push({ section: 'Ok', line: end + 1, files: { ...files }, main: main! });
  }
  return found;
}

function diagnosticsOf(rule: AnyRule, example: Example, user: boolean): Diagnostic[] {
  if (!user) return lintWith(rule, registryInput(example.files));
  const markdown = example.files[USER_CAPABILITY_FILE] ?? '';
  const result = compileUserCapability(markdown, USER_CATALOG);
  return result.diagnostics.filter((d) => d.ruleId === rule.meta.id);
}

/**
 * Pages whose inputs cannot be shown as a text block: registry-files' are binary, Latin-1,
 * symlinked or slow-to-parse files, token-budget's a body of thousands of tokens. Their table tests
 * (test/rules/<id>.test.ts) cover the same messages.
 */
const NOT_TEXT = new Set(['registry-files', 'token-budget']);

const pages = fs
  .readdirSync(DOCS)
  .filter((name) => name.endsWith('.md'))
  .map((name) => name.slice(0, -'.md'.length))
  .filter((id) => !GATE_PAGES.has(id));

describe.each(pages.filter((id) => !NOT_TEXT.has(id)))('docs/rules/%s.md', (id) => {
  const user = id.startsWith('user-');
  const rule = user ? USER_CAPABILITY_RULES.find((each) => each.meta.id === id) : rulesById.get(id);
  let found: Example[] = [];
  let unreadable: string | undefined;
  try {
    if (rule) found = examples(id, user);
  } catch (error) {
    unreadable = (error as Error).message;
  }

  it('documents a rule and has a "Not ok" and an "Ok" example', () => {
    expect(rule, `no rule ${id}`).toBeDefined();
    expect(unreadable).toBeUndefined();
    expect(found.filter((example) => example.section === 'Not ok').length).toBeGreaterThan(0);
    expect(found.filter((example) => example.section === 'Ok').length).toBeGreaterThan(0);
  });

  it.each(found.map((example) => [`${example.section} example ending on line ${example.line}`, example] as const))('%s', (_, example) => {
    const diagnostics = diagnosticsOf(rule!, example, user);
    const rows = diagnostics.map((d): Row => ({
      file: user ? undefined : d.file,
      line: d.line,
      column: d.column,
      severity: d.severity,
      message: d.message,
      ruleId: d.ruleId,
    }));
    if (example.output) {
      expect(rows).toEqual(example.output.map((row) => ({ ...row, file: user ? undefined : (row.file ?? example.main) })));
    } else {
      expect(rows.filter((row) => row.ruleId === id)).toEqual([]);
    }
  });
});

// The rule registry checks itself (ESLint's build check): every rule in compiler/rules/index.ts is
// in id order, and every rule (those and the user-only ones of compiler/user/rules/) lives in a
// file named after its id, has a docs page and a table test, and carries the metadata the CLI, the
// config loader, the user-capability compiler and the SARIF formatter rely on.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createAjv } from '../../compiler/ajv.js';
import { ruleDocsPath, ruleDocsUrl } from '../../compiler/rule.js';
import { rules, rulesById } from '../../compiler/rules/index.js';
import { USER_CAPABILITY_RULES, USER_REGISTRY_RULES } from '../../compiler/user/compile-user.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const exists = (relative: string): boolean => fs.existsSync(path.join(ROOT, relative));
const ruleFiles = (folder: string): string[] =>
  fs
    .readdirSync(path.join(ROOT, folder))
    .filter((name) => name.endsWith('.ts') && name !== 'index.ts')
    .map((name) => name.slice(0, -'.ts'.length));

/** The rules only user capabilities are checked with, after the registry rules. */
const USER_ONLY_RULES = USER_CAPABILITY_RULES.filter((rule) => !rules.includes(rule));

/** The rules every registry gets by default: their ids are part of the contract (SPEC §3). */
const CONTRACT_RULES = [
  'catalog-references',
  'duplicate-content',
  'foreign-tools',
  'frontmatter-schema',
  'id-matches-folder',
  'links',
  'negative-rules',
  'reference-cycle',
  'retired-tools',
  'state-machine',
  'token-budget',
  'tools-table',
  'toolset-exists',
  'when-to-use',
];

describe('the rule index', () => {
  it('is sorted by id, without duplicates', () => {
    const ids = rules.map((rule) => rule.meta.id);
    expect(ids).toEqual([...ids].sort());
    expect(new Set(ids).size).toBe(ids.length);
    expect(rulesById.size).toBe(ids.length);
  });

  it('has every rule of the contract', () => {
    expect(CONTRACT_RULES.filter((id) => !rulesById.has(id))).toEqual([]);
  });

  it('derives the user-capability rule set from meta.reads, as docs/user-capabilities.md lists it', () => {
    const derived = rules.filter((rule) => rule.meta.reads !== 'git').map((rule) => rule.meta.id);
    expect(USER_REGISTRY_RULES.map((rule) => rule.meta.id)).toEqual(derived);
    const docs = fs.readFileSync(path.join(ROOT, 'docs/user-capabilities.md'), 'utf8');
    const listed = /<!-- user-rules -->([\s\S]*?)<!-- \/user-rules -->/.exec(docs)?.[1] ?? '';
    expect([...listed.matchAll(/`([a-z-]+)`/g)].map((match) => match[1])).toEqual(derived);
  });

  it('lists every rule file in compiler/rules/', () => {
    expect(ruleFiles('compiler/rules').filter((id) => !rulesById.has(id))).toEqual([]);
  });

  it('checks user capabilities with every rule file of compiler/user/rules/, after the registry rules', () => {
    expect(USER_CAPABILITY_RULES.slice(0, USER_REGISTRY_RULES.length)).toEqual(USER_REGISTRY_RULES);
    expect(USER_ONLY_RULES.map((rule) => rule.meta.id).sort()).toEqual(ruleFiles('compiler/user/rules').sort());
    expect(USER_ONLY_RULES.filter((rule) => rulesById.has(rule.meta.id))).toEqual([]);
  });
});

describe.each([
  ...rules.map((rule) => [rule.meta.id, rule, 'compiler/rules'] as const),
  ...USER_ONLY_RULES.map((rule) => [rule.meta.id, rule, 'compiler/user/rules'] as const),
])('rule %s', (id, rule, folder) => {
  it('has an id of lowercase words joined by hyphens', () => {
    expect(id).toMatch(/^[a-z]+(-[a-z]+)*$/);
  });

  it(`lives in ${folder}/<id>.ts, which exports it`, async () => {
    const file = `${folder}/${id}.ts`;
    expect(exists(file), `${file} is missing`).toBe(true);
    const module = (await import(/* @vite-ignore */ path.join(ROOT, file))) as Record<string, unknown>;
    expect(Object.values(module)).toContain(rule);
  });

  it('has docs/rules/<id>.md, titled with its id', () => {
    const docs = ruleDocsPath(id);
    expect(exists(docs), `${docs} is missing`).toBe(true);
    const text = fs.readFileSync(path.join(ROOT, docs), 'utf8');
    expect(text.split('\n')[0]).toBe(`# ${id}`);
    for (const section of ['## Not ok', '## Ok', '## How to fix']) expect(text, `${docs} has no "${section}" section`).toContain(section);
  });

  it('has a table test, test/rules/<id>.test.ts', () => {
    const test = `test/rules/${id}.test.ts`;
    expect(exists(test), `${test} is missing`).toBe(true);
  });

  it('says what it reads (meta.reads); a user-only rule cannot read what only Git has', () => {
    expect(folder === 'compiler/rules' ? ['document', 'catalog', 'bodies', 'git'] : ['document', 'catalog', 'bodies']).toContain(rule.meta.reads);
  });

  it('links its docs page (meta.docs.url)', () => {
    expect(rule.meta.docs.url).toBe(ruleDocsUrl(id));
    expect(rule.meta.docs.url.endsWith(`/${ruleDocsPath(id)}`)).toBe(true);
  });

  it('has a description and messages', () => {
    expect(rule.meta.description.trim()).not.toBe('');
    expect(['error', 'warn']).toContain(rule.meta.defaultLevel);
    const messages = Object.entries(rule.meta.messages);
    expect(messages.length).toBeGreaterThan(0);
    for (const [messageId, template] of messages) expect(template.trim(), `message "${messageId}" is empty`).not.toBe('');
  });

  it('has default options that its options schema accepts', () => {
    const schema = rule.meta.optionsSchema;
    if (!schema) {
      expect(rule.meta.defaultOptions).toEqual({});
      return;
    }
    const validate = createAjv({ strict: false, $data: true }).compile({ ...schema, additionalProperties: false });
    expect(validate(structuredClone(rule.meta.defaultOptions)), JSON.stringify(validate.errors)).toBe(true);
  });
});

import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../compiler/config.js';
import { compileRegistry } from '../../compiler/compile.js';
import { catalogPiece, catalogTokens, tokenBudget } from '../../compiler/rules/token-budget.js';
import { catalogEntry, PROTOCOL_TOOL } from '../../compiler/contract.js';
import { countTokens as countCappedTokens, MAX_COUNTED_WORD } from '../../compiler/tokens.js';
import { protocol, registryInput } from '../support/registry.js';
import { lintWith, ruleTable } from './harness.js';
import { lintWithoutPositions } from './without-positions.js';
import { runs } from '../support/property.js';

// protocol() writes 9 frontmatter lines plus two fences: the body starts on line 11.
const A = 'capabilities/alpha/PROTOCOL.md';
const B = 'capabilities/beta/PROTOCOL.md';
/** `n` + 1 tokens ("word" then " word" …, and the final newline). */
const words = (n: number): string => `${'word '.repeat(n).trim()}\n`;
const small = { bodyWarn: 10, bodyError: 50, catalog: 100_000 };

ruleTable(tokenBudget, {
  valid: [
    { name: 'a small protocol', files: { [A]: protocol({ id: 'alpha' }) } },
    { name: 'exactly at the warning budget', options: small, files: { [A]: protocol({ id: 'alpha' }, words(9)) } },
    {
      name: 'special-token text in a catalog entry and the body is counted as text, not a crash',
      files: { [A]: protocol({ id: 'alpha', description: 'Explains <|endoftext|> markers.' }, 'Never emit <|endoftext|> yourself.\n') },
    },
    { name: 'empty body, broken frontmatter', options: { ...small, catalog: 1000 }, files: { [A]: '---\nid: [\n---\n', [B]: '' } },
  ],
  invalid: [
    {
      name: 'over the default warning budget',
      files: { [A]: protocol({ id: 'alpha' }, `\n\n${words(2100)}`) },
      errors: [
        {
          messageId: 'bodyWarn',
          line: 13,
          column: 1,
          severity: 'warning',
          message: 'protocol body is 2102 tokens, over the budget of 2000 (`bodyWarn`); every load pays for it',
        },
      ],
    },
    {
      name: 'over the default error limit: an error even though the rule is a warning',
      files: { [A]: protocol({ id: 'alpha' }, words(5100)) },
      errors: [
        {
          messageId: 'bodyError',
          line: 11,
          column: 1,
          severity: 'error',
          message: 'protocol body is 5101 tokens, over the limit of 5000 (`bodyError`); split the capability',
        },
      ],
    },
    {
      name: 'custom budgets, Chinese text',
      options: small,
      files: {
        [A]: protocol({ id: 'alpha' }, `# 标题\n\n${'不要猜测。'.repeat(3)}\n`),
        [B]: protocol({ id: 'beta' }, `${'不要猜测。'.repeat(20)}\n`),
      },
      errors: [
        { messageId: 'bodyWarn', file: A, line: 11, column: 1, endLine: 14, endColumn: 1, severity: 'warning', message: 'over the budget of 10 (`bodyWarn`)' },
        { messageId: 'bodyError', file: B, line: 11, column: 1, severity: 'error', message: 'over the limit of 50 (`bodyError`)' },
      ],
    },
    {
      name: 'level error makes the soft budget an error too',
      level: 'error',
      options: small,
      files: { [A]: protocol({ id: 'alpha' }, words(20)) },
      errors: [{ messageId: 'bodyWarn', line: 11, column: 1, severity: 'error', message: 'protocol body is 21 tokens, over the budget of 10' }],
    },
    {
      name: 'level warn keeps the hard limit an error',
      level: 'warn',
      options: small,
      files: { [A]: protocol({ id: 'alpha' }, words(60)) },
      errors: [{ messageId: 'bodyError', line: 11, column: 1, severity: 'error', message: 'over the limit of 50' }],
    },
    {
      name: 'the catalog over budget: once, at the largest entry, at its bigger field',
      options: { ...small, catalog: 60 },
      files: {
        [A]: protocol({ id: 'alpha' }),
        [B]: protocol({ id: 'beta', whenToUse: ['write my daily report', 'write my weekly report', 'summarize my month'] }),
      },
      errors: [
        {
          messageId: 'catalog',
          file: B,
          line: 5,
          column: 1,
          severity: 'warning',
          message:
            /^the catalog \(2 entries of `list_capabilities`\) is \d+ tokens, over the budget of 60 \(`catalog`\); every listing pays for it\. The largest entry is this one \(\d+ tokens\)/,
        },
      ],
    },
    {
      name: 'the catalog counts capabilities whose frontmatter failed the schema',
      options: { ...small, catalog: 20 },
      files: { [A]: `---\nid: alpha\ndescription: ${words(30)}---\n` },
      errors: [{ messageId: 'catalog', file: A, line: 3, column: 1, severity: 'warning', message: 'the catalog (1 entry of `list_capabilities`) is' }],
    },
  ],
});

describe('token-budget options', () => {
  it('counts the catalog as the JSON an agent receives', () => {
    const input = registryInput({ [A]: protocol({ id: 'alpha' }) });
    const entry = {
      id: 'alpha',
      name: 'Capability alpha',
      description: 'Does alpha things.',
      whenToUse: ['use alpha'],
      protocolTool: 'get_capability_protocol',
      protocolInput: { capabilityId: 'alpha' },
      protocolVersion: '1.0.0',
    };
    const tokens = countTokens(JSON.stringify([entry]));
    const config = parseConfig(`rules:\n  token-budget: [warn, {catalog: ${tokens - 1}}]\n`);
    const over = compileRegistry(input, { config, rules: [tokenBudget] }).diagnostics;
    expect(over.map((d) => d.message)).toEqual([expect.stringContaining(`is ${tokens} tokens, over the budget of ${tokens - 1}`)]);
    const atBudget = parseConfig(`rules:\n  token-budget: [warn, {catalog: ${tokens}}]\n`);
    expect(compileRegistry(input, { config: atBudget, rules: [tokenBudget] }).diagnostics).toEqual([]);
  });

  it('counts a catalog of several entries as the whole JSON, exactly', () => {
    const alpha: { description: string; whenToUse: string[]; tags?: string[] } = {
      description: "Doesn't guess: it's 3,141 steps.",
      whenToUse: ['write  my report '],
    };
    const beta = { description: '写周报。', whenToUse: ['use beta'], tags: ['x'] };
    const input = registryInput({ [A]: protocol({ id: 'alpha', ...alpha }), [B]: protocol({ id: 'beta', ...beta }) });
    const served = [
      { id: 'alpha', name: 'Capability alpha', ...alpha },
      { id: 'beta', name: 'Capability beta', ...beta },
    ].map(({ id, name, description, whenToUse, tags }) => catalogEntry({ id, name, description, whenToUse, protocolVersion: '1.0.0', tags }, PROTOCOL_TOOL));
    const tokens = countTokens(JSON.stringify(served));
    expect(lintWith(tokenBudget, input, { catalog: 1 }).map((d) => d.message)).toEqual([expect.stringContaining(`is ${tokens} tokens, over the budget of 1`)]);
  });

  it('adds up the catalog from one piece per entry to the count of the whole JSON (property)', () => {
    // Words, digits, quotes, apostrophes (contractions), combining marks, line breaks, and runs
    // without whitespace and of whitespace longer than MAX_COUNTED_WORD, which the count cuts into pieces.
    const text = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: fc.constantFrom('a', 's', 'Z', ' ', "'", '"', '0', '9', '{', '}', ',', '\u0301', '\n', '语'), maxLength: 30 }),
      fc.constantFrom(
        '',
        ' ',
        "it's",
        '"}',
        'x'.repeat(MAX_COUNTED_WORD - 40),
        'y'.repeat(MAX_COUNTED_WORD + 5),
        ' '.repeat(MAX_COUNTED_WORD + 5),
        '3,141',
        'é\u0301',
      ),
    );
    const entry = fc.record({
      id: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
      name: text,
      description: text,
      whenToUse: fc.array(text, { maxLength: 3 }),
      protocolVersion: fc.constantFrom('1.0.0', ''),
      lifecyclePhase: fc.option(fc.constantFrom('stable', 'beta'), { nil: undefined }),
      tags: fc.option(fc.array(text, { maxLength: 3 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 8 }), (facts) => {
        const entries = facts.map((each) => catalogEntry(each, PROTOCOL_TOOL));
        expect(catalogTokens(entries.map((each) => catalogPiece(JSON.stringify(each))))).toBe(countCappedTokens(JSON.stringify(entries)));
      }),
      { numRuns: runs(300) },
    );
  });

  it('validates options: positive integers, bodyWarn <= bodyError', () => {
    expect(parseConfig('rules:\n  token-budget: [warn, {bodyWarn: 3000, bodyError: 3000}]\n').rules.get('token-budget')?.options).toEqual({
      bodyWarn: 3000,
      bodyError: 3000,
      catalog: 8000,
    });
    expect(() => parseConfig('rules:\n  token-budget: [warn, {bodyWarn: 6000}]\n')).toThrow(/token-budget.*bodyWarn must be <= 5000/);
    expect(() => parseConfig('rules:\n  token-budget: [warn, {bodyWarn: 0}]\n')).toThrow(ConfigError);
    expect(() => parseConfig('rules:\n  token-budget: [warn, {catalog: 1.5}]\n')).toThrow(/catalog must be integer/);
    expect(() => parseConfig('rules:\n  token-budget: [warn, {bodyWarm: 10}]\n')).toThrow(/unknown option "bodyWarm".*did you mean "bodyWarn"/);
  });
});

describe('token-budget documented example and without positions', () => {
  const steps = Array.from(
    { length: 300 },
    (_, i) => `Step ${i + 1}: read the entries of the period, group them by project, and write one line per project.\n`,
  ).join('\n');
  const files = {
    [A]: protocol(
      { id: 'work-reporting', name: 'Work reporting', description: 'Writes reports from the work log.', whenToUse: ['write my weekly report'] },
      `# Work reporting\n\nNever guess.\n\n${steps}\n`,
    ),
  };

  it('prints what docs/rules/token-budget.md shows', () => {
    expect(lintWith(tokenBudget, registryInput(files)).map((d) => `${d.line}:${d.column} ${d.severity} ${d.message}`)).toEqual([
      '11:1 error protocol body is 6907 tokens, over the limit of 5000 (`bodyError`); split the capability along a seam and link the parts with `capability:` links',
    ]);
    expect(
      lintWith(tokenBudget, registryInput(files), { bodyWarn: 1500, bodyError: 8000, catalog: 30 }).map(
        (d) => `${d.line}:${d.column} ${d.severity} ${d.message}`,
      ),
    ).toEqual([
      '4:1 warning the catalog (1 entry of `list_capabilities`) is 62 tokens, over the budget of 30 (`catalog`); every listing pays for it. The largest entry is this one (60 tokens): keep `description` to one or two sentences and `whenToUse` to the phrases users really say',
      '11:1 warning protocol body is 6907 tokens, over the budget of 1500 (`bodyWarn`); every load pays for it: cut what a capable model would do anyway, or split the capability along a seam and link the parts with `capability:` links',
    ]);
  });

  it('does not crash when the parser gives no positions', () => {
    expect(lintWithoutPositions(tokenBudget, files).length).toBe(1);
  });
});

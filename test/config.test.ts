// capreg.config.yaml: levels, [level, options], limits, and a ConfigError with file:line:column for
// every way the file can be wrong.
import { describe, expect, it } from 'vitest';
import { CONFIG_FILE, ConfigError, DEFAULT_MAX_FILE_BYTES, defaultConfig, parseConfig } from '../compiler/config.js';
import type { AnyRule, Rule } from '../compiler/rule.js';
import { rules, rulesById } from '../compiler/rules/index.js';

interface FakeOptions {
  limit: number;
  words: string[];
}

const withOptions: Rule<FakeOptions> = {
  meta: {
    id: 'fake-budget',
    description: 'A rule with options.',
    defaultLevel: 'warn',
    reads: 'document',
    docs: { url: 'https://example.com/fake-budget' },
    optionsSchema: {
      type: 'object',
      properties: {
        limit: { type: 'integer', minimum: 1 },
        words: { type: 'array', items: { type: 'string' }, minItems: 1 },
      },
    },
    defaultOptions: { limit: 10, words: ['never'] },
    messages: { over: 'over {{limit}}' },
  },
  check() {},
};

const withoutOptions: Rule = {
  meta: {
    id: 'fake-shape',
    description: 'A rule without options.',
    defaultLevel: 'error',
    reads: 'document',
    docs: { url: 'https://example.com/fake-shape' },
    defaultOptions: {},
    messages: { bad: 'bad' },
  },
  check() {},
};

const FAKE_RULES: ReadonlyMap<string, AnyRule> = new Map<string, AnyRule>([
  ['fake-budget', withOptions],
  ['fake-shape', withoutOptions],
]);

const parse = (text: string): ReturnType<typeof parseConfig> => parseConfig(text, CONFIG_FILE, FAKE_RULES);

/** The ConfigError a text throws, as `file:line:column: message`. */
function configError(text: string, ruleTable: ReadonlyMap<string, AnyRule> = FAKE_RULES): ConfigError {
  try {
    parseConfig(text, CONFIG_FILE, ruleTable);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`no ConfigError for:\n${text}`);
}

describe('parseConfig: valid settings', () => {
  it('gives every rule its default level and options when there is no setting', () => {
    for (const text of ['', '# nothing yet\n', 'rules: {}\n']) {
      const config = parse(text);
      expect(config.rules.get('fake-budget')).toEqual({ level: 'warn', options: { limit: 10, words: ['never'] } });
      expect(config.rules.get('fake-shape')).toEqual({ level: 'error', options: {} });
      expect(config.maxFileBytes).toBe(DEFAULT_MAX_FILE_BYTES);
    }
  });

  it('covers the real rule table by default', () => {
    const config = defaultConfig();
    expect([...config.rules.keys()]).toEqual(rules.map((rule) => rule.meta.id));
    for (const rule of rules) expect(config.rules.get(rule.meta.id)?.level).toBe(rule.meta.defaultLevel);
  });

  it('sets levels: off, warn, error (off is a string, not YAML 1.1 false)', () => {
    const config = parse('rules:\n  fake-budget: off\n  fake-shape: warn\n');
    expect(config.rules.get('fake-budget')?.level).toBe('off');
    expect(config.rules.get('fake-shape')).toEqual({ level: 'warn', options: {} });
    expect(parse('rules:\n  fake-budget: error\n').rules.get('fake-budget')?.level).toBe('error');
  });

  it('takes [level] and [level, options], merging options over the defaults', () => {
    expect(parse('rules:\n  fake-shape: [warn]\n').rules.get('fake-shape')).toEqual({ level: 'warn', options: {} });
    expect(parse('rules:\n  fake-budget: [error, { limit: 3 }]\n').rules.get('fake-budget')).toEqual({
      level: 'error',
      options: { limit: 3, words: ['never'] },
    });
    expect(parse('rules:\n  fake-budget:\n    - warn\n    - words: [不要, do not]\n').rules.get('fake-budget')?.options).toEqual({
      limit: 10,
      words: ['不要', 'do not'],
    });
  });

  it('does not share option objects between configs', () => {
    const first = parse('');
    (first.rules.get('fake-budget')?.options as FakeOptions).words.push('changed');
    expect(parse('').rules.get('fake-budget')?.options).toEqual({ limit: 10, words: ['never'] });
    expect(withOptions.meta.defaultOptions.words).toEqual(['never']);
  });

  it('sets limits.maxFileBytes', () => {
    expect(parse('limits:\n  maxFileBytes: 4096\n').maxFileBytes).toBe(4096);
  });

  it('sets the registry limits, each up to its ceiling, and keeps the defaults of the others', () => {
    const config = parse('limits:\n  maxFiles: 1000000\n  maxTotalBytes: 1073741824\n  maxFileBytes: 67108864\n');
    expect([config.maxFiles, config.maxTotalBytes, config.maxFileBytes, config.maxParseMs]).toEqual([1_000_000, 1024 ** 3, 64 * 1024 ** 2, 10_000]);
    expect([parse('').maxFiles, parse('').maxTotalBytes]).toEqual([100_000, 128 * 1024 ** 2]);
  });

  it('accepts options for a real rule with an options schema', () => {
    const withSchema = rules.find((rule) => rule.meta.optionsSchema !== undefined);
    expect(withSchema).toBeDefined();
    const config = parseConfig(`rules:\n  ${withSchema!.meta.id}: [warn, {}]\n`);
    expect(config.rules.get(withSchema!.meta.id)).toEqual({ level: 'warn', options: withSchema!.meta.defaultOptions as unknown });
  });
});

describe('parseConfig: errors name the file, line and column and say what is expected', () => {
  const cases: { name: string; text: string; message: string }[] = [
    {
      name: 'an unknown rule, with "did you mean"',
      text: 'rules:\n  fake-budgit: warn\n',
      message: 'capreg.config.yaml:2:3: unknown rule "fake-budgit"; did you mean "fake-budget"?',
    },
    {
      name: 'an unknown rule with no near miss lists the rules',
      text: 'rules:\n  spelling: warn\n',
      message: 'capreg.config.yaml:2:3: unknown rule "spelling"; the rules are fake-budget, fake-shape',
    },
    {
      name: 'a bad level, with "did you mean"',
      text: 'rules:\n  fake-shape: wran\n',
      message: 'capreg.config.yaml:2:15: level of rule "fake-shape" must be one of off, warn, error, not "wran"; did you mean "warn"?',
    },
    {
      name: 'a numeric level (ESLint habit)',
      text: 'rules:\n  fake-shape: 2\n',
      message: 'capreg.config.yaml:2:15: level of rule "fake-shape" must be one of off, warn, error, not 2',
    },
    {
      name: 'a bad level inside [level, options], at the level',
      text: 'rules:\n  fake-budget: [warning, { limit: 3 }]\n',
      message: 'capreg.config.yaml:2:17: level of rule "fake-budget" must be one of off, warn, error, not "warning"; did you mean "warn"?',
    },
    {
      name: 'an empty list',
      text: 'rules:\n  fake-shape: []\n',
      message: 'capreg.config.yaml:2:15: rule "fake-shape" takes a level or [level, options]',
    },
    {
      name: 'three items',
      text: 'rules:\n  fake-budget: [warn, {}, {}]\n',
      message: 'capreg.config.yaml:2:16: rule "fake-budget" takes a level or [level, options]',
    },
    {
      name: 'options for a rule that takes none',
      text: 'rules:\n  fake-shape: [warn, { limit: 3 }]\n',
      message: 'capreg.config.yaml:2:22: rule "fake-shape" takes no options; set only its level, e.g. `fake-shape: warn`',
    },
    {
      name: 'an unknown option, with "did you mean"',
      text: 'rules:\n  fake-budget: [warn, { limt: 3 }]\n',
      message: 'capreg.config.yaml:2:23: rule "fake-budget": unknown option "limt"; did you mean "limit"?',
    },
    {
      name: 'an option of the wrong type, at the option',
      text: 'rules:\n  fake-budget: [warn, { limit: lots }]\n',
      message: 'capreg.config.yaml:2:32: rule "fake-budget": option limit must be integer',
    },
    {
      name: 'an option out of range',
      text: 'rules:\n  fake-budget:\n    - warn\n    - limit: 0\n',
      message: 'capreg.config.yaml:4:14: rule "fake-budget": option limit must be >= 1',
    },
    {
      name: 'an item of an option of the wrong type',
      text: 'rules:\n  fake-budget: [warn, { words: [never, 3] }]\n',
      message: 'capreg.config.yaml:2:40: rule "fake-budget": option words/1 must be string',
    },
    {
      name: 'options that are not a mapping',
      text: 'rules:\n  fake-budget: [warn, 5]\n',
      message: 'capreg.config.yaml:2:23: rule "fake-budget": options must be a mapping',
    },
    {
      name: 'an unknown top-level key, with "did you mean"',
      text: 'rules: {}\nlimit:\n  maxFileBytes: 10\n',
      message: 'capreg.config.yaml:2:1: unknown setting "limit" (expected one of rules, limits); did you mean "limits"?',
    },
    {
      name: 'an unknown limit',
      text: 'limits:\n  maxFileSize: 10\n',
      message:
        'capreg.config.yaml:2:3: unknown limit "maxFileSize" (expected one of maxFileBytes, maxParseMs, maxFiles, maxTotalBytes); did you mean "maxFiles"?',
    },
    {
      name: 'limits.maxFileBytes that is not a whole number',
      text: 'limits:\n  maxFileBytes: 1.5\n',
      message: 'capreg.config.yaml:2:17: `limits.maxFileBytes` must be a whole number of bytes from 1 to 67108864',
    },
    {
      name: 'limits.maxFileBytes zero',
      text: 'limits:\n  maxFileBytes: 0\n',
      message: 'capreg.config.yaml:2:17: `limits.maxFileBytes` must be a whole number of bytes from 1 to 67108864',
    },
    {
      name: 'limits.maxFileBytes as a string',
      text: 'limits:\n  maxFileBytes: 1MiB\n',
      message: 'capreg.config.yaml:2:17: `limits.maxFileBytes` must be a whole number of bytes from 1 to 67108864',
    },
    {
      name: 'limits.maxFileBytes over its ceiling (a pull request edits the config too)',
      text: 'limits:\n  maxFileBytes: 67108865\n',
      message: 'capreg.config.yaml:2:17: `limits.maxFileBytes` must be a whole number of bytes from 1 to 67108864',
    },
    {
      name: 'limits.maxFiles over its ceiling',
      text: 'limits:\n  maxFiles: 1000001\n',
      message: 'capreg.config.yaml:2:13: `limits.maxFiles` must be a whole number of files from 1 to 1000000',
    },
    {
      name: 'limits.maxTotalBytes zero',
      text: 'limits:\n  maxTotalBytes: 0\n',
      message: 'capreg.config.yaml:2:18: `limits.maxTotalBytes` must be a whole number of bytes from 1 to 1073741824',
    },
    {
      name: 'limits.maxParseMs over its ceiling',
      text: 'limits:\n  maxParseMs: 600001\n',
      message: 'capreg.config.yaml:2:15: `limits.maxParseMs` must be a whole number of milliseconds from 1 to 600000',
    },
    { name: 'limits that is not a mapping', text: 'limits: 1048576\n', message: 'capreg.config.yaml:1:9: `limits` must be a mapping' },
    { name: 'rules that is a list', text: 'rules:\n  - fake-shape\n', message: 'capreg.config.yaml:2:3: `rules` must be a mapping of rule id to level' },
    { name: 'a config that is a list', text: '- rules\n', message: 'capreg.config.yaml:1:1: the configuration must be a YAML mapping' },
    {
      name: 'broken YAML',
      text: 'rules:\n  fake-shape: [warn\n',
      message: 'capreg.config.yaml:3:1: invalid YAML: flow sequence in block collection must be sufficiently indented and end with a ]',
    },
    {
      name: 'a duplicate rule',
      text: 'rules:\n  fake-shape: warn\n  fake-shape: off\n',
      message: 'capreg.config.yaml:3:3: duplicate key "fake-shape": a key may appear only once in a mapping',
    },
    {
      name: 'tab indentation',
      text: 'rules:\n\tfake-shape: warn\n',
      message: 'capreg.config.yaml:2:1: invalid YAML: tab characters are not allowed for indentation in YAML; indent with spaces',
    },
    {
      name: 'a __proto__ key',
      text: 'rules:\n  __proto__: { polluted: yes }\n',
      message: 'capreg.config.yaml:2:3: key "__proto__" is not allowed: it could change object prototypes; rename it',
    },
  ];

  for (const testCase of cases) {
    it(testCase.name, () => {
      const error = configError(testCase.text);
      expect(error.message).toBe(testCase.message);
      expect(error.file).toBe(CONFIG_FILE);
      expect(`${CONFIG_FILE}:${error.range.line}:${error.range.column}`).toBe(testCase.message.split(': ')[0]);
    });
  }

  it('counts columns after a byte order mark as an editor does', () => {
    expect(configError('\uFEFFrule: {}\r\n').message).toMatch(/^capreg\.config\.yaml:1:1: unknown setting "rule"/);
    expect(parse('\uFEFFrules:\r\n  fake-shape: warn\r\n').rules.get('fake-shape')?.level).toBe('warn');
  });

  it('an alias bomb is refused', () => {
    const bomb = 'a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n';
    expect(configError(bomb).message).toBe(
      'capreg.config.yaml:2:8: YAML aliases expand too much (over 100 alias expansions); write the values out instead of anchors',
    );
  });

  it('names the file it was given', () => {
    expect(configError('rule: {}\n').message).toMatch(/^capreg\.config\.yaml:1:1: /);
    try {
      parseConfig('rule: {}\n', 'sub/capreg.config.yaml', FAKE_RULES);
    } catch (error) {
      expect((error as ConfigError).message).toMatch(/^sub\/capreg\.config\.yaml:1:1: unknown setting "rule"/);
    }
  });

  it('leaves Object.prototype alone', () => {
    configError('rules:\n  __proto__: { polluted: yes }\n');
    configError('constructor:\n  prototype: { polluted: yes }\n');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('uses the options schema of the rule it is given, not another rule of the same id', () => {
    const other: Rule<{ size: number }> = {
      meta: { ...withOptions.meta, optionsSchema: { type: 'object', properties: { size: { type: 'integer' } } }, defaultOptions: { size: 1 } },
      check() {},
    };
    parse('rules:\n  fake-budget: [warn, { limit: 3 }]\n');
    const config = parseConfig('rules:\n  fake-budget: [warn, { size: 3 }]\n', CONFIG_FILE, new Map([['fake-budget', other as AnyRule]]));
    expect(config.rules.get('fake-budget')?.options).toEqual({ size: 3 });
  });

  it('refuses YAML nested over the limit (a line of ": : :" then an indented line) at its position', () => {
    expect(configError(`${': '.repeat(2048)}\n  y\n`).message).toBe(
      'capreg.config.yaml:1:129: YAML nested more than 64 levels deep (mappings, lists and brackets, aliases expanded); flatten the structure',
    );
    expect(configError(`rules: ${'['.repeat(300)}${']'.repeat(300)}\n`).message).toMatch(/^capreg\.config\.yaml:1:71: YAML nested more than 64 levels/);
  });

  it('refuses values JSON cannot hold instead of rewriting them', () => {
    expect(configError('limits:\n  maxFileBytes: !!binary aGVsbG8=\n').message).toMatch(/^capreg\.config\.yaml:2:26: YAML tag !!binary is not allowed/);
    expect(configError('limits:\n  maxFileBytes: .inf\n').message).toMatch(/^capreg\.config\.yaml:2:17: \.inf is not a finite number/);
    expect(configError('rules:\n  1: off\n').message).toBe('capreg.config.yaml:2:3: a key must be text, not the number 1; quote it: "1"');
    // A rule option YAML would round (1e20) rather than read: refused where it is written.
    expect(configError('rules:\n  token-budget: [warn, {bodyError: 99999999999999999999}]\n').message).toMatch(
      /^capreg\.config\.yaml:2:36: 99999999999999999999 is a whole number too large to be read exactly \(it would become 100000000000000000000;/,
    );
  });

  it('rejects unknown rules of the real table too', () => {
    expect(configError('rules:\n  frontmatter-shema: off\n', rulesById).message).toBe(
      'capreg.config.yaml:2:3: unknown rule "frontmatter-shema"; did you mean "frontmatter-schema"?',
    );
  });
});

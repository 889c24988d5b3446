// The one YAML reader (frontmatter, toolsets.yaml, capreg.config.yaml, principals): nesting is
// limited before the library's recursive parser can overflow, the verdict does not depend on how
// much stack the caller used, and only JSON-compatible YAML is read (no tag or value is rewritten).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineIndex } from '../compiler/positions.js';
import { MAX_ALIAS_COUNT, MAX_YAML_DEPTH, MAX_YAML_ERRORS, MAX_YAML_VALUES, parseYamlSource, type YamlSource } from '../compiler/yaml-source.js';
import { runs } from './support/property.js';

function read(text: string): YamlSource {
  return parseYamlSource(text, new LineIndex(text));
}

/** The problems as `line:column code` lines, for compact assertions. */
function problems(text: string): string[] {
  return read(text).problems.map((p) => `${p.range.line}:${p.range.column} ${p.code}`);
}

/** Runs `fn` with most of the stack already used, like a caller deep in its own recursion. */
function withStackUsed<T>(fn: () => T): T {
  let max = 0;
  const measure = (n: number): void => {
    max = n;
    measure(n + 1);
  };
  try {
    measure(0);
  } catch {
    // `max` is how many frames this stack holds.
  }
  const descend = (n: number): T => (n > 0 ? descend(n - 1) : fn());
  return descend(Math.floor(max * 0.75));
}

const flowMaps = (levels: number): string => `a: ${'{a: '.repeat(levels)}1${'}'.repeat(levels)}\n`;
const flowSeqs = (levels: number): string => `a: ${'['.repeat(levels)}${']'.repeat(levels)}\n`;
const indented = (levels: number): string => `${Array.from({ length: levels }, (_, i) => `${' '.repeat(i)}k:`).join('\n')} 1\n`;

describe('nesting limit', () => {
  it.each([
    ['a 4 KB line of ": : :" followed by an indented line', `${': '.repeat(2048)}\n  y\n`, '1:129'],
    ['a key, then 8,000 colons', `x: ${': '.repeat(8000)}\n  y\n`, '1:130'],
    ['400 nested flow mappings', flowMaps(400), '1:256'],
    ['3,000 nested flow lists', flowSeqs(3000), '1:67'],
    ['3,000 nested block mappings by indentation', indented(3000), `${MAX_YAML_DEPTH + 1}:${MAX_YAML_DEPTH + 1}`],
    ['5,000 compact list items on one line', `${'- '.repeat(5000)}x\n`, '1:129'],
    ['5,000 explicit keys on one line', `${'? '.repeat(5000)}x\n`, '1:129'],
    ['nesting inside a frontmatter-like mapping', `id: a\nmetadata: ${'['.repeat(500)}${']'.repeat(500)}\n`, '2:74'],
  ])('refuses %s with one positioned problem', (_name, text, at) => {
    expect(problems(text)).toEqual([`${at} yaml-depth`]);
    expect(read(text).problems[0]!.message).toBe(
      `YAML nested more than ${MAX_YAML_DEPTH} levels deep (mappings, lists and brackets, aliases expanded); flatten the structure`,
    );
    expect(read(text).data).toBeUndefined();
  });

  it(`reads nesting up to ${MAX_YAML_DEPTH} levels, the innermost value included, and refuses one more`, () => {
    // `a: [[…]]`: the top-level mapping and the lists; `k:\n k:\n … 1`: the mappings and the 1.
    expect(read(flowSeqs(MAX_YAML_DEPTH - 1)).problems).toEqual([]);
    expect(problems(flowSeqs(MAX_YAML_DEPTH))).toEqual([`1:${MAX_YAML_DEPTH + 3} yaml-depth`]);
    expect(read(indented(MAX_YAML_DEPTH - 1)).problems).toEqual([]);
    expect(problems(indented(MAX_YAML_DEPTH))).toEqual([`${MAX_YAML_DEPTH}:${MAX_YAML_DEPTH + 3} yaml-depth`]);
  });

  it('counts the depth that aliases expand to, and refuses a recursive alias', () => {
    const deep = (levels: number, inner: string): string => `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`;
    const ok = `a: &a ${deep(30, '1')}\nb: ${deep(30, '*a')}\n`;
    expect(read(ok).problems).toEqual([]);
    const tooDeep = `a: &a ${deep(40, '1')}\nb: ${deep(40, '*a')}\n`;
    expect(problems(tooDeep)).toEqual(['2:44 yaml-depth']);
    expect(problems('a: &x [*x]\n')).toEqual(['1:8 non-json']);
  });

  // Found by an attack pass: these were reported as "YAML aliases expand too much (over 100 alias
  // expansions)", at the document's first alias.
  it('says an alias without an anchor before it is one, at the alias', () => {
    expect(problems('a: 1\nb: *nope\n')).toEqual(['2:4 yaml-syntax']);
    expect(read('b: *later\nc: &later 1\n').problems[0]?.message).toBe(
      'invalid YAML: the alias *later names no anchor before it; write &later on a value above it, or write the value out',
    );
    expect(problems('a: &x 1\nb: *x\nc: *y\n')).toEqual(['3:4 yaml-syntax']);
  });

  it('refuses aliases that make the value much larger than the text, whatever the alias count', () => {
    // 99 aliases of one scalar: within the alias count, and 99 copies of the scalar.
    const fanOut = (scalar: string, aliases: number): string =>
      `k0: &big "${scalar}"\n${Array.from({ length: aliases }, (_, i) => `k${i + 1}: *big\n`).join('')}`;
    const big = fanOut('w '.repeat(50_000), 99);
    expect(problems(big)).toEqual(['2:5 alias-limit']);
    expect(read(big).problems[0]?.message).toMatch(
      /^YAML aliases expand this text to over \d+ characters, more than twice its own length; write the values out/,
    );
    expect(read(big).data).toBeUndefined();
    // Sharing a short list, as a toolsets file might, is fine.
    const shared = `a: &states [PENDING, DONE, FAILED]\n${Array.from({ length: 90 }, (_, i) => `t${i}: *states\n`).join('')}`;
    expect(read(shared).problems).toEqual([]);
    expect(read(fanOut('w '.repeat(200), 99)).problems).toEqual([]);
  });

  it('does not count the text of block scalars, quoted strings and comments', () => {
    const text = Array.from({ length: 200 }, (_, i) => `k${i}: |\n  - a: b: [[[[ - ? :\nq${i}: "x: [[[ - - -"  # - - - [[[\n`).join('');
    const source = read(text);
    expect(source.problems).toEqual([]);
    expect((source.data as Record<string, string>).k199).toBe('- a: b: [[[[ - ? :\n');
  });

  it('gives the same verdict with most of the stack already used (the 400-level file of the issue)', () => {
    for (const text of [flowMaps(400), flowMaps(60), `${': '.repeat(2048)}\n  y\n`, indented(1000)]) {
      const fresh = read(text);
      expect(withStackUsed(() => read(text))).toEqual(fresh);
      expect(read(text)).toEqual(fresh);
    }
  });

  it(`reports at most ${MAX_YAML_ERRORS} syntax errors and how many more there are`, () => {
    const source = read(Array.from({ length: 100 }, (_, i) => `k${i}: @x`).join('\n'));
    expect(source.problems).toHaveLength(MAX_YAML_ERRORS + 1);
    expect(source.problems[MAX_YAML_ERRORS]!.message).toBe(`invalid YAML: ${100 - MAX_YAML_ERRORS} more errors not shown; fix the first ones and run again`);
  });

  it('finds duplicate keys in time linear in the keys (the library check is quadratic)', () => {
    const keys = Array.from({ length: 30_000 }, (_, i) => `k${i}: v`);
    const started = Date.now();
    const source = read(`${keys.join('\n')}\nk7: again\n`);
    // Generous: about 2 s here on a loaded machine; the library's own check took over 20 s.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(source.problems.map((p) => `${p.range.line}:${p.range.column} ${p.message}`)).toEqual([
      '30001:1 duplicate key "k7": a key may appear only once in a mapping',
    ]);
  });
});

describe('value limit', () => {
  // `a` and `[` count, then each item: MAX_YAML_VALUES values in all, or one more.
  const flowItems = (count: number): string => `a: [${Array.from({ length: count - 2 }, () => '1').join(',')}]\n`;
  const blockItems = (count: number): string => `${'-\n'.repeat(count)}`;

  it('reads a text of exactly the limit, and refuses one value more at that value', () => {
    expect(read(flowItems(MAX_YAML_VALUES)).problems).toEqual([]);
    expect(problems(flowItems(MAX_YAML_VALUES + 1))).toEqual([`1:${5 + 2 * (MAX_YAML_VALUES - 2)} yaml-size`]);
    // Empty list items are values too (each a null), one per two bytes.
    expect(read(blockItems(MAX_YAML_VALUES)).problems).toEqual([]);
    expect(problems(blockItems(MAX_YAML_VALUES + 1))).toEqual([`${MAX_YAML_VALUES + 1}:1 yaml-size`]);
  });

  it('keys, quoted scalars and aliases count', () => {
    const keys = Array.from({ length: MAX_YAML_VALUES / 2 }, (_, i) => `k${i}: "v"`).join('\n');
    expect(read(`${keys}\n`).problems).toEqual([]);
    expect(problems(`${keys}\nlast: 1\n`)).toEqual([`${MAX_YAML_VALUES / 2 + 1}:1 yaml-size`]);
    expect(read('a: &x 1\nb: *x\n').data).toEqual({ a: 1, b: 1 });
    expect(parseYamlSource('a: [*x, *x]', new LineIndex('a: [*x, *x]'), { maxValues: 3 }).problems.map((p) => p.code)).toEqual(['yaml-size']);
  });
});

describe('only JSON-compatible YAML', () => {
  it.each([
    ['!!omap', 'a: !!omap\n  - x: 1\n', '2:3', 'YAML tag !!omap is not allowed'],
    ['!!set', 'a: !!set\n  x:\n', '2:3', 'YAML tag !!set is not allowed'],
    ['!!binary', 'a: !!binary aGVsbG8=\n', '1:13', 'YAML tag !!binary is not allowed'],
    ['!!pairs', 'a: !!pairs\n  - x: 1\n', '2:3', 'YAML tag !!pairs is not allowed'],
    ['!!timestamp', 'a: !!timestamp 2026-02-01\n', '1:16', 'YAML tag !!timestamp is not allowed'],
    ['a custom tag', 'a: !vendor bar\n', '1:12', 'YAML tag !vendor is not allowed'],
    ['a %TAG shorthand', '%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n', '3:9', 'YAML tag tag:example.com,2000:x is not allowed'],
    ['a tag on a mapping', 'a: !vendor {b: 1}\n', '1:12', 'YAML tag !vendor is not allowed'],
    ['.nan', 'a: .nan\n', '1:4', '.nan is not a finite number'],
    ['-.inf', 'a: [1, -.inf]\n', '1:8', '-.inf is not a finite number'],
    ['!!float .inf', 'a: !!float .inf\n', '1:12', '.inf is not a finite number'],
    [
      'an integer past 2^53',
      'a: 99999999999999999999\n',
      '1:4',
      '99999999999999999999 is a whole number too large to be read exactly (it would become 100000000000000000000',
    ],
    ['a negative one', 'a: [-9007199254740993]\n', '1:5', '-9007199254740993 is a whole number too large'],
    ['a hexadecimal one', 'a: 0x20000000000001\n', '1:4', '0x20000000000001 is a whole number too large'],
    ['a number key', '1: a\n', '1:1', 'a key must be text, not the number 1; quote it: "1"'],
    ['a boolean key', 'a:\n  true: b\n', '2:3', 'a key must be text, not the boolean true; quote it: "true"'],
    ['a null key', 'null: a\n', '1:1', 'a key must be text, not null'],
    ['a list key', '? [x]\n: a\n', '1:3', 'a key must be text, not a list'],
    ['a mapping key', '? {x: 1}\n: a\n', '1:3', 'a key must be text, not a mapping'],
    ['a %YAML 1.1 document', '%YAML 1.1\n---\na: yes\n', '1:1', 'YAML 1.1 is not read'],
  ])('refuses %s with one positioned problem and no data', (_name, text, at, message) => {
    const source = read(text);
    expect(source.problems).toHaveLength(1);
    expect(`${source.problems[0]!.range.line}:${source.problems[0]!.range.column}`).toBe(at);
    expect(source.problems[0]!.code).toBe('non-json');
    expect(source.problems[0]!.message).toContain(message);
    expect(source.data).toBeUndefined();
  });

  it('reports every non-JSON node, one problem each', () => {
    expect(problems('a: !!binary aGk=\nb: !!set {x}\nc: .nan\n1: d\n')).toEqual(['1:13 non-json', '2:10 non-json', '3:4 non-json', '4:1 non-json']);
  });

  it('reads YAML 1.2 core values as JSON reads them: dates, yes/no and octal-looking text stay text', () => {
    const source = read('d: 2026-02-28\ny: yes\nn: no\no: 012\nt: !!str 12\ni: !!int "3"\nq: "1"\nm: {x: null, y: ~}\nl: [1.5, -2, true]\n');
    expect(source.problems).toEqual([]);
    expect(source.data).toEqual({ d: '2026-02-28', y: 'yes', n: 'no', o: 12, t: '12', i: 3, q: '1', m: { x: null, y: null }, l: [1.5, -2, true] });
  });

  it('reads whole numbers up to 2^53 - 1 exactly, and floats written as floats as JSON does', () => {
    const source = read('a: 9007199254740991\nb: -9007199254740991\nc: 1e20\nd: 1.5e300\ne: 18446744073709551615.0\nf: "99999999999999999999"\n');
    expect(source.problems).toEqual([]);
    expect(source.data).toEqual({
      a: 9007199254740991,
      b: -9007199254740991,
      c: 1e20,
      d: 1.5e300,
      e: Number('18446744073709551615.0'),
      f: '99999999999999999999',
    });
  });

  it('reads a whole number past 2^53 that a number holds exactly and JSON writes as written', () => {
    const source = read('a: 9007199254740992\nb: -9007199254740992\nc: 0x20000000000000\nd: 18014398509481984\n');
    expect(source.problems).toEqual([]);
    expect(source.data).toEqual({ a: 2 ** 53, b: -(2 ** 53), c: 2 ** 53, d: 2 ** 54 });
    // 2^60 is held exactly too, but JSON would write it 1152921504606847000: refused.
    expect(read('a: 1152921504606846976\n').problems.map((problem) => problem.message)).toEqual([
      expect.stringContaining('1152921504606846976 is a whole number too large to be read exactly (it would become 1152921504606847000;'),
    ]);
  });

  it('reads merge keys as ordinary keys, not as a YAML 1.1 merge', () => {
    expect(read('a: &x {b: 1}\nc:\n  <<: *x\n').data).toEqual({ a: { b: 1 }, c: { '<<': { b: 1 } } });
  });

  it(`keeps the alias bomb limit (${MAX_ALIAS_COUNT} expansions)`, () => {
    const bomb = `a: &a [x]\n${Array.from({ length: 12 }, (_, i) => `l${i + 1}: &l${i + 1} [*${i === 0 ? 'a' : `l${i}`}, *${i === 0 ? 'a' : `l${i}`}]`).join('\n')}\n`;
    expect(read(bomb).problems.map((p) => p.code)).toEqual(['alias-limit']);
  });

  it('refuses a second document', () => {
    expect(problems('a: 1\n---\nb: 2\n')).toEqual(['2:1 yaml-syntax']);
  });
});

/** YAML-ish text from the characters and words that drive the lexer, parser and composer. */
const yamlish = fc
  .array(
    fc.constantFrom(
      ':',
      ': ',
      '- ',
      '? ',
      '[',
      ']',
      '{',
      '}',
      ',',
      ' ',
      '  ',
      '\n',
      '\n  ',
      '\t',
      '#',
      '|',
      '>',
      '"',
      "'",
      '&a ',
      '*a',
      '!!binary ',
      '!!set ',
      '!x ',
      '%YAML 1.1\n',
      '---\n',
      '...\n',
      'key',
      'value',
      '1',
      '.nan',
      'null',
      'true',
      '__proto__',
      '2026-02-31',
      '\\',
      '<<',
    ),
    { maxLength: 200 },
  )
  .map((parts) => parts.join(''));

/** Nesting of every kind, to random depths around and far over the limit. */
const deeplyNested = fc
  .tuple(
    fc.array(fc.constantFrom('- ', '? ', ': ', 'k: ', '[', '{a: ', '\n  ', '&x ', '!!str '), { minLength: 1, maxLength: 6 }),
    fc.integer({ min: 1, max: 1500 }),
    fc.constantFrom('', '\n  y\n', ']]]}}}\n', '*x\n'),
  )
  .map(([unit, times, tail]) => `${unit.join('').repeat(times)}x${tail}`);

describe('property: the reader never throws and is deterministic', () => {
  it('random YAML-ish text', () => {
    fc.assert(
      fc.property(yamlish, (text) => {
        const first = read(text);
        expect(read(text)).toEqual(first);
        if (first.problems.length > 0) expect(first.data).toBeUndefined();
      }),
      { numRuns: runs(400) },
    );
  });

  it('adversarial nesting, also with most of the stack used', () => {
    fc.assert(
      fc.property(deeplyNested, (text) => {
        const first = read(text);
        expect(withStackUsed(() => read(text))).toEqual(first);
        for (const problem of first.problems) expect(problem.range.line).toBeGreaterThanOrEqual(1);
      }),
      { numRuns: runs(100) },
    );
  });
});

// Work per byte is bounded: a hostile PROTOCOL.md (or user capability) must not stall `capreg lint`
// or the server. Each input is compiled at N and 4N KiB; 4× the input must take well under 16× the
// time (quadratic) and a few seconds at most. Before these fixes, 8 KiB of `ab-ab-…` took over 10 s
// in foreign-tools, 64 KiB of `*_` minutes in micromark, 64 KiB of `aaa…` seconds in the tokenizer.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { compileRegistry } from '../compiler/compile.js';
import { MAX_BLOCK_DELIMITERS, MAX_SETEXT_UNDERLINES, parseCapability, tooManyDelimitersLine, tooManySetextUnderlinesLine } from '../compiler/parse.js';
import { countTokens, MAX_COUNTED_WORD } from '../compiler/tokens.js';
import type { Diagnostic } from '../compiler/types.js';

const FILE = 'capabilities/alpha/PROTOCOL.md';
const TOOLSETS = readFileSync(new URL('../capabilities/toolsets.yaml', import.meta.url), 'utf8');
const FRONTMATTER = [
  '---',
  'id: alpha',
  'name: Alpha',
  'description: A hostile body.',
  'whenToUse:',
  '  - testing',
  'requiredToolsets: [work-logs]',
  'protocol_version: 1.0.0',
  'protocol_updated: 2026-11-29',
  '---',
  'Never guess.',
  '',
  '',
].join('\n');
const BODY_LINE = 13;

const fill = (unit: string, bytes: number): string => unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);

function compile(body: string): Diagnostic[] {
  const content = FRONTMATTER + body + '\n';
  const input = {
    files: [
      { path: FILE, content },
      { path: 'capabilities/toolsets.yaml', content: TOOLSETS },
    ],
    allPaths: [FILE, 'capabilities/toolsets.yaml'],
    foldersWithoutProtocol: [],
  };
  return compileRegistry(input, { documents: [parseCapability(FILE, content)] }).diagnostics;
}

/** Milliseconds of CPU time (the machine is shared: wall time measures the neighbours). */
function cpuMs(run: () => void): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/** Compile `make(n KiB)` and `make(4n KiB)`; assert the growth is near linear; return the big run's diagnostics. */
function expectLinear(make: (bytes: number) => string, kib = 16): Diagnostic[] {
  const small = make(kib * 1024);
  const big = make(4 * kib * 1024);
  compile(small); // warm up the parser and the rules
  const smallMs = cpuMs(() => compile(small));
  let diagnostics: Diagnostic[] = [];
  const bigMs = cpuMs(() => {
    diagnostics = compile(big);
  });
  // A floor keeps a tiny denominator from making the ratio noise; 8× for 4× input is generous
  // for linear work and fails quadratic work (16×) or worse.
  expect(bigMs, `${kib} KiB: ${smallMs.toFixed(0)} ms, ${4 * kib} KiB: ${bigMs.toFixed(0)} ms`).toBeLessThan(8 * Math.max(smallMs, 100));
  expect(bigMs).toBeLessThan(5_000);
  return diagnostics;
}

const rules = (diagnostics: Diagnostic[]): string[] => [...new Set(diagnostics.filter((d) => d.severity === 'error').map((d) => d.ruleId))].sort();

describe('linear time: emphasis and link delimiters', () => {
  for (const unit of ['*_', '_*', '*a', '](', '[a](', '~a']) {
    it(`refuses a block of ${JSON.stringify(unit)} runs before parsing, at the line that crosses the limit`, () => {
      const diagnostics = expectLinear((bytes) => fill(unit, bytes));
      const refusal = diagnostics.filter((d) => d.ruleId === 'markdown-syntax');
      expect(refusal).toHaveLength(1);
      expect(refusal[0]).toMatchObject({ line: BODY_LINE, column: 1, severity: 'error' });
      expect(refusal[0]?.message).toContain(`over ${MAX_BLOCK_DELIMITERS} emphasis markers`);
    });
  }

  it('counts per block of non-blank lines: the same markers split by blank lines parse', () => {
    // 80 markers per line, one paragraph every 4 lines: far under the limit per block.
    const lines = Array.from({ length: 40 }, (_, i) => `${'*_'.repeat(40)}${i % 4 === 3 ? '\n' : ''}`).join('\n');
    expect(tooManyDelimitersLine(lines)).toBe(0);
    expect(rules(compile(lines))).not.toContain('markdown-syntax');
    const oneBlock = Array.from({ length: 40 }, () => '*_'.repeat(40)).join('\n');
    // 80 runs per line: the 1,001st is on line 13.
    expect(tooManyDelimitersLine(oneBlock)).toBe(13);
  });

  it('refuses a pair of long runs around text before parsing (each character of a run next to text counts)', () => {
    // `***…a***…`: two runs, so counting runs let it through, and micromark pairs them a character or
    // two at a time (8,000 each: 4 s; 32,000 each, a 64 KiB user capability: over a minute).
    const diagnostics = expectLinear((bytes) => `${'*'.repeat(bytes / 2)}a${'*'.repeat(bytes / 2)}`, 4);
    const refusal = diagnostics.filter((d) => d.ruleId === 'markdown-syntax');
    expect(refusal).toHaveLength(1);
    expect(refusal[0]?.message).toContain(`over ${MAX_BLOCK_DELIMITERS} emphasis markers`);
    expect(tooManyDelimitersLine(`${'_'.repeat(MAX_BLOCK_DELIMITERS + 1)}a\n`)).toBe(1);
    expect(tooManyDelimitersLine(`a${'*'.repeat(MAX_BLOCK_DELIMITERS + 1)} b\n`)).toBe(1);
    // Between blanks a run still counts once: a thematic break or a bullet of any length.
    expect(tooManyDelimitersLine(`${'*'.repeat(MAX_BLOCK_DELIMITERS + 1)}\n\n* item\n`)).toBe(0);
  });

  it('a run of one character counts once; bundled-style prose is far under the limit', () => {
    expect(tooManyDelimitersLine(`${'*'.repeat(50_000)}\n`)).toBe(0);
    expect(tooManyDelimitersLine('Call **`work_log_record`** and [x](y), _then_ stop.\n'.repeat(100))).toBe(0);
  });
});

describe('linear time: setext headings', () => {
  for (const unit of ['a\n=\n', 'a\n---\n', 'a\n==\n\n']) {
    it(`refuses a body of ${JSON.stringify(unit)} headings before parsing, at the underline past the limit`, () => {
      // micromark: 4,000 such headings took ~3 s, 8,000 ~10 s.
      const diagnostics = expectLinear((bytes) => fill(unit, bytes), 8);
      const refusal = diagnostics.filter((d) => d.ruleId === 'markdown-syntax');
      expect(refusal).toHaveLength(1);
      expect(refusal[0]?.message).toContain(`over ${MAX_SETEXT_UNDERLINES} lines of \`=\` or \`-\` under a line of text`);
      // The frontmatter's closing `---` is the first; the body's underlines are every 2nd (or 3rd) line.
      const step = unit.split('\n').length - 1;
      expect(refusal[0]?.line).toBe(BODY_LINE + (MAX_SETEXT_UNDERLINES - 1) * step + 1);
    });
  }

  it('counts only lines that can underline the line above: rules after a blank line, lists and tables do not count', () => {
    const many = MAX_SETEXT_UNDERLINES + 10;
    expect(tooManySetextUnderlinesLine('text\n\n---\n'.repeat(many))).toBe(0);
    expect(tooManySetextUnderlinesLine('- item\n- -\n'.repeat(many))).toBe(0);
    expect(tooManySetextUnderlinesLine('| a |\n| --- |\n'.repeat(many))).toBe(0);
    expect(tooManySetextUnderlinesLine('text\n    ---\n'.repeat(many))).toBe(0);
    expect(tooManySetextUnderlinesLine('text\n   --- \t\n'.repeat(many))).toBe(2 * (MAX_SETEXT_UNDERLINES + 1));
    expect(tooManySetextUnderlinesLine('text\n=\n'.repeat(MAX_SETEXT_UNDERLINES))).toBe(0);
  });
});

describe('linear time: compound tokens in foreign-tools', () => {
  it('`ab-ab-…`, `a.a.…` and `www.…` compounds are scanned in linear time and accepted', () => {
    // 64 KiB is over the body's 5,000-token limit: token-budget is the only error.
    for (const unit of ['ab-', 'a.', 'www.']) expect(rules(expectLinear((bytes) => fill(unit, bytes)))).toEqual(['token-budget']);
  });

  it('a compound of foreign tool names reports each of them, in linear time', () => {
    const diagnostics = expectLinear((bytes) => fill('automation_create_task-', bytes), 4);
    const foreign = diagnostics.filter((d) => d.ruleId === 'foreign-tools');
    expect(foreign.length).toBe(Math.floor((16 * 1024) / 'automation_create_task-'.length));
    expect(foreign[1]).toMatchObject({ line: BODY_LINE, column: 1 + 'automation_create_task-'.length });
  });
});

describe('linear time: token counting', () => {
  it('a long word without whitespace is counted in bounded pieces', () => {
    expect(rules(expectLinear((bytes) => fill('a', bytes)))).toEqual(['token-budget']);
    const ms = cpuMs(() => countTokens('a'.repeat(256 * 1024)));
    expect(ms).toBeLessThan(3_000);
  });

  it('a long run of whitespace (spaces, tabs, no-break spaces) is counted in bounded pieces too', () => {
    for (const space of [' ', '\t', '\u00a0']) {
      const ms = cpuMs(() => countTokens(`Never do x${space.repeat(320_000)}y.`));
      // Counted whole, 320,000 spaces took ~1 min (no-break spaces over 2 min).
      expect(ms, JSON.stringify(space)).toBeLessThan(3_000);
    }
    expect(rules(expectLinear((bytes) => `Never do x.${' '.repeat(bytes)}`))).toEqual([]);
  });

  it('the count of normal text is unchanged, and a long run counts as its pieces', async () => {
    const { countTokens: bpe } = await import('gpt-tokenizer');
    const prose = readFileSync(new URL('../capabilities/work-reporting/PROTOCOL.md', import.meta.url), 'utf8');
    expect(countTokens(prose)).toBe(bpe(prose, { disallowedSpecial: new Set() }));
    const word = 'b'.repeat(MAX_COUNTED_WORD);
    const piece = bpe(word);
    expect(countTokens(`${word}${word}${word}`)).toBe(3 * piece);
    const spaces = ' '.repeat(MAX_COUNTED_WORD);
    expect(countTokens(`a${spaces}${spaces}b`)).toBe(bpe('a') + 2 * bpe(spaces) + bpe('b'));
    // A surrogate pair is never cut: the count is that of whole characters.
    expect(countTokens('😀'.repeat(MAX_COUNTED_WORD))).toBeGreaterThan(0);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { duplicateContent, normalize, paragraphFingerprint } from '../../compiler/rules/duplicate-content.js';
import { protocol, registryInput } from '../support/registry.js';
import { lintWith, ruleTable } from './harness.js';
import { optionsEditCase } from './kept-facts.js';
import { lintWithoutPositions } from './without-positions.js';
import { runs } from '../support/property.js';

// protocol() writes 9 frontmatter lines plus two fences: the body starts on line 11.
const A = 'capabilities/alpha/PROTOCOL.md';
const B = 'capabilities/beta/PROTOCOL.md';
const C = 'capabilities/gamma/PROTOCOL.md';
const LONG = 'Before any write, show the user the exact change with old and new values and wait for an explicit yes.';
const CHINESE = '在执行任何写入操作之前，先向用户展示完整的变更内容，包括旧值和新值，并等待用户明确回复确认后再继续执行，'.repeat(2);

ruleTable(duplicateContent, {
  valid: [
    { name: 'different paragraphs', files: { [A]: protocol({ id: 'alpha' }, `${LONG}\n`), [B]: protocol({ id: 'beta' }, `${LONG} Then log it.\n`) } },
    {
      name: 'short stock phrases may repeat',
      files: { [A]: protocol({ id: 'alpha' }, 'Never guess; ask the user.\n'), [B]: protocol({ id: 'beta' }, 'Never guess; ask the user.\n') },
    },
    { name: "a repeat inside one protocol is not this rule's business", files: { [A]: protocol({ id: 'alpha' }, `${LONG}\n\n- ${LONG}\n`) } },
    {
      name: 'headings, table rows and code are not compared',
      files: {
        [A]: protocol({ id: 'alpha' }, `# ${LONG}\n\n| Tool | Use |\n| --- | --- |\n| a | ${LONG} |\n\n\`\`\`\n${LONG}\n\`\`\`\n`),
        [B]: protocol({ id: 'beta' }, `# ${LONG}\n\n| Tool | Use |\n| --- | --- |\n| a | ${LONG} |\n\n\`\`\`\n${LONG}\n\`\`\`\n`),
      },
    },
    {
      name: 'below a raised minLength',
      options: { minLength: 200 },
      files: { [A]: protocol({ id: 'alpha' }, `${LONG}\n`), [B]: protocol({ id: 'beta' }, `${LONG}\n`) },
    },
    { name: 'empty bodies and broken frontmatter', files: { [A]: '---\nid: [\n---\n', [B]: '' } },
  ],
  invalid: [
    {
      name: 'a paragraph copied into a list item, reflowed and re-cased',
      files: {
        [A]: protocol({ id: 'alpha' }, `Intro.\n\n${LONG}\n`),
        [B]: protocol({ id: 'beta' }, `Steps:\n\n- ${LONG.replace('exact change', 'EXACT\n  change').replace(/ /g, '  ')}\n`),
      },
      errors: [
        {
          messageId: 'duplicate',
          file: B,
          line: 13,
          column: 1,
          message:
            'list item "Before any write, show the user the EXAC…" is copied from capability "alpha" (capabilities/alpha/PROTOCOL.md:13); reference it instead of copying it: [alpha](capability:alpha)',
        },
      ],
    },
    {
      name: 'three copies: both later ones point at the first; Chinese text; related place',
      files: {
        [A]: protocol({ id: 'alpha' }, `${CHINESE}\n`),
        [B]: protocol({ id: 'beta' }, `前言。\n\n${CHINESE}\n`),
        [C]: protocol({ id: 'gamma' }, `> ${CHINESE}\n`),
      },
      errors: [
        { messageId: 'duplicate', file: B, line: 13, column: 1, message: 'is copied from capability "alpha" (capabilities/alpha/PROTOCOL.md:11)' },
        {
          messageId: 'duplicate',
          file: C,
          line: 11,
          column: 3,
          message: 'paragraph "在执行任何写入操作之前，先向用户展示完整的变更内容，包括旧值和新值，并等待用户明…" is copied from capability "alpha"',
        },
      ],
    },
    {
      name: 'a lower minLength, level error',
      level: 'error',
      options: { minLength: 10 },
      files: { [A]: protocol({ id: 'alpha' }, 'Ask before every write.\n'), [B]: protocol({ id: 'beta' }, 'ask before  every write.\n') },
      errors: [{ messageId: 'duplicate', file: B, line: 11, column: 1, severity: 'error', message: 'copied from capability "alpha"' }],
    },
  ],
});

describe('duplicate-content documented example and without positions', () => {
  const copied = 'Before any write, show the user the exact schedule in their time zone and wait for an explicit yes.';
  const files = {
    'capabilities/personal-automation/PROTOCOL.md': protocol(
      { id: 'personal-automation' },
      `# Personal automation\n\n${copied}\n\nNever create a schedule the user did not ask for.\n`,
    ),
    'capabilities/work-reporting/PROTOCOL.md': protocol(
      { id: 'work-reporting' },
      `# Work reporting\n\nFor reports on a schedule:\n\n- ${copied}\n\nNever invent figures.\n`,
    ),
  };

  it('prints what docs/rules/duplicate-content.md shows', () => {
    expect(
      lintWith(duplicateContent, registryInput(files)).map(
        (d) => `${d.line}:${d.column} ${d.message} | ${d.related?.message}: ${d.related?.line}:${d.related?.column}`,
      ),
    ).toEqual([
      '15:1 list item "Before any write, show the user the exac…" is copied from capability "personal-automation" (capabilities/personal-automation/PROTOCOL.md:13); reference it instead of copying it: [personal-automation](capability:personal-automation) | first written here: 13:1',
    ]);
  });

  it('does not crash when the parser gives no positions', () => {
    expect(lintWithoutPositions(duplicateContent, files).length).toBe(1);
  });
});

describe('duplicate-content with facts kept between compiles', () => {
  // Short enough to count only under the lower minLength: facts kept from the default would miss it.
  optionsEditCase(
    duplicateContent,
    'minLength lowered: the option is part of the fact',
    { [A]: protocol({ id: 'alpha' }, 'Ask before every write.\n'), [B]: protocol({ id: 'beta' }, 'ask before  every write.\n') },
    {},
    { minLength: 10 },
  );
});

describe('duplicate-content: fingerprints that start alike', () => {
  // Found by trying numbers in order: their fingerprints share the first seven hex digits (574801e),
  // the number by which blocks are looked up first.
  const write = (n: number): string => `Before any write number ${n}, show the user the exact change with old and new values and wait for a yes.`;
  const first = write(24837);
  const second = write(25485);

  it('tells different paragraphs apart when their fingerprints start with the same digits', () => {
    expect(paragraphFingerprint(first, 80)?.slice(0, 7)).toBe(paragraphFingerprint(second, 80)?.slice(0, 7));
    expect(paragraphFingerprint(first, 80)).not.toBe(paragraphFingerprint(second, 80));
    const input = registryInput({
      [A]: protocol({ id: 'alpha' }, `${first}\n`),
      [B]: protocol({ id: 'beta' }, `${second}\n`),
      [C]: protocol({ id: 'gamma' }, `${second}\n\n${first}\n`),
    });
    expect(lintWith(duplicateContent, input).map((d) => `${d.file}:${d.line} ${d.message.replace(/^.*copied from /, '')}`)).toEqual([
      `${C}:11 capability "beta" (${B}:11); reference it instead of copying it: [beta](capability:beta)`,
      `${C}:13 capability "alpha" (${A}:11); reference it instead of copying it: [alpha](capability:alpha)`,
    ]);
  });
});

describe('duplicate-content: normalization', () => {
  // Every kind of whitespace JavaScript's \s knows, runs of them, compatibility characters and cases.
  const piece = fc.constantFrom('a', 'B', ' ', '  ', '\n', '\t', '\r\n', '\u00a0', '\u2028', '\u3000', '\ufeff', 'ﬁ', 'Ⅸ', 'ｶ', 'É', 'ß', '.', '9');
  const text = fc.array(piece, { maxLength: 40 }).map((pieces) => pieces.join(''));

  it('is NFKC, every run of whitespace one space, trimmed and lower-cased', () => {
    fc.assert(
      fc.property(text, (value) => {
        expect(normalize(value)).toBe(value.normalize('NFKC').replace(/\s+/g, ' ').trim().toLowerCase());
      }),
      { numRuns: runs(500) },
    );
  });
});

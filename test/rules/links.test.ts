import { describe, expect, it } from 'vitest';
import { links } from '../../compiler/rules/links.js';
import { protocol, registryInput } from '../support/registry.js';
import { lintWith, ruleTable } from './harness.js';
import { lintWithoutPositions } from './without-positions.js';

// protocol() writes 9 frontmatter lines plus two fences: the body starts on line 11.
const A = 'capabilities/alpha/PROTOCOL.md';
const alpha = (body: string): string => protocol({ id: 'alpha' }, body);

ruleTable(links, {
  valid: [
    {
      name: 'links, images and definitions to files in the folder',
      files: {
        [A]: alpha(
          'See [notes](references/notes.md), [again](./references/notes.md#why) and [q](references/notes.md?plain=1).\n\n![diagram](img/flow%20chart.png)\n\n[ref]: references/notes.md\n',
        ),
        'capabilities/alpha/references/notes.md': 'notes',
        'capabilities/alpha/img/flow chart.png': 'png',
      },
    },
    {
      name: 'URLs with a scheme, anchors, capability: links and protocol-relative URLs are not checked',
      files: {
        [A]: alpha(
          '[a](https://example.com/x) [b](http://x) [c](mailto:a@b.c) [d](#tools) [e](capability:beta) [f](//cdn.example.com/x) <https://example.com>\n',
        ),
      },
    },
    {
      name: "a link into another capability's folder is catalog-references' business",
      files: {
        [A]: alpha('[b](../beta/PROTOCOL.md) and [c](../beta/missing.md)\n'),
        'capabilities/beta/PROTOCOL.md': protocol({ id: 'beta' }),
      },
    },
    {
      name: 'a link back into the own folder through ../',
      files: { [A]: alpha('[self](../alpha/PROTOCOL.md)\n') },
    },
    {
      name: 'empty body, no frontmatter',
      files: { [A]: '', 'capabilities/beta/PROTOCOL.md': '---\nid: [\n---\n' },
    },
  ],
  invalid: [
    {
      name: 'a missing file, with a suggestion',
      files: { [A]: alpha('Intro.\n\nSee [the notes](references/note.md).\n'), 'capabilities/alpha/references/notes.md': 'x' },
      errors: [
        {
          messageId: 'missing',
          line: 13,
          column: 5,
          endColumn: 36,
          message:
            'link "references/note.md" does not resolve: capabilities/alpha/references/note.md does not exist (did you mean references/notes.md?); link to an existing file inside capabilities/alpha/',
        },
      ],
    },
    {
      name: 'a missing image and definition, Chinese text before them',
      files: { [A]: alpha('见图：![流程](img/流程.png)\n\n[详情]: ./details.md "标题"\n') },
      errors: [
        { messageId: 'missing', line: 11, column: 4, message: 'image "img/流程.png" does not resolve: capabilities/alpha/img/流程.png does not exist; link' },
        { messageId: 'missing', line: 13, column: 1, message: 'link definition "./details.md" does not resolve' },
      ],
    },
    {
      name: 'escaping the folder',
      files: {
        [A]: alpha('[t](../toolsets.yaml)\n[r](../../README.md)\n[s](../shared/common.md)\n'),
        'capabilities/shared/common.md': 'x',
        'README.md': 'x',
      },
      errors: [
        {
          messageId: 'escapes',
          line: 11,
          column: 1,
          message: 'link "../toolsets.yaml" leaves the capability folder capabilities/alpha/ (resolves to capabilities/toolsets.yaml)',
        },
        { messageId: 'escapes', line: 12, column: 1, message: 'resolves to README.md' },
        { messageId: 'escapes', line: 13, column: 1, message: 'resolves to capabilities/shared/common.md' },
      ],
    },
    {
      name: 'an absolute path',
      files: { [A]: alpha('- [x](/capabilities/alpha/references/a.md)\n'), 'capabilities/alpha/references/a.md': 'x' },
      errors: [
        {
          messageId: 'absolute',
          line: 11,
          column: 3,
          message: 'link "/capabilities/alpha/references/a.md" is an absolute path; use a path relative to this PROTOCOL.md',
        },
      ],
    },
    {
      name: 'an empty target and a folder',
      files: { [A]: alpha('[x]() and [y](references/) and [z](./)\n'), 'capabilities/alpha/references/a.md': 'x' },
      errors: [
        { messageId: 'empty', line: 11, column: 1, message: 'link has an empty target' },
        { messageId: 'folder', line: 11, column: 11, message: 'link "references/" points at the folder capabilities/alpha/references, not a file' },
        { messageId: 'folder', line: 11, column: 32, message: 'points at the folder capabilities/alpha, not a file' },
      ],
    },
    {
      name: 'file names are case-sensitive; level warn',
      level: 'warn',
      files: { [A]: alpha('[x](References/A.md)\n'), 'capabilities/alpha/references/a.md': 'x' },
      errors: [{ messageId: 'missing', line: 11, column: 1, severity: 'warning', message: 'did you mean references/a.md?' }],
    },
  ],
});

describe('links documented example and without positions', () => {
  const files = {
    'capabilities/test-driven-development/PROTOCOL.md': protocol(
      { id: 'test-driven-development', name: 'Test-driven development', description: 'Adds behaviour test first.', whenToUse: ['add a feature test first'] },
      '# Test-driven development\n\nNever skip the failing test.\n\nBackground: [why](references/rationle.md), [shared rules](../shared/rules.md),\n[the style guide](/docs/style.md).\n',
    ),
    'capabilities/test-driven-development/references/rationale.md': 'x',
  };

  it('prints what docs/rules/links.md shows', () => {
    expect(lintWith(links, registryInput(files)).map((d) => `${d.line}:${d.column} ${d.message}`)).toEqual([
      '15:13 link "references/rationle.md" does not resolve: capabilities/test-driven-development/references/rationle.md does not exist (did you mean references/rationale.md?); link to an existing file inside capabilities/test-driven-development/',
      '15:44 link "../shared/rules.md" leaves the capability folder capabilities/test-driven-development/ (resolves to capabilities/shared/rules.md); keep linked files inside the folder, or link a web page with https:',
      '16:1 link "/docs/style.md" is an absolute path; use a path relative to this PROTOCOL.md that stays inside capabilities/test-driven-development/ (e.g. references/notes.md)',
    ]);
  });

  it('does not crash when the parser gives no positions', () => {
    expect(lintWithoutPositions(links, files).length).toBe(3);
  });
});

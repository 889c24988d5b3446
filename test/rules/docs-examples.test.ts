// The "Not ok" example of a rule's docs page, run through the rule: the printed diagnostics must be
// the ones the page shows (remark-lint's habit), so the docs cannot drift from the code.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { countsOf } from '../../compiler/formatters/index.js';
import { formatStylish } from '../../compiler/formatters/stylish.js';
import { rulesById } from '../../compiler/rules/index.js';
import { registryInput } from '../support/registry.js';
import { lintWith } from './harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Rules whose "Not ok" section is one file (a Markdown or YAML block) followed by the stylish output for it. */
const DOCUMENTED = ['frontmatter-schema', 'id-matches-folder', 'markdown-syntax', 'toolset-exists', 'toolsets-schema'];

/** Stylish rows without the column padding: `line:column severity message ruleId`. */
function rows(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => /^\s+\d+:\d+\s/.test(line))
    .map((line) => line.trim().split(/ {2,}/).join(' '));
}

function example(id: string): { file: string; content: string; output: string } {
  const page = fs.readFileSync(path.join(ROOT, `docs/rules/${id}.md`), 'utf8');
  const section = page.slice(page.indexOf('## Not ok'));
  const input = /^(`{3,})(?:markdown|yaml)\n([^]*?)^\1$/m.exec(section);
  const output = /^```text\n([^]*?)^```$/m.exec(section);
  if (!input || !output) throw new Error(`docs/rules/${id}.md: "Not ok" needs a markdown or yaml block, then a text block`);
  const text = output[1]!;
  return { file: text.split('\n')[0]!, content: input[2]!, output: text };
}

describe.each(DOCUMENTED)('docs/rules/%s.md', (id) => {
  it('prints the diagnostics its "Not ok" example shows', () => {
    const { file, content, output } = example(id);
    expect(rows(output).length).toBeGreaterThan(0);
    const diagnostics = lintWith(rulesById.get(id)!, registryInput({ [file]: content }));
    expect(rows(formatStylish(countsOf(diagnostics)))).toEqual(rows(output));
  });
});

// docs/benchmarks.md lists which rules look only at one document and which are registry-wide; the
// fact itself is each rule's `meta.reads`, and this test keeps the page's table equal to it (every
// rule once, with its `reads`).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { rules } from '../../compiler/rules/index.js';

const PAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/benchmarks.md');
const HEADING = '### Which rules are registry-wide';

it('the table of docs/benchmarks.md gives every rule its meta.reads', () => {
  const text = fs.readFileSync(PAGE, 'utf8');
  const start = text.indexOf(HEADING);
  expect(start).toBeGreaterThan(-1);
  const section = text.slice(start + HEADING.length, text.indexOf('\n#', start + HEADING.length));
  const rows = [...section.matchAll(/^\| `([a-z-]+)` \| `([a-z]+)` \|/gm)].map((match) => [match[1], match[2]]);
  expect(rows).toEqual(rules.map((rule) => [rule.meta.id, rule.meta.reads]));
});

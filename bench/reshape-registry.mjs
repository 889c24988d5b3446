#!/usr/bin/env node
// Give a generated registry (bench/generate-registry.mjs) another shape, in place, so that the
// benchmarks can be run on registries unlike the generator's: the ratios of issue 13 are measured on
// other people's registries too.
//
//   node bench/generate-registry.mjs --out DIR --count 1000
//   node bench/reshape-registry.mjs DIR small|long|tables
//   node bench/build.mjs --registry DIR --runs 3
//   node bench/parse-floor.mjs --root DIR --rounds 1
//
// Shapes (every capability alike; the result still builds):
//   small   the "Finding" and "Changing" sections cut: more of a build is per file rather than
//           per byte.
//   long    a "Background" section of 40 paragraphs with emphasis, links, nested lists and code
//           blocks appended (~15 KB a protocol): prose-heavy protocols, over the body token budget
//           (a warning).
//   tables  four reference tables of 20 rows appended (~10 KB a protocol): GFM tables are most of
//           what the parser costs over the bare parse (docs/benchmarks.md).
// Paragraphs name their capability, so that no paragraph is shared (`duplicate-content`).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const SHAPES = ['small', 'long', 'tables'];
const [dir, shape] = process.argv.slice(2);
if (!dir || !SHAPES.includes(shape)) {
  console.error(`usage: node bench/reshape-registry.mjs DIR ${SHAPES.join('|')}`);
  process.exit(2);
}

const WORDS =
  'account ledger period invoice review owner schedule export archive status record balance request approval history summary calendar quota region vendor'.split(
    ' ',
  );
/** A word chosen by the capability's number and a position in its text: deterministic, varied. */
const word = (n, k) => WORDS[(n * 7 + k * 13) % WORDS.length];

function small(body) {
  const from = body.indexOf('\n## Finding');
  const changing = body.indexOf('\n## Changing', from);
  const to = changing === -1 ? -1 : body.indexOf('\n## ', changing + 1);
  return from === -1 || to === -1 ? body : body.slice(0, from) + body.slice(to);
}

function long(body, id, n) {
  let extra = '\n## Background\n\n';
  for (let p = 0; p < 40; p += 1) {
    extra += `The ${word(n, p)} of ${id} in part ${p} depends on the *${word(n, p + 1)}* and the **${word(n, p + 2)}**; see [the handbook](https://example.com/${id}/${p}) for case ${p} of ${id}, and read it before you act on ${word(n, p + 3)} ${p}.\n\n`;
    if (p % 5 === 0) {
      extra += `- first point ${p} on ${id}: the ${word(n, p)} is kept\n- second point ${p} on ${id}: the ${word(n, p + 4)} is \`${word(n, p)}-${p}\`\n  - nested ${p} for ${id}\n\n`;
    }
    if (p % 8 === 0) extra += `\`\`\`json\n{"case": ${p}, "id": "${id}", "field": "${word(n, p)}"}\n\`\`\`\n\n`;
  }
  return body + extra;
}

function tables(body, id, n) {
  let extra = '';
  for (let t = 0; t < 4; t += 1) {
    extra += `\n## Reference ${t}\n\n| Field | Meaning | Example |\n| --- | --- | --- |\n`;
    for (let r = 0; r < 20; r += 1) extra += `| ${word(n, r)}-${t}-${r} | the ${word(n, r + 1)} of ${id} row ${r} | ${word(n, r + 2)} ${r * t} |\n`;
  }
  return body + extra;
}

const reshape = { small, long, tables }[shape];
let count = 0;
for (const id of readdirSync(path.join(dir, 'capabilities'))) {
  const file = path.join(dir, 'capabilities', id, 'PROTOCOL.md');
  if (!existsSync(file)) continue;
  const text = readFileSync(file, 'utf8');
  const end = text.indexOf('\n---\n', 4) + '\n---\n'.length;
  const number = Number(id.slice(-4));
  writeFileSync(file, text.slice(0, end) + reshape(text.slice(end), id, Number.isInteger(number) ? number : count));
  count += 1;
}
console.error(`reshape-registry: ${count} protocols of ${dir} made ${shape}`);

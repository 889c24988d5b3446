import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { frontmatter } from 'micromark-extension-frontmatter';
import { frontmatterFromMarkdown } from 'mdast-util-frontmatter';
import { gfmAutolinkLiteral } from 'micromark-extension-gfm-autolink-literal';
import { gfmFootnote } from 'micromark-extension-gfm-footnote';
import { gfmStrikethrough } from 'micromark-extension-gfm-strikethrough';
import { gfmTable } from 'micromark-extension-gfm-table';
import { gfmTaskListItem } from 'micromark-extension-gfm-task-list-item';
import { gfmAutolinkLiteralFromMarkdown } from 'mdast-util-gfm-autolink-literal';
import { gfmFootnoteFromMarkdown } from 'mdast-util-gfm-footnote';
import { gfmStrikethroughFromMarkdown } from 'mdast-util-gfm-strikethrough';
import { gfmTableFromMarkdown } from 'mdast-util-gfm-table';
import { gfmTaskListItemFromMarkdown } from 'mdast-util-gfm-task-list-item';
const root = process.argv[2];
const dir = path.join(root, 'capabilities');
const texts = [];
for (const name of (await readdir(dir)).sort()) if (!name.endsWith('.yaml')) texts.push(await readFile(path.join(dir, name, 'PROTOCOL.md'), 'utf8'));
const fm = [frontmatter(['yaml'])], fmm = [frontmatterFromMarkdown(['yaml'])];
const variants = {
  bare: [[], []],
  autolink: [[gfmAutolinkLiteral()], [gfmAutolinkLiteralFromMarkdown()]],
  footnote: [[gfmFootnote()], [gfmFootnoteFromMarkdown()]],
  strike: [[gfmStrikethrough()], [gfmStrikethroughFromMarkdown()]],
  table: [[gfmTable()], [gfmTableFromMarkdown()]],
  task: [[gfmTaskListItem()], [gfmTaskListItemFromMarkdown()]],
};
const cpu = (name, fn) => { const c = process.cpuUsage(); fn(); const d = process.cpuUsage(c); console.log(name.padEnd(12), 'cpu', ((d.user+d.system)/1000).toFixed(0)); };
for (let r = 0; r < 2; r++) for (const [name, [mm, md]] of Object.entries(variants)) cpu(name, () => texts.forEach((t) => fromMarkdown(t, { extensions: [...fm, ...mm], mdastExtensions: [...fmm, ...md] })));

// Hostile folder names through the real executable: stylish keeps each diagnostic on one line with
// no escape sequence or workflow command, and the markdown summary holds the name as code only.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Nodes, Root } from 'mdast';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { afterAll, expect, it } from 'vitest';
import { createBaseRepository } from './fixture.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/capreg.js');
const dir = createBaseRepository();
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const COMMAND = 'x\n::error file=README.md::injected \u001b[31mRED\u001b[0m';
const LINK = 'y` ![pwn](https:evil.example?a.png) [click](https:evil.example) ` @team';
for (const folder of [COMMAND, LINK]) {
  fs.mkdirSync(path.join(dir, 'capabilities', folder));
  fs.writeFileSync(path.join(dir, 'capabilities', folder, 'PROTOCOL.md'), '---\nid: x\n');
}

function capreg(...args: string[]): { status: number | null; stdout: string } {
  const result = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout };
}

function nodes(node: Nodes): Nodes[] {
  return [node, ...('children' in node ? node.children.flatMap((child) => nodes(child)) : [])];
}

it('stylish shows a newline and ESC in a folder name as escapes', () => {
  const { status, stdout } = capreg('lint');
  expect(status).toBe(1);
  expect(stdout).toContain('capabilities/x\\n::error file=README.md::injected \\u001b[31mRED\\u001b[0m/PROTOCOL.md\n');
  expect(stdout).not.toMatch(/^::/m);
  expect(stdout).not.toContain('\u001b');
});

it('the markdown summary shows a folder name with backticks and links as code, with no link or image', () => {
  const { status, stdout } = capreg('check', '--against', 'base', '--format', 'markdown');
  expect(status).toBe(1);
  const parser = unified().use(remarkParse).use(remarkGfm);
  const tree = nodes(parser.runSync(parser.parse(stdout)) as Root);
  expect(tree.filter((node) => ['link', 'image', 'html'].includes(node.type))).toEqual([]);
  const code = tree.flatMap((node) => (node.type === 'inlineCode' ? [node.value] : []));
  expect(code).toContain(LINK);
  expect(code).toContain(`capabilities/${LINK}/PROTOCOL.md:1:1`);
  expect(stdout).not.toMatch(/^::/m);
});

import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { unified } from 'unified';
import remarkParse from 'remark-parse';
import remarkFrontmatter from 'remark-frontmatter';
import remarkGfm from 'remark-gfm';
import { countTokens } from 'gpt-tokenizer';
import { parseCapability } from '../lib/compiler/parse.js';
const root = process.argv[2];
const dir = path.join(root, 'capabilities');
const texts = [];
for (const name of (await readdir(dir)).sort()) if (!name.endsWith('.yaml')) texts.push(await readFile(path.join(dir, name, 'PROTOCOL.md'), 'utf8'));
const bare = unified().use(remarkParse).use(remarkFrontmatter, ['yaml']);
const gfm = unified().use(remarkParse).use(remarkFrontmatter, ['yaml']).use(remarkGfm);
const cpu = (name, fn) => { const c = process.cpuUsage(); const t = performance.now(); fn(); const d = process.cpuUsage(c); console.log(name.padEnd(12), 'wall', (performance.now()-t).toFixed(0), 'cpu', ((d.user+d.system)/1000).toFixed(0)); };
for (let r = 0; r < 2; r++) {
cpu('bare', () => texts.forEach((t) => bare.parse(t)));
cpu('gfm', () => texts.forEach((t) => gfm.parse(t)));
cpu('tokens', () => texts.forEach((t) => countTokens(t)));
cpu('full', () => texts.forEach((t, i) => parseCapability(`capabilities/x${i}/PROTOCOL.md`, t)));
}

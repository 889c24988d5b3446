import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseCapability } from '../lib/compiler/parse.js';
const dir = path.join(process.argv[2], 'capabilities');
const texts = [];
for (const name of (await readdir(dir)).sort()) if (!name.endsWith('.yaml')) texts.push(await readFile(path.join(dir, name, 'PROTOCOL.md'), 'utf8'));
const c = process.cpuUsage();
texts.forEach((t, i) => parseCapability(`capabilities/x${i}/PROTOCOL.md`, t));
const d = process.cpuUsage(c); console.log('cpu', ((d.user+d.system)/1000).toFixed(0));

#!/usr/bin/env node
// Part of `npm run build:ts`: writes gpt-tokenizer's o200k_base ranks, as the installed package
// exports them, to lib/compiler/o200k-ranks.json, with that package's version. compiler/tokens.ts
// builds its tokenizer from this file when the versions agree: parsing the package's 2.2 MB
// JavaScript table leaves ~16–20 MiB more resident memory than reading the same list as JSON
// (docs/benchmarks.md, "Memory at 1,000"), in every process and worker that counts.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(repo, 'package.json'));
const { version } = require('gpt-tokenizer/package.json');
const ranks = require('gpt-tokenizer/bpeRanks/o200k_base').default;
if (!Array.isArray(ranks) || ranks.length === 0) {
  console.error('scripts/tokenizer-ranks.mjs: gpt-tokenizer/bpeRanks/o200k_base exports no rank list');
  process.exit(1);
}
const target = path.join(repo, 'lib', 'compiler', 'o200k-ranks.json');
mkdirSync(path.dirname(target), { recursive: true });
// Written whole or not at all: a reader never sees half a file.
const partial = `${target}.${process.pid}.tmp`;
writeFileSync(partial, JSON.stringify({ package: 'gpt-tokenizer', version, encoding: 'o200k_base', ranks }));
renameSync(partial, target);

#!/usr/bin/env node
// Thin entry point: all behaviour lives in cli/main.ts (compiled to lib/cli/main.js by `npm ci`).
import { main } from '../lib/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`capreg: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 2;
  },
);

#!/usr/bin/env node
// Thin entry point: all behaviour lives in cli/main.ts (compiled to lib/cli/main.js by `npm ci`).
// A command that parses on every core is run again under the flag its parse needs (cli/respawn.ts).
import { fileURLToPath } from 'node:url';
import { followLauncher, respawnOptions, runRespawned } from '../lib/cli/respawn.js';

const argv = process.argv.slice(2);
const options = respawnOptions(argv);
if (options === undefined || !(await runRespawned(options, fileURLToPath(import.meta.url), argv))) {
  followLauncher();
  const { main } = await import('../lib/cli/main.js');
  main(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (error) => {
      process.stderr.write(`capreg: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 2;
    },
  );
}

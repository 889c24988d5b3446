// Spawned-process tests run the real `bin/capreg.js`, which loads compiled JavaScript from lib/.
// Compile once before the suite so those tests exercise the current sources. Type errors are the
// job of `npm run typecheck` (run before the tests in CI): tsc still emits JavaScript when the types
// do not check, so the suite runs and reports behaviour rather than stopping at the first type error.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export default function setup(): void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const result = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (result.error) throw result.error;
  if (result.status !== 0) process.stderr.write('global-setup: tsc reported type errors (see above); lib/ was emitted anyway\n');
  // The rest of `npm run build:ts`: the tokenizer's ranks as JSON, next to the compiled compiler.
  const ranks = spawnSync(process.execPath, [path.join(root, 'scripts', 'tokenizer-ranks.mjs')], { cwd: root, stdio: 'inherit' });
  if (ranks.error) throw ranks.error;
  if (ranks.status !== 0) throw new Error(`global-setup: scripts/tokenizer-ranks.mjs exited with ${ranks.status}`);
}

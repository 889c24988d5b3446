// The bench generator writes routing evals: a generated registry lints clean (evals-schema
// included) and passes `capreg eval`, so benchmarks of `capreg eval` and of the gate's routing
// run on it. Real files in a temporary folder, the CLI in-process.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli, tempDir } from './fixture.js';

interface Generator {
  generateRegistry: (dir: string, options: { count: number; evals?: boolean }) => Promise<{ ids: string[] }>;
}

const GENERATOR = pathToFileURL(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bench/generate-registry.mjs')).href;
const COUNT = 40;
let dir: string;
let ids: string[];

beforeAll(async () => {
  const { generateRegistry } = (await import(GENERATOR)) as Generator;
  dir = tempDir('capreg-generated-');
  ({ ids } = await generateRegistry(dir, { count: COUNT }));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it('writes an evals.yaml for every capability, which lints clean', async () => {
  expect(ids.filter((id) => !fs.existsSync(path.join(dir, 'capabilities', id, 'evals.yaml')))).toEqual([]);
  const lint = await runCli(['lint', '--max-warnings', '0', '--no-cache'], dir);
  expect(lint.stderr).toBe('');
  expect(lint.code).toBe(0);
});

it('capreg eval runs every request and every expectation holds', async () => {
  const result = await runCli(['eval', '--format', 'json', '--no-cache'], dir);
  expect(result.stderr).toBe('');
  const report = JSON.parse(result.stdout) as { capabilities: unknown[]; total: { shouldMatch: number; shouldNotMatch: number; failed: number } };
  expect(report.capabilities).toHaveLength(COUNT);
  expect(report.total).toMatchObject({ shouldMatch: 3 * COUNT, shouldNotMatch: COUNT, failed: 0 });
  expect(result.code).toBe(0);
});

it('writes no evals when asked not to', async () => {
  const { generateRegistry } = (await import(GENERATOR)) as Generator;
  const bare = tempDir('capreg-generated-');
  try {
    const generated = await generateRegistry(bare, { count: 3, evals: false });
    expect(generated.ids.filter((id) => fs.existsSync(path.join(bare, 'capabilities', id, 'evals.yaml')))).toEqual([]);
  } finally {
    fs.rmSync(bare, { recursive: true, force: true });
  }
});

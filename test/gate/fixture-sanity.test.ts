import { afterAll, expect, it } from 'vitest';
import fs from 'node:fs';
import { createBaseRepository, runCli } from './fixture.js';

const dir = createBaseRepository();
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it('the fixture registry lints clean, so every failure in the gate tests comes from the gate', async () => {
  const result = await runCli(['lint', '--no-cache'], dir);
  expect(result.stdout).toBe('');
  expect(result.code).toBe(0);
});

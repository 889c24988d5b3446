// /healthz is unauthenticated: a refused principals file must not show who the principals are. An
// operator who listed an id twice got `principals[3].id "ops-oncall@example.com" is listed twice` in
// every /healthz answer (and its identity in every probe's logs).
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { PRINCIPALS, principalsYaml, startStandardServer, writeAtomic, type StandardServer } from './helpers.js';

let server: StandardServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

it('names a duplicated principal id by its positions in /healthz, never by the id', async () => {
  server = await startStandardServer();
  const id = 'ops-oncall@example.com';
  writeAtomic(
    path.join(server.dir, 'principals.yaml'),
    principalsYaml([...PRINCIPALS, { id, key: 'key-one', scopes: ['reports:read'] }, { id, key: 'key-two', scopes: ['reports:read'] }]),
  );
  expect(await server.runtime.principalsStore!.reload()).toBe('rejected');
  const health = (await (await fetch(new URL('/healthz', server.http.url))).json()) as { status: string; lastReloadError: string };
  expect(health.status).toBe('degraded');
  expect(health.lastReloadError).toContain('principals[4].id is the same as principals[3].id');
  expect(health.lastReloadError).not.toContain(id);
});

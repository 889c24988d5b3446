// Identities are namespaced by where they come from: a JWT whose `sub` equals an API-key
// principal's id is another owner. Real HTTP, a real JWT signed by a local key, a real SQLite store.
import fs from 'node:fs';
import path from 'node:path';
import { exportSPKI, generateKeyPair, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_OWNER_ID_LENGTH as MAX_SUBJECT_LENGTH } from '../../server/identity.js';
import { ownerKey } from '../../server/identity.js';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { startHttpServer, type HttpServerHandle } from '../../server/transports/http.js';
import { openUserStore } from '../../server/user-store/open.js';
import { clientSession, UNIFORM_ERROR_TEXT, USER_SCOPE, userEntries, WEEKLY_DIGEST, type Session } from '../user-capabilities/harness.js';
import { STANDARD_CAPABILITIES, httpClient, makeManifest, principalsYaml, tempDir, writeAtomic, signedJwt, writeManifest } from './helpers.js';

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'capreg-test';
const SCOPES = ['reports:read', 'calendar:read', USER_SCOPE];

let dir: string;
let runtime: Runtime;
let http: HttpServerHandle;
let privateKey: CryptoKey;
const sessions: Session[] = [];

function jwt(sub: string): Promise<string> {
  return signedJwt(privateKey, { sub, scopes: SCOPES, issuer: ISSUER, audience: AUDIENCE });
}

async function as(token: string): Promise<Session> {
  const client = await httpClient(http.url, token);
  const session = clientSession(client, () => client.close());
  sessions.push(session);
  return session;
}

beforeAll(async () => {
  dir = tempDir('capreg-identity-');
  const manifestFile = path.join(dir, 'manifest.json');
  const principalsFile = path.join(dir, 'principals.yaml');
  writeManifest(manifestFile, makeManifest(STANDARD_CAPABILITIES));
  writeAtomic(principalsFile, principalsYaml([{ id: 'reporter', key: 'key-reporter', scopes: SCOPES }]));
  const pair = await generateKeyPair('ES256');
  privateKey = pair.privateKey;
  fs.writeFileSync(path.join(dir, 'public.pem'), await exportSPKI(pair.publicKey));
  runtime = await startRuntime({
    manifestFile,
    principalsFile,
    watch: false,
    jwt: { publicKeyFile: path.join(dir, 'public.pem'), issuer: ISSUER, audience: AUDIENCE },
    openUserStore: () => openUserStore(`sqlite:${path.join(dir, 'user-capabilities.db')}`, { root: dir }),
  });
  http = await startHttpServer(runtime, { port: 0 });
});

afterAll(async () => {
  for (const session of sessions) await session.close().catch(() => undefined);
  await http.close();
  await runtime.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('identity namespaces', () => {
  it("keeps a JWT whose sub equals an API-key principal id away from that principal's user capabilities", async () => {
    const keyReporter = await as('key-reporter');
    const jwtReporter = await as(await jwt('reporter'));

    expect(await keyReporter.json('get_current_user')).toMatchObject({ id: 'reporter', authMethod: 'api-key' });
    expect(await keyReporter.json('get_current_user')).not.toHaveProperty('issuer');
    expect(await jwtReporter.json('get_current_user')).toMatchObject({ id: 'reporter', authMethod: 'jwt', issuer: ISSUER });

    const saved = await keyReporter.json('save_user_capability', { markdown: WEEKLY_DIGEST });
    expect(saved).toMatchObject({ success: true });
    const capabilityId = saved['capabilityId'] as string;

    // The JWT subject neither lists, loads, updates nor deletes it.
    expect(userEntries(await jwtReporter.json('list_capabilities'))).toEqual([]);
    expect(await jwtReporter.text('get_capability_protocol', { capabilityId })).toBe(UNIFORM_ERROR_TEXT);
    expect(await jwtReporter.text('save_user_capability', { markdown: WEEKLY_DIGEST, capabilityId })).toBe(UNIFORM_ERROR_TEXT);
    expect(await jwtReporter.text('delete_user_capability', { capabilityId })).toBe(UNIFORM_ERROR_TEXT);
    expect(userEntries(await keyReporter.json('list_capabilities')).map((e) => e.id)).toEqual([capabilityId]);

    // And the other way round: what the JWT subject saves is theirs alone.
    const theirs = (await jwtReporter.json('save_user_capability', { markdown: WEEKLY_DIGEST }))['capabilityId'] as string;
    expect(userEntries(await jwtReporter.json('list_capabilities')).map((e) => e.id)).toEqual([theirs]);
    expect(await keyReporter.text('get_capability_protocol', { capabilityId: theirs })).toBe(UNIFORM_ERROR_TEXT);
    expect(await keyReporter.text('delete_user_capability', { capabilityId: theirs })).toBe(UNIFORM_ERROR_TEXT);
    expect(await keyReporter.json('delete_user_capability', { capabilityId })).toEqual({ success: true });
    expect(await jwtReporter.json('delete_user_capability', { capabilityId: theirs })).toEqual({ success: true });
  });

  it.each([
    ['longer than the limit', 'x'.repeat(MAX_SUBJECT_LENGTH + 1)],
    ['with a NUL', 'reporter\u0000'],
    ['with a line break', 'reporter\nforged log line'],
    ['with a lone high surrogate', 'reporter\ud800'],
    ['with a lone low surrogate', 'reporter\udfff'],
    ['with surrogates in the wrong order', '\udc00\ud800reporter'],
  ])('refuses a JWT whose sub is %s with 401', async (_label, sub) => {
    const response = await fetch(`${http.url}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${await jwt(sub)}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(response.status).toBe(401);
  });

  it('accepts a sub with characters outside the BMP (surrogate pairs)', async () => {
    const session = await as(await jwt('reporter-\u{1F600}-\u{10FFFF}'));
    expect(await session.json('get_current_user')).toMatchObject({ id: 'reporter-\u{1F600}-\u{10FFFF}', authMethod: 'jwt' });
  });

  it(`accepts a sub of exactly ${MAX_SUBJECT_LENGTH} characters`, async () => {
    const session = await as(await jwt('é'.repeat(MAX_SUBJECT_LENGTH)));
    expect(await session.json('get_current_user')).toMatchObject({ id: 'é'.repeat(MAX_SUBJECT_LENGTH), authMethod: 'jwt' });
  });
});

describe('ownerKey', () => {
  it('is unambiguous whatever the issuer and the ids contain', () => {
    const keys = [
      ownerKey({ method: 'api-key' }, 'reporter'),
      ownerKey({ method: 'jwt', issuer: ISSUER }, 'reporter'),
      ownerKey({ method: 'jwt', issuer: 'https://a.test' }, 'reporter'),
      ownerKey({ method: 'jwt', issuer: 'a#b' }, 'c'),
      ownerKey({ method: 'jwt', issuer: 'a' }, 'b#c'),
      ownerKey({ method: 'jwt', issuer: 'a%23b' }, 'c'),
      ownerKey({ method: 'api-key' }, `jwt:${ISSUER}#reporter`),
    ];
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys[0]).toBe('key:reporter');
    expect(keys[1]).toBe(`jwt:${ISSUER}#reporter`);
  });
});

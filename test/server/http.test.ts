// Streamable HTTP on a random loopback port: authentication (API keys and JWTs), the HTTP-level
// refusals (401/403/405/413), health, metadata, and revocation taking effect on the next request.
import fs from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { selectResourceURL, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { MAX_JSON_DEPTH, startHttpServer, type HttpServerHandle } from '../../server/transports/http.js';
import {
  PRINCIPALS,
  STANDARD_CAPABILITIES,
  eventually,
  httpClient,
  ids,
  makeManifest,
  principalsYaml,
  structured,
  tempDir,
  writeAtomic,
  writeManifest,
} from './helpers.js';

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'capreg-test';

let dir: string;
let principalsFile: string;
let runtime: Runtime;
let http: HttpServerHandle;
let privateKey: CryptoKey;
let otherPrivateKey: CryptoKey;

function rpc(method: string, params: Record<string, unknown> = {}, id = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params });
}

async function post(body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${http.url}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body,
  });
}

async function jwt(
  claims: Record<string, unknown>,
  options: { key?: CryptoKey; expiresIn?: string | number; audience?: string; issuer?: string } = {},
): Promise<string> {
  let builder = new SignJWT(claims).setProtectedHeader({ alg: 'ES256' }).setIssuedAt();
  builder = builder.setIssuer(options.issuer ?? ISSUER).setAudience(options.audience ?? AUDIENCE);
  if (options.expiresIn !== undefined) builder = builder.setExpirationTime(options.expiresIn);
  return builder.sign(options.key ?? privateKey);
}

beforeAll(async () => {
  dir = tempDir();
  const manifestFile = path.join(dir, 'manifest.json');
  principalsFile = path.join(dir, 'principals.yaml');
  writeManifest(manifestFile, makeManifest(STANDARD_CAPABILITIES));
  writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
  const pair = await generateKeyPair('ES256');
  privateKey = pair.privateKey;
  otherPrivateKey = (await generateKeyPair('ES256')).privateKey;
  fs.writeFileSync(path.join(dir, 'public.pem'), await exportSPKI(pair.publicKey));
  runtime = await startRuntime({
    manifestFile,
    principalsFile,
    jwt: { publicKeyFile: path.join(dir, 'public.pem'), issuer: ISSUER, audience: AUDIENCE },
    debounceMs: 20,
  });
  http = await startHttpServer(runtime, { port: 0 });
});

afterAll(async () => {
  await http.close();
  await runtime.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('authentication', () => {
  it('answers a request without a token with 401 and a WWW-Authenticate pointing at the resource metadata', async () => {
    const response = await post(rpc('tools/list'));
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain(`resource_metadata="${http.url}/.well-known/oauth-protected-resource"`);
    expect(challenge).not.toContain('invalid_token');
  });

  const badTokens: { label: string; token: () => Promise<string> }[] = [
    { label: 'an unknown API key', token: () => Promise.resolve('not-a-key') },
    { label: 'a JWT for another audience', token: () => jwt({ sub: 'eve', scope: 'reports:read' }, { expiresIn: '5m', audience: 'someone-else' }) },
    { label: 'a JWT from another issuer', token: () => jwt({ sub: 'eve', scope: 'reports:read' }, { expiresIn: '5m', issuer: 'https://evil.test' }) },
    { label: 'an expired JWT', token: () => jwt({ sub: 'eve', scope: 'reports:read' }, { expiresIn: Math.floor(Date.now() / 1000) - 600 }) },
    { label: 'a JWT without exp', token: () => jwt({ sub: 'eve', scope: 'reports:read' }) },
    { label: 'a JWT not valid yet', token: () => jwt({ sub: 'eve', nbf: Math.floor(Date.now() / 1000) + 600 }, { expiresIn: '1h' }) },
    { label: 'a JWT signed by another key', token: () => jwt({ sub: 'eve', scope: 'reports:read' }, { expiresIn: '5m', key: otherPrivateKey }) },
    { label: 'a JWT without sub', token: () => jwt({ scope: 'reports:read' }, { expiresIn: '5m' }) },
    {
      label: 'an unsigned JWT (alg none)',
      token: () => {
        const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
        const exp = Math.floor(Date.now() / 1000) + 300;
        return Promise.resolve(`${encode({ alg: 'none', typ: 'JWT' })}.${encode({ sub: 'eve', iss: ISSUER, aud: AUDIENCE, exp, scope: 'reports:read' })}.`);
      },
    },
    {
      label: 'a JWT whose signature was stripped from a valid one',
      token: async () => {
        const valid = await jwt({ sub: 'eve', scope: 'reports:read' }, { expiresIn: '5m' });
        return `${valid.split('.').slice(0, 2).join('.')}.`;
      },
    },
  ];
  for (const { label, token } of badTokens) {
    it(`refuses ${label} with 401 invalid_token`, async () => {
      const response = await post(rpc('tools/call', { name: 'list_capabilities', arguments: {} }), { Authorization: `Bearer ${await token()}` });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
      const body = await response.text();
      expect(body).not.toContain('work-reporting');
    });
  }

  it('refuses a malformed Authorization header', async () => {
    for (const header of ['Basic YWxpY2U6eA==', 'Bearer', 'Bearer a b', `Bearer ${'x'.repeat(12_000)}`]) {
      const response = await post(rpc('tools/list'), { Authorization: header });
      expect(response.status).toBe(401);
    }
  });

  it('serves an API key caller its catalog', async () => {
    const client = await httpClient(http.url, 'key-alice-reports');
    const listing = structured(await client.callTool({ name: 'list_capabilities' }));
    expect(ids(listing)).toEqual(['open-help', 'work-reporting']);
    const user = structured(await client.callTool({ name: 'get_current_user' }));
    expect(user).toMatchObject({ authenticated: true, id: 'alice', scopes: ['reports:read'], authMethod: 'api-key' });
    await client.close();
  });

  it('serves a JWT caller with scopes from `scope` and from `scp`', async () => {
    const fromScope = await httpClient(http.url, await jwt({ sub: 'dave', name: 'Dave', scope: 'openid calendar:read' }, { expiresIn: '5m' }));
    expect(ids(structured(await fromScope.callTool({ name: 'list_capabilities' })))).toEqual(['calendar-digest', 'open-help']);
    expect(structured(await fromScope.callTool({ name: 'get_current_user' }))).toMatchObject({
      id: 'dave',
      name: 'Dave',
      authMethod: 'jwt',
      scopes: ['openid', 'calendar:read'],
    });
    await fromScope.close();
    const fromScp = await httpClient(http.url, await jwt({ sub: 'erin', scp: ['automation:read', 'calendar:read'] }, { expiresIn: '5m' }));
    expect(ids(structured(await fromScp.callTool({ name: 'list_capabilities' })))).toEqual(['calendar-digest', 'open-help', 'personal-automation']);
    await fromScp.close();
  });

  it('accepts JWTs verified against a JWKS file', async () => {
    const pair = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256' };
    const jwksFile = path.join(dir, 'jwks.json');
    fs.writeFileSync(jwksFile, JSON.stringify({ keys: [jwk] }));
    const jwksRuntime = await startRuntime({
      manifestFile: path.join(dir, 'manifest.json'),
      jwt: { jwks: jwksFile, issuer: ISSUER, audience: AUDIENCE },
      watch: false,
    });
    const server = await startHttpServer(jwksRuntime, { port: 0 });
    try {
      const token = await new SignJWT({ sub: 'frank', scope: 'reports:read' })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setExpirationTime('5m')
        .sign(pair.privateKey);
      const client = await httpClient(server.url, token);
      expect(ids(structured(await client.callTool({ name: 'list_capabilities' })))).toEqual(['open-help', 'work-reporting']);
      await client.close();
      const forged = await jwt({ sub: 'frank', scope: 'reports:read' }, { expiresIn: '5m' });
      const response = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${forged}` },
        body: rpc('tools/list'),
      });
      expect(response.status).toBe(401);
    } finally {
      await server.close();
      await jwksRuntime.close();
    }
  });
  it('accepts JWTs verified against a JWKS URL, and refuses a plain-HTTP JWKS URL off loopback', async () => {
    const pair = await generateKeyPair('ES256');
    const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'url-key', alg: 'ES256' }] });
    const keyServer = createHttpServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(jwks));
    await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve));
    const jwksUrl = `http://127.0.0.1:${(keyServer.address() as AddressInfo).port}/jwks.json`;
    const urlRuntime = await startRuntime({
      manifestFile: path.join(dir, 'manifest.json'),
      jwt: { jwks: jwksUrl, issuer: ISSUER, audience: AUDIENCE },
      watch: false,
    });
    const server = await startHttpServer(urlRuntime, { port: 0 });
    try {
      const token = await new SignJWT({ sub: 'gina', scp: 'calendar:read' })
        .setProtectedHeader({ alg: 'ES256', kid: 'url-key' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setExpirationTime('5m')
        .sign(pair.privateKey);
      const client = await httpClient(server.url, token);
      expect(ids(structured(await client.callTool({ name: 'list_capabilities' })))).toEqual(['calendar-digest', 'open-help']);
      await client.close();
    } finally {
      await server.close();
      await urlRuntime.close();
      keyServer.close();
    }
    await expect(
      startRuntime({
        manifestFile: path.join(dir, 'manifest.json'),
        jwt: { jwks: 'http://keys.example.com/jwks.json', issuer: ISSUER, audience: AUDIENCE },
        watch: false,
      }),
    ).rejects.toThrow(/https/);
  });
});

describe('HTTP surface', () => {
  it('answers GET and DELETE on /mcp with 405', async () => {
    for (const method of ['GET', 'DELETE', 'PUT']) {
      const response = await fetch(`${http.url}/mcp`, { method, headers: { Authorization: 'Bearer key-alice-reports' } });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    }
  });

  // The whole routing surface, path by method: the route table must answer exactly this.
  it.each([
    {
      path: '/mcp',
      method: 'GET',
      status: 405,
      allow: 'POST',
      body: { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server is stateless, use POST' }, id: null },
    },
    { path: '/mcp?x=1', method: 'OPTIONS', status: 405, allow: 'POST' },
    { path: '/mcp', method: 'OPTIONS', origin: true, status: 204, preflight: 'POST' },
    { path: '/healthz', method: 'POST', status: 405, allow: 'GET, HEAD', body: { error: 'method not allowed' } },
    { path: '/healthz', method: 'HEAD', status: 200 },
    { path: '/healthz?probe=1', method: 'GET', origin: true, status: 200 },
    { path: '/healthz', method: 'OPTIONS', origin: true, status: 204, preflight: 'GET, HEAD' },
    { path: '/.well-known/oauth-protected-resource/mcp', method: 'GET', status: 200 },
    { path: '/.well-known/oauth-protected-resource', method: 'DELETE', status: 405, allow: 'GET, HEAD', body: { error: 'method not allowed' } },
    { path: '/nope', method: 'POST', status: 404, body: { error: 'not found' } },
    { path: '/nope', method: 'OPTIONS', origin: true, status: 204, preflight: 'GET, HEAD' },
    { path: '/MCP', method: 'POST', status: 404, body: { error: 'not found' } },
  ])('routes $method $path to $status', async ({ path: target, method, origin, status, allow, preflight, body }) => {
    const response = await fetch(`${http.url}${target}`, { method, headers: origin ? { Origin: 'http://localhost:6274' } : {} });
    expect(response.status).toBe(status);
    expect(response.headers.get('allow')).toBe(allow ?? null);
    expect(response.headers.get('access-control-allow-methods')).toBe(preflight ?? null);
    expect(response.headers.get('access-control-allow-origin')).toBe(origin ? 'http://localhost:6274' : null);
    if (status !== 204) expect(response.headers.get('cache-control')).toBe('no-store');
    const text = await response.text();
    if (method === 'HEAD' || status === 204) expect(text).toBe('');
    if (body !== undefined) expect(JSON.parse(text)).toEqual(body);
  });

  it('answers unknown paths with 404', async () => {
    expect((await fetch(`${http.url}/nope`)).status).toBe(404);
  });

  it('serves /healthz without auth and without secrets', async () => {
    const response = await fetch(`${http.url}/healthz`);
    expect(response.status).toBe(200);
    const health = (await response.json()) as Record<string, unknown>;
    expect(Object.keys(health).sort()).toEqual(['capabilities', 'lastReloadError', 'loadedAt', 'revision', 'signedBy', 'source', 'status']);
    expect(health).toMatchObject({ status: 'ok', capabilities: 4, lastReloadError: null, source: 'file', signedBy: null });
    expect(health['revision']).toBe(runtime.manifests.current.manifest.revision);
    expect(JSON.stringify(health)).not.toContain(dir);
  });

  it('publishes the protected-resource metadata', async () => {
    const response = await fetch(`${http.url}/.well-known/oauth-protected-resource`);
    expect(await response.json()).toEqual({
      resource: `${http.url}/mcp`,
      authorization_servers: [ISSUER],
      bearer_methods_supported: ['header'],
      resource_name: 'capreg capability registry',
    });
  });

  it('names the scheme a TLS-terminating proxy forwards (X-Forwarded-Proto) in the metadata and the challenge, so an SDK client takes them', async () => {
    // The docs put the server behind a proxy that terminates TLS: the client's URL is https://, and
    // the SDK's client refuses metadata whose resource has another origin (http://).
    const behindProxy = { 'X-Forwarded-Proto': 'https' };
    const clientUrl = new URL(`${http.url.replace(/^http:/, 'https:')}/mcp`);
    const metadata = (await (await fetch(`${http.url}/.well-known/oauth-protected-resource`, { headers: behindProxy })).json()) as { resource: string };
    expect(metadata.resource).toBe(clientUrl.href);
    expect((await selectResourceURL(clientUrl, {} as OAuthClientProvider, metadata))?.href).toBe(clientUrl.href);
    const challenge = (await post(rpc('tools/list'), behindProxy)).headers.get('www-authenticate');
    expect(challenge).toContain(`resource_metadata="${clientUrl.origin}/.well-known/oauth-protected-resource"`);
    // Only http or https: anything else keeps the listener's own scheme.
    for (const proto of ['HTTPS, http', 'javascript', 'https://evil.example']) {
      const answer = (await (await fetch(`${http.url}/.well-known/oauth-protected-resource`, { headers: { 'X-Forwarded-Proto': proto } })).json()) as {
        resource: string;
      };
      expect(answer.resource).toBe(proto === 'HTTPS, http' ? clientUrl.href : `${http.url}/mcp`);
    }
  });

  it('refuses a foreign Origin with 403, accepts a loopback one', async () => {
    const foreign = await post(rpc('tools/list'), { Authorization: 'Bearer key-alice-reports', Origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect((await fetch(`${http.url}/healthz`, { headers: { Origin: 'http://evil.example' } })).status).toBe(403);
    const local = await post(rpc('tools/list'), { Authorization: 'Bearer key-alice-reports', Origin: 'http://localhost:6274' });
    expect(local.status).toBe(200);
  });

  it('accepts exactly the --allowed-origins list when one is given', async () => {
    const server = await startHttpServer(runtime, { port: 0, allowedOrigins: ['https://app.example.com'] });
    try {
      const call = (origin: string): Promise<Response> =>
        fetch(`${server.url}/mcp`, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            Authorization: 'Bearer key-alice-reports',
            Origin: origin,
          },
          body: rpc('tools/list'),
        });
      const allowed = await call('https://app.example.com');
      expect(allowed.status).toBe(200);
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      // A page may read when to retry a 429 or 503: a browser hides every header not exposed.
      expect(allowed.headers.get('access-control-expose-headers')).toBe('WWW-Authenticate, Mcp-Protocol-Version, Retry-After');
      const preflight = await fetch(`${server.url}/mcp`, {
        method: 'OPTIONS',
        headers: { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-headers')).toContain('Authorization');
      const foreignPreflight = await fetch(`${server.url}/mcp`, { method: 'OPTIONS', headers: { Origin: 'https://evil.example' } });
      expect(foreignPreflight.status).toBe(403);
      expect(foreignPreflight.headers.get('access-control-allow-origin')).toBeNull();
      expect((await call('http://localhost:6274')).status).toBe(403);
      expect((await call('https://app.example.com.evil.example')).status).toBe(403);
    } finally {
      await server.close();
    }
  });

  it('answers a body over 1 MiB with 413, declared or streamed', async () => {
    const big = rpc('tools/call', { name: 'get_capability_protocol', arguments: { capabilityId: 'x'.repeat(1024 * 1024 + 10) } });
    const declared = await post(big, { Authorization: 'Bearer key-alice-reports' });
    expect(declared.status).toBe(413);

    const bytes = new TextEncoder().encode(big);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < bytes.length; offset += 64 * 1024) controller.enqueue(bytes.slice(offset, offset + 64 * 1024));
        controller.close();
      },
    });
    const streamed = await fetch(`${http.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: 'Bearer key-alice-reports' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
  });

  it(`refuses a body nesting deeper than ${MAX_JSON_DEPTH} levels with one clear error, brackets inside strings not counted`, async () => {
    const deep = (levels: number): string =>
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_capability_protocol","arguments":{"capabilityId":${'['.repeat(levels)}${']'.repeat(levels)}}}}`;
    for (const body of [deep(100_000), `[${deep(MAX_JSON_DEPTH)}]`]) {
      const response = await post(body, { Authorization: 'Bearer key-alice-reports' });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        jsonrpc: '2.0',
        error: { code: -32600, message: `Invalid request: the body nests deeper than ${MAX_JSON_DEPTH} levels` },
        id: null,
      });
    }
    // At the limit, and with brackets in a string: read as usual (an invalid argument, answered as such).
    const inString = rpc('tools/call', { name: 'get_capability_protocol', arguments: { capabilityId: `${'['.repeat(1000)}\\"{` } });
    for (const body of [deep(MAX_JSON_DEPTH - 4), inString]) {
      const response = await post(body, { Authorization: 'Bearer key-alice-reports' });
      expect(response.status).toBe(200);
    }
  });

  it('answers a body that is not JSON with a parse error', async () => {
    const response = await post('{not json', { Authorization: 'Bearer key-alice-reports' });
    expect(response.status).toBe(400);
  });

  it('answers a missing and a forbidden capability with byte-identical HTTP bodies', async () => {
    const headers = { Authorization: 'Bearer key-carol-calendar' };
    const call = (capabilityId: string): Promise<Response> =>
      post(rpc('tools/call', { name: 'get_capability_protocol', arguments: { capabilityId } }, 7), headers);
    const missing = await call('does-not-exist');
    const forbidden = await call('work-reporting');
    expect(missing.status).toBe(200);
    expect(forbidden.status).toBe(200);
    const missingBody = await missing.text();
    expect(missingBody).toBe(await forbidden.text());
    expect(missingBody).toContain('capability not found or not accessible');
    expect(missingBody).toContain('"isError":true');
  });

  it('marks every MCP answer as not to be stored, as the refusals are: each is for one caller', async () => {
    const headers = { Authorization: 'Bearer key-alice-reports' };
    const answers = [
      await post(rpc('tools/call', { name: 'list_capabilities', arguments: {} }), headers),
      await post(
        `[${rpc('ping', {}, 1)},${rpc('tools/call', { name: 'get_capability_protocol', arguments: { capabilityId: 'work-reporting' } }, 2)}]`,
        headers,
      ),
      await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers),
    ];
    expect(answers.map((answer) => [answer.status, answer.headers.get('cache-control')])).toEqual([
      [200, 'no-store'],
      [200, 'no-store'],
      [202, 'no-store'],
    ]);
  });

  it('answers a 1 MB capabilityId (under the body limit) with the uniform error', async () => {
    const response = await post(rpc('tools/call', { name: 'get_capability_protocol', arguments: { capabilityId: 'y'.repeat(1_000_000) } }), {
      Authorization: 'Bearer key-alice-reports',
    });
    const body = (await response.json()) as { result: { content: { text: string }[]; isError: boolean } };
    expect(body.result.isError).toBe(true);
    expect(body.result.content[0]?.text).toBe('{"success":false,"error":"capability not found or not accessible"}');
  });
});

describe('principals reload', () => {
  it('applies a narrowed scope and a revoked key on the next call of an open client', async () => {
    const client = await httpClient(http.url, 'key-bob-all');
    expect(ids(structured(await client.callTool({ name: 'list_capabilities' })))).toEqual([
      'calendar-digest',
      'open-help',
      'personal-automation',
      'work-reporting',
    ]);
    const narrowed = PRINCIPALS.map((principal) => (principal.id === 'bob' ? { ...principal, scopes: ['reports:read'] } : principal));
    writeAtomic(principalsFile, principalsYaml(narrowed));
    await eventually(async () => {
      expect(ids(structured(await client.callTool({ name: 'list_capabilities' })))).toEqual(['open-help', 'work-reporting']);
    });
    const protocol = await client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'personal-automation' } });
    expect(protocol.isError).toBe(true);

    writeAtomic(principalsFile, principalsYaml(narrowed.filter((principal) => principal.id !== 'bob')));
    await eventually(async () => {
      const response = await post(rpc('tools/call', { name: 'list_capabilities', arguments: {} }), { Authorization: 'Bearer key-bob-all' });
      expect(response.status).toBe(401);
    });
    await expect(client.callTool({ name: 'list_capabilities' })).rejects.toThrow();
    await client.close().catch(() => undefined);

    // A broken principals file keeps the last good one serving, and says so in /healthz.
    writeAtomic(principalsFile, 'principals:\n  - id: x\n    keySha256: nothex\n    scopes: []\n');
    await eventually(async () => {
      const health = (await (await fetch(`${http.url}/healthz`)).json()) as { lastReloadError: string | null; status: string };
      expect(health.status).toBe('degraded');
      expect(health.lastReloadError).toContain('principals file');
    });
    const alice = await post(rpc('tools/call', { name: 'list_capabilities', arguments: {} }), { Authorization: 'Bearer key-alice-reports' });
    expect(alice.status).toBe(200);
    writeAtomic(principalsFile, principalsYaml(PRINCIPALS));
    await eventually(async () => {
      const health = (await (await fetch(`${http.url}/healthz`)).json()) as { lastReloadError: string | null };
      expect(health.lastReloadError).toBeNull();
    });
  });
});

describe('a server with API keys only (no JWT verification)', () => {
  let keysOnly: Runtime;
  let keysOnlyHttp: HttpServerHandle;

  beforeAll(async () => {
    keysOnly = await startRuntime({ manifestFile: path.join(dir, 'manifest.json'), principalsFile, watch: false });
    keysOnlyHttp = await startHttpServer(keysOnly, { port: 0 });
  });

  afterAll(async () => {
    await keysOnlyHttp.close();
    await keysOnly.close();
  });

  it('challenges without OAuth metadata, so a client reports the key instead of starting an OAuth flow', async () => {
    const post = (headers: Record<string, string>): Promise<Response> =>
      fetch(`${keysOnlyHttp.url}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
        body: rpc('tools/list'),
      });
    const missing = await post({});
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="capreg"');
    const wrong = await post({ Authorization: 'Bearer not-a-key' });
    expect(wrong.status).toBe(401);
    const challenge = wrong.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer realm="capreg", error="invalid_token"/);
    expect(challenge).not.toContain('resource_metadata');
    expect((await post({ Authorization: 'Bearer key-alice-reports' })).status).toBe(200);
  });

  it('serves no protected-resource metadata', async () => {
    for (const suffix of ['', '/mcp']) {
      const response = await fetch(`${keysOnlyHttp.url}/.well-known/oauth-protected-resource${suffix}`);
      expect(response.status).toBe(404);
    }
  });
});

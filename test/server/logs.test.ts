// Structured logs (docs/server.md, "Metrics and logs"): JSON lines from pino, levels, and no secret
// in any log line or audit record, whatever the requests carry.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { exportSPKI, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, lineLogger, scrubSecrets } from '../../server/log.js';
import { closedPort } from '../support/postgres.js';
import {
  PRINCIPALS,
  STANDARD_CAPABILITIES,
  eventually,
  httpClient,
  makeManifest,
  principalsYaml,
  serveArgv,
  tempDir,
  writeAtomic,
  writeManifest,
} from './helpers.js';

const PG_PASSWORD = 'pg-pass-9f3b2c';

describe('createLogger', () => {
  it('writes JSON lines at the chosen level, with secret fields redacted and credentials scrubbed from messages', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => lines.push(line) } });
    logger.debug('not shown at info');
    logger.info({ headers: { authorization: 'Bearer tok-123' }, password: 'pw-456', user: { token: 'tok-789' } }, 'request');
    lineLogger(logger)(`capreg user store: cannot connect to postgres://capreg:${PG_PASSWORD}@db:5432/x (Authorization: Bearer abc.def.ghi)`);
    expect(lines).toHaveLength(2);
    const [first, second] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(first).toMatchObject({
      level: 'info',
      name: 'capreg',
      msg: 'request',
      headers: '[redacted]',
      password: '[redacted]',
      user: { token: '[redacted]' },
    });
    expect(second?.['msg']).toBe('cannot connect to postgres://capreg:***@db:5432/x (Authorization: Bearer ***)');
    expect(lines.join('')).not.toMatch(/tok-123|pw-456|tok-789|abc\.def\.ghi/);
    expect(lines.join('')).not.toContain(PG_PASSWORD);
  });

  it('scrubs every URL password, not only the first', () => {
    expect(scrubSecrets('a https://u:p1@h b redis://:p2@h')).toBe('a https://u:***@h b redis://:***@h');
  });
});

describe('capreg serve: nothing secret in any log line or audit record', () => {
  let dir: string;
  let privateKey: CryptoKey;
  let otherKey: CryptoKey;

  beforeAll(async () => {
    dir = tempDir();
    writeManifest(path.join(dir, 'manifest.json'), makeManifest(STANDARD_CAPABILITIES));
    writeAtomic(path.join(dir, 'principals.yaml'), principalsYaml(PRINCIPALS));
    const pair = await generateKeyPair('ES256');
    privateKey = pair.privateKey;
    otherKey = (await generateKeyPair('ES256')).privateKey;
    fs.writeFileSync(path.join(dir, 'jwt.pem'), await exportSPKI(pair.publicKey));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const jwt = (key: CryptoKey, sub: string) =>
    new SignJWT({ scope: 'reports:read' })
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer('https://issuer.test')
      .setAudience('capreg')
      .setSubject(sub)
      .setExpirationTime('5m')
      .sign(key);

  it('keys, JWTs and a database password never reach stderr or the audit file', async () => {
    // A database that does not answer: the store's outage is logged, its URL must not leak the password.
    const storeUrl = `postgres://capreg:${PG_PASSWORD}@127.0.0.1:${await closedPort()}/capreg`;
    const audit = path.join(dir, 'audit.jsonl');
    const child = spawn(
      process.execPath,
      serveArgv([
        '--manifest',
        'manifest.json',
        '--principals',
        'principals.yaml',
        '--http',
        '--port',
        '0',
        '--log-level',
        'trace',
        '--audit-log',
        audit,
        '--user-store',
        storeUrl,
        '--jwt-public-key',
        'jwt.pem',
        '--jwt-issuer',
        'https://issuer.test',
        '--jwt-audience',
        'capreg',
      ]),
      { cwd: dir, env: { PATH: process.env['PATH'] ?? '' } },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const url = await eventually(() => /on (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(stderr)![1]!, 15_000);

    const goodJwt = await jwt(privateKey, 'agent-7');
    const badJwt = await jwt(otherKey, 'agent-8');
    for (const token of ['key-alice-reports', goodJwt]) {
      const client = await httpClient(url, token);
      await client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'work-reporting' } });
      await client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'user:mine' } });
      await client.close();
    }
    for (const token of ['wrong-key-51e2', badJwt]) {
      const answer = await fetch(`${url}/mcp`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: '{}',
      });
      expect(answer.status).toBe(401);
    }
    child.kill('SIGTERM');
    expect(await exit).toBe(0);

    const everything = `${stderr}\n${fs.readFileSync(audit, 'utf8')}`;
    for (const secret of [...PRINCIPALS.map((principal) => principal.key), 'wrong-key-51e2', goodJwt, badJwt, goodJwt.split('.')[2]!, PG_PASSWORD]) {
      expect(everything).not.toContain(secret);
    }
    // The store outage was logged (scrubbed), as JSON.
    const logged = stderr
      .split('\n')
      .filter((line) => line.startsWith('{"level"'))
      .map((line) => JSON.parse(line) as { msg: string });
    expect(logged.some((line) => /user store|PostgreSQL|postgres/i.test(line.msg))).toBe(true);
    // Who loaded what: the JWT caller is named by issuer and subject, never by its token.
    expect(fs.readFileSync(audit, 'utf8')).toContain('"principal":"jwt:https://issuer.test#agent-7"');
  });

  it('a database password given as a query parameter (?password=, which pg honours) never reaches stderr or /healthz', async () => {
    const storeUrl = `postgres://capreg@127.0.0.1:${await closedPort()}/capreg?sslmode=disable&password=${PG_PASSWORD}`;
    const child = spawn(
      process.execPath,
      serveArgv(['--manifest', 'manifest.json', '--principals', 'principals.yaml', '--http', '--port', '0', '--user-store', storeUrl]),
      { cwd: dir, env: { PATH: process.env['PATH'] ?? '' } },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const url = await eventually(() => /on (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(stderr)![1]!, 15_000);
    const client = await httpClient(url, 'key-alice-reports');
    const answer = await client.callTool({ name: 'get_capability_protocol', arguments: { capabilityId: 'user:mine' } });
    await client.close();
    const health = await (await fetch(`${url}/healthz`)).text();
    child.kill('SIGTERM');
    expect(await exit).toBe(0);

    // The outage was logged, naming the database without its password.
    expect(stderr).toContain('?sslmode=disable&password=***');
    for (const text of [stderr, health, JSON.stringify(answer)]) expect(text).not.toContain(PG_PASSWORD);
  });
});

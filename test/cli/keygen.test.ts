// capreg keygen and capreg build --sign-key through the real bin: a private key only its owner can
// read and a public JWKS with the same kid; never an overwrite; a detached JWS beside the manifest
// that verifies with jose against the manifest's exact bytes, and fails on one changed byte.
import fs from 'node:fs';
import path from 'node:path';
import { createLocalJWKSet, decodeProtectedHeader, flattenedVerify, type JSONWebKeySet } from 'jose';
import { describe, expect, it } from 'vitest';
import { PRIVATE_KEY_FILE, PUBLIC_JWKS_FILE } from '../../cli/commands/keygen.js';
import { cleanProtocol, runBin, tempDir, tempRegistry } from './helpers.js';

const registry = (): string => tempRegistry({ 'capabilities/daily-notes/PROTOCOL.md': cleanProtocol('daily-notes') });

function keygen(): { dir: string; kid: string } {
  const dir = path.join(tempDir(), 'keys');
  const result = runBin(['keygen', '--out', dir], { cwd: tempDir() });
  expect(result.code, result.stderr).toBe(0);
  const kid = /^kid (\S+)\n$/.exec(result.stdout)?.[1];
  expect(kid).toBeDefined();
  return { dir, kid: kid as string };
}

describe('capreg keygen', () => {
  it('writes a 0600 private JWK and a public JWKS with the same kid', () => {
    const { dir, kid } = keygen();
    const privateFile = path.join(dir, PRIVATE_KEY_FILE);
    expect(fs.statSync(privateFile).mode & 0o777).toBe(0o600);
    const privateJwk = JSON.parse(fs.readFileSync(privateFile, 'utf8')) as Record<string, string>;
    expect(privateJwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519', kid, alg: 'EdDSA' });
    expect(typeof privateJwk['d']).toBe('string');
    const jwks = JSON.parse(fs.readFileSync(path.join(dir, PUBLIC_JWKS_FILE), 'utf8')) as JSONWebKeySet;
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', kid, x: privateJwk['x'] });
    expect(jwks.keys[0]).not.toHaveProperty('d');
  });

  it('refuses to overwrite an existing key (exit 2) and leaves it as it was', () => {
    const { dir } = keygen();
    const before = fs.readFileSync(path.join(dir, PRIVATE_KEY_FILE), 'utf8');
    const again = runBin(['keygen', '--out', dir], { cwd: tempDir() });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists; keygen never overwrites a key/);
    expect(fs.readFileSync(path.join(dir, PRIVATE_KEY_FILE), 'utf8')).toBe(before);
  });

  it('needs --out', () => {
    const result = runBin(['keygen'], { cwd: tempDir() });
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(/--out DIR is required/);
  });
});

describe('capreg build --sign-key', () => {
  it('writes manifest.json.sig, a detached EdDSA JWS with the kid over the exact manifest bytes', async () => {
    const { dir, kid } = keygen();
    const root = registry();
    const result = runBin(['build', '--sign-key', path.join(dir, PRIVATE_KEY_FILE)], { cwd: root });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`signed by ${kid}`);
    const manifest = fs.readFileSync(path.join(root, 'dist/manifest.json'));
    const signature = fs.readFileSync(path.join(root, 'dist/manifest.json.sig'), 'utf8').trim();
    const [header, payload, sig] = signature.split('.');
    expect(payload).toBe('');
    expect(decodeProtectedHeader(signature)).toEqual({ alg: 'EdDSA', kid, b64: false, crit: ['b64'] });
    const keys = createLocalJWKSet(JSON.parse(fs.readFileSync(path.join(dir, PUBLIC_JWKS_FILE), 'utf8')) as JSONWebKeySet);
    const options = { algorithms: ['EdDSA'], crit: { b64: true } };
    const verified = await flattenedVerify({ protected: header, payload: manifest, signature: sig as string }, keys, options);
    expect(Buffer.from(verified.payload).equals(manifest)).toBe(true);
    const tampered = Buffer.from(manifest);
    tampered.writeUInt8((tampered.at(-2) as number) ^ 1, tampered.length - 2);
    await expect(flattenedVerify({ protected: header, payload: tampered, signature: sig as string }, keys, options)).rejects.toThrow();
  });

  it('an unsigned rebuild removes a stale signature; a public key or a missing file is refused (exit 2, nothing written)', () => {
    const { dir } = keygen();
    const root = registry();
    expect(runBin(['build', '--sign-key', path.join(dir, PRIVATE_KEY_FILE)], { cwd: root }).code).toBe(0);
    expect(runBin(['build', '--no-cache'], { cwd: root }).code).toBe(0);
    expect(fs.existsSync(path.join(root, 'dist/manifest.json.sig'))).toBe(false);

    const fresh = registry();
    const wrongKey = runBin(['build', '--sign-key', path.join(dir, PUBLIC_JWKS_FILE)], { cwd: fresh });
    expect(wrongKey.code).toBe(2);
    expect(wrongKey.stderr).toMatch(/--sign-key .*: it is not an Ed25519 JWK|it holds a public key/);
    const missing = runBin(['build', '--sign-key', path.join(dir, 'nope.jwk')], { cwd: fresh });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--sign-key: cannot read .*ENOENT/);
    expect(fs.existsSync(path.join(fresh, 'dist/manifest.json'))).toBe(false);
  });

  it('reads --sign-key bounded: a device or a file over 64 KiB is refused in one line (exit 2, nothing written)', () => {
    const root = registry();
    const big = path.join(tempDir(), 'big.jwk');
    fs.writeFileSync(big, ' '.repeat(64 * 1024 + 1));
    expect(runBin(['build', '--sign-key', '/dev/zero'], { cwd: root })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'capreg build: --sign-key: cannot read /dev/zero: it is a device, not a regular file\n',
    });
    expect(runBin(['build', '--sign-key', big], { cwd: root })).toEqual({
      code: 2,
      stdout: '',
      stderr: `capreg build: --sign-key: cannot read ${big}: it is 65537 bytes, over the limit of 65536\n`,
    });
    expect(fs.existsSync(path.join(root, 'dist'))).toBe(false);
  });
});

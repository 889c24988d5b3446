// Signed manifests (docs/server.md, "Signed manifests"): with a verification key, a manifest is
// served only with a detached JWS by one of its keys over its exact bytes. Refused at start and at
// every reload (the last good one keeps serving, /healthz says why): unsigned, tampered, another
// key, an unknown kid, `alg: none`, HMAC, a removed .sig. A pair read between the two writes of a
// publish is read again, not refused. Through the real runtime and the real bin.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { base64url, CompactSign, FlattenedSign, importJWK } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serializeManifest } from '../../compiler/manifest.js';
import { LoadError } from '../../server/reloadable.js';
import { startRuntime, type Runtime } from '../../server/runtime.js';
import { generateSigningKey, parseVerificationKeys, signDetached, type SigningKey, type VerificationKeys } from '../../server/signature.js';
import { STANDARD_CAPABILITIES, makeManifest, serveArgv, tempDir, writeAtomic } from './helpers.js';

interface KeyPair {
  signing: SigningKey;
  jwks: string;
}

async function keyPair(): Promise<KeyPair> {
  const { privateJwk, publicJwks, kid } = await generateSigningKey();
  return { signing: { kid, privateJwk }, jwks: JSON.stringify(publicJwks) };
}

let dir: string;
let manifestFile: string;
let current: KeyPair;
let other: KeyPair;
let keys: VerificationKeys;
const runtimes: Runtime[] = [];

beforeEach(async () => {
  dir = tempDir();
  manifestFile = path.join(dir, 'manifest.json');
  [current, other] = await Promise.all([keyPair(), keyPair()]);
  keys = parseVerificationKeys([{ label: 'test', text: current.jwks }]);
});

afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const text = (marker: string): string => serializeManifest(makeManifest(STANDARD_CAPABILITIES, { marker }));
const revisionOf = (manifest: string): string => (JSON.parse(manifest) as { revision: string }).revision;

async function publish(manifest: string, key: KeyPair = current): Promise<void> {
  writeAtomic(`${manifestFile}.sig`, await signDetached(Buffer.from(manifest), key.signing));
  writeAtomic(manifestFile, manifest);
}

async function start(verification: VerificationKeys = keys): Promise<Runtime> {
  const runtime = await startRuntime({ manifestFile, manifestSource: { keys: verification }, watch: false });
  runtimes.push(runtime);
  return runtime;
}

/** JWS forms an attacker could put in the .sig, each over the real manifest bytes. */
const forgeries: Record<string, (manifest: string) => Promise<string>> = {
  'alg: none': (_manifest) => Promise.resolve(`${base64url.encode(JSON.stringify({ alg: 'none', kid: current.signing.kid }))}..`),
  'HMAC with the public key as secret': async (manifest) => {
    const jwk = (JSON.parse(current.jwks) as { keys: { x: string }[] }).keys[0] as { x: string };
    const jws = await new FlattenedSign(Buffer.from(manifest))
      .setProtectedHeader({ alg: 'HS256', kid: current.signing.kid, b64: false, crit: ['b64'] })
      .sign(Buffer.from(jwk.x));
    return `${jws.protected}..${jws.signature}`;
  },
  'the right key over the base64url-encoded bytes (b64: true)': async (manifest) => {
    const jws = await new CompactSign(Buffer.from(manifest))
      .setProtectedHeader({ alg: 'EdDSA', kid: current.signing.kid })
      .sign(await importJWK(current.signing.privateJwk, 'EdDSA'));
    return jws.replace(/\.[^.]+\./, '..');
  },
  'another key with the same kid': async (manifest) => signDetached(Buffer.from(manifest), { ...other.signing, kid: current.signing.kid }),
  'an unknown kid': async (manifest) => signDetached(Buffer.from(manifest), other.signing),
  'a signature with its payload attached': async (manifest) =>
    (await signDetached(Buffer.from(manifest), current.signing)).replace('..', `.${base64url.encode(manifest)}.`),
};

describe('at start', () => {
  it('serves a signed manifest and reports the kid in /healthz', async () => {
    const manifest = text('a');
    await publish(manifest);
    const runtime = await start();
    expect(runtime.health()).toMatchObject({
      status: 'ok',
      revision: revisionOf(manifest),
      signedBy: current.signing.kid,
      source: 'file',
      lastReloadError: null,
    });
  });

  it('refuses an unsigned manifest and a tampered one (one byte) with a LoadError', async () => {
    writeAtomic(manifestFile, text('a'));
    await expect(start()).rejects.toThrow(/signature refused: it has no signature/);
    const manifest = text('a');
    await publish(manifest);
    writeAtomic(manifestFile, manifest.replace('Does open-help', 'Does 0pen-help'));
    const refused = start();
    await expect(refused).rejects.toBeInstanceOf(LoadError);
    await expect(refused).rejects.toThrow(/does not match its content/);
  });

  for (const [name, forge] of Object.entries(forgeries)) {
    it(`refuses ${name}`, async () => {
      const manifest = text('a');
      writeAtomic(manifestFile, manifest);
      writeAtomic(`${manifestFile}.sig`, await forge(manifest));
      await expect(start()).rejects.toThrow(/signature refused/);
    });
  }

  it('accepts either key of a rotation (two JWKS files)', async () => {
    await publish(text('a'), other);
    const both = parseVerificationKeys([
      { label: 'old', text: current.jwks },
      { label: 'new', text: other.jwks },
    ]);
    expect((await start(both)).health().signedBy).toBe(other.signing.kid);
  });
});

describe('at every reload', () => {
  it('keeps the last good manifest through tampered, forged and removed signatures, then takes a good one', async () => {
    const good = text('a');
    await publish(good);
    const runtime = await start();

    const next = text('b');
    writeAtomic(manifestFile, next); // the old .sig stays: it does not cover the new bytes
    expect(await runtime.manifests.reload()).toBe('rejected');
    expect(runtime.health()).toMatchObject({ status: 'degraded', revision: revisionOf(good), signedBy: current.signing.kid });
    expect(runtime.health().lastReloadError).toMatch(
      /manifest reload rejected at .* \(manifest\.json\): signature refused: .*does not match its content.*; still serving revision sha256:/,
    );

    for (const forge of Object.values(forgeries)) {
      writeAtomic(`${manifestFile}.sig`, await forge(next));
      expect(await runtime.manifests.reload()).toBe('rejected');
      expect(runtime.health().revision).toBe(revisionOf(good));
    }

    // Removing the .sig cannot downgrade to unsigned.
    fs.rmSync(`${manifestFile}.sig`);
    expect(await runtime.manifests.reload()).toBe('rejected');
    expect(runtime.health().lastReloadError).toMatch(/it has no signature/);
    expect(runtime.health().revision).toBe(revisionOf(good));

    await publish(next, current);
    expect(await runtime.manifests.reload()).toBe('activated');
    expect(runtime.health()).toMatchObject({ status: 'ok', revision: revisionOf(next), lastReloadError: null });
  });

  it('reads a pair caught between the two writes of a publish again instead of refusing it', async () => {
    await publish(text('a'));
    const runtime = await start();
    const next = text('b');
    const signature = await signDetached(Buffer.from(next), current.signing);
    writeAtomic(manifestFile, next);
    const reloading = runtime.manifests.reload();
    setTimeout(() => writeAtomic(`${manifestFile}.sig`, signature), 100);
    expect(await reloading).toBe('activated');
    expect(runtime.health()).toMatchObject({ revision: revisionOf(next), lastReloadError: null });
  });

  it('the watcher picks up a new signed pair written by a publish', async () => {
    await publish(text('a'));
    const runtime = await startRuntime({ manifestFile, manifestSource: { keys }, debounceMs: 20, pollMs: 100 });
    runtimes.push(runtime);
    const next = text('b');
    await publish(next);
    const deadline = Date.now() + 5_000;
    while (runtime.health().revision !== revisionOf(next) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(runtime.health()).toMatchObject({ revision: revisionOf(next), lastReloadError: null, signedBy: current.signing.kid });
  });
});

describe('capreg serve (the bin)', () => {
  const serve = (args: string[]): { status: number | null; stderr: string } => {
    const result = spawnSync(process.execPath, serveArgv(['--manifest', manifestFile, ...args]), {
      cwd: dir,
      encoding: 'utf8',
      timeout: 20_000,
      env: { PATH: process.env['PATH'] ?? '' },
    });
    return { status: result.status, stderr: result.stderr };
  };

  it('exits 2 with one clear line on an unsigned manifest, a private key as --verify-key, or --require-signature without a key', () => {
    writeAtomic(manifestFile, text('a'));
    const jwksFile = path.join(dir, 'keys.jwks.json');
    fs.writeFileSync(jwksFile, current.jwks);
    const unsigned = serve(['--verify-key', jwksFile, '--require-signature']);
    expect(unsigned.status).toBe(2);
    expect(unsigned.stderr).toMatch(/^capreg serve: manifest .*manifest\.json refused: signature refused: it has no signature \(\.sig\)\n$/m);

    const privateFile = path.join(dir, 'private.jwk');
    fs.writeFileSync(privateFile, JSON.stringify(current.signing.privateJwk));
    const privateKey = serve(['--verify-key', privateFile]);
    expect(privateKey.status).toBe(2);
    expect(privateKey.stderr).toMatch(/holds a private key; give the server the public JWKS/);

    const noKey = serve(['--require-signature']);
    expect(noKey.status).toBe(2);
    expect(noKey.stderr).toMatch(/--require-signature needs --verify-key FILE/);
  });
});

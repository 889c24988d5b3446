// Detached JWS signatures over a manifest's exact bytes, made and checked with jose, the way OPA
// signs bundles: CI holds an Ed25519 private key, servers hold the public JWKS (several keys while
// one is rotated out). The `.sig` file is a compact JWS with its payload part left empty (RFC 7515
// Appendix F) and an unencoded payload (RFC 7797, `b64: false`): the bytes signed are the manifest's
// own, so a multi-megabyte manifest is never base64-encoded to be checked. Pure: no disk, no network.
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  decodeProtectedHeader,
  exportJWK,
  FlattenedSign,
  flattenedVerify,
  generateKeyPair,
  importJWK,
  type JSONWebKeySet,
  type JWK,
} from 'jose';

/** The one algorithm signed and accepted: `none`, HMAC and every other algorithm are refused. */
export const SIGNATURE_ALG = 'EdDSA';

/** A signature file is one line of a few hundred bytes; anything much larger is not one. */
export const MAX_SIGNATURE_BYTES = 16 * 1024;
/** A manifest's detached signature is the file beside it with this suffix (`manifest.json.sig`), and the URL likewise. */
export const MANIFEST_SIGNATURE_SUFFIX = '.sig';
/** More keys than a rotation needs is a mistake (and each is tried against a `kid`). */
export const MAX_VERIFY_KEYS = 32;

export type SignatureErrorCode = 'missing' | 'malformed' | 'algorithm' | 'unknown-kid' | 'bad-signature';

export type Verification = { ok: true; kid: string } | { ok: false; code: SignatureErrorCode; reason: string };

export type KeyErrorCode = 'invalid-key' | 'private-key-expected' | 'public-key-expected' | 'duplicate-kid' | 'too-many-keys';

export class SigningKeyError extends Error {
  override name = 'SigningKeyError';
  constructor(
    readonly code: KeyErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** The public keys a server accepts signatures from, by `kid`. */
export interface VerificationKeys {
  readonly kids: readonly string[];
  readonly jwks: JSONWebKeySet;
}

export interface SigningKey {
  kid: string;
  /** The private JWK (with `d`): what `build --sign-key` reads. */
  privateJwk: JWK;
}

/** A new Ed25519 key pair; the `kid` is the RFC 7638 thumbprint of the public key. */
export async function generateSigningKey(): Promise<{ privateJwk: JWK; publicJwks: JSONWebKeySet; kid: string }> {
  const { privateKey, publicKey } = await generateKeyPair(SIGNATURE_ALG, { crv: 'Ed25519', extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const common = { kid, alg: SIGNATURE_ALG, use: 'sig' };
  return { privateJwk: { ...(await exportJWK(privateKey)), ...common }, publicJwks: { keys: [{ ...publicJwk, ...common }] }, kid };
}

function isEd25519(jwk: JWK): boolean {
  return jwk.kty === 'OKP' && jwk.crv === 'Ed25519' && typeof jwk.x === 'string';
}

/** The private key of a `keygen` key file (JSON text). */
export function parseSigningKey(text: string): SigningKey {
  let jwk: JWK;
  try {
    jwk = JSON.parse(text) as JWK;
  } catch {
    throw new SigningKeyError('invalid-key', 'it is not JSON (expected the private JWK written by `capreg keygen`)');
  }
  if (typeof jwk !== 'object' || jwk === null || !isEd25519(jwk)) throw new SigningKeyError('invalid-key', 'it is not an Ed25519 JWK (kty OKP, crv Ed25519)');
  if (typeof jwk.d !== 'string') throw new SigningKeyError('private-key-expected', 'it holds a public key; signing needs the private key file');
  if (typeof jwk.kid !== 'string' || jwk.kid === '') throw new SigningKeyError('invalid-key', 'it has no `kid`');
  return { kid: jwk.kid, privateJwk: jwk };
}

/**
 * The public keys of one or more JWKS files (JSON texts), merged. A private key is refused (it
 * does not belong on a server), so is a key without a `kid` or a `kid` given twice for two keys.
 */
export function parseVerificationKeys(texts: readonly { label: string; text: string }[]): VerificationKeys {
  const byKid = new Map<string, JWK>();
  for (const { label, text } of texts) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new SigningKeyError('invalid-key', `${label} is not JSON (expected a JWKS: {"keys": [...]})`);
    }
    const keys = (parsed as { keys?: unknown } | null)?.keys;
    // A lone JWK is accepted too: it is one key of a set.
    const list: unknown[] = Array.isArray(keys) ? keys : [parsed];
    for (const key of list) {
      const jwk = key as JWK;
      if (typeof jwk !== 'object' || jwk === null || !isEd25519(jwk))
        throw new SigningKeyError('invalid-key', `${label}: every key must be an Ed25519 JWK (kty OKP, crv Ed25519)`);
      if (typeof jwk.d === 'string')
        throw new SigningKeyError('public-key-expected', `${label} holds a private key; give the server the public JWKS written by \`capreg keygen\``);
      if (typeof jwk.kid !== 'string' || jwk.kid === '') throw new SigningKeyError('invalid-key', `${label}: a key has no \`kid\``);
      const existing = byKid.get(jwk.kid);
      if (existing && existing.x !== jwk.x) throw new SigningKeyError('duplicate-kid', `${label}: kid ${jwk.kid} names two different keys`);
      byKid.set(jwk.kid, { kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid: jwk.kid, alg: SIGNATURE_ALG, use: 'sig' });
    }
  }
  if (byKid.size === 0) throw new SigningKeyError('invalid-key', 'no verification key given');
  if (byKid.size > MAX_VERIFY_KEYS) throw new SigningKeyError('too-many-keys', `${byKid.size} verification keys, over the limit of ${MAX_VERIFY_KEYS}`);
  return { kids: [...byKid.keys()], jwks: { keys: [...byKid.values()] } };
}

/** The detached compact JWS (`header..signature`) over `payload`, with the key's `kid` in the header. */
export async function signDetached(payload: Uint8Array, key: SigningKey): Promise<string> {
  const privateKey = await importJWK(key.privateJwk, SIGNATURE_ALG);
  const jws = await new FlattenedSign(payload).setProtectedHeader({ alg: SIGNATURE_ALG, kid: key.kid, b64: false, crit: ['b64'] }).sign(privateKey);
  return `${jws.protected}..${jws.signature}`;
}

/**
 * Whether `signature` is a detached JWS over exactly `payload` by one of `keys`. Never throws:
 * every way it can fail is a typed code and a reason that quotes nothing from the input.
 */
export async function verifyDetached(payload: Uint8Array, signature: string | undefined, keys: VerificationKeys): Promise<Verification> {
  if (signature === undefined) return { ok: false, code: 'missing', reason: 'it has no signature (.sig)' };
  const compact = signature.trim();
  const parts = compact.split('.');
  if (signature.length > MAX_SIGNATURE_BYTES || parts.length !== 3 || parts[1] !== '') {
    return { ok: false, code: 'malformed', reason: 'its signature is not a detached JWS (header..signature)' };
  }
  let header;
  try {
    header = decodeProtectedHeader(compact);
  } catch {
    return { ok: false, code: 'malformed', reason: 'its signature has an unreadable JWS header' };
  }
  if (header.alg !== SIGNATURE_ALG)
    return { ok: false, code: 'algorithm', reason: `its signature uses an algorithm other than ${SIGNATURE_ALG}, which is refused` };
  if (header.b64 !== false) return { ok: false, code: 'malformed', reason: 'its signature is not over the unencoded manifest (b64: false)' };
  const kid = header.kid;
  if (typeof kid !== 'string' || !keys.kids.includes(kid)) {
    return {
      ok: false,
      code: 'unknown-kid',
      reason: `its signature names ${typeof kid === 'string' ? 'a kid' : 'no kid'} that is not among the verification keys`,
    };
  }
  try {
    await flattenedVerify({ protected: parts[0], payload, signature: parts[2] as string }, createLocalJWKSet(keys.jwks), {
      algorithms: [SIGNATURE_ALG],
      crit: { b64: true },
    });
  } catch {
    return { ok: false, code: 'bad-signature', reason: `its signature does not match its content for key ${kid} (tampered, or signed by another key)` };
  }
  return { ok: true, kid };
}

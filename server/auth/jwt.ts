// JWT bearer tokens verified with jose (SPEC §6): signature against a JWKS (file or URL) or a
// public key file; `exp` required, `nbf`, `iss` and `aud` checked; scopes from `scope` (space
// separated) or `scp` (list or space separated); principal id from `sub`. No MCP SDK code here.
import { createPublicKey } from 'node:crypto';
import { createLocalJWKSet, createRemoteJWKSet, customFetch, jwtVerify, type JWTPayload, type JWTVerifyGetKey, type KeyObject } from 'jose';
import { isRecord } from '../../compiler/yaml-source.js';
import { displayUrl } from '../display-url.js';
import { authenticatedCaller, isOwnerId, type Caller } from '../identity.js';
import { isLoopbackHost } from '../loopback.js';
import type { LineLog } from '../log.js';
import { KEY_FILE_LIMITS, readBounded } from '../read-file.js';

export interface JwtOptions {
  /** A JWKS as an `https://` URL (`http://` only on loopback) or a file path. */
  jwks?: string;
  /** A PEM public key (SPKI) file. */
  publicKeyFile?: string;
  issuer: string;
  audience: string;
}

export interface JwtVerifier {
  /** The caller the token proves, or undefined for any token that does not verify. */
  verify(token: string): Promise<Caller | undefined>;
  /**
   * With a JWKS URL: `unavailable` from a fetch that failed until one succeeds (JWTs are refused
   * meanwhile, unless jose still holds fresh keys). Undefined for keys read from a file at start.
   */
  jwksHealth(): JwksHealth | undefined;
}

/** `/healthz`'s `jwks`: only the state, never the URL (which may carry a secret) or the issuer's answer. */
export interface JwksHealth {
  status: 'ok' | 'unavailable';
}

export class JwtConfigError extends Error {
  override name = 'JwtConfigError';
}

// Asymmetric algorithms only: a shared secret would let anyone who can verify also mint, and
// `none` (an unsigned token) is never accepted.
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
const CLOCK_TOLERANCE_SECONDS = 5;
/** A JWKS fetched from a URL is at most this long, like a JWKS file (KEY_FILE_LIMITS). */
export const MAX_JWKS_BYTES = KEY_FILE_LIMITS.maxBytes;
/** After a failed JWKS fetch the URL is not fetched again for this long, doubled at each failure in a row up to the maximum. */
export const FIRST_JWKS_RETRY_MS = 1_000;
export const MAX_JWKS_RETRY_MS = 60_000;

export async function createJwtVerifier(options: JwtOptions, log: LineLog = () => {}): Promise<JwtVerifier> {
  const { key, jwksHealth } = await loadKey(options, log);
  const verifyOptions = {
    issuer: options.issuer,
    audience: options.audience,
    algorithms: ALGORITHMS,
    requiredClaims: ['exp', 'sub'],
    clockTolerance: CLOCK_TOLERANCE_SECONDS,
  };
  return {
    async verify(token) {
      try {
        const { payload } = typeof key === 'function' ? await jwtVerify(token, key, verifyOptions) : await jwtVerify(token, key, verifyOptions);
        return callerFromClaims(payload);
      } catch {
        return undefined;
      }
    },
    jwksHealth: () => jwksHealth?.(),
  };
}

async function loadKey(options: JwtOptions, log: LineLog): Promise<{ key: JWTVerifyGetKey | KeyObject; jwksHealth?: () => JwksHealth }> {
  if ((options.jwks === undefined) === (options.publicKeyFile === undefined)) {
    throw new JwtConfigError('give exactly one of --jwt-jwks and --jwt-public-key');
  }
  if (options.publicKeyFile !== undefined) {
    const read = await readBounded(options.publicKeyFile, KEY_FILE_LIMITS);
    if (!read.ok) throw new JwtConfigError(`cannot read --jwt-public-key ${options.publicKeyFile}: ${read.reason}`);
    try {
      const key = createPublicKey(read.text);
      if (key.type !== 'public') throw new Error('not a public key');
      return { key };
    } catch (error) {
      throw new JwtConfigError(`--jwt-public-key ${options.publicKeyFile} is not a PEM public key (${(error as Error).message})`);
    }
  }
  const source = options.jwks as string;
  if (/^https?:\/\//i.test(source)) {
    let url: URL;
    try {
      url = new URL(source);
    } catch {
      // Not repeated: an unparsable URL cannot be shown without whatever secret it holds.
      throw new JwtConfigError('--jwt-jwks is not a valid URL');
    }
    // Keys fetched over plain HTTP could be swapped on the way; only loopback may skip TLS.
    if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
      // Shown without credentials or query: the message goes to stderr, and from there to the logs.
      throw new JwtConfigError(`--jwt-jwks must be an https:// URL (or a file), not ${displayUrl(url)}`);
    }
    const fetcher = boundedJwksFetch(log);
    return { key: createRemoteJWKSet(url, { [customFetch]: fetcher.fetch }), jwksHealth: fetcher.health };
  }
  const read = await readBounded(source, KEY_FILE_LIMITS);
  if (!read.ok) throw new JwtConfigError(`cannot read --jwt-jwks ${source}: ${read.reason}`);
  const jwks = keySet(read.text);
  if (!jwks.ok) throw new JwtConfigError(`cannot read --jwt-jwks ${source} as a JSON Web Key Set: ${jwks.reason}`);
  return { key: jwks.keys };
}

/** A JWKS's text as jose takes it, or why not: the same check for a file and for a URL's answer. */
function keySet(text: string): { ok: true; keys: JWTVerifyGetKey } | { ok: false; reason: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `it is not JSON (${(error as Error).message})` };
  }
  if (!isRecord(parsed) || !Array.isArray(parsed['keys'])) return { ok: false, reason: 'it is not a key set ({"keys": [...]})' };
  try {
    return { ok: true, keys: createLocalJWKSet(parsed as unknown as Parameters<typeof createLocalJWKSet>[0]) };
  } catch (error) {
    return { ok: false, reason: `jose refuses it as a key set (${(error as Error).message})` };
  }
}

/**
 * The fetch jose uses for a JWKS URL. jose reads the whole answer into memory and, while the URL
 * fails (an error status, a redirect, a timeout, a body that is not a key set), fetches it again for
 * every token presented: a stream of tokens would become a stream of fetches at the issuer, and a
 * huge answer a huge allocation. Here the body is read up to MAX_JWKS_BYTES, and after a failure
 * the URL is left alone for a wait that doubles while it keeps failing (tokens meanwhile do not
 * verify, unless jose still holds keys that are fresh).
 */
function boundedJwksFetch(log: LineLog): { fetch: (url: string, init: RequestInit) => Promise<Response>; health: () => JwksHealth } {
  let failures = 0;
  // Logged without a query string or credentials: either may hold a secret.
  const shown = (url: string): string => (URL.canParse(url) ? displayUrl(new URL(url)) : '<the JWKS URL>');
  let retryAt = 0;
  const health = (): JwksHealth => ({ status: failures > 0 ? 'unavailable' : 'ok' });
  const fetchKeys = async (url: string, init: RequestInit): Promise<Response> => {
    if (failures > 0 && performance.now() < retryAt) throw new Error('the JWKS URL failed recently; not fetched again yet');
    try {
      const response = await fetch(url, init);
      if (response.status !== 200) {
        await response.body?.cancel().catch(() => undefined);
        throw new Error(`it answered HTTP ${response.status}`);
      }
      const text = await readLimited(response, MAX_JWKS_BYTES);
      // Checked here as jose would: a set it refuses after this fetch succeeded would be fetched
      // again for every token, with no wait ({"keys": [1]}: 30 tokens were 30 fetches).
      const jwks = keySet(text);
      if (!jwks.ok) throw new Error(`its answer: ${jwks.reason}`);
      if (failures > 0) log(`capreg serve: the JWKS URL ${shown(url)} answers again`);
      failures = 0;
      return new Response(text, { status: 200, headers: { 'Content-Type': 'application/json' } });
    } catch (error) {
      const wait = Math.min(MAX_JWKS_RETRY_MS, FIRST_JWKS_RETRY_MS * 2 ** failures);
      failures += 1;
      retryAt = performance.now() + wait;
      const reason = (error as Error).name === 'TimeoutError' ? 'it did not answer in time' : (error as Error).message;
      log(
        `capreg serve: cannot fetch the JWKS URL ${shown(url)}: ${reason}; JWTs are refused until it is fetched again (in ${wait / 1000} s at the earliest)`,
        'warn',
      );
      throw error;
    }
  };
  return { fetch: fetchKeys, health };
}

/** The body as text, or an error as soon as it passes `limit` bytes (the rest is not read). */
async function readLimited(response: Response, limit: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel().catch(() => undefined);
    throw new Error(`its answer is ${declared} bytes, over the limit of ${limit}`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw new Error(`its answer is over the limit of ${limit} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function callerFromClaims(payload: JWTPayload): Caller | undefined {
  const id = payload.sub;
  // jose has checked `iss` against the configured issuer; it namespaces the owner of saves.
  if (typeof id !== 'string' || !isOwnerId(id) || typeof payload.iss !== 'string') return undefined;
  const name = typeof payload['name'] === 'string' && payload['name'] !== '' ? payload['name'] : id;
  return authenticatedCaller(id, name, scopesFromClaims(payload), 'jwt', payload.iss);
}

/** `scope` is a space-separated string (RFC 8693); `scp` is a list or a string (Azure AD, Okta). */
export function scopesFromClaims(payload: JWTPayload): string[] {
  const scopes = new Set<string>();
  const add = (value: unknown): void => {
    if (typeof value === 'string') for (const part of value.split(' ')) if (part !== '') scopes.add(part);
    if (Array.isArray(value)) for (const item of value) if (typeof item === 'string' && item !== '') scopes.add(item);
  };
  add(payload['scope']);
  add(payload['scp']);
  return [...scopes];
}

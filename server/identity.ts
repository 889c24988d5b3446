// Who is calling. Identity comes only from credentials (an API key or a verified JWT), never from
// tool arguments. No MCP SDK code here.
import { Grants } from './permissions.js';

export type Caller =
  | {
      authenticated: true;
      id: string;
      name: string;
      scopes: readonly string[];
      method: 'api-key' | 'jwt';
      /** The JWT's issuer; absent for an API key. */
      issuer?: string;
      /**
       * Who owns what this caller saves: the id namespaced by where it comes from (see ownerKey),
       * so a JWT `sub` never meets an API-key principal with the same id.
       */
      owner: string;
      grants: Grants;
    }
  | { authenticated: false; grants: Grants };

export const ANONYMOUS: Caller = Object.freeze({ authenticated: false, grants: Grants.none });

/** The longest id of an owner: a JWT `sub` or an API-key principal's id (bounded, like every input). */
export const MAX_OWNER_ID_LENGTH = 256;
// No control characters: PostgreSQL refuses NUL in text, and a caller must not be able to make the
// store look down (or a log line look forged) with its id. No lone surrogate (\p{Cs}): it is not
// Unicode, so the stores would write it as U+FFFD (several ids sharing one owner) or as bytes no
// read matches (an owner losing its own saves).
const OWNER_ID_TEXT = new RegExp(`^[^\\u0000-\\u001f\\u007f-\\u009f\\p{Cs}]{1,${MAX_OWNER_ID_LENGTH}}$`, 'u');

/** Whether `id` can name an owner in the user store: 1 to 256 characters of well-formed text without control characters. */
export function isOwnerId(id: string): boolean {
  return OWNER_ID_TEXT.test(id);
}

/** Owners saved before identities were namespaced were API-key principal ids (the store migrations). */
export const API_KEY_OWNER_PREFIX = 'key:';
const JWT_OWNER_PREFIX = 'jwt:';

/**
 * `key:<principal id>` or `jwt:<issuer>#<sub>`. The namespace ends at the first `:`; in a JWT key
 * the issuer has `%` and `#` percent-encoded, so the first `#` ends it: no two identities share a
 * key, whatever their ids contain.
 */
export function ownerKey(source: { method: 'api-key' } | { method: 'jwt'; issuer: string }, id: string): string {
  if (source.method === 'api-key') return `${API_KEY_OWNER_PREFIX}${id}`;
  return `${JWT_OWNER_PREFIX}${source.issuer.replace(/%/g, '%25').replace(/#/g, '%23')}#${id}`;
}

export function authenticatedCaller(id: string, name: string, scopes: readonly string[], method: 'api-key'): Caller;
export function authenticatedCaller(id: string, name: string, scopes: readonly string[], method: 'jwt', issuer: string): Caller;
export function authenticatedCaller(id: string, name: string, scopes: readonly string[], method: 'api-key' | 'jwt', issuer?: string): Caller {
  const source = method === 'jwt' ? { method, issuer: issuer as string } : { method };
  // Frozen: one caller object may serve many requests of the same principal.
  return Object.freeze({
    authenticated: true,
    id,
    name,
    scopes: Object.freeze([...scopes]),
    method,
    ...(source.method === 'jwt' ? { issuer: source.issuer } : {}),
    owner: ownerKey(source, id),
    grants: new Grants(scopes),
  });
}

/**
 * Resolves the caller at the moment of a call. stdio resolves its key against the principals as
 * they are now (so a revoked key stops working on the next call); HTTP resolves once per request.
 */
export type CallerResolver = () => Caller;

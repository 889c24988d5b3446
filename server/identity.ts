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

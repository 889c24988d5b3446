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
      grants: Grants;
    }
  | { authenticated: false; grants: Grants };

export const ANONYMOUS: Caller = Object.freeze({ authenticated: false, grants: Grants.none });

export function authenticatedCaller(
  id: string,
  name: string,
  scopes: readonly string[],
  method: 'api-key' | 'jwt',
): Caller {
  // Frozen: one caller object may serve many requests of the same principal.
  return Object.freeze({ authenticated: true, id, name, scopes: Object.freeze([...scopes]), method, grants: new Grants(scopes) });
}

/**
 * Resolves the caller at the moment of a call. stdio resolves its key against the principals as
 * they are now (so a revoked key stops working on the next call); HTTP resolves once per request.
 */
export type CallerResolver = () => Caller;

// API keys (SPEC §6): a key is valid while the principals file lists its SHA-256; the lookup hashes
// the presented key and compares in constant time (PrincipalRegistry.findByKey). No MCP SDK code here.
import { authenticatedCaller, type Caller } from '../identity.js';
import type { PrincipalRegistry } from '../principals.js';

/** The caller this key identifies in the given principals, or undefined for no key or an unknown one. */
export function apiKeyCaller(principals: PrincipalRegistry, key: string | undefined): Caller | undefined {
  if (key === undefined || key === '') return undefined;
  const principal = principals.findByKey(key);
  return principal && authenticatedCaller(principal.id, principal.name, principal.scopes, 'api-key');
}

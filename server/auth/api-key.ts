// API keys (SPEC §6): a key is valid while the principals file lists its SHA-256; the lookup hashes
// the presented key and looks its hash up (PrincipalRegistry.findByKey). No MCP SDK code here.
import { authenticatedCaller, type Caller } from '../identity.js';
import type { Principal, PrincipalRegistry } from '../principals.js';

// A principal object lives as long as the principals version that holds it, so its caller (and its
// parsed grants) is built once, not on every request; a reload brings new principal objects.
const callers = new WeakMap<Principal, Caller>();

export function principalCaller(principal: Principal): Caller {
  let caller = callers.get(principal);
  if (caller === undefined) {
    caller = authenticatedCaller(principal.id, principal.name, principal.scopes, 'api-key');
    callers.set(principal, caller);
  }
  return caller;
}

/** The caller this key identifies in the given principals, or undefined for no key or an unknown one. */
export function apiKeyCaller(principals: PrincipalRegistry, key: string | undefined): Caller | undefined {
  if (key === undefined || key === '') return undefined;
  const principal = principals.findByKey(key);
  return principal && principalCaller(principal);
}

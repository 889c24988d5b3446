// Turns an `Authorization` header into a caller: an API key from the principals file as it is
// now, or a verified JWT. Anything else fails closed. No MCP SDK code here.
import type { Caller } from '../identity.js';
import type { PrincipalRegistry } from '../principals.js';
import { apiKeyCaller } from './api-key.js';
import type { JwtVerifier } from './jwt.js';

/** `unavailable`: the principals file could not be checked in time, so no key can be trusted or refused. */
export type BearerResult = { ok: true; caller: Caller } | { ok: false; reason: 'missing' | 'invalid' | 'unavailable' };

export interface BearerAuthenticator {
  authenticate(authorization: string | undefined): Promise<BearerResult>;
}

// RFC 6750 b64token; an API key or a compact JWT both fit.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const MAX_TOKEN_LENGTH = 16 * 1024;

export function createBearerAuthenticator(deps: {
  principals: () => PrincipalRegistry | undefined | Promise<PrincipalRegistry | undefined>;
  jwt?: JwtVerifier | undefined;
}): BearerAuthenticator {
  return {
    async authenticate(authorization) {
      if (authorization === undefined || authorization.trim() === '') return { ok: false, reason: 'missing' };
      if (authorization.length > MAX_TOKEN_LENGTH) return { ok: false, reason: 'invalid' };
      const match = BEARER.exec(authorization);
      if (!match) return { ok: false, reason: 'invalid' };
      const token = match[1] as string;
      // A key revoked a moment ago must fail now: without an answer about the principals, a token
      // is neither taken nor refused as a key. A JWT that verifies depends on no principals file.
      const principals = await deps.principals();
      const keyCaller = principals && apiKeyCaller(principals, token);
      if (keyCaller) return { ok: true, caller: keyCaller };
      if (deps.jwt && token.split('.').length === 3) {
        const caller = await deps.jwt.verify(token);
        if (caller) return { ok: true, caller };
      }
      return { ok: false, reason: principals === undefined ? 'unavailable' : 'invalid' };
    },
  };
}

// The principals file (SPEC §6): `principals: [{id, name, keySha256, scopes}]`. Keys are stored
// only as SHA-256 hex; a presented key is hashed and compared in constant time against every
// entry. No MCP SDK code here.
import { hash, timingSafeEqual } from 'node:crypto';
import { LineIndex } from '../compiler/positions.js';
import { parseYamlSource } from '../compiler/yaml-source.js';
import { isOwnerId, MAX_OWNER_ID_LENGTH } from './identity.js';
import { parseScope, SCOPE_FORMAT } from './permissions.js';

export interface Principal {
  id: string;
  name: string;
  scopes: readonly string[];
}

interface PrincipalEntry {
  /** Frozen, and the same object on every lookup, so callers may cache per principal. */
  principal: Principal;
  keyDigest: Buffer;
}

export type PrincipalsParseResult = { ok: true; registry: PrincipalRegistry } | { ok: false; error: string };

const KEY_SHA256 = /^[0-9a-f]{64}$/;
const ALLOWED_FIELDS = new Set(['id', 'name', 'keySha256', 'scopes']);
export class PrincipalRegistry {
  readonly #entries: readonly PrincipalEntry[];
  /** Entries by their key's SHA-256 in hex (unique: parsePrincipals refuses a hash listed twice). */
  readonly #byDigest: ReadonlyMap<string, PrincipalEntry>;

  constructor(entries: readonly PrincipalEntry[]) {
    this.#entries = entries;
    this.#byDigest = new Map(entries.map((entry) => [entry.keyDigest.toString('hex'), entry]));
  }

  static readonly empty = new PrincipalRegistry([]);

  get size(): number {
    return this.#entries.length;
  }

  /**
   * The principal whose key this is, or undefined: looked up by the key's SHA-256, then compared
   * with `timingSafeEqual`. The time taken does not depend on which entry, if any, matched, nor on
   * how many there are; what the lookup's time could tell about the hashes (a caller would time
   * hash buckets) gives nothing towards a key. Comparing with every entry made each request of a
   * file of 40,000 principals cost ~3 ms, refused ones included.
   */
  findByKey(key: string): Principal | undefined {
    return this.findByKeyDigest(sha256(key));
  }

  /** The principal with this id (`capreg export --as`: an operator's choice, not a credential). */
  findById(id: string): Principal | undefined {
    return this.#entries.find((entry) => entry.principal.id === id)?.principal;
  }

  findByKeyDigest(digest: Buffer): Principal | undefined {
    const entry = this.#byDigest.get(digest.toString('hex'));
    return entry !== undefined && timingSafeEqual(entry.keyDigest, digest) ? entry.principal : undefined;
  }
}

export function sha256(text: string): Buffer {
  return hash('sha256', text, 'buffer');
}

/** Parse and validate a principals file; every problem is a reason to reject the whole file. */
export function parsePrincipals(text: string): PrincipalsParseResult {
  // The project's one YAML reader (depth limit, JSON-compatible only; no aliases here). Its messages
  // quote no source line, so a key hash never lands in a log or in /healthz. No value limit: the
  // operator's own file, which holds as many principals as the deployment has.
  const source = parseYamlSource(text, new LineIndex(text), { maxAliasCount: 0, maxValues: Infinity });
  const problem = source.problems[0];
  if (problem) return { ok: false, error: `principals file is not valid YAML: ${problem.range.line}:${problem.range.column}: ${problem.message}` };
  const data = source.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { ok: false, error: 'principals file must be a mapping with a `principals` list' };
  }
  const list = (data as Record<string, unknown>)['principals'];
  if (!Array.isArray(list)) return { ok: false, error: 'principals file must have a `principals` list' };

  const entries: PrincipalEntry[] = [];
  /** Each id and the index it was first listed at. */
  const ids = new Map<string, number>();
  const digests = new Set<string>();
  for (const [index, item] of list.entries()) {
    const where = `principals[${index}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      return { ok: false, error: `${where} must be a mapping {id, name, keySha256, scopes}` };
    }
    const record = item as Record<string, unknown>;
    const unknownField = Object.keys(record).find((key) => !ALLOWED_FIELDS.has(key));
    if (unknownField !== undefined) {
      const hint = unknownField === 'key' || unknownField === 'apiKey' ? ' (store only the SHA-256 hex of a key, as keySha256)' : '';
      return { ok: false, error: `${where} has an unknown field "${unknownField}"${hint}` };
    }
    const { id, name, keySha256, scopes } = record;
    if (typeof id !== 'string' || id.trim() === '') return { ok: false, error: `${where}.id must be a non-empty string` };
    // It names the principal's owner in the user store (server/identity.ts), held to a JWT `sub`'s rule.
    if (!isOwnerId(id)) {
      return {
        ok: false,
        error: `${where}.id has a control character or a lone UTF-16 surrogate, or is over ${MAX_OWNER_ID_LENGTH} characters; an id must be printable, well-formed text`,
      };
    }
    // By position, not by the id: the reason is shown by /healthz, which anyone may read.
    const first = ids.get(id);
    if (first !== undefined) return { ok: false, error: `${where}.id is the same as principals[${first}].id` };
    if (name !== undefined && typeof name !== 'string') return { ok: false, error: `${where}.name must be a string` };
    if (typeof keySha256 !== 'string' || !KEY_SHA256.test(keySha256)) {
      return { ok: false, error: `${where}.keySha256 must be 64 lowercase hex characters (the SHA-256 of the key)` };
    }
    if (digests.has(keySha256)) return { ok: false, error: `${where}.keySha256 is the same as an earlier principal's` };
    if (!Array.isArray(scopes)) return { ok: false, error: `${where}.scopes must be a list of "<toolset>:<action>" strings` };
    for (const scope of scopes) {
      if (typeof scope !== 'string' || !parseScope(scope)) {
        return {
          ok: false,
          error: `${where}.scopes has ${JSON.stringify(scope)}; expected ${SCOPE_FORMAT}`,
        };
      }
    }
    ids.set(id, index);
    digests.add(keySha256);
    entries.push({
      principal: Object.freeze({ id, name: name ?? id, scopes: Object.freeze([...new Set(scopes as string[])]) }),
      keyDigest: Buffer.from(keySha256, 'hex'),
    });
  }
  return { ok: true, registry: new PrincipalRegistry(entries) };
}

// The SHA-256 of each text file's content, computed once per compile's input: the lint record's
// key and the parse cache's keys both need them (a lint that misses its record hashed the 48 MB of
// a 10,000-capability registry twice, ~0.35 s each time). Keyed by the input object, which is never
// changed once read (a compile that refuses a file makes a new one).
import { sha256Hex } from '../compiler/canonical.js';
import type { RegistryInput } from '../compiler/types.js';

const memo = new WeakMap<RegistryInput, Map<string, string>>();

/** The hex SHA-256 of `content`, the text `input` holds at `path`. */
export function contentDigest(input: RegistryInput, path: string, content: string): string {
  let digests = memo.get(input);
  if (digests === undefined) memo.set(input, (digests = new Map<string, string>()));
  let digest = digests.get(path);
  if (digest === undefined) digests.set(path, (digest = sha256Hex(content)));
  return digest;
}

// Canonical JSON (sorted object keys, no insignificant whitespace) and the digests built on it.
// The same bytes must come out for the same data on every machine: manifest `revision`,
// `integrity`, per-capability `digest` and per-caller `catalogVersion` all rest on this.
import { createHash, hash } from 'node:crypto';

/**
 * How deeply JSON data may nest (the root object or array is level 1). Real manifests nest a few
 * levels plus whatever a frontmatter field holds; the recursive walks over the data (JSON.stringify,
 * schema validation, catalog building) overflow the stack a few thousand levels down, so deeper
 * data is refused before any of them runs.
 */
export const MAX_JSON_DEPTH = 100;

export type CanonicalJsonErrorCode = 'too-deep' | 'non-finite';

export class CanonicalJsonError extends Error {
  override name = 'CanonicalJsonError';
  constructor(
    readonly code: CanonicalJsonErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The keys and indices leading to the first object or array nested deeper than `maxDepth`, or
 * undefined when none is. Members are walked last first, depth first. The walk goes no deeper than
 * `maxDepth` + 1 levels whatever the value holds, so it cannot itself overflow the stack for any
 * limit near MAX_JSON_DEPTH; it makes no array or object of its own on the way (an iterative
 * walk that did made a third of the time of writing a manifest of 10,000).
 */
export function tooDeepPath(value: unknown, maxDepth = MAX_JSON_DEPTH): (string | number)[] | undefined {
  const path: (string | number)[] = [];
  return nestsDeeper(value, 1, maxDepth, path) ? path.reverse() : undefined;
}

/** Whether `value`, at `depth`, is or holds an object or array deeper than `maxDepth`; if so, `path` gets the keys from there up. */
function nestsDeeper(value: unknown, depth: number, maxDepth: number, path: (string | number)[]): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (depth > maxDepth) return true;
  if (Array.isArray(value)) {
    for (let index = value.length - 1; index >= 0; index -= 1) {
      if (nestsDeeper(value[index], depth + 1, maxDepth, path)) {
        path.push(index);
        return true;
      }
    }
    return false;
  }
  const keys = Object.keys(value);
  for (let index = keys.length - 1; index >= 0; index -= 1) {
    const key = keys[index]!;
    if (nestsDeeper((value as Record<string, unknown>)[key], depth + 1, maxDepth, path)) {
      path.push(key);
      return true;
    }
  }
  return false;
}

/**
 * `indent` (JSON.stringify's `space`) lays the same JSON out over lines: the bytes of
 * `JSON.stringify(JSON.parse(canonicalJson(value)), null, indent)`, without the second copy.
 */
export function canonicalJson(value: unknown, indent?: number): string {
  refuseTooDeep(value);
  return canonicalJsonOfChecked(value, indent);
}

function refuseTooDeep(value: unknown): void {
  if (tooDeepPath(value) !== undefined) {
    throw new CanonicalJsonError('too-deep', `canonicalJson: value nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
}

/** canonicalJson of a value whose depth has been checked. */
function canonicalJsonOfChecked(value: unknown, indent?: number): string {
  // JSON.stringify does the escaping and drops undefined members; the replacer only re-inserts
  // each object's keys in sorted order (UTF-16 code unit order, as Array.prototype.sort does).
  return (
    JSON.stringify(
      value,
      (_key, member: unknown) => {
        if (member === null || typeof member !== 'object' || Array.isArray(member)) {
          if (typeof member === 'number' && !Number.isFinite(member)) throw new CanonicalJsonError('non-finite', 'canonicalJson: non-finite number');
          return member;
        }
        const sorted: Record<string, unknown> = {};
        for (const key of Object.keys(member).sort()) sorted[key] = (member as Record<string, unknown>)[key];
        return sorted;
      },
      indent,
    ) ?? 'null'
  );
}

/**
 * sha256 of a string (as UTF-8) or bytes, in hex. One call, no Hash object: ~3× as fast as
 * createHash for the short texts hashed by the thousand (paragraph fingerprints, file digests).
 */
export function sha256Hex(data: string | Uint8Array): string {
  return hash('sha256', data, 'hex');
}

/**
 * `sha256:<hex>` of the canonical JSON of a value. A large value's text goes to the hash in pieces
 * (see writeCanonical), not as one string: the manifest of 10,000 capabilities is ~70 MB of JSON,
 * which as a single string cost ~0.25 GB of memory at the build's peak, and as much time again to
 * encode for the hash.
 */
export function digestOf(value: unknown): string {
  refuseTooDeep(value);
  const hash = createHash('sha256');
  writeCanonical(value, undefined, (text) => hash.update(text));
  return `sha256:${hash.digest('hex')}`;
}

/**
 * The UTF-8 bytes of `canonicalJson(value, indent)` followed by `trailer` (a file's last newline),
 * made without that string (see digestOf): a manifest's text is twice its size in memory when one
 * character needs two bytes in UTF-16.
 */
export function canonicalJsonBytes(value: unknown, indent?: number, trailer = ''): Buffer {
  refuseTooDeep(value);
  const chunks: Buffer[] = [];
  writeCanonical(value, indent, (text) => chunks.push(Buffer.from(text, 'utf8')));
  chunks.push(Buffer.from(trailer, 'utf8'));
  return Buffer.concat(chunks);
}

/**
 * The order canonicalJson writes an object's keys in: sorted, except that keys that are array
 * indices ("0", "17") come first, in numeric order, as in every JavaScript object (canonicalJson
 * makes an object with the keys inserted in sorted order, and the language reorders those).
 */
function canonicalKeyOrder(value: object): string[] {
  const sorted: Record<string, true> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = true;
  return Object.keys(sorted);
}

/** What JSON.stringify leaves out of an object (and writes as `null` in an array). */
function isOmitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/**
 * Short pieces (keys, punctuation) are joined up to this many characters before they are handed
 * on; a longer piece goes on as it is. Encoding a ~7 KB piece at a time took half the time of
 * encoding one 70 MB string, or of joining the pieces into large chunks first.
 */
const CHUNK_CHARS = 1 << 12;
/**
 * What writeCanonical lays out itself: an array of at least this many items (a manifest's
 * capabilities), at the top or as a member of the object at the top, and that object. Anything
 * else is one canonicalJson: a small value in pieces would cost more than the one string it saves.
 */
const OPENED_ARRAY_ITEMS = 64;
const isLongArray = (value: unknown): boolean => Array.isArray(value) && value.length >= OPENED_ARRAY_ITEMS;

/**
 * Hands canonicalJson(value, indent) to `flush` in pieces (see CHUNK_CHARS and
 * OPENED_ARRAY_ITEMS); each piece made by canonicalJson is re-indented for the depth it sits at.
 */
function writeCanonical(value: unknown, indent: number | undefined, flush: (text: string) => void): void {
  // JSON.stringify's `space`: up to 10 spaces, none for 0 or less.
  const gap = ' '.repeat(Math.max(0, Math.min(10, Math.floor(indent ?? 0))));
  let pending = '';
  const write = (piece: string): void => {
    if (piece.length >= CHUNK_CHARS) {
      if (pending !== '') flush(pending);
      flush(piece);
      pending = '';
      return;
    }
    pending += piece;
    if (pending.length >= CHUNK_CHARS) {
      flush(pending);
      pending = '';
    }
  };
  const newline = (depth: number): string => (gap === '' ? '' : `\n${gap.repeat(depth)}`);
  const visit = (member: unknown, depth: number): void => {
    const open =
      typeof member === 'object' &&
      member !== null &&
      typeof (member as { toJSON?: unknown }).toJSON !== 'function' &&
      (isLongArray(member) ? depth <= 1 : depth === 0 && !Array.isArray(member) && Object.values(member).some(isLongArray));
    if (!open) {
      const text = canonicalJsonOfChecked(member, indent);
      write(gap === '' || depth === 0 ? text : text.replaceAll('\n', newline(depth)));
      return;
    }
    const entries: [string | undefined, unknown][] = Array.isArray(member)
      ? member.map((item: unknown) => [undefined, isOmitted(item) ? null : item])
      : canonicalKeyOrder(member).flatMap((key) => {
          const item = (member as Record<string, unknown>)[key];
          return isOmitted(item) ? [] : [[key, item] as [string, unknown]];
        });
    const [opening, closing] = Array.isArray(member) ? ['[', ']'] : ['{', '}'];
    if (entries.length === 0) {
      write(`${opening}${closing}`);
      return;
    }
    write(opening);
    entries.forEach(([key, item], index) => {
      write(`${index > 0 ? ',' : ''}${newline(depth + 1)}${key === undefined ? '' : `${JSON.stringify(key)}:${gap === '' ? '' : ' '}`}`);
      visit(item, depth + 1);
    });
    write(`${newline(depth)}${closing}`);
  };
  visit(value, 0);
  flush(pending);
}

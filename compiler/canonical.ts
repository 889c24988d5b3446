// Canonical JSON (sorted object keys, no insignificant whitespace) and the digests built on it.
// The same bytes must come out for the same data on every machine: manifest `revision`,
// `integrity`, per-capability `digest` and per-caller `catalogVersion` all rest on this.
import { createHash } from 'node:crypto';

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
 * undefined when none is. Iterative, so that it cannot itself overflow the stack.
 */
export function tooDeepPath(value: unknown, maxDepth = MAX_JSON_DEPTH): (string | number)[] | undefined {
  interface Node {
    value: object;
    depth: number;
    key: string | number;
    parent: Node | undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const stack: Node[] = [{ value, depth: 1, key: '', parent: undefined }];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.depth > maxDepth) {
      const path: (string | number)[] = [];
      for (let step: Node | undefined = node; step?.parent !== undefined; step = step.parent) path.push(step.key);
      return path.reverse();
    }
    const entries: [string | number, unknown][] = Array.isArray(node.value) ? node.value.map((item, index) => [index, item]) : Object.entries(node.value);
    for (const [key, member] of entries) {
      if (member !== null && typeof member === 'object') stack.push({ value: member, depth: node.depth + 1, key, parent: node });
    }
  }
  return undefined;
}

/**
 * `indent` (JSON.stringify's `space`) lays the same JSON out over lines: the bytes of
 * `JSON.stringify(JSON.parse(canonicalJson(value)), null, indent)`, without the second copy.
 */
export function canonicalJson(value: unknown, indent?: number): string {
  if (tooDeepPath(value) !== undefined) {
    throw new CanonicalJsonError('too-deep', `canonicalJson: value nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
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

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** `sha256:<hex>` of the canonical JSON of a value. */
export function digestOf(value: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}

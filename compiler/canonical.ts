// Canonical JSON (sorted object keys, no insignificant whitespace) and the digests built on it.
// The same bytes must come out for the same data on every machine: manifest `revision`,
// `integrity`, per-capability `digest` and per-caller `catalogVersion` all rest on this.
import { createHash } from 'node:crypto';

export function canonicalJson(value: unknown): string {
  // JSON.stringify does the escaping and drops undefined members; the replacer only re-inserts
  // each object's keys in sorted order (UTF-16 code unit order, as Array.prototype.sort does).
  return (
    JSON.stringify(value, (_key, member: unknown) => {
      if (member === null || typeof member !== 'object' || Array.isArray(member)) {
        if (typeof member === 'number' && !Number.isFinite(member)) throw new TypeError('canonicalJson: non-finite number');
        return member;
      }
      const sorted: Record<string, unknown> = {};
      for (const key of Object.keys(member).sort()) sorted[key] = (member as Record<string, unknown>)[key];
      return sorted;
    }) ?? 'null'
  );
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** `sha256:<hex>` of the canonical JSON of a value. */
export function digestOf(value: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}

// Cursor pagination of a listing a caller sees (`skills/list`, `resources/list`): the cursor is the
// offset of the next page, opaque to clients and checked, not trusted. It names a position in the
// caller's own listing only, so a made-up or replayed cursor reaches nothing the caller cannot list.
import { Buffer } from 'node:buffer';

const MAX_CURSOR_LENGTH = 32;

/** What a method answers a cursor it did not give, naming itself. */
export function invalidCursorMessage(method: string): string {
  return `invalid cursor: pass back a nextCursor from ${method}, or none for the first page`;
}

export interface Page<T> {
  items: readonly T[];
  nextCursor?: string;
}

/**
 * The page of `entries` that `cursor` names (the first without one), or undefined for a cursor this
 * server did not give (or one past the end of a listing that has since shrunk).
 */
export function pageOf<T>(entries: readonly T[], cursor: unknown, size: number): Page<T> | undefined {
  let start = 0;
  if (cursor !== undefined) {
    const offset = typeof cursor === 'string' && cursor.length <= MAX_CURSOR_LENGTH ? decodeCursor(cursor) : undefined;
    if (offset === undefined || offset > entries.length) return undefined;
    start = offset;
  }
  const end = Math.min(entries.length, start + size);
  const items = entries.slice(start, end);
  return end < entries.length ? { items, nextCursor: encodeCursor(end) } : { items };
}

function encodeCursor(offset: number): string {
  return Buffer.from(`o${offset}`).toString('base64url');
}

function decodeCursor(cursor: string): number | undefined {
  const match = /^o([1-9]\d{0,8})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return match === null ? undefined : Number(match[1]);
}

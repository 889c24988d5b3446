// How every tool answers: the JSON both as `structuredContent` and as a text block (docs/server.md), and
// the one uniform error for capabilities that are missing or not accessible.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export const NOT_FOUND_OR_NOT_ACCESSIBLE = 'capability not found or not accessible';

export function jsonResult(value: Record<string, unknown>, text: string = JSON.stringify(value)): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: value };
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * `updatedAt` as every protocol answer carries it: an ISO 8601 UTC timestamp
 * (`2025-01-01T00:00:00.000Z`). A platform capability's `protocol_updated` is a date, served as its
 * midnight UTC; a user capability's time is the store's. An unreadable time throws (never a guess).
 */
export function servedTimestamp(value: string): string {
  return new Date(DATE_ONLY.test(value) ? `${value}T00:00:00.000Z` : value).toISOString();
}

const UNIFORM_ERROR = Object.freeze({ success: false, error: NOT_FOUND_OR_NOT_ACCESSIBLE });
const UNIFORM_ERROR_TEXT = JSON.stringify(UNIFORM_ERROR);

/**
 * `{"success":false,"error":"capability not found or not accessible"}` with `isError: true`. The same
 * bytes for an unknown id and a forbidden one; a fresh object each time so no caller can alter it.
 */
export function uniformError(): CallToolResult {
  return { content: [{ type: 'text', text: UNIFORM_ERROR_TEXT }], structuredContent: { ...UNIFORM_ERROR }, isError: true };
}

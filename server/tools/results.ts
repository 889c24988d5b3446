// How every tool answers: the JSON both as `structuredContent` and as a text block (SPEC §6), and
// the one uniform error for capabilities that are missing or not accessible.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export const NOT_FOUND_OR_NOT_ACCESSIBLE = 'capability not found or not accessible';

export function jsonResult(value: Record<string, unknown>, text: string = JSON.stringify(value)): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: value };
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

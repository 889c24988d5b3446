// The catalog contract (SPEC §6, §7) in one place: the MCP tool names and their prefix rule, the
// shape of a `list_capabilities` row, the `capability:` link scheme and capreg's own version. The
// compiler (lint rules, rendering, the client skill), the server and the CLI all take these from
// here, so a new catalog field or tool is one edit. Pure: the version is imported with the code,
// never read from disk.
import packageJson from '../package.json' with { type: 'json' };
import type { LinkRef } from './types.js';

/** capreg's version (package.json), as `--version`, the manifest's `generator` and MCP clients see it. */
export const CAPREG_VERSION: string = packageJson.version;

export interface ToolNames {
  listCapabilities: string;
  getCapabilityProtocol: string;
  getCurrentUser: string;
  /** Registered only for callers who may write user capabilities (SPEC §8). */
  saveUserCapability: string;
  deleteUserCapability: string;
  /** Ranked search over the same visible catalog as the listing (SPEC §9). */
  findCapabilities: string;
}

export const BASE_TOOL_NAMES: Readonly<ToolNames> = Object.freeze({
  listCapabilities: 'list_capabilities',
  getCapabilityProtocol: 'get_capability_protocol',
  getCurrentUser: 'get_current_user',
  saveUserCapability: 'save_user_capability',
  deleteUserCapability: 'delete_user_capability',
  findCapabilities: 'find_capabilities',
});

/** The protocol tool that compiled protocols name; a server with a tool prefix rewrites it. */
export const PROTOCOL_TOOL = BASE_TOOL_NAMES.getCapabilityProtocol;

// MCP tool names: letters, digits, `_`, `-`, `.`; at most 128 characters in all. A leading `-` or
// `.` is legal but makes the SDK warn on every registration (HTTP registers per request).
const TOOL_PREFIX_PATTERN = /^(?:[A-Za-z0-9_][A-Za-z0-9_.-]{0,63})?$/;

/** What a valid prefix looks like, for the messages that refuse one. */
export const TOOL_PREFIX_RULE = 'may use only letters, digits, "_", "-" and ".", may not start with "-" or ".", at most 64 characters';

export function isValidToolPrefix(prefix: string): boolean {
  return TOOL_PREFIX_PATTERN.test(prefix);
}

/** Every tool name with `prefix` (the server's `--tool-prefix`) applied; a RangeError for an invalid prefix. */
export function toolNames(prefix: string): ToolNames {
  if (!isValidToolPrefix(prefix)) throw new RangeError(`tool prefix ${JSON.stringify(prefix)} ${TOOL_PREFIX_RULE}`);
  const names = {} as ToolNames;
  for (const key of Object.keys(BASE_TOOL_NAMES) as (keyof ToolNames)[]) names[key] = `${prefix}${BASE_TOOL_NAMES[key]}`;
  return names;
}

/** A row of `list_capabilities` (SPEC §6). Field names and order are part of the contract. */
export interface CatalogEntry {
  id: string;
  name: string;
  description: string;
  whenToUse: string[];
  protocolTool: string;
  protocolInput: { capabilityId: string };
  protocolVersion: string;
  /** Only when the capability sets them (SPEC §9); an entry without them is byte-identical to before. */
  lifecyclePhase?: string;
  tags?: string[];
}

/** What a catalog row is made of: the capability's own facts. */
export interface CatalogEntryFacts {
  id: string;
  name: string;
  description: string;
  whenToUse: readonly string[];
  protocolVersion: string;
  lifecyclePhase?: string | undefined;
  tags?: readonly string[] | undefined;
}

/**
 * The one place a catalog row is built: the server's listing (Git and user capabilities) and the
 * token-budget rule (which prices that listing) use it, so they cannot disagree. Frozen: one entry
 * is shared by every caller who sees it.
 */
export function catalogEntry(facts: CatalogEntryFacts, protocolTool: string): CatalogEntry {
  return Object.freeze({
    id: facts.id,
    name: facts.name,
    description: facts.description,
    whenToUse: Object.freeze([...facts.whenToUse]) as string[],
    protocolTool,
    protocolInput: Object.freeze({ capabilityId: facts.id }),
    protocolVersion: facts.protocolVersion,
    ...(facts.lifecyclePhase !== undefined ? { lifecyclePhase: facts.lifecyclePhase } : {}),
    ...(facts.tags !== undefined ? { tags: Object.freeze([...facts.tags]) as string[] } : {}),
  });
}

/** The scheme of a link from one protocol to another capability: `[text](capability:<id>)`. */
export const CAPABILITY_SCHEME = 'capability:';

/** The capability id a link points at, or undefined when it is not a `capability:` link. */
export function capabilityTarget(url: string): string | undefined {
  return url.startsWith(CAPABILITY_SCHEME) ? url.slice(CAPABILITY_SCHEME.length) : undefined;
}

/** The URL of a link to capability `id`. */
export function capabilityLink(id: string): string {
  return `${CAPABILITY_SCHEME}${id}`;
}

/** The capabilities a document links to (any link kind), each once, sorted. */
export function linkedCapabilities(links: readonly LinkRef[]): string[] {
  const ids = new Set<string>();
  for (const link of links) {
    const id = capabilityTarget(link.url);
    if (id !== undefined) ids.add(id);
  }
  return [...ids].sort();
}

// `list_capabilities`: the catalog entries this caller may use, and the digest of exactly that list.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import type { CatalogListing } from '../catalog.js';
import type { CallerListing } from '../user-capabilities.js';
import { READ_ONLY_ANNOTATIONS, type ToolDeps } from './deps.js';

const inputSchema = z.object({}).strict();

const entrySchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  whenToUse: z.array(z.string()),
  protocolTool: z.string().describe('The tool that returns the protocol.'),
  protocolInput: z.object({ capabilityId: z.string() }).describe('The arguments to pass to protocolTool.'),
  protocolVersion: z.string(),
  isUserDefined: z.literal(true).optional().describe('Set on your own user-defined capabilities.'),
});

// Clients get the full entry schema, but the server does not re-check its own entries: the SDK
// validates structured output with zod on every call, and for a 1,000-entry catalog that check
// alone costs more than the rest of the request. The entries are built by Catalog from a manifest
// that was verified on load, so the items are typed as `any` carrying the entry's JSON Schema.
const { $schema: _dialect, ...entryJsonSchema } = z.toJSONSchema(entrySchema, { target: 'draft-7' });

const outputSchema = z.object({
  success: z.literal(true),
  catalogVersion: z.string().describe('Digest of exactly what this caller sees; re-list when it changes.'),
  capabilities: z.array(z.any().meta(entryJsonSchema)),
  warning: z.string().optional().describe('Set when your user-defined capabilities could not be listed this time.'),
});

// A listing is shared by every caller of its class for the life of a manifest version, so its
// answer (including the serialized text block) is built once and reused.
const answers = new WeakMap<CatalogListing, { structured: Record<string, unknown>; text: string }>();

export function listCapabilitiesResult(listing: CatalogListing): CallToolResult {
  let answer = answers.get(listing);
  if (answer === undefined) {
    const structured = { success: true, catalogVersion: listing.catalogVersion, capabilities: listing.capabilities };
    answer = { structured, text: JSON.stringify(structured) };
    answers.set(listing, answer);
  }
  return { content: [{ type: 'text', text: answer.text }], structuredContent: answer.structured };
}

// The platform entries of a listing as JSON without the brackets, so that an owner's answer splices
// its own few entries in instead of serializing the shared ones again.
const entriesTexts = new WeakMap<CatalogListing, string>();

// An owner's answer, keyed by its catalogVersion: a digest of the platform listing, the protocol
// tool's name and each user entry's id and revision (an entry is a function of those), so a key
// always names the same bytes and nothing here can go stale.
// The store is still asked on every call; this only spares rebuilding (and V8 re-flattening) a text
// block as large as the catalog. Bounded by the bytes of text it holds.
const ownerAnswers = new Map<string, { structured: Record<string, unknown>; text: string }>();
const OWNER_ANSWERS_MAX_CHARS = 32 * 1024 * 1024;
let ownerAnswersChars = 0;

function cachedOwnerAnswer(listing: CallerListing): { structured: Record<string, unknown>; text: string } {
  const key = listing.catalogVersion;
  const cached = ownerAnswers.get(key);
  if (cached !== undefined) {
    ownerAnswers.delete(key);
    ownerAnswers.set(key, cached);
    return cached;
  }
  const answer = buildOwnerAnswer(listing);
  if (answer.text.length <= OWNER_ANSWERS_MAX_CHARS / 4) {
    while (ownerAnswersChars + answer.text.length > OWNER_ANSWERS_MAX_CHARS) {
      const [oldestKey, oldest] = ownerAnswers.entries().next().value as [string, { text: string }];
      ownerAnswers.delete(oldestKey);
      ownerAnswersChars -= oldest.text.length;
    }
    ownerAnswers.set(key, answer);
    ownerAnswersChars += answer.text.length;
  }
  return answer;
}

function buildOwnerAnswer(listing: CallerListing): { structured: Record<string, unknown>; text: string } {
  const { platform, user, unavailable } = listing;
  let platformText = entriesTexts.get(platform);
  if (platformText === undefined) {
    platformText = JSON.stringify(platform.capabilities).slice(1, -1);
    entriesTexts.set(platform, platformText);
  }
  const userText = JSON.stringify(user).slice(1, -1);
  const separator = platformText !== '' && userText !== '' ? ',' : '';
  const structured: Record<string, unknown> = {
    success: true,
    catalogVersion: listing.catalogVersion,
    capabilities: Object.freeze([...platform.capabilities, ...user]),
    ...(unavailable !== undefined ? { warning: unavailable } : {}),
  };
  const text =
    `{"success":true,"catalogVersion":${JSON.stringify(listing.catalogVersion)},"capabilities":[${platformText}${separator}${userText}]` +
    `${unavailable !== undefined ? `,"warning":${JSON.stringify(unavailable)}` : ''}}`;
  return { structured, text };
}

/** The answer for a caller who may have user-defined capabilities (SPEC §8). */
export function callerListingResult(listing: CallerListing): CallToolResult {
  if (listing.user.length === 0 && listing.unavailable === undefined) return listCapabilitiesResult(listing.platform);
  // An outage answer is rare and carries a warning; it is built, not cached.
  const answer = listing.unavailable === undefined ? cachedOwnerAnswer(listing) : buildOwnerAnswer(listing);
  return { content: [{ type: 'text', text: answer.text }], structuredContent: answer.structured };
}

export function registerListCapabilitiesTool(server: McpServer, deps: ToolDeps): void {
  server.registerTool(
    deps.names.listCapabilities,
    {
      title: 'List capabilities',
      description:
        'List the capabilities you may use. Pick one by its whenToUse triggers, then call its protocolTool ' +
        'with its protocolInput to load the protocol, and follow that protocol.',
      inputSchema,
      outputSchema,
      annotations: READ_ONLY_ANNOTATIONS,
    },
    () => {
      const service = deps.userCapabilities;
      if (service === undefined) return listCapabilitiesResult(deps.catalog().visibleCapabilities(deps.caller().grants));
      return service.listing(deps.caller(), deps.catalog()).then(callerListingResult);
    },
  );
}

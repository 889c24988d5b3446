// `list_capabilities`: the catalog entries this caller may use, and the digest of exactly that list.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import type { CatalogListing } from '../catalog.js';
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
    () => listCapabilitiesResult(deps.catalog().visibleCapabilities(deps.caller().grants)),
  );
}

// `list_capabilities`: the catalog entries this caller may use, and the digest of exactly that list;
// compact (progressive disclosure) when the full list is over the catalog budget.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import type { ListingAnswer } from '../listing-answers.js';
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
  lifecyclePhase: z.string().optional(),
  tags: z.array(z.string()).optional(),
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
  // Progressive disclosure (server/compact-listing.ts): set only when the full listing is over budget.
  complete: z.literal(false).optional().describe('The listing is compact: entries without whenToUse, not all of them. Search with findTool.'),
  note: z.string().optional(),
  findTool: z.string().optional(),
  total: z.number().int().optional().describe('How many capabilities you may use in all.'),
  overview: z
    .object({ lifecyclePhase: z.record(z.string(), z.number()), tags: z.record(z.string(), z.number()), moreTags: z.number().int().optional() })
    .optional()
    .describe('Counts of all your capabilities by lifecyclePhase and by tag (the most used tags).'),
});

/** The tool result for an answer built by the domain (server/listing-answers.ts). */
function toolResult(answer: ListingAnswer): CallToolResult {
  return { content: [{ type: 'text', text: answer.text }], structuredContent: answer.structured };
}

export function registerListCapabilitiesTool(server: McpServer, deps: ToolDeps): void {
  server.registerTool(
    deps.names.listCapabilities,
    {
      title: 'List capabilities',
      description:
        'List the capabilities you may use. Pick one by its whenToUse triggers, then call its protocolTool ' +
        'with its protocolInput to load the protocol, and follow that protocol. A catalog too large for one answer comes ' +
        `back compact (complete: false): then search it with ${deps.names.findCapabilities}.`,
      inputSchema,
      outputSchema,
      annotations: READ_ONLY_ANNOTATIONS,
    },
    () => {
      const catalog = deps.catalog();
      const service = deps.userCapabilities;
      if (service === undefined) return toolResult(catalog.answers.platform(catalog.visibleCapabilities(deps.caller().grants)));
      return service.listing(deps.caller(), catalog).then((listing) => toolResult(catalog.answers.caller(listing)));
    },
  );
}

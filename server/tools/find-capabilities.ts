// `find_capabilities`: the capabilities this caller may use that best fit a request, best first
// (SPEC §9). Same visibility as `list_capabilities`; the ranking is server/catalog-search.ts.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import capabilitySchema from '../../compiler/schema/capability.schema.json' with { type: 'json' };
import type { SearchScope } from '../catalog-search.js';
import { READ_ONLY_ANNOTATIONS, type ToolDeps } from './deps.js';
import { jsonResult } from './results.js';

export const MAX_QUERY_CHARS = 500;
export const MAX_LIMIT = 50;
export const DEFAULT_LIMIT = 10;
export const MAX_TAGS = 20;
/** A tag as long as the capability schema allows: a longer one can match no capability. */
export const MAX_TAG_CHARS = capabilitySchema.properties.tags.items.maxLength;
/** The phases the capability schema allows: a capability of no other phase can be found. */
const LIFECYCLE_PHASES = capabilitySchema.properties.lifecyclePhase.enum as [string, ...string[]];

export const NO_CRITERIA_MESSAGE = 'give at least one of query, lifecyclePhase or tags';

const inputSchema = z
  .object({
    query: z.string().max(MAX_QUERY_CHARS).optional().describe('The request in your own words, English or Chinese (at most 500 characters).'),
    lifecyclePhase: z.enum(LIFECYCLE_PHASES).optional().describe('Only capabilities of this phase.'),
    tags: z.array(z.string().min(1).max(MAX_TAG_CHARS)).min(1).max(MAX_TAGS).optional().describe('Only capabilities that have every one of these tags.'),
    limit: z.number().int().min(1).max(MAX_LIMIT).optional().describe(`How many to return (1-${MAX_LIMIT}, default ${DEFAULT_LIMIT}).`),
  })
  .strict();

// Loose like the protocol tool's: the same schema admits the invalid-arguments failure. The entries
// are built by the catalog from a verified manifest, so they are not re-validated on every call.
const outputSchema = z.object({
  success: z.boolean(),
  catalogVersion: z.string().optional().describe('The same digest list_capabilities answers for you.'),
  capabilities: z
    .array(z.any())
    .optional()
    .describe('Catalog entries as list_capabilities shows them, best first, each with score and matched (the fields that matched).'),
  warning: z.string().optional(),
  error: z.string().optional(),
  code: z.string().optional(),
});

export function registerFindCapabilitiesTool(server: McpServer, deps: ToolDeps): void {
  server.registerTool(
    deps.names.findCapabilities,
    {
      title: 'Find capabilities',
      description:
        'Search the capabilities you may use: by a request in your own words (English or Chinese), by lifecyclePhase, ' +
        `by tags, or together. Answers catalog entries best first; load the one that fits with its protocolTool and protocolInput. ` +
        `Use it when ${deps.names.listCapabilities} answers complete: false.`,
      inputSchema,
      outputSchema,
      annotations: READ_ONLY_ANNOTATIONS,
    },
    async ({ query, lifecyclePhase, tags, limit }): Promise<CallToolResult> => {
      if (query === undefined && lifecyclePhase === undefined && tags === undefined) {
        return { ...jsonResult({ success: false, error: NO_CRITERIA_MESSAGE, code: 'invalid-arguments' }), isError: true };
      }
      const catalog = deps.catalog();
      const caller = deps.caller();
      const service = deps.userCapabilities;
      let scope: SearchScope;
      let warning: string | undefined;
      if (service === undefined) {
        const platform = catalog.visibleCapabilities(caller.grants);
        scope = { catalogVersion: platform.catalogVersion, platform, user: [] };
      } else {
        const listing = await service.listing(caller, catalog);
        scope = { catalogVersion: listing.catalogVersion, platform: listing.platform, user: listing.user };
        warning = listing.unavailable;
      }
      await catalog.search.prepareView(scope);
      const answer = catalog.search.answer(scope, { query, lifecyclePhase, tags, limit: limit ?? DEFAULT_LIMIT }, warning);
      return jsonResult({ ...answer.structured }, answer.text);
    },
  );
}

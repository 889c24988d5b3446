// Each protocol the caller may use, also as the MCP resource `capability://<id>` (docs/server.md). The
// list and every read are authorized against the caller at that moment, like the tools. Every read
// that yields no protocol (unknown, forbidden, malformed or traversing URI) gets the same -32602.
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, ListResourcesRequestSchema, McpError, type ReadResourceResult, type Resource } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { CAPABILITY_SCHEME } from '../../compiler/contract.js';
import { askedFor } from '../audit.js';
import type { CatalogListing } from '../catalog.js';
import { invalidCursorMessage, pageOf } from '../pages.js';
import type { ToolDeps } from '../tools/deps.js';
import { NOT_FOUND_OR_NOT_ACCESSIBLE } from '../tools/results.js';

// The resource URI uses the scheme of `capability:` links, with the id where a URL's host would be.
const CAPABILITY_URI_PREFIX = `${CAPABILITY_SCHEME}//`;
/** The resource's registered name, also its label in the request metrics. */
const CAPABILITY_RESOURCE = 'capability-protocol';
/** Resources per `resources/list` page (10,000 capabilities were one 3.3 MB answer, ~150 ms of the event loop each call). */
export const RESOURCES_PAGE_SIZE = 200;

// Params are taken loosely and checked here: the SDK's ReadResourceRequestSchema would refuse a missing
// or non-string `uri` with its own message (../invalid-params.ts) instead of the uniform error.
export const LooseReadResourceRequestSchema = z.object({ method: z.literal('resources/read'), params: z.unknown().optional() });

/** `params[key]` of a request taken loosely, as the caller sent it: anything, or nothing. */
export function requestParam(params: unknown, key: string): unknown {
  return typeof params === 'object' && params !== null ? (params as Record<string, unknown>)[key] : undefined;
}

export function capabilityUri(id: string): string {
  return `${CAPABILITY_URI_PREFIX}${id}`;
}

/** The id a URI names, taken as is (never decoded or normalized); anything else names none. */
function capabilityIdOf(uri: string): string | undefined {
  return uri.startsWith(CAPABILITY_URI_PREFIX) ? uri.slice(CAPABILITY_URI_PREFIX.length) : undefined;
}

export function readCapability(deps: ToolDeps, uri: unknown): ReadResourceResult {
  const done = deps.metrics?.startRequest('resources/read', CAPABILITY_RESOURCE);
  const id = typeof uri === 'string' ? capabilityIdOf(uri) : undefined;
  const catalog = deps.catalog();
  const capability = id === undefined ? undefined : catalog.accessibleCapability(deps.caller().grants, id);
  deps.audit?.({
    via: 'resources/read',
    // The URI as asked when it names no capability id (another scheme, a malformed URI, no string).
    capabilityId: id ?? askedFor(uri),
    revision: catalog.revision,
    ...(capability ? { outcome: 'served', protocolVersion: capability.protocolVersion, digest: capability.digest } : { outcome: 'uniform-error' }),
  });
  done?.(capability === undefined ? 'error' : 'ok');
  // Same message for unknown and forbidden ids, as with the tool.
  if (capability === undefined) throw new McpError(ErrorCode.InvalidParams, NOT_FOUND_OR_NOT_ACCESSIBLE);
  return { contents: [{ uri: capabilityUri(capability.id), mimeType: 'text/markdown', text: capability.protocol }] };
}

const resourceLists = new WeakMap<CatalogListing, Resource[]>();

function resourcesOf(listing: CatalogListing): Resource[] {
  let resources = resourceLists.get(listing);
  if (resources === undefined) {
    resources = listing.capabilities.map((entry) => ({
      uri: capabilityUri(entry.id),
      name: entry.id,
      title: entry.name,
      description: entry.description,
      mimeType: 'text/markdown',
    }));
    resourceLists.set(listing, resources);
  }
  return resources;
}

export function registerCapabilityResource(server: McpServer, deps: ToolDeps): void {
  // Listed by the resources/list handler below, in pages.
  const template = new ResourceTemplate('capability://{capabilityId}', { list: undefined });
  server.registerResource(
    CAPABILITY_RESOURCE,
    template,
    {
      title: 'Capability protocol',
      description: 'The protocol of a capability you may use, as Markdown.',
      mimeType: 'text/markdown',
    },
    (uri) => readCapability(deps, uri.href),
  );
  // Replaces the SDK's list handler, which answers every resource at once and ignores the cursor.
  server.server.setRequestHandler(ListResourcesRequestSchema, (request) => {
    const page = pageOf(resourcesOf(deps.catalog().visibleCapabilities(deps.caller().grants)), request.params?.cursor, RESOURCES_PAGE_SIZE);
    if (page === undefined) throw new McpError(ErrorCode.InvalidParams, invalidCursorMessage('resources/list'));
    return page.nextCursor === undefined ? { resources: [...page.items] } : { resources: [...page.items], nextCursor: page.nextCursor };
  });
  // Replaces the SDK's read handler, which parses the URI with `new URL` first (a malformed one was
  // an internal error, -32603) and names the URI in its own not-found message. Lists stay the SDK's.
  server.server.setRequestHandler(LooseReadResourceRequestSchema, (request) => readCapability(deps, requestParam(request.params, 'uri')));
}

// Each protocol the caller may use, also as the MCP resource `capability://<id>` (SPEC §6). The
// list and every read are authorized against the caller at that moment, like the tools.
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, type Resource } from '@modelcontextprotocol/sdk/types.js';
import type { CatalogListing } from '../catalog.js';
import type { ToolDeps } from '../tools/deps.js';
import { NOT_FOUND_OR_NOT_ACCESSIBLE } from '../tools/results.js';

export const CAPABILITY_URI_SCHEME = 'capability:';

export function capabilityUri(id: string): string {
  return `capability://${id}`;
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
  const template = new ResourceTemplate('capability://{capabilityId}', {
    list: () => ({ resources: resourcesOf(deps.catalog().visibleCapabilities(deps.caller().grants)) }),
  });
  server.registerResource(
    'capability-protocol',
    template,
    {
      title: 'Capability protocol',
      description: 'The protocol of a capability you may use, as Markdown.',
      mimeType: 'text/markdown',
    },
    (uri, variables) => {
      const capability = deps.catalog().accessibleCapability(deps.caller().grants, variables['capabilityId']);
      // Same message for unknown and forbidden ids, as with the tool.
      if (capability === undefined) throw new McpError(ErrorCode.InvalidParams, NOT_FOUND_OR_NOT_ACCESSIBLE);
      return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: capability.protocol }] };
    },
  );
}

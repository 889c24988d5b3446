// `get_capability_protocol`: the protocol of one capability, authorized again on every call.
// Unknown and forbidden ids take the same path and get the same bytes back.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import type { ServedCapability } from '../catalog.js';
import { isUserCapabilityId } from '../user-capabilities.js';
import { callerCheckedOf, READ_ONLY_ANNOTATIONS, type ToolDeps } from './deps.js';
import { jsonResult, servedTimestamp, uniformError } from './results.js';
import { userProtocolResult } from './user-capability-results.js';

const inputSchema = z.object({ capabilityId: z.string().describe('The capabilityId from the catalog entry (its protocolInput).') }).strict();

// Loose on purpose: the same schema has to admit the uniform error, which carries only `success`
// and `error`.
const outputSchema = z.object({
  success: z.boolean(),
  capabilityId: z.string().optional(),
  protocolVersion: z.string().optional(),
  updatedAt: z.string().optional().describe('When the protocol last changed: an ISO 8601 UTC timestamp.'),
  protocol: z.string().optional().describe('Markdown to follow step by step; load it again next time, do not keep it.'),
  error: z.string().optional(),
  // User-defined capabilities (docs/user-capabilities.md) only:
  isUserDefined: z.literal(true).optional(),
  revision: z.string().optional().describe('Pass it as expectedRevision when you save a change to this capability.'),
  dependencies: z.array(z.string()).optional().describe('The platform capabilities the workflow loads, sorted.'),
  toolBindings: z
    .array(z.object({ step: z.string(), capability: z.string(), tools: z.array(z.string()) }))
    .optional()
    .describe('Which tools of which linked capability each step uses.'),
  code: z.string().optional(),
});

export function protocolResult(capability: ServedCapability | undefined): CallToolResult {
  if (capability === undefined) return uniformError();
  return jsonResult({
    success: true,
    capabilityId: capability.id,
    protocolVersion: capability.protocolVersion,
    updatedAt: servedTimestamp(capability.protocolUpdated),
    protocol: capability.protocol,
  });
}

export function registerGetCapabilityProtocolTool(server: McpServer, deps: ToolDeps): void {
  server.registerTool(
    deps.names.getCapabilityProtocol,
    {
      title: 'Get capability protocol',
      description:
        `Load the protocol of one capability listed by ${deps.names.listCapabilities}. ` +
        'Follow it as written; if it cannot be loaded, say so instead of improvising.',
      inputSchema,
      outputSchema,
      annotations: READ_ONLY_ANNOTATIONS,
    },
    ({ capabilityId }) => {
      const service = deps.userCapabilities;
      const catalog = deps.catalog();
      const via = deps.names.getCapabilityProtocol;
      if (service !== undefined && isUserCapabilityId(capabilityId)) {
        return service.load(deps.caller(), catalog, capabilityId, callerCheckedOf(deps)).then((outcome) => {
          deps.audit?.({
            via,
            capabilityId,
            revision: catalog.revision,
            ...(outcome.kind === 'found'
              ? { outcome: 'served', protocolVersion: outcome.capability.revision, digest: outcome.capability.revision }
              : { outcome: outcome.kind === 'failed' ? 'failed' : 'uniform-error' }),
          });
          return userProtocolResult(outcome);
        });
      }
      const capability = catalog.accessibleCapability(deps.caller().grants, capabilityId);
      deps.audit?.({
        via,
        capabilityId,
        revision: catalog.revision,
        ...(capability ? { outcome: 'served', protocolVersion: capability.protocolVersion, digest: capability.digest } : { outcome: 'uniform-error' }),
      });
      return protocolResult(capability);
    },
  );
}

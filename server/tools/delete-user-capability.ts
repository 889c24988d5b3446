// `delete_user_capability`: delete one of the caller's own user-defined capabilities. Registered and
// checked like `save_user_capability`; any id that is not the caller's gets the uniform error.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { mayWriteUserCapabilities } from '../user-capabilities.js';
import type { ToolDeps } from './deps.js';
import { deleteResult } from './user-capability-results.js';

const inputSchema = z.object({ capabilityId: z.string().describe('The id (user:…) of one of your user capabilities.') }).strict();

const outputSchema = z.object({
  success: z.boolean(),
  error: z.string().optional(),
  code: z.string().optional(),
});

export function registerDeleteUserCapabilityTool(server: McpServer, deps: ToolDeps): void {
  const service = deps.userCapabilities;
  if (service === undefined || !mayWriteUserCapabilities(deps.caller())) return;
  server.registerTool(
    deps.names.deleteUserCapability,
    {
      title: 'Delete user capability',
      description: 'Delete one of your own user capabilities by its id.',
      inputSchema,
      outputSchema,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ capabilityId }) => deleteResult(await service.delete(deps.caller(), capabilityId)),
  );
}

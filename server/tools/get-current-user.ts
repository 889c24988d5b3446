// `get_current_user`: who the server thinks is calling, from credentials only.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import type { Caller } from '../identity.js';
import { READ_ONLY_ANNOTATIONS, type ToolDeps } from './deps.js';
import { jsonResult } from './results.js';

const inputSchema = z.object({}).strict();

const outputSchema = z.object({
  success: z.literal(true),
  authenticated: z.boolean(),
  id: z.string().nullable(),
  name: z.string().nullable(),
  scopes: z.array(z.string()),
  authMethod: z.enum(['api-key', 'jwt']).nullable(),
  /** Where a JWT identity comes from: `id` is a `sub` of this issuer. */
  issuer: z.string().optional(),
  message: z.string().optional(),
});

export function currentUser(caller: Caller): Record<string, unknown> {
  if (!caller.authenticated) {
    return {
      success: true,
      authenticated: false,
      id: null,
      name: null,
      scopes: [],
      authMethod: null,
      message: 'unauthenticated session: only capabilities that need no toolset are visible',
    };
  }
  return {
    success: true,
    authenticated: true,
    id: caller.id,
    name: caller.name,
    scopes: [...caller.scopes],
    authMethod: caller.method,
    ...(caller.issuer !== undefined ? { issuer: caller.issuer } : {}),
  };
}

export function registerGetCurrentUserTool(server: McpServer, deps: ToolDeps): void {
  server.registerTool(
    deps.names.getCurrentUser,
    {
      title: 'Get current user',
      description: 'Who you are to this server (id, name, scopes), or that the session is unauthenticated.',
      inputSchema,
      outputSchema,
      annotations: READ_ONLY_ANNOTATIONS,
    },
    () => jsonResult(currentUser(deps.caller())),
  );
}

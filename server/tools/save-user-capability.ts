// `save_user_capability`: create a user-defined capability, or update one of the caller's own.
// Registered only for a caller holding `user-capabilities:write` when the server is built (per
// request over HTTP, per session on stdio); every call checks the scope again and fails closed.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { mayWriteUserCapabilities } from '../user-capabilities.js';
import { callerCheckedOf, type ToolDeps } from './deps.js';
import { saveResult } from './user-capability-results.js';

const inputSchema = z
  .object({
    markdown: z
      .string()
      .describe(
        'The capability as Markdown: frontmatter with name, description, whenToUse, uses (platform capability ids) and ' +
          'optional toolBindings ({step, capability, tools}), then the workflow, linking each platform capability as ' +
          '[text](capability:<id>).',
      ),
    capabilityId: z.string().optional().describe('To update: the id (user:…) of one of your user capabilities.'),
    expectedRevision: z.string().optional().describe('With capabilityId: refuse the update unless this is still the stored revision.'),
  })
  .strict();

const diagnosticSchema = z.object({
  ruleId: z.string(),
  severity: z.enum(['error', 'warning']),
  message: z.string(),
  line: z.number(),
  column: z.number(),
});

// Loose on purpose: one schema admits success, diagnostics, known failures and the uniform error.
const outputSchema = z.object({
  success: z.boolean(),
  capabilityId: z.string().optional(),
  revision: z.string().optional().describe('Pass it back as expectedRevision to update safely.'),
  warnings: z.array(diagnosticSchema).optional(),
  diagnostics: z.array(diagnosticSchema).optional().describe('Why nothing was saved, with positions in your Markdown.'),
  diagnosticsOmitted: z.number().optional().describe('How many more problems there were than the 100 listed (errors are listed first).'),
  error: z.string().optional(),
  code: z.string().optional(),
});

export function registerSaveUserCapabilityTool(server: McpServer, deps: ToolDeps): void {
  const service = deps.userCapabilities;
  if (service === undefined || !mayWriteUserCapabilities(deps.caller())) return;
  server.registerTool(
    deps.names.saveUserCapability,
    {
      title: 'Save user capability',
      description:
        'Save your own capability composed of platform capabilities (create, or update with capabilityId). It is checked ' +
        'like a platform protocol; problems come back as diagnostics with line and column, and nothing is stored then.',
      inputSchema,
      outputSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    // The request's signal: a save cancelled (or whose HTTP connection closed) while it compiled is not stored.
    async (input, extra) => saveResult(await service.save(deps.caller(), deps.catalog(), input, callerCheckedOf(deps), extra.signal)),
  );
}

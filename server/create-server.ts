// Builds one MCP server over the domain objects. Transports decide how many servers live at once:
// stdio keeps one for the session, HTTP builds a fresh one per request.
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
// The package version, so that clients see the capreg they talk to.
import { CAPREG_VERSION } from '../compiler/contract.js';
import { answerInvalidParams } from './invalid-params.js';
import type { RequestOutcome, ServerMetrics } from './metrics.js';
import { registerCapabilityResource } from './resources/capability-resource.js';
import { registerSkills } from './skills/register-skills.js';
import { SKILLS_EXTENSION } from './skills/skills.js';
import { registerDeleteUserCapabilityTool } from './tools/delete-user-capability.js';
import type { ToolDeps, ToolRegistrar } from './tools/deps.js';
import { registerFindCapabilitiesTool } from './tools/find-capabilities.js';
import { registerGetCapabilityProtocolTool } from './tools/get-capability-protocol.js';
import { registerGetCurrentUserTool } from './tools/get-current-user.js';
import { registerListCapabilitiesTool } from './tools/list-capabilities.js';
import { registerSaveUserCapabilityTool } from './tools/save-user-capability.js';

export const SERVER_NAME = 'capreg';
export const MAX_TOOL_INPUT_ELEMENTS = 1024;
/** The largest JSON-RPC message a client may send, on either transport (tool arguments are small). */
export const MAX_MESSAGE_BYTES = 1024 * 1024;

/** The tools and resources every session gets, in registration order. */
export const CORE_REGISTRARS: readonly ToolRegistrar[] = Object.freeze([
  registerListCapabilitiesTool,
  registerFindCapabilitiesTool,
  registerGetCapabilityProtocolTool,
  registerGetCurrentUserTool,
  registerCapabilityResource,
  // After the capability resource: it takes over resources/read and hands other URIs back.
  registerSkills,
]);

/** Added when the server has a user store; each registers only for callers who may write. */
export const USER_CAPABILITY_REGISTRARS: readonly ToolRegistrar[] = Object.freeze([registerSaveUserCapabilityTool, registerDeleteUserCapabilityTool]);

export interface ServerDeps extends ToolDeps {
  /** Shared across servers so that compiled schemas are reused (HTTP builds one server per request). */
  jsonSchemaValidator?: jsonSchemaValidator;
  /** Registrars added after the core ones (e.g. tools of a later feature). */
  extraRegistrars?: readonly ToolRegistrar[];
  /** True for a server that sends `notifications/resources/list_changed` (a stdio session); a per-request HTTP server cannot. */
  notifiesResourceListChanged?: boolean;
}

export function createServer(deps: ServerDeps): { server: McpServer; cleanup: () => Promise<void> } {
  const server = new McpServer(
    { name: SERVER_NAME, version: CAPREG_VERSION },
    {
      instructions:
        `Call ${deps.names.listCapabilities} to see the capabilities you may use (${deps.names.findCapabilities} searches them), pick one by its whenToUse, ` +
        `load its protocol with ${deps.names.getCapabilityProtocol}, and follow it.`,
      // Tool arguments are tiny; a payload with thousands of members is refused before validation.
      maxToolInputElements: MAX_TOOL_INPUT_ELEMENTS,
      ...(deps.jsonSchemaValidator ? { jsonSchemaValidator: deps.jsonSchemaValidator } : {}),
    },
  );
  // Before any handler is set: bad params are -32602 with one short line, for every method.
  answerInvalidParams(server.server);
  if (deps.metrics) measureTools(server, deps.metrics);
  const userRegistrars = deps.userCapabilities ? USER_CAPABILITY_REGISTRARS : [];
  for (const register of [...CORE_REGISTRARS, ...userRegistrars, ...(deps.extraRegistrars ?? [])]) register(server, deps);
  // The SDK announces listChanged for tools and resources as soon as one is registered; announce
  // only what is sent. The tool set is fixed for the life of a server, so tools never change.
  server.server.registerCapabilities({
    tools: { listChanged: false },
    resources: { listChanged: deps.notifiesResourceListChanged ?? false },
    // The MCP Skills extension (docs/skills.md), on every protocol revision the SDK negotiates.
    extensions: { [SKILLS_EXTENSION]: {} },
  });
  return {
    server,
    cleanup: async () => {
      await server.close();
    },
  };
}

type AnyToolCallback = (...args: unknown[]) => CallToolResult | Promise<CallToolResult>;

/**
 * Times every tool registered on this server from here on, whoever registers it (core, user,
 * later features), by wrapping its callback: one place instead of one line in every tool.
 */
function measureTools(server: McpServer, metrics: ServerMetrics): void {
  const register = server.registerTool.bind(server) as unknown as (name: string, config: unknown, callback: AnyToolCallback) => RegisteredTool;
  const measured = (name: string, config: unknown, callback: AnyToolCallback): RegisteredTool =>
    register(name, config, (...args) => {
      const done = metrics.startRequest('tools/call', name);
      const outcome = (result: CallToolResult): RequestOutcome => (result.isError === true ? 'error' : 'ok');
      try {
        const result = callback(...args);
        if (!(result instanceof Promise)) {
          done(outcome(result));
          return result;
        }
        return result.then(
          (answer) => {
            done(outcome(answer));
            return answer;
          },
          (error: unknown) => {
            done('exception');
            throw error;
          },
        );
      } catch (error) {
        done('exception');
        throw error;
      }
    });
  server.registerTool = measured as unknown as typeof server.registerTool;
}

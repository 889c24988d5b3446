// Tool names with the optional `--tool-prefix` applied. Catalog entries carry the real, prefixed
// name of the protocol tool, so this lives apart from the SDK adapters.
export interface ToolNames {
  listCapabilities: string;
  getCapabilityProtocol: string;
  getCurrentUser: string;
}

export const BASE_TOOL_NAMES: ToolNames = Object.freeze({
  listCapabilities: 'list_capabilities',
  getCapabilityProtocol: 'get_capability_protocol',
  getCurrentUser: 'get_current_user',
});

// MCP tool names: letters, digits, `_`, `-`, `.`; at most 128 characters in all.
const PREFIX_PATTERN = /^[A-Za-z0-9_.-]{0,64}$/;

export function isValidToolPrefix(prefix: string): boolean {
  return PREFIX_PATTERN.test(prefix);
}

export function toolNames(prefix: string): ToolNames {
  if (!isValidToolPrefix(prefix)) throw new RangeError(`invalid tool prefix ${JSON.stringify(prefix)}`);
  return {
    listCapabilities: `${prefix}${BASE_TOOL_NAMES.listCapabilities}`,
    getCapabilityProtocol: `${prefix}${BASE_TOOL_NAMES.getCapabilityProtocol}`,
    getCurrentUser: `${prefix}${BASE_TOOL_NAMES.getCurrentUser}`,
  };
}

// Tool names with the optional `--tool-prefix` applied. Catalog entries carry the real, prefixed
// name of the protocol tool, so this lives apart from the SDK adapters.
export interface ToolNames {
  listCapabilities: string;
  getCapabilityProtocol: string;
  getCurrentUser: string;
  /** Registered only for callers who may write user capabilities (SPEC §8). */
  saveUserCapability: string;
  deleteUserCapability: string;
}

export const BASE_TOOL_NAMES: ToolNames = Object.freeze({
  listCapabilities: 'list_capabilities',
  getCapabilityProtocol: 'get_capability_protocol',
  getCurrentUser: 'get_current_user',
  saveUserCapability: 'save_user_capability',
  deleteUserCapability: 'delete_user_capability',
});

// MCP tool names: letters, digits, `_`, `-`, `.`; at most 128 characters in all. A leading `-` or
// `.` is legal but makes the SDK warn on every registration (HTTP registers per request).
const PREFIX_PATTERN = /^(?:[A-Za-z0-9_][A-Za-z0-9_.-]{0,63})?$/;

export function isValidToolPrefix(prefix: string): boolean {
  return PREFIX_PATTERN.test(prefix);
}

export function toolNames(prefix: string): ToolNames {
  if (!isValidToolPrefix(prefix)) throw new RangeError(`invalid tool prefix ${JSON.stringify(prefix)}`);
  return {
    listCapabilities: `${prefix}${BASE_TOOL_NAMES.listCapabilities}`,
    getCapabilityProtocol: `${prefix}${BASE_TOOL_NAMES.getCapabilityProtocol}`,
    getCurrentUser: `${prefix}${BASE_TOOL_NAMES.getCurrentUser}`,
    saveUserCapability: `${prefix}${BASE_TOOL_NAMES.saveUserCapability}`,
    deleteUserCapability: `${prefix}${BASE_TOOL_NAMES.deleteUserCapability}`,
  };
}

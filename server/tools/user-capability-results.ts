// How the tools answer for user-defined capabilities (SPEC §8): the same JSON-in-two-places shape
// and the same uniform error as the platform tools, plus known failures that say what to do.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { DeleteOutcome, LoadOutcome, SaveOutcome, UserCapabilityFailureCode } from '../user-capabilities.js';
import { jsonResult, servedTimestamp, uniformError } from './results.js';

/** `{success: false, error, code}` with `isError: true`: a failure the caller can act on. */
export function failureResult(code: UserCapabilityFailureCode, message: string): CallToolResult {
  return { ...jsonResult({ success: false, error: message, code }), isError: true };
}

export function saveResult(outcome: SaveOutcome): CallToolResult {
  switch (outcome.kind) {
    case 'saved':
      return jsonResult({
        success: true,
        capabilityId: outcome.capabilityId,
        revision: outcome.revision,
        ...(outcome.warnings.length > 0 ? { warnings: outcome.warnings } : {}),
        ...(outcome.omitted > 0 ? { diagnosticsOmitted: outcome.omitted } : {}),
      });
    case 'invalid':
      return {
        ...jsonResult({ success: false, diagnostics: outcome.diagnostics, ...(outcome.omitted > 0 ? { diagnosticsOmitted: outcome.omitted } : {}) }),
        isError: true,
      };
    case 'not-accessible':
      return uniformError();
    case 'failed':
      return failureResult(outcome.code, outcome.message);
  }
}

export function deleteResult(outcome: DeleteOutcome): CallToolResult {
  switch (outcome.kind) {
    case 'deleted':
      return jsonResult({ success: true });
    case 'not-accessible':
      return uniformError();
    case 'failed':
      return failureResult(outcome.code, outcome.message);
  }
}

/** `get_capability_protocol` for a `user:` id: the usual answer plus what the workflow draws on. */
export function userProtocolResult(outcome: LoadOutcome): CallToolResult {
  switch (outcome.kind) {
    case 'found': {
      const { capability } = outcome;
      return jsonResult({
        success: true,
        capabilityId: capability.id,
        protocolVersion: capability.revision,
        updatedAt: servedTimestamp(capability.updatedAt),
        protocol: capability.protocol,
        isUserDefined: true,
        revision: capability.revision,
        dependencies: capability.dependencies,
        toolBindings: capability.toolBindings,
      });
    }
    case 'not-accessible':
      return uniformError();
    case 'failed':
      return failureResult(outcome.code, outcome.message);
  }
}

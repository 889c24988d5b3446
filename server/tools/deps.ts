// What the tools need from the rest of the server. The tools are thin adapters: the answers come
// from the catalog and the caller, both looked up at the moment of each call.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Catalog } from '../catalog.js';
import type { Caller, CallerResolver } from '../identity.js';
import type { ToolNames } from '../../compiler/contract.js';
import type { UserCapabilities } from '../user-capabilities.js';
import type { AuditRecorder } from '../audit.js';
import type { ServerMetrics } from '../metrics.js';

export interface ToolDeps {
  /** The catalog of the manifest being served now. Take it once per call. */
  catalog: () => Catalog;
  /** The caller now (stdio re-resolves its key against the current principals every time). */
  caller: CallerResolver;
  /**
   * The caller as the credentials say now, checked against the principals file as it is now (HTTP
   * authenticates the request's header again; stdio looks its key up again); ANONYMOUS when they no
   * longer prove anyone, or cannot be checked. A write asks it again right before it is committed.
   * Absent: `caller()`, re-resolved as it is.
   */
  callerChecked?: () => Promise<Caller>;
  names: ToolNames;
  /** User-defined capabilities (SPEC §8); absent when the server runs without a user store. */
  userCapabilities?: UserCapabilities | undefined;
  /** Records every protocol handed out or refused (the audit log); absent: not audited. Skills methods call it too. */
  audit?: AuditRecorder | undefined;
  /** Request counts and latencies; absent: not measured. */
  metrics?: ServerMetrics | undefined;
}

/** Registers one tool (or resource) on a fresh server. Later features add their own registrars. */
export type ToolRegistrar = (server: McpServer, deps: ToolDeps) => void;

export const READ_ONLY_ANNOTATIONS = Object.freeze({
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: false,
});

/** The caller as the credentials say now (`callerChecked`), or `caller()` re-resolved where the transport gives no check of its own. */
export function callerCheckedOf(deps: Pick<ToolDeps, 'caller' | 'callerChecked'>): () => Caller | Promise<Caller> {
  return deps.callerChecked ?? deps.caller;
}

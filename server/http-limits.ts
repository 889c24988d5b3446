// What both HTTP listeners (MCP and /metrics) share about Node's request timeouts.

/**
 * How often Node checks the header and request timeouts (30 s by default, which lets a slow
 * client hold a connection for up to 30 s whatever the timeouts say): well below them.
 */
export function checkingInterval(headersTimeoutMs: number): number {
  return Math.min(1_000, Math.max(50, Math.floor(headersTimeoutMs / 4)));
}

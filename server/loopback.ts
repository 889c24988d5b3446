// Loopback host names: the only hosts plain http:// may fetch from without an explicit opt-in
// (manifests, JWKS), and the only browser origins allowed by default.
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** `url.hostname` of a loopback address (IPv6 in brackets, as URL gives it). */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname.toLowerCase());
}

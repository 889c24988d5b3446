// The `Host` header check that stops DNS rebinding: a page on another site whose name the attacker
// points at 127.0.0.1 reaches a server on loopback as its own origin, so the browser sends no
// `Origin` on a GET (the Origin check cannot see it), but the `Host` it sends still names the
// attacker's site. A server that listens on loopback only is reached under a loopback name by
// every honest client, so by default that is all it answers; `--allowed-hosts` names the others
// (the public name a reverse proxy forwards). A server listening beyond loopback answers any
// `Host` unless given the list: its clients reach it under names it cannot know. A `Host` that
// names an address (a listener on 0.0.0.0 reached as 10.1.2.3) is only allowed when listed too.
import { BlockList, isIP } from 'node:net';
import { isLoopbackHost } from './loopback.js';

/** A `Host` header as clients send it: a name or IPv4 address, or an IPv6 address in brackets, and an optional port. */
export const HOST_HEADER = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;
/** One `--allowed-hosts` entry: a DNS name or IPv4 address, or an IPv6 address (brackets optional). No port, no scheme. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;
const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The host names a request may name, or undefined when any may be (see the file comment). Loopback
 * names are always among them: a page on another site cannot send one, and local health checks
 * and tools use them. `boundAddress`, the address the listener got, decides whether it is on
 * loopback when given: `--host 127.1` or a name that resolves to 127.0.1.1 is, whatever its spelling.
 */
export function allowedHostNames(listenHost: string, configured: readonly string[] | undefined, boundAddress?: string): ReadonlySet<string> | undefined {
  const loopback = listensOnLoopbackOnly(boundAddress ?? listenHost);
  if (configured === undefined && !loopback) return undefined;
  const names = new Set(LOOPBACK_NAMES);
  // A loopback listen address is a loopback name too (127.0.0.2); 0.0.0.0 or :: never is.
  for (const name of [...(configured ?? []), ...(loopback ? [listenHost, ...(boundAddress !== undefined ? [boundAddress] : [])] : [])]) {
    const normal = normalizeHostName(name);
    if (normal !== undefined) names.add(normal);
  }
  return names;
}

/** Whether a request whose `Host` header is `host` may be answered. The port is not compared. */
export function hostAllowed(host: string | undefined, allowed: ReadonlySet<string> | undefined): boolean {
  if (allowed === undefined) return true;
  if (host === undefined || !HOST_HEADER.test(host)) return false;
  const name = normalizeHostName(host.replace(/:\d{1,5}$/, ''));
  return name !== undefined && allowed.has(name);
}

/**
 * `name` as the allow-list keeps it (lower case, no trailing dot, IPv6 in brackets in the form of
 * RFC 5952, as browsers send it), or undefined when it is not a host name: a URL, a port, a path,
 * a wildcard or a zone id are refused, not guessed at.
 */
export function normalizeHostName(name: string): string | undefined {
  const lower = name.trim().toLowerCase();
  const bare = lower.replace(/^\[(.*)\]$/, '$1');
  if (isIP(bare) === 6) return canonicalIPv6(bare);
  if (bare !== lower) return undefined;
  const host = lower.replace(/\.$/, '');
  return HOST_NAME.test(host) ? host : undefined;
}

/** An IPv6 address as a browser writes it in `Host` (RFC 5952, in brackets), or undefined for one it cannot be (a zone id). */
function canonicalIPv6(address: string): string | undefined {
  try {
    return new URL(`http://[${address}]/`).hostname;
  } catch {
    return undefined;
  }
}

/** A listen address only this machine can reach: `localhost`, 127.0.0.0/8 or ::1, in any spelling (not 0.0.0.0 or ::, which are every interface). */
export function listensOnLoopbackOnly(listenHost: string): boolean {
  const host = listenHost.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (isLoopbackHost(host)) return true;
  const family = isIP(host);
  return family !== 0 && LOOPBACK_ADDRESSES.check(host, family === 6 ? 'ipv6' : 'ipv4');
}

const LOOPBACK_ADDRESSES = new BlockList();
LOOPBACK_ADDRESSES.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK_ADDRESSES.addAddress('::1', 'ipv6');

/** `host` as a log line may show it: only a well-formed header, cut short, is quoted. */
export function displayHost(host: string | undefined): string {
  if (host === undefined) return '(none)';
  return HOST_HEADER.test(host) ? `"${host.slice(0, 100)}"` : '(malformed)';
}

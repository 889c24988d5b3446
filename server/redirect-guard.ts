// Where a manifest fetch may be redirected. A redirect may not take the server from one kind of host
// to a more internal one it was not configured to reach: a server on the internet cannot send a
// replica to its own loopback, its network or the cloud metadata service, nor an internal server
// send it to its loopback or the metadata service. Another public host is always allowed.
//
// A host is judged by the address the connection is made to, not by its name: a DNS name that
// resolves to 169.254.169.254 is the metadata service. So every hop of a fetch (its URL, then each
// redirect) goes through a dispatcher of its own whose DNS lookup judges the addresses before the
// socket is opened, and the socket is opened to exactly the addresses judged (no second lookup that
// a rebinding DNS server could answer differently). A dispatcher per hop, not per fetch: a
// connection kept alive from an earlier hop would be reused without a lookup, so without being
// judged against this hop's source. A literal address, or `localhost`, is judged by its name,
// before any request.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP, SocketAddress, type LookupFunction } from 'node:net';
import { Agent } from 'undici';

type HostKind = 'public' | 'private' | 'loopback' | 'link-local';

/** Address ranges of each internal kind of host; IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is checked as IPv4. */
const INTERNAL_RANGES: [Exclude<HostKind, 'public'>, string, number, 'ipv4' | 'ipv6'][] = [
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  // "This host": connecting to 0.0.0.0 (or ::) reaches the local machine.
  ['loopback', '0.0.0.0', 8, 'ipv4'],
  ['loopback', '::1', 128, 'ipv6'],
  ['loopback', '::', 128, 'ipv6'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  // Shared address space (RFC 6598): carrier-grade NAT, and the internal networks of some clouds.
  ['private', '100.64.0.0', 10, 'ipv4'],
  ['private', 'fc00::', 7, 'ipv6'],
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['link-local', 'fe80::', 10, 'ipv6'],
  // Cloud metadata and host services outside 169.254/16, counted with it: AWS's over IPv6 (inside
  // fc00::/7) and Alibaba Cloud's (inside 100.64/10) would otherwise be private hosts that a private
  // mirror may send the server to; Azure's host service (WireServer) would be public.
  ['link-local', 'fd00:ec2::254', 128, 'ipv6'],
  ['link-local', '100.100.100.200', 32, 'ipv4'],
  ['link-local', '168.63.129.16', 32, 'ipv4'],
];
/** The order the kinds are checked in: the metadata services inside private ranges are link-local. */
const KIND_ORDER = ['link-local', 'loopback', 'private'] as const;
const INTERNAL_BLOCKS = KIND_ORDER.map((kind) => {
  const list = new BlockList();
  for (const [rangeKind, network, prefix, family] of INTERNAL_RANGES) if (rangeKind === kind) list.addSubnet(network, prefix, family);
  return [kind, list] as const;
});
/** NAT64 (RFC 6052's well-known prefix): `64:ff9b::a.b.c.d` reaches the IPv4 address a.b.c.d through a gateway. */
const NAT64 = new BlockList();
NAT64.addSubnet('64:ff9b::', 96, 'ipv6');
const KIND_RANGES: Record<HostKind, string> = {
  public: '',
  loopback: ' (127.0.0.0/8, ::1, localhost, 0.0.0.0/8, ::)',
  private: ' (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10, fc00::/7)',
  'link-local':
    ' (169.254.0.0/16, the cloud metadata address 169.254.169.254 among them, fe80::/10, and the metadata and host services at fd00:ec2::254, 100.100.100.200 and 168.63.129.16)',
};

/**
 * The kind of host `hostname` (as URL gives it: IPv6 in brackets, IPv4 normalised) names by itself:
 * a literal address or `localhost`; undefined for a DNS name, whose kind is what it resolves to.
 */
function nameKind(hostname: string): HostKind | undefined {
  const host = hostname
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback';
  const family = isIP(host);
  if (family === 0) return undefined;
  if (family === 6 && NAT64.check(host, 'ipv6')) return nameKind(embeddedIpv4(host));
  for (const [kind, list] of INTERNAL_BLOCKS) if (list.check(host, family === 4 ? 'ipv4' : 'ipv6')) return kind;
  return 'public';
}

/** The IPv4 address in the last 32 bits of an IPv6 address. */
function embeddedIpv4(ipv6: string): string {
  // SocketAddress writes it canonically, in hexadecimal groups (`64:ff9b::a9fe:a9fe`, `64:ff9b::1`).
  const groups = new SocketAddress({ address: ipv6, family: 'ipv6' }).address.split(':');
  const high = Number.parseInt(groups.at(-2) || '0', 16);
  const low = Number.parseInt(groups.at(-1) || '0', 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * Why a redirect from a host of kind `source` to an address of kind `target` is not followed ("from
 * a … host to a … address (ranges)"), or undefined when it may be. The message names the kinds, not
 * the addresses: it is shown on `/healthz`, which is unauthenticated.
 */
function kindRefusal(source: HostKind, target: HostKind): string | undefined {
  if (target === 'public' || source === target) return undefined;
  return `from a ${source} host to a ${target} address${KIND_RANGES[target]}`;
}

/** How names are resolved: dns.lookup, or a stand-in with its signature (`all: true`). */
export type Resolve = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/** A refusal raised from the lookup, so that the fetch fails before it connects. */
class RefusedAddress extends Error {}

/**
 * The hosts of one fetch: its first URL (chosen by the operator, any kind) and each redirect after
 * it, each judged against the kind of the host that sent it. Use one per fetch: call `hop()` before
 * each request and send that request with the `dispatcher` it leaves; `close()` it at the end.
 */
export class RedirectGuard {
  /**
   * The dispatcher of the current hop. Each hop has its own: a connection kept alive from an earlier
   * hop would be reused without a lookup, so without a judgement against this hop's source (an
   * internal mirror redirecting to a public host that redirects back to the mirror).
   */
  dispatcher: Agent;
  private readonly dispatchers: Agent[] = [];
  private readonly lookup: LookupFunction;
  /** The kind of each host connected to so far (a name by what it resolved to). */
  private readonly kinds = new Map<string, HostKind>();
  /** The kind of the host that sent the redirect being followed; undefined for the first URL. */
  private source: HostKind | undefined;
  /** Why the lookup of the current hop refused its addresses. */
  private refused: string | undefined;

  constructor(resolve: Resolve = dnsLookup) {
    // As net.connect calls it: every address when `options.all` (Happy Eyeballs), else the first.
    const lookup: LookupFunction = (hostname, options, callback) => {
      resolve(hostname, { ...options, all: true }, (error, addresses) => {
        if (error) return callback(error, '');
        const refused = this.judge(hostname, addresses);
        if (refused !== undefined) return callback(refused, '');
        if (options.all === true) return callback(null, addresses);
        const [first] = addresses;
        callback(null, first?.address ?? '', first?.family);
      });
    };
    this.lookup = lookup;
    this.dispatcher = this.newDispatcher();
  }

  private newDispatcher(): Agent {
    const agent = new Agent({ connect: { lookup: this.lookup } });
    this.dispatchers.push(agent);
    return agent;
  }

  /**
   * Before the request to `url`: why it is refused by its name alone, or undefined. `from` is the
   * URL whose answer redirected here (undefined for the first URL).
   */
  hop(url: URL, from: URL | undefined): string | undefined {
    this.refused = undefined;
    if (from !== undefined) this.dispatcher = this.newDispatcher();
    this.source = from === undefined ? undefined : (this.kinds.get(from.hostname) ?? nameKind(from.hostname) ?? 'public');
    const kind = nameKind(url.hostname);
    if (kind === undefined) return undefined;
    this.kinds.set(url.hostname, kind);
    return this.source === undefined ? undefined : kindRefusal(this.source, kind);
  }

  /** Why the last request failed, when it was this guard that stopped it. */
  refusal(): string | undefined {
    return this.refused;
  }

  async close(): Promise<void> {
    await Promise.all(this.dispatchers.map((agent) => agent.destroy()));
  }

  /**
   * A name's addresses: refused when any of them is more internal than the host that redirected
   * here. The name's kind is the one all its addresses share, or public when they differ (as a
   * source, public is the strictest).
   */
  private judge(hostname: string, addresses: readonly LookupAddress[]): RefusedAddress | undefined {
    const kinds = addresses.map(({ address }) => nameKind(address) ?? 'public');
    if (this.source !== undefined) {
      for (const kind of kinds) {
        const refusal = kindRefusal(this.source, kind);
        if (refusal !== undefined) {
          this.refused = refusal;
          return new RefusedAddress(refusal);
        }
      }
    }
    const first = kinds[0] ?? 'public';
    this.kinds.set(hostname, kinds.every((kind) => kind === first) ? first : 'public');
    return undefined;
  }
}

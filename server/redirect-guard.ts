// Where a manifest fetch may be redirected. A redirect may not take the server from one kind of host
// to a more internal one it was not configured to reach: a server on the internet cannot send a
// replica to its own loopback, its network or the cloud metadata service, nor an internal server
// send it to its loopback or the metadata service. Another public host is always allowed.
//
// A host is judged by the address the connection is made to, not by its name: a DNS name that
// resolves to 169.254.169.254 is the metadata service. So every fetch of a URL and its redirects
// goes through a dispatcher of its own whose DNS lookup judges the addresses before the socket is
// opened, and the socket is opened to exactly the addresses judged (no second lookup that a
// rebinding DNS server could answer differently). A literal address, or `localhost`, is judged by
// its name, before any request.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
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
];
const INTERNAL_BLOCKS = new Map<Exclude<HostKind, 'public'>, BlockList>();
for (const [kind, network, prefix, family] of INTERNAL_RANGES) {
  const list = INTERNAL_BLOCKS.get(kind) ?? new BlockList();
  list.addSubnet(network, prefix, family);
  INTERNAL_BLOCKS.set(kind, list);
}
const KIND_RANGES: Record<HostKind, string> = {
  public: '',
  loopback: ' (127.0.0.0/8, ::1, localhost, 0.0.0.0/8, ::)',
  private: ' (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10, fc00::/7)',
  'link-local': ' (169.254.0.0/16, the cloud metadata address 169.254.169.254 among them, fe80::/10)',
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
  for (const [kind, list] of INTERNAL_BLOCKS) if (list.check(host, family === 4 ? 'ipv4' : 'ipv6')) return kind;
  return 'public';
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
 * it, each judged against the kind of the host that sent it. Use one per fetch, its `dispatcher`
 * for every request of it, and `close()` it at the end.
 */
export class RedirectGuard {
  readonly dispatcher: Agent;
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
    this.dispatcher = new Agent({ connect: { lookup } });
  }

  /**
   * Before the request to `url`: why it is refused by its name alone, or undefined. `from` is the
   * URL whose answer redirected here (undefined for the first URL).
   */
  hop(url: URL, from: URL | undefined): string | undefined {
    this.refused = undefined;
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
    await this.dispatcher.destroy();
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

import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which IP addresses the server may connect to when it fetches a URL someone else chose (job
 * inputs, webhooks). The rules are listed here, explicitly, rather than taken from ipaddr.js's
 * `range()`: its names change between versions and it counts some ranges we must refuse (NAT64
 * local use, 6to4) as ordinary. ipaddr.js only parses and matches.
 *
 * IPv6 transition forms: IPv4-mapped (::ffff:0:0/96) and well-known NAT64 (64:ff9b::/96) are
 * judged by the IPv4 address they carry, because that is where the packets end up; NAT64 is how
 * IPv6-only hosts reach every IPv4 site, so refusing it outright would break them. The rest
 * (IPv4-compatible ::/96, local-use NAT64, 6to4, Teredo) are refused outright: deprecated or
 * tunnel forms no content host needs, whose embedded address a gateway may route anywhere.
 * Beyond the named ranges, any IPv6 address outside global unicast 2000::/3 is refused.
 */

export interface RefusedRange {
  /** The range in CIDR notation, e.g. `127.0.0.0/8`. */
  readonly cidr: string;
  /** A noun phrase for messages: `127.0.0.1 is ${what}`. */
  readonly what: string;
}

type Rule = RefusedRange & { readonly range: [ipaddr.IPv4 | ipaddr.IPv6, number] };

function rules(list: ReadonlyArray<readonly [string, string]>): readonly Rule[] {
  return list.map(([cidr, what]) => ({ cidr, what, range: ipaddr.parseCIDR(cidr) }));
}

// First match names the range, so narrower ranges come before the ranges that contain them.
const IPV4_RULES = rules([
  ['0.0.0.0/8', 'a "this network" address'],
  ['10.0.0.0/8', 'a private address'],
  ['100.64.0.0/10', 'a shared (carrier-grade NAT) address'],
  ['127.0.0.0/8', 'a loopback address'],
  ['169.254.169.254/32', 'the cloud metadata address'],
  ['169.254.0.0/16', 'a link-local address'],
  ['172.16.0.0/12', 'a private address'],
  ['192.0.0.0/24', 'an IETF protocol assignment address'],
  ['192.0.2.0/24', 'a documentation address'],
  ['192.88.99.0/24', 'a reserved (6to4 relay) address'],
  ['192.168.0.0/16', 'a private address'],
  ['198.18.0.0/15', 'a benchmarking address'],
  ['198.51.100.0/24', 'a documentation address'],
  ['203.0.113.0/24', 'a documentation address'],
  ['224.0.0.0/4', 'a multicast address'],
  ['255.255.255.255/32', 'the broadcast address'],
  ['240.0.0.0/4', 'a reserved address'],
]);

const IPV6_RULES = rules([
  ['::/128', 'the unspecified address'],
  ['::1/128', 'a loopback address'],
  ['::/96', 'an IPv4-compatible (deprecated) address'],
  ['64:ff9b:1::/48', 'a local-use NAT64 address'],
  ['100::/64', 'a discard-only address'],
  ['2001::/32', 'a Teredo tunnel address'],
  ['2001:db8::/32', 'a documentation address'],
  ['2001::/23', 'an IETF protocol assignment address'],
  ['2002::/16', 'a 6to4 tunnel address'],
  ['3fff::/20', 'a documentation address'],
  ['fd00:ec2::254/128', 'the cloud metadata address'],
  ['fc00::/7', 'a unique-local address'],
  ['fe80::/10', 'a link-local address'],
  ['fec0::/10', 'a site-local address'],
  ['ff00::/8', 'a multicast address'],
]);

const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
const NOT_GLOBAL: RefusedRange = { cidr: '!2000::/3', what: 'not a global unicast address' };
const INVALID: RefusedRange = { cidr: '', what: 'not an IP address' };

// Carriers of an IPv4 address in their last 32 bits, judged by that address.
const IPV4_MAPPED = ipaddr.parseCIDR('::ffff:0:0/96');
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');

/**
 * ipaddr.js reads any dotted tail as IPv4-mapped (`::1.2.3.4` comes out as `::ffff:1.2.3.4`),
 * and Node prints IPv4-compatible results that way, so rewrite the tail as two hex groups first.
 */
function parse(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  let text = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  if (text.includes(':')) {
    text = text.replace(/(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?=%|$)/, (whole, a, b, c, d) => {
      const o = [a, b, c, d].map(Number);
      if (o.some((n) => n > 255)) return whole;
      return `${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
    });
  }
  try {
    return ipaddr.parse(text);
  } catch {
    return null;
  }
}

function embeddedIPv4(addr: ipaddr.IPv6): ipaddr.IPv4 {
  const [hi, lo] = [addr.parts[6]!, addr.parts[7]!];
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

function classify(addr: ipaddr.IPv4 | ipaddr.IPv6): RefusedRange | null {
  if (addr.kind() === 'ipv4') return IPV4_RULES.find((r) => addr.match(r.range)) ?? null;
  const v6 = addr as ipaddr.IPv6;
  if (v6.match(IPV4_MAPPED) || v6.match(NAT64)) return classify(embeddedIPv4(v6));
  const named = IPV6_RULES.find((r) => v6.match(r.range));
  if (named) return named;
  return v6.match(GLOBAL_UNICAST) ? null : NOT_GLOBAL;
}

/**
 * The refused range `ip` falls in, or null if it is a public address. Anything that is not an IP
 * address (IPv4 in any form inet_aton accepts, IPv6 with or without brackets) is refused too.
 */
export function classifyAddress(ip: string): RefusedRange | null {
  const addr = parse(ip);
  return addr ? classify(addr) : INVALID;
}

/** Whether the server may connect to `ip` when private addresses are not allowed. */
export function isPublicAddress(ip: string): boolean {
  return classifyAddress(ip) === null;
}

/**
 * Why a URL's host is refused without asking DNS, or null when only resolving it could tell. For
 * the host as WHATWG URL parsing leaves it: IPv4 in every form (decimal `2130706433`, hex
 * `0x7f.1`, octal `017700000001`, short `127.1`) already normalised to dotted decimal, IPv6 in
 * brackets. `localhost` and `*.localhost` always name the loopback interface (RFC 6761), so they
 * are refused here too; any other name is judged when a connection is opened, on what it
 * resolves to then. The phrase completes "refused: ..." as the connect-time guard words it.
 */
export function literalHostRefusal(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is a loopback name`;
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIP(bare) === 0) return null;
  const range = classifyAddress(bare);
  return range ? `${bare} is ${range.what}` : null;
}

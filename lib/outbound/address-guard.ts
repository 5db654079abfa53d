import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * The rule for every outbound connection: no loopback, private, link-local (cloud metadata) or other
 * non-public addresses unless the operator's allow-list names them. Local mode allows loopback, so a
 * model server on the laptop is reachable. The check runs on the resolved address at connect time,
 * so a hostname that resolves to a private address is refused too. An IPv6 address that carries an
 * IPv4 address to a translator or tunnel (IPv4-mapped, NAT64, 6to4, Teredo) ends up at that IPv4
 * address, so it gets that address's verdict.
 */
function subnets(type: 'ipv4' | 'ipv6', networks: ReadonlyArray<readonly [string, number]>): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of networks) list.addSubnet(network, prefix, type);
  return list;
}

const nonPublicIpv4 = subnets('ipv4', [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // the retired 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
]);

// IANA allocates global unicast IPv6 only from 2000::/3. Refusing everything else covers the
// unspecified address, IPv4-compatible ::/96 and site-local fec0::/10 (both deprecated), the
// local-use NAT64 prefix 64:ff9b:1::/48 (where it puts the IPv4 address depends on a prefix length
// only its own network knows), discard 100::/64, ULA, link-local and multicast, and whatever is
// carved out of the reserved space later.
const globalUnicastIpv6 = subnets('ipv6', [['2000::', 3]]);
const nonPublicGlobalIpv6 = subnets('ipv6', [
  ['2001::', 23], // IETF protocol assignments (benchmarking, ORCHID, anycast services); Teredo is judged before
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
]);

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

export class BlockedAddressError extends Error {
  readonly code = 'GATEWAY_ADDRESS_BLOCKED';
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(
      `Outbound connections to ${host} (${address}) are not allowed: it is not a public address (loopback, private, link-local, reserved, or an IPv6 form of one). An operator can allow it with GATEWAY_OUTBOUND_ALLOWLIST.`,
    );
    this.name = 'BlockedAddressError';
  }
}

interface AllowList {
  hosts: Set<string>;
  addresses: BlockList;
}

let cachedAllowList: { source: string; list: AllowList } | undefined;

function allowList(): AllowList {
  const source = process.env.GATEWAY_OUTBOUND_ALLOWLIST ?? '';
  if (cachedAllowList?.source === source) return cachedAllowList.list;
  const list: AllowList = { hosts: new Set(), addresses: new BlockList() };
  for (const entry of source
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean)) {
    const [address, prefix] = entry.split('/');
    const family = isIP(address);
    if (family === 0) list.hosts.add(entry);
    else list.addresses.addSubnet(address, prefix ? Number(prefix) : family === 4 ? 32 : 128, family === 4 ? 'ipv4' : 'ipv6');
  }
  cachedAllowList = { source, list };
  return list;
}

/** True when the gateway may connect to `address` (an IP literal) reached as `host`. */
export function isAddressAllowed(host: string, address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  // A zone id only picks the interface; the address alone says where the connection goes.
  const bare = type === 'ipv6' ? address.replace(/%.*$/, '') : address;
  const list = allowList();
  if (list.hosts.has(host.toLowerCase()) || list.addresses.check(bare, type)) return true;
  if (loopback.check(bare, type)) return process.env.GATEWAY_MODE === 'local';
  if (type === 'ipv4') return !nonPublicIpv4.check(bare, 'ipv4');
  const embedded = embeddedIpv4(ipv6Groups(bare));
  if (embedded) return embedded.every((ipv4) => isAddressAllowed(host, ipv4));
  return globalUnicastIpv6.check(bare, 'ipv6') && !nonPublicGlobalIpv6.check(bare, 'ipv6');
}

/** The IPv4 addresses a translator or tunnel delivers an IPv6 address to; undefined for plain IPv6. */
function embeddedIpv4(groups: number[]): string[] | undefined {
  const zeros = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  const [first, second] = groups;
  if (zeros(0, 5) && groups[5] === 0xffff) return [ipv4(groups[6], groups[7])]; // IPv4-mapped ::ffff:0:0/96
  if (first === 0x64 && second === 0xff9b && zeros(2, 6)) return [ipv4(groups[6], groups[7])]; // NAT64 64:ff9b::/96
  if (first === 0x2002) return [ipv4(groups[1], groups[2])]; // 6to4 2002::/16
  // Teredo 2001::/32: the server, then the client, whose address is stored with every bit inverted.
  if (first === 0x2001 && second === 0) return [ipv4(groups[2], groups[3]), ipv4(groups[6] ^ 0xffff, groups[7] ^ 0xffff)];
  return undefined;
}

function ipv4(high: number, low: number): string {
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/** The eight 16-bit groups of an IPv6 address that isIP accepted, in any spelling. */
function ipv6Groups(address: string): number[] {
  const gap = address.indexOf('::');
  if (gap < 0) return groupsOf(address);
  const head = groupsOf(address.slice(0, gap));
  const tail = groupsOf(address.slice(gap + 2));
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

function groupsOf(text: string): number[] {
  if (text === '') return [];
  return text.split(':').flatMap((piece) => {
    if (!piece.includes('.')) return [Number.parseInt(piece, 16)];
    const [a, b, c, d] = piece.split('.').map(Number);
    return [(a << 8) | b, (c << 8) | d];
  });
}

// Literal hosts are checked on every call (connections are reused, lookups are not): remember the
// verdicts, under the settings they were reached with.
const literalVerdicts = new Map<string, boolean>();

/** Throws BlockedAddressError for an IP-literal host that is not allowed (those skip DNS lookup). */
export function assertLiteralHostAllowed(hostname: string): void {
  const key = `${process.env.GATEWAY_MODE}|${process.env.GATEWAY_OUTBOUND_ALLOWLIST ?? ''}|${hostname}`;
  let allowed = literalVerdicts.get(key);
  if (allowed === undefined) {
    const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
    allowed = isIP(host) === 0 || isAddressAllowed(host, host);
    if (literalVerdicts.size > 1_000) literalVerdicts.clear();
    literalVerdicts.set(key, allowed);
  }
  if (!allowed) {
    const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
    throw new BlockedAddressError(host, host);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for net/tls connect options that refuses addresses the rule above does not allow. */
export function guardedLookup(hostname: string, options: object, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, []);
    const allowed = addresses.filter((entry) => isAddressAllowed(hostname, entry.address));
    if (allowed.length === 0) return callback(new BlockedAddressError(hostname, addresses[0]?.address ?? 'unresolved') as NodeJS.ErrnoException, []);
    if ((options as { all?: boolean }).all) callback(null, allowed);
    else callback(null, allowed[0].address, allowed[0].family);
  });
}

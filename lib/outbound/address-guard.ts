import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * The rule for every outbound connection: no loopback, private, link-local (cloud metadata) or other
 * non-public addresses unless the operator's allow-list names them. Local mode allows loopback, so a
 * model server on the laptop is reachable. The check runs on the resolved address at connect time,
 * so a hostname that resolves to a private address is refused too.
 */
const nonPublic = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) nonPublic.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) nonPublic.addSubnet(network, prefix, 'ipv6');

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

export class BlockedAddressError extends Error {
  readonly code = 'GATEWAY_ADDRESS_BLOCKED';
  constructor(readonly host: string, readonly address: string) {
    super(`Outbound connections to ${host} (${address}) are not allowed: it is a loopback, private or link-local address. An operator can allow it with GATEWAY_OUTBOUND_ALLOWLIST.`);
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
  for (const entry of source.split(',').map((item) => item.trim().toLowerCase()).filter(Boolean)) {
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
  const list = allowList();
  if (list.hosts.has(host.toLowerCase()) || list.addresses.check(address, type)) return true;
  if (loopback.check(address, type)) return process.env.GATEWAY_MODE === 'local';
  if (type === 'ipv6' && address.toLowerCase().startsWith('::ffff:')) return isAddressAllowed(host, address.slice(7));
  return !nonPublic.check(address, type);
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

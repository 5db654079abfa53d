import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { assertLiteralHostAllowed, BlockedAddressError, guardedLookup, isAddressAllowed } from '../../lib/outbound/address-guard';

// Names the tests resolve to chosen addresses, so the connect-time check meets every IPv6 form.
const scriptedAnswers = vi.hoisted(() => new Map<string, string[]>());
vi.mock('node:dns', async (importOriginal) => {
  const dns = await importOriginal<typeof import('node:dns')>();
  const lookup = (hostname: string, options: object, callback: (error: Error | null, addresses: LookupAddress[]) => void) => {
    const addresses = scriptedAnswers.get(hostname);
    if (!addresses) return dns.lookup(hostname, { ...options, all: true }, callback);
    process.nextTick(
      callback,
      null,
      addresses.map((address) => ({ address, family: isIP(address) })),
    );
  };
  return { ...dns, lookup, default: { ...dns, lookup } };
});

const saved = { mode: process.env.GATEWAY_MODE, allow: process.env.GATEWAY_OUTBOUND_ALLOWLIST };
afterEach(() => {
  process.env.GATEWAY_MODE = saved.mode;
  if (saved.allow === undefined) delete process.env.GATEWAY_OUTBOUND_ALLOWLIST;
  else process.env.GATEWAY_OUTBOUND_ALLOWLIST = saved.allow;
  scriptedAnswers.clear();
});

function expectVerdicts(addresses: string[], allowed: boolean): void {
  for (const address of addresses) expect(isAddressAllowed('h', address), address).toBe(allowed);
}

function lookupAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    guardedLookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses as LookupAddress[])));
  });
}

// 169.254.169.254 (the metadata service) is a9fe:a9fe; Teredo stores its client address inverted.
const metadataInTeredoClient = '5601:5601';
const publicInTeredoClient = 'f7f7:f7f7'; // 8.8.8.8

describe('outbound address guard', () => {
  it('refuses loopback, private, link-local and metadata addresses on AWS', () => {
    process.env.GATEWAY_MODE = 'aws';
    expectVerdicts(
      [
        '127.0.0.1',
        '10.1.2.3',
        '172.16.0.1',
        '192.168.1.1',
        '169.254.169.254',
        '100.64.0.1',
        '0.0.0.0',
        '::1',
        'fd00:ec2::254',
        'fe80::1',
        '::ffff:127.0.0.1',
        '::ffff:169.254.169.254',
      ],
      false,
    );
    expect(() => assertLiteralHostAllowed('[::1]')).toThrow(/not allowed/);
  });

  it('allows public addresses', () => {
    process.env.GATEWAY_MODE = 'aws';
    expectVerdicts(['104.18.7.192', '8.8.8.8', '2606:4700::6810:1', '2a00:1450:4001:80b::200e', '2600:1f18::1'], true);
  });

  it('refuses the IPv4 documentation networks and the retired 6to4 relay anycast network', () => {
    process.env.GATEWAY_MODE = 'aws';
    expectVerdicts(['192.0.2.1', '198.51.100.7', '203.0.113.9', '192.88.99.1'], false);
  });

  it('judges NAT64 addresses (64:ff9b::/96) by the IPv4 address they embed, in every spelling', () => {
    process.env.GATEWAY_MODE = 'aws';
    expectVerdicts(
      [
        '64:ff9b::a9fe:a9fe',
        '64:ff9b::169.254.169.254',
        '64:FF9B::A9FE:A9FE',
        '64:ff9b:0:0:0:0:a9fe:a9fe',
        '0064:ff9b:0000:0000:0000:0000:a9fe:a9fe',
        '64:ff9b:0:0:0:0:169.254.169.254',
        '64:ff9b::7f00:1',
        '64:ff9b::10.0.0.1',
        '64:ff9b::c0a8:101',
        '64:ff9b::',
        '64:ff9b::c000:201',
      ],
      false,
    );
    expectVerdicts(['64:ff9b::808:808', '64:ff9b::8.8.8.8', '64:FF9B::6812:7C0', '64:ff9b:0:0:0:0:808:808'], true);
  });

  it('judges 6to4 addresses (2002::/16) by the IPv4 address in bits 16-47', () => {
    process.env.GATEWAY_MODE = 'aws';
    expectVerdicts(
      ['2002:a9fe:a9fe::', '2002:a9fe:a9fe::1', '2002:A9FE:A9FE:1:2:3:4:5', '2002:7f00:1::', '2002:0a00:0001:0:0:0:0:1', '2002:c0a8:101::1', '2002::1'],
      false,
    );
    expectVerdicts(['2002:808:808::1', '2002:0808:0808:0:0:0:0:1'], true);
  });

  it('judges Teredo addresses (2001::/32) by both the server and the (inverted) client IPv4 address', () => {
    process.env.GATEWAY_MODE = 'aws';
    expectVerdicts(
      [
        `2001:0:4136:e378::${metadataInTeredoClient}`, // server 65.54.227.120, client 169.254.169.254
        `2001:0:4136:e378:8000:63bf:${metadataInTeredoClient}`,
        '2001:0:4136:e378:8000:63bf:80ff:fffe', // client 127.0.0.1
        `2001:0:a00:1::${publicInTeredoClient}`, // server 10.0.0.1
        `2001::a9fe:a9fe:0:0:${publicInTeredoClient}`, // server 169.254.169.254
        '2001:0:4136:e378:8000:63bf:3fff:fdd2', // the RFC 4380 example: client 192.0.2.45, a documentation address
      ],
      false,
    );
    expectVerdicts([`2001:0:4136:e378:8000:63bf:${publicInTeredoClient}`, `2001::4136:e378:0:0:${publicInTeredoClient}`], true);
  });

  it('judges IPv4-mapped addresses (::ffff:0:0/96) by their IPv4 address, in every spelling', () => {
    process.env.GATEWAY_MODE = 'aws';
    expectVerdicts(
      [
        '::ffff:a9fe:a9fe',
        '::FFFF:A9FE:A9FE',
        '0:0:0:0:0:ffff:169.254.169.254',
        '0:0:0:0:0:FFFF:a9fe:a9fe',
        '::ffff:7f00:1',
        '::ffff:10.0.0.1',
        '::ffff:c0a8:101',
      ],
      false,
    );
    expectVerdicts(['::ffff:8.8.8.8', '::ffff:808:808', '::FFFF:808:808', '0:0:0:0:0:ffff:0808:0808'], true);
  });

  it('refuses deprecated and special-purpose IPv6 ranges outright, even around a public IPv4 address', () => {
    process.env.GATEWAY_MODE = 'aws';
    expectVerdicts(
      [
        // IPv4-compatible (::/96, deprecated)
        '::a9fe:a9fe',
        '::169.254.169.254',
        '::7f00:1',
        '0:0:0:0:0:0:a9fe:a9fe',
        '::8.8.8.8',
        '::808:808',
        // IPv4-translated (::ffff:0:0:0/96)
        '::ffff:0:a9fe:a9fe',
        '::ffff:0:808:808',
        // local-use NAT64 (64:ff9b:1::/48): where the IPv4 address sits depends on a prefix length nobody publishes
        '64:ff9b:1::a9fe:a9fe',
        '64:ff9b:1::808:808',
        '64:ff9b:1:a9:fea9:fe00::',
        '64:FF9B:1:0:0:0:8.8.8.8',
        // site-local (fec0::/10, deprecated)
        'fec0::1',
        'FEC0::A9FE:A9FE',
        'feff::8.8.8.8',
        // unspecified, discard, dummy prefix, ULA, link-local, multicast
        '::',
        '0:0:0:0:0:0:0:0',
        '100::1',
        '100::a9fe:a9fe',
        '100:0:0:1::1',
        'fc00::1',
        'fd12:3456::1',
        'fe80::1',
        'FE80::A9FE:A9FE',
        'ff02::1',
        'ff0e::8.8.8.8',
        // documentation, benchmarking, ORCHID and other IETF protocol assignments, SRv6 SIDs, unallocated space
        '2001:db8::1',
        '2001:DB8:0:0:0:0:0:1',
        '2001:db8::8.8.8.8',
        '3fff::1',
        '2001:2::1',
        '2001:10::1',
        '2001:1::1',
        '5f00::1',
        '4000::1',
        'e000::1',
        '1::',
      ],
      false,
    );
  });

  it('refuses scoped addresses by the address, whatever the zone id', () => {
    process.env.GATEWAY_MODE = 'aws';
    expectVerdicts(['fe80::1%eth0', 'fe80::a9fe:a9fe%1', '64:ff9b::a9fe:a9fe%eth0', '::1%lo'], false);
  });

  it('refuses bracketed URL hosts and the IPv4 spellings URLs normalise, before any connection', () => {
    process.env.GATEWAY_MODE = 'aws';
    for (const url of [
      'http://[64:ff9b::169.254.169.254]/',
      'http://[64:FF9B::A9FE:A9FE]:8080/v1',
      'https://[2002:a9fe:a9fe::1]/',
      `http://[2001:0:4136:e378::${metadataInTeredoClient}]/`,
      'http://[::169.254.169.254]/',
      'http://[0:0:0:0:0:ffff:a9fe:a9fe]/',
      'http://[fec0::1]/',
      'http://[64:ff9b:1::a9fe:a9fe]/',
      'http://2852039166/',
      'http://0251.0376.0251.0376/',
      'http://0xa9fea9fe/',
      'http://0xA9.0xFE.0xA9.0xFE/',
      'http://169.254.43518/',
      'http://127.1/',
      'http://0x7f.1/',
      'http://0/',
    ]) {
      const { hostname } = new URL(url);
      expect(() => assertLiteralHostAllowed(hostname), url).toThrow(BlockedAddressError);
    }
    for (const url of ['http://[64:ff9b::808:808]/', 'https://[2606:4700::6810:1]/', 'http://134744072/']) {
      expect(() => assertLiteralHostAllowed(new URL(url).hostname), url).not.toThrow();
    }
  });

  it('allows loopback in local mode only, and private addresses only through the allow-list', () => {
    process.env.GATEWAY_MODE = 'local';
    expect(isAddressAllowed('localhost', '127.0.0.1')).toBe(true);
    expect(isAddressAllowed('h', '10.0.0.5')).toBe(false);
    process.env.GATEWAY_OUTBOUND_ALLOWLIST = '10.0.0.0/24, models.internal';
    expect(isAddressAllowed('h', '10.0.0.5')).toBe(true);
    expect(isAddressAllowed('h', '10.0.1.5')).toBe(false);
    expect(isAddressAllowed('models.internal', '192.168.0.9')).toBe(true);
  });

  it('in local mode still refuses metadata, private and deprecated addresses embedded in IPv6', () => {
    process.env.GATEWAY_MODE = 'local';
    expectVerdicts(['::1', '127.0.0.1', '::ffff:127.0.0.1', '::ffff:7f00:1'], true);
    expectVerdicts(
      ['64:ff9b::a9fe:a9fe', '2002:a9fe:a9fe::', `2001:0:4136:e378::${metadataInTeredoClient}`, '::a9fe:a9fe', '::127.0.0.1', 'fec0::1', '64:ff9b:1::a00:1'],
      false,
    );
  });

  it('lets the allow-list name embedded IPv4 networks, IPv6 networks and hosts', () => {
    process.env.GATEWAY_MODE = 'aws';
    process.env.GATEWAY_OUTBOUND_ALLOWLIST = '10.0.0.0/24, fec0::/10, models.internal';
    expectVerdicts(['64:ff9b::a00:5', '::ffff:10.0.0.5', '2002:a00:5::1', 'fec0::1'], true);
    expectVerdicts(['64:ff9b::a00:105', '2002:a00:105::1', '64:ff9b::a9fe:a9fe', 'fe80::1'], false);
    expect(isAddressAllowed('models.internal', '64:ff9b::a9fe:a9fe')).toBe(true);
  });

  it('re-judges a literal host when the mode or the allow-list changes', () => {
    process.env.GATEWAY_MODE = 'aws';
    expect(() => assertLiteralHostAllowed('[64:ff9b::a9fe:a9fe]')).toThrow(BlockedAddressError);
    process.env.GATEWAY_OUTBOUND_ALLOWLIST = '64:ff9b::/96';
    expect(() => assertLiteralHostAllowed('[64:ff9b::a9fe:a9fe]')).not.toThrow();
    delete process.env.GATEWAY_OUTBOUND_ALLOWLIST;
    expect(() => assertLiteralHostAllowed('[64:ff9b::a9fe:a9fe]')).toThrow(BlockedAddressError);
  });

  it('applies the same rule to the addresses a name resolves to at connect time', async () => {
    process.env.GATEWAY_MODE = 'aws';
    scriptedAnswers.set('nat64.example', ['64:ff9b::a9fe:a9fe', '2002:a9fe:a9fe::1', '::a9fe:a9fe', 'fec0::1']);
    await expect(lookupAll('nat64.example')).rejects.toBeInstanceOf(BlockedAddressError);
    scriptedAnswers.set('mixed.example', ['64:ff9b::a9fe:a9fe', '64:ff9b::808:808', '8.8.8.8', `2001:0:4136:e378::${metadataInTeredoClient}`]);
    expect((await lookupAll('mixed.example')).map((entry) => entry.address)).toEqual(['64:ff9b::808:808', '8.8.8.8']);
  });
});

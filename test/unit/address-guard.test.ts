import { afterEach, describe, expect, it } from 'vitest';
import { assertLiteralHostAllowed, isAddressAllowed } from '../../lib/outbound/address-guard';

const saved = { mode: process.env.GATEWAY_MODE, allow: process.env.GATEWAY_OUTBOUND_ALLOWLIST };
afterEach(() => {
  process.env.GATEWAY_MODE = saved.mode;
  if (saved.allow === undefined) delete process.env.GATEWAY_OUTBOUND_ALLOWLIST;
  else process.env.GATEWAY_OUTBOUND_ALLOWLIST = saved.allow;
});

describe('outbound address guard', () => {
  it('refuses loopback, private, link-local and metadata addresses on AWS', () => {
    process.env.GATEWAY_MODE = 'aws';
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fd00:ec2::254', 'fe80::1', '::ffff:127.0.0.1', '::ffff:169.254.169.254']) {
      expect(isAddressAllowed('h', address), address).toBe(false);
    }
    expect(() => assertLiteralHostAllowed('[::1]')).toThrow(/not allowed/);
  });

  it('allows public addresses', () => {
    process.env.GATEWAY_MODE = 'aws';
    for (const address of ['104.18.7.192', '8.8.8.8', '2606:4700::6810:1']) expect(isAddressAllowed('h', address), address).toBe(true);
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
});

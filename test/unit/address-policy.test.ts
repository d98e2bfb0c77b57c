import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { classifyAddress, isPublicAddress } from '../../src/lib/address-policy.js';

function what(ip: string): string | undefined {
  return classifyAddress(ip)?.what;
}

describe('IPv4 addresses', () => {
  it.each([
    ['10.0.0.1', 'a private address'],
    ['10.255.255.255', 'a private address'],
    ['172.16.0.1', 'a private address'],
    ['172.31.255.254', 'a private address'],
    ['192.168.1.1', 'a private address'],
    ['127.0.0.1', 'a loopback address'],
    ['127.255.255.254', 'a loopback address'],
    ['169.254.169.254', 'the cloud metadata address'],
    ['169.254.1.1', 'a link-local address'],
    ['0.0.0.0', 'a "this network" address'],
    ['0.1.2.3', 'a "this network" address'],
    ['100.64.0.1', 'a shared (carrier-grade NAT) address'],
    ['100.127.255.254', 'a shared (carrier-grade NAT) address'],
    ['224.0.0.1', 'a multicast address'],
    ['239.255.255.250', 'a multicast address'],
    ['240.0.0.1', 'a reserved address'],
    ['255.255.255.255', 'the broadcast address'],
    ['198.18.0.1', 'a benchmarking address'],
    ['198.19.255.254', 'a benchmarking address'],
    ['192.0.2.1', 'a documentation address'],
    ['198.51.100.1', 'a documentation address'],
    ['203.0.113.1', 'a documentation address'],
    ['192.0.0.8', 'an IETF protocol assignment address'],
    ['192.88.99.1', 'a reserved (6to4 relay) address'],
  ])('%s is refused as %s', (ip, expected) => {
    expect(isPublicAddress(ip)).toBe(false);
    expect(what(ip)).toBe(expected);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.215.14', '172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1', '198.17.255.255', '198.20.0.1', '223.255.255.255'])(
    '%s is public',
    (ip) => {
      expect(isPublicAddress(ip)).toBe(true);
      expect(classifyAddress(ip)).toBeNull();
    },
  );

  it('refuses the shorthand forms inet_aton accepts as the address they stand for', () => {
    for (const ip of ['2130706433', '0x7f000001', '0177.0.0.1', '127.1']) expect(what(ip)).toBe('a loopback address');
  });

  it('refuses everything ipaddr.js does not call unicast, over a sweep of the IPv4 space', () => {
    // A cross-check of our table against the library's: a sample every /16 and at range edges.
    for (let a = 0; a < 256; a++) {
      for (const b of [0, 1, 16, 31, 64, 127, 168, 254, 255]) {
        for (const host of ['0.0', '0.1', '169.254', '255.255']) {
          const ip = `${a}.${b}.${host}`;
          const range = ipaddr.parse(ip).range();
          if (range !== 'unicast' && range !== 'as112' && range !== 'amt') expect(isPublicAddress(ip), ip).toBe(false);
        }
      }
    }
  });
});

describe('IPv6 addresses', () => {
  it.each([
    ['::1', 'a loopback address'],
    ['::', 'the unspecified address'],
    ['fc00::1', 'a unique-local address'],
    ['fd12:3456::1', 'a unique-local address'],
    ['fd00:ec2::254', 'the cloud metadata address'],
    ['fe80::1', 'a link-local address'],
    ['fe80::1%eth0', 'a link-local address'],
    ['febf::1', 'a link-local address'],
    ['fec0::1', 'a site-local address'],
    ['ff02::1', 'a multicast address'],
    ['2001:db8::1', 'a documentation address'],
    ['3fff::1', 'a documentation address'],
    ['2001::1', 'a Teredo tunnel address'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'a Teredo tunnel address'],
    ['2001:2::1', 'an IETF protocol assignment address'],
    ['2002:808:808::1', 'a 6to4 tunnel address'],
    ['2002:7f00:1::1', 'a 6to4 tunnel address'],
    ['64:ff9b:1::a00:1', 'a local-use NAT64 address'],
    ['::7f00:1', 'an IPv4-compatible (deprecated) address'],
    ['::808:808', 'an IPv4-compatible (deprecated) address'],
    ['::8.8.8.8', 'an IPv4-compatible (deprecated) address'],
    ['100::1', 'a discard-only address'],
    ['4000::1', 'not a global unicast address'],
    ['::ffff:0:808:808', 'not a global unicast address'],
  ])('%s is refused as %s', (ip, expected) => {
    expect(isPublicAddress(ip)).toBe(false);
    expect(what(ip)).toBe(expected);
  });

  it.each(['2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001:82a::200e', '[2606:4700:4700::1111]'])('%s is public', (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
  });

  it('judges IPv4-mapped addresses by the IPv4 address they carry', () => {
    expect(what('::ffff:127.0.0.1')).toBe('a loopback address');
    expect(what('::ffff:7f00:1')).toBe('a loopback address');
    expect(what('[::ffff:7f00:1]')).toBe('a loopback address');
    expect(what('::ffff:169.254.169.254')).toBe('the cloud metadata address');
    expect(what('::ffff:a00:1')).toBe('a private address');
    expect(isPublicAddress('::ffff:8.8.8.8')).toBe(true);
    expect(isPublicAddress('::ffff:808:808')).toBe(true);
  });

  it('judges well-known NAT64 addresses by the IPv4 address they carry', () => {
    expect(what('64:ff9b::7f00:1')).toBe('a loopback address');
    expect(what('64:ff9b::169.254.169.254')).toBe('the cloud metadata address');
    expect(isPublicAddress('64:ff9b::808:808')).toBe(true);
  });
});

describe('anything else', () => {
  it.each(['', 'localhost', 'example.com', '1.2.3.4.5', '::g', '256.0.0.1', '[::1', '12345::1'])('%j is refused as not an IP address', (s) => {
    expect(isPublicAddress(s)).toBe(false);
    expect(what(s)).toBe('not an IP address');
  });
});

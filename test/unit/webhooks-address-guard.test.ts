// Unit tests for the SSRF guard (lambdas/domain/webhooks/address-guard.ts, DESIGN §4): only public unicast
// addresses, IPv4-mapped IPv6 judged as the IPv4 it carries; webhook URLs refused for http on AWS, credentials,
// non-public IP literals in any spelling the URL parser accepts, and localhost names.
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import {
  checkWebhookUrl,
  isMetadataAddress,
  isPublicAddress,
  type UrlPolicy,
} from '../../lambdas/domain/webhooks/address-guard';

const AWS: UrlPolicy = { allowPrivate: false };
const LOCAL: UrlPolicy = { allowPrivate: true };

describe('isPublicAddress', () => {
  it.each([
    ['10.0.0.1', '10/8'],
    ['10.255.255.255', '10/8'],
    ['172.16.0.1', '172.16/12'],
    ['172.31.255.255', '172.16/12'],
    ['192.168.1.1', '192.168/16'],
    ['100.64.0.1', '100.64/10 (carrier-grade NAT)'],
    ['100.127.255.255', '100.64/10 (carrier-grade NAT)'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['192.0.2.1', 'documentation'],
    ['240.0.0.1', 'reserved'],
  ])('refuses IPv4 %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'unique local fc00::/7'],
    ['fd12:3456:789a::1', 'unique local fc00::/7'],
    ['fe80::1', 'link-local fe80::/10'],
    ['febf::1', 'link-local fe80::/10'],
    ['ff02::1', 'multicast'],
    ['2001:db8::', 'documentation'],
    ['2001:db8::1', 'documentation'],
  ])('refuses IPv6 %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['::127.0.0.1', '::7f00:1', '::8.8.8.8', '::a00:1'])(
    'refuses the IPv4-compatible IPv6 %s (deprecated; top 96 bits zero)',
    (address) => {
      expect(isPublicAddress(address)).toBe(false);
    },
  );

  it.each([
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '0:0:0:0:0:ffff:c0a8:0101',
  ])('refuses the IPv4-mapped IPv6 %s (judged as the IPv4 inside)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it('refuses the NAT64 prefix 64:ff9b::/96, which can reach an internal IPv4 (64:ff9b::a00:1 = 10.0.0.1)', () => {
    expect(isPublicAddress('64:ff9b::a00:1')).toBe(false);
    expect(isPublicAddress('64:ff9b::7f00:1')).toBe(false);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.15.255.255',
    '172.32.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '11.0.0.1',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
  ])('allows the public address %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each(['', 'example.com', '256.0.0.1', ' 8.8.8.8', 'fe80::1%eth0'])(
    'refuses %j, which is not a plain address',
    (address) => {
      expect(isPublicAddress(address)).toBe(false);
    },
  );
});

describe('checkWebhookUrl on AWS (allowPrivate: false)', () => {
  it('allows a public https URL and returns it parsed', () => {
    const check = checkWebhookUrl('https://example.com/hook', AWS);

    expect(check.ok).toBe(true);
    expect(check.ok && check.url.href).toBe('https://example.com/hook');
  });

  it.each(['https://8.8.8.8/hook', 'https://[2606:4700:4700::1111]/hook', 'https://example.com:8443/a?b=c'])(
    'allows %s',
    (url) => {
      expect(checkWebhookUrl(url, AWS).ok).toBe(true);
    },
  );

  it.each(['http://example.com/hook', 'ftp://example.com/hook', 'file:///etc/passwd', 'javascript:alert(1)'])(
    'refuses the scheme of %s',
    (url) => {
      expect(checkWebhookUrl(url, AWS)).toEqual({ ok: false, reason: 'must use https' });
    },
  );

  it.each(['https://user:pass@example.com/hook', 'https://user@example.com/hook', 'https://:pass@example.com/hook'])(
    'refuses credentials in %s',
    (url) => {
      expect(checkWebhookUrl(url, AWS)).toEqual({ ok: false, reason: 'must not contain credentials' });
    },
  );

  it.each(['not a url', '', '/relative/path', 'https://'])('refuses %j, which is not an absolute URL', (url) => {
    expect(checkWebhookUrl(url, AWS).ok).toBe(false);
  });

  it.each([
    ['dotted loopback', 'https://127.0.0.1/'],
    ['decimal', 'https://2130706433/'],
    ['octal', 'https://0177.0.0.1/'],
    ['hex', 'https://0x7f.0.0.1/'],
    ['hex, one part', 'https://0x7f000001/'],
    ['short', 'https://127.1/'],
    ['trailing dot', 'https://127.0.0.1./'],
    ['zero', 'https://0/'],
    ['metadata service', 'https://169.254.169.254/latest/meta-data/'],
    ['private, with a port', 'https://10.0.0.1:8443/hook'],
    ['bracketed IPv6 loopback', 'https://[::1]/'],
    ['bracketed unspecified', 'https://[::]/'],
    ['bracketed IPv4-mapped', 'https://[::ffff:127.0.0.1]/'],
    ['bracketed IPv4-mapped, hex', 'https://[::ffff:7f00:1]/'],
    ['bracketed unique local', 'https://[fd00::1]/'],
    ['bracketed NAT64', 'https://[64:ff9b::a00:1]/'],
    ['percent-encoded', 'https://%31%32%37.0.0.1/'],
    ['full-width digits', 'https://１２７.０.０.１/'],
  ])('refuses an IP-literal host: %s (%s)', (_, url) => {
    expect(checkWebhookUrl(url, AWS)).toEqual({
      ok: false,
      reason: 'must not point to a private, loopback or reserved address',
    });
  });

  it('refuses decimal http://2130706433/ (scheme first, and the host is loopback too)', () => {
    expect(checkWebhookUrl('http://2130706433/', AWS).ok).toBe(false);
    expect(checkWebhookUrl('https://2130706433/', AWS).ok).toBe(false);
  });

  it.each(['https://localhost/', 'https://LOCALHOST:8080/x', 'https://api.localhost/', 'https://a.b.localhost/hook'])(
    'refuses the local host name in %s',
    (url) => {
      expect(checkWebhookUrl(url, AWS)).toEqual({ ok: false, reason: 'must not point to a local host name' });
    },
  );

  it.each(['https://localhost./', 'https://api.localhost./hook'])(
    'refuses the local host name with a trailing dot in %s',
    (url) => {
      expect(checkWebhookUrl(url, AWS)).toEqual({ ok: false, reason: 'must not point to a local host name' });
    },
  );

  it('does not mistake a lookalike public name for localhost', () => {
    expect(checkWebhookUrl('https://localhost.example.com/hook', AWS).ok).toBe(true);
    expect(checkWebhookUrl('https://notlocalhost/hook', AWS).ok).toBe(true);
  });
});

describe('checkWebhookUrl in the local runtime (allowPrivate: true)', () => {
  it.each(['http://127.0.0.1:1234/x', 'http://localhost:3000/hook', 'https://[::1]:8443/', 'http://10.0.0.5/'])(
    'allows %s',
    (url) => {
      const check = checkWebhookUrl(url, LOCAL);

      expect(check.ok).toBe(true);
      expect(check.ok && check.url.href).toBe(new URL(url).href);
    },
  );

  it('still refuses other schemes and credentials', () => {
    expect(checkWebhookUrl('ftp://127.0.0.1/', LOCAL)).toEqual({ ok: false, reason: 'must use http or https' });
    expect(checkWebhookUrl('http://u:p@127.0.0.1:1234/', LOCAL)).toEqual({
      ok: false,
      reason: 'must not contain credentials',
    });
  });
});

describe('isMetadataAddress (refused for attachment paths even where private URLs are allowed)', () => {
  it.each([
    ['169.254.169.254', 'EC2/Azure/GCP instance metadata'],
    ['169.254.170.2', 'ECS task credentials'],
    ['169.254.0.1', '169.254/16 link-local'],
    ['fd00:ec2::254', 'EC2 IPv6 metadata'],
    ['fe80::1', 'IPv6 link-local'],
    ['::ffff:169.254.169.254', 'IPv4-mapped'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped, hex'],
    ['64:ff9b::a9fe:a9fe', 'NAT64'],
  ])('%s (%s) is one', (address) => {
    expect(isMetadataAddress(address)).toBe(true);
  });

  it.each([
    ['127.0.0.1'],
    ['10.0.0.1'],
    ['fd00::1'],
    ['::1'],
    ['93.184.215.14'],
    ['64:ff9b::5db8:d70e'],
    ['not an address'],
  ])('%s is not', (address) => {
    expect(isMetadataAddress(address)).toBe(false);
  });
});

/**
 * Every IPv6 spelling that carries an IPv4 address (a.b.c.d) by a transition mechanism, named. The NAT64
 * local-use forms are read in every layout an operator may choose, so another layout can find 169.254/16 in an
 * address that carries another IPv4 in its own: those are named "(local-use)" and judged one way only.
 */
function ipv6Forms(v4: string): [string, string][] {
  const [a = 0, b = 0, c = 0, d = 0] = v4.split('.').map(Number);
  const hex = (n: number) => n.toString(16);
  const hi = hex((a << 8) | b);
  const lo = hex((c << 8) | d);
  const not = (n: number) => hex(~n & 0xffff);
  return [
    [`::ffff:${v4}`, 'IPv4-mapped, dotted'],
    [`::ffff:${hi}:${lo}`, 'IPv4-mapped, hex'],
    [`0000:0000:0000:0000:0000:FFFF:${hi.padStart(4, '0')}:${lo.padStart(4, '0')}`, 'IPv4-mapped, expanded'],
    [`::${v4}`, 'IPv4-compatible, dotted'],
    [`::${hi}:${lo}`, 'IPv4-compatible, hex'],
    [`0:0:0:0:0:0:${hi}:${lo}`, 'IPv4-compatible, expanded'],
    [`::ffff:0:${hi}:${lo}`, 'IPv4-translated (SIIT, RFC 6145)'],
    [`64:ff9b::${hi}:${lo}`, 'NAT64 well-known prefix'],
    [`64:ff9b::${v4}`, 'NAT64 well-known prefix, dotted'],
    [`64:ff9b:1::${hi}:${lo}`, 'NAT64 (local-use) prefix as a /96 (RFC 8215)'],
    [`64:ff9b:1:${hi}:${hex(c)}:${hex(d << 8)}::`, 'NAT64 (local-use) prefix as a /48 (RFC 6052 layout)'],
    [`64:ff9b:1:${hex(a)}:${hex(b)}:${lo}::`, 'NAT64 (local-use) prefix as a /56'],
    [`64:ff9b:1:0:${hex(a)}:${hex((b << 8) | c)}:${hex(d << 8)}:0`, 'NAT64 (local-use) prefix as a /64'],
    [`2002:${hi}:${lo}::`, '6to4'],
    [`2002:${hi}:${lo}:1::1`, '6to4, a host of its /48'],
    [`2001:0:${hi}:${lo}::1`, 'Teredo server'],
    [`2001:0:4136:e378:8000:63bf:${not((a << 8) | b)}:${not((c << 8) | d)}`, 'Teredo client (obfuscated)'],
    [`2001:db8::5efe:${hi}:${lo}`, 'ISATAP'],
    [`2001:db8::200:5efe:${v4}`, 'ISATAP, global, dotted'],
  ];
}

const METADATA_V4 = ['169.254.169.254', '169.254.170.2', '169.254.170.23', '169.254.0.1', '169.254.255.255'];

describe('isMetadataAddress in every IPv6 form (private URLs allowed must not reach a metadata service)', () => {
  it.each(METADATA_V4.flatMap((v4) => ipv6Forms(v4).map(([form, name]) => [form, name, v4])))(
    '%s (%s of %s) is one',
    (address) => {
      expect(ipaddr.isValid(address)).toBe(true);
      expect(isMetadataAddress(address)).toBe(true);
    },
  );

  it.each([
    ['fd00:ec2::254', 'AWS IMDS (IPv6)'],
    ['FD00:0EC2:0000:0000:0000:0000:0000:0254', 'AWS IMDS (IPv6), expanded'],
    ['fd00:ec2::253', 'AWS Route 53 Resolver (IPv6)'],
    ['fd00:ec2::23', 'EKS Pod Identity Agent (IPv6)'],
    ['fd00:ec2::123', 'Amazon Time Sync (IPv6)'],
    ['fd20:ce::254', 'Google Cloud metadata server (IPv6)'],
    ['fd00:c1::a9fe:a9fe', 'Oracle Cloud IMDS (IPv6)'],
    ['100.100.100.200', 'Alibaba Cloud metadata'],
    ['::ffff:100.100.100.200', 'Alibaba Cloud metadata, IPv4-mapped'],
    ['fe80::a9fe:a9fe', 'IPv6 link-local'],
  ])('%s (%s) is one', (address) => {
    expect(isMetadataAddress(address)).toBe(true);
  });

  it.each([
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::7f00:1', 'IPv4-compatible loopback'],
    ['2002:7f00:1::', '6to4 of loopback'],
    ['2002:5db8:d70e::', '6to4 of a public address'],
    ['64:ff9b::a9fd:a9fe', 'NAT64 of 169.253.169.254'],
    ['fd00:ec3::254', 'another unique-local /32'],
    ['2001:db8::a9fe:a9fe', 'a:b:c:d in an address that embeds nothing'],
    ['100.100.100.201', 'beside Alibaba’s'],
  ])('%s (%s) is not', (address) => {
    expect(isMetadataAddress(address)).toBe(false);
  });

  it('judges every embedding as the IPv4 it carries (property: any IPv4, every form)', () => {
    const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).chain((parts) =>
      fc.oneof(
        fc.constant(parts.join('.')),
        // Half the runs inside 169.254/16, so both answers are exercised.
        fc.constant(['169', '254', String(parts[2]), String(parts[3])].join('.')),
      ),
    );
    fc.assert(
      fc.property(v4, (address) => {
        const expected = isMetadataAddress(address);
        for (const [form, name] of ipv6Forms(address)) {
          if (expected || !name.includes('(local-use)')) expect(isMetadataAddress(form), form).toBe(expected);
        }
      }),
      { numRuns: 500 },
    );
  });

  it.each([
    'http://[::a9fe:a9fe]/',
    'http://[::169.254.169.254]/',
    'http://[::ffff:0:a9fe:a9fe]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://[2002:a9fe:a9fe::]/',
    'http://[fd00:ec2::254]/',
  ])('the URL host of %s, as the attachment fetcher reads it, is one', (url) => {
    expect(isMetadataAddress(new URL(url).hostname.replace(/^\[|\]$/g, ''))).toBe(true);
  });
});

// SSRF guard rules (DESIGN §4): webhook URLs must reach only public unicast addresses. Pure; the HTTP
// sender applies `isPublicAddress` to every resolved address and pins the connection to a checked one.
import ipaddr from 'ipaddr.js';

export interface UrlPolicy {
  /** Allow http:// and private/loopback targets: the local runtime only, never on AWS. */
  readonly allowPrivate: boolean;
}

/** True only for public unicast addresses. IPv4-mapped IPv6 is judged as the IPv4 it carries. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  // ipaddr.js reads any dotted tail (::a.b.c.d) as IPv4-mapped; only the ::ffff: form really is.
  const dotted = address.includes(':') && address.includes('.');
  if (dotted && !/^(?:0{1,4}:){5}ffff:|^::ffff:/i.test(address)) return false;
  const raw = ipaddr.parse(address);
  // IPv4-compatible IPv6 (::a.b.c.d, deprecated): the top 96 bits are zero; never a public address.
  if (raw.kind() === 'ipv6' && (raw as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

/**
 * IPv4 metadata and credential services: 169.254.0.0/16 (EC2, ECS task credentials 169.254.170.2, EKS Pod
 * Identity 169.254.170.23, Azure, GCP, Oracle, DigitalOcean; all link-local) and Alibaba Cloud's 100.100.100.200.
 */
const METADATA_V4: readonly [ipaddr.IPv4, number][] = [
  ipaddr.IPv4.parseCIDR('169.254.0.0/16'),
  ipaddr.IPv4.parseCIDR('100.100.100.200/32'),
];

/**
 * IPv6 ones, inside fc00::/7 or fe80::/10, which a private-URL setting would otherwise allow: link-local; AWS's
 * fd00:ec2::/32 (IMDS ::254, Route 53 Resolver ::253, Time Sync ::123, EKS Pod Identity ::23); Google Cloud's
 * metadata server fd20:ce::254; Oracle Cloud's IMDS fd00:c1::a9fe:a9fe.
 */
const METADATA_V6: readonly [ipaddr.IPv6, number][] = [
  ipaddr.IPv6.parseCIDR('fe80::/10'),
  ipaddr.IPv6.parseCIDR('fd00:ec2::/32'),
  ipaddr.IPv6.parseCIDR('fd20:ce::254/128'),
  ipaddr.IPv6.parseCIDR('fd00:c1::a9fe:a9fe/128'),
];

const v4Of = (a: number, b: number, c: number, d: number) => new ipaddr.IPv4([a & 255, b & 255, c & 255, d & 255]);
const v4OfWords = (high: number, low: number) => v4Of(high >> 8, high, low >> 8, low);

/**
 * Every IPv4 address an IPv6 address carries by a transition mechanism, as some path on a network could reach it:
 * IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96, deprecated), IPv4-translated (SIIT, ::ffff:0:0:0/96),
 * NAT64's well-known prefix (64:ff9b::/96) and local-use prefix (64:ff9b:1::/48, RFC 8215, in each RFC 6052
 * layout an operator may use in it: /48, /56, /64, /96), 6to4 (2002::/16), Teredo (2001::/32: the server, and
 * the client obfuscated) and ISATAP (an interface id of [0-3]00:5efe:a.b.c.d under any prefix).
 */
export function embeddedIPv4s(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const [p0 = 0, p1 = 0, p2 = 0, p3 = 0, p4 = 0, p5 = 0, p6 = 0, p7 = 0] = address.parts;
  const found: ipaddr.IPv4[] = [];
  const last32 = v4OfWords(p6, p7);
  const zeros = (...parts: number[]) => parts.every((part) => part === 0);
  if (zeros(p0, p1, p2, p3, p4) && (p5 === 0 || p5 === 0xffff)) found.push(last32);
  if (zeros(p0, p1, p2, p3) && p4 === 0xffff && p5 === 0) found.push(last32);
  if (p0 === 0x64 && p1 === 0xff9b && zeros(p2, p3, p4, p5)) found.push(last32);
  if (p0 === 0x64 && p1 === 0xff9b && p2 === 1) {
    found.push(
      v4Of(p3 >> 8, p3, p4, p5 >> 8), // /48
      v4Of(p3, p4, p5 >> 8, p5), // /56
      v4Of(p4, p5 >> 8, p5, p6 >> 8), // /64
      last32, // /96
    );
  }
  if (p0 === 0x2002) found.push(v4OfWords(p1, p2));
  if (p0 === 0x2001 && p1 === 0) found.push(v4OfWords(p2, p3), v4OfWords(~p6, ~p7));
  if ((p4 & 0xfcff) === 0 && p5 === 0x5efe) found.push(last32);
  return found;
}

const isMetadataV4 = (address: ipaddr.IPv4) => METADATA_V4.some((range) => address.match(range));

/**
 * Link-local and cloud metadata addresses (METADATA_V4, METADATA_V6), also in every IPv6 form that carries one
 * of the IPv4 ones (embeddedIPv4s: `::a9fe:a9fe`, `::ffff:169.254.169.254`, `64:ff9b::a9fe:a9fe`,
 * `2002:a9fe:a9fe::`, …). Refused wherever a URL's body is read back to the caller (attachment `path`), even
 * where private addresses are allowed: nothing there is a file a customer means to attach, and it answers
 * credentials.
 */
export function isMetadataAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return isMetadataV4(parsed as ipaddr.IPv4);
  const v6 = parsed as ipaddr.IPv6;
  return METADATA_V6.some((range) => v6.match(range)) || embeddedIPv4s(v6).some(isMetadataV4);
}

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * Static checks of a webhook URL: scheme, credentials, and an IP-literal or localhost host.
 * The WHATWG parser already turns decimal, octal and hex IPv4 forms into dotted quads.
 */
export function checkWebhookUrl(raw: string, policy: UrlPolicy): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'must be an absolute URL' };
  }
  const allowed = policy.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!allowed.includes(url.protocol))
    return { ok: false, reason: `must use ${policy.allowPrivate ? 'http or https' : 'https'}` };
  if (url.username || url.password) return { ok: false, reason: 'must not contain credentials' };
  if (policy.allowPrivate) return { ok: true, url };
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (ipaddr.isValid(host) && !isPublicAddress(host))
    return { ok: false, reason: 'must not point to a private, loopback or reserved address' };
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) {
    return { ok: false, reason: 'must not point to a local host name' };
  }
  return { ok: true, url };
}

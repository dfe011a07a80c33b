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

/** AWS's IPv6 instance metadata endpoint (Nitro), inside fd00::/8 which a private-URL setting would allow. */
const EC2_METADATA_V6 = ipaddr.parse('fd00:ec2::254').toNormalizedString();

/**
 * Link-local and cloud metadata addresses (169.254.0.0/16: EC2/ECS/Azure/GCP metadata and task credentials;
 * fe80::/10; fd00:ec2::254), also as IPv4-mapped or NAT64 (64:ff9b::/96) IPv6. Refused wherever a URL's body is
 * read back to the caller (attachment `path`), even where private addresses are allowed: nothing there is a
 * file a customer means to attach, and it answers credentials.
 */
export function isMetadataAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.range() === 'linkLocal';
  const v6 = parsed as ipaddr.IPv6;
  if (v6.range() === 'linkLocal' || v6.toNormalizedString() === EC2_METADATA_V6) return true;
  // 64:ff9b::a9fe:xxxx: the NAT64 form of 169.254.x.x.
  const [a, b, c, d, e, f, g] = v6.parts;
  return a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0 && g === 0xa9fe;
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

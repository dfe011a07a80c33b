// Create/update-time check of a webhook URL (DESIGN §4): the static rules, then DNS. A host that does not
// resolve is accepted (its attempts fail with a DNS error); one that resolves to a non-public address is not.
import { lookup } from 'node:dns/promises';
import type { UrlVerifier } from '../../app/webhooks/ports';
import { checkWebhookUrl, type UrlPolicy } from '../../domain/webhooks/address-guard';
import { refusedAddress } from './guarded-lookup';

const DNS_TIMEOUT_MS = 3_000;

export class DnsUrlVerifier implements UrlVerifier {
  constructor(private readonly policy: UrlPolicy) {}

  async problem(url: string): Promise<string | null> {
    const check = checkWebhookUrl(url, this.policy);
    if (!check.ok) return check.reason;
    if (this.policy.allowPrivate) return null;
    const host = check.url.hostname.replace(/^\[|\]$/g, '');
    const timeout = new Promise<null>((resolve) => setTimeout(() => resolve(null), DNS_TIMEOUT_MS).unref());
    const addresses = await Promise.race([lookup(host, { all: true }).catch(() => null), timeout]);
    const refused = addresses && refusedAddress(addresses);
    return refused
      ? `must not resolve to a private, loopback or reserved address (${host} resolves to ${refused})`
      : null;
  }
}

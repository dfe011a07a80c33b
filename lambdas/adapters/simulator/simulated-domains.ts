// The domain simulator: DKIM records shaped like SES's, and verification that succeeds a configurable delay
// after the domain was added (SF_DOMAIN_VERIFY_SECONDS). Its identities are per account (nothing is shared),
// so no name is ever unavailable here.
import { createHash } from 'node:crypto';
import type { DnsRecord, DomainProvider, DomainStatus } from '../../app/domains/ports';

export class SimulatedDomainProvider implements DomainProvider {
  constructor(private readonly deps: { verifyAfterSeconds: number; now: () => number }) {}

  async register(name: string): Promise<readonly DnsRecord[]> {
    return [0, 1, 2].map((i) => {
      const token = createHash('sha256').update(`${name}#${i}`).digest('hex').slice(0, 32);
      return { type: 'CNAME', name: `${token}._domainkey.${name}`, value: `${token}.dkim.amazonses.com` } as const;
    });
  }

  async status(domain: { createdAt: string }): Promise<DomainStatus> {
    return this.deps.now() - Date.parse(domain.createdAt) >= this.deps.verifyAfterSeconds * 1000
      ? 'verified'
      : 'pending';
  }

  async remove(): Promise<void> {}
}

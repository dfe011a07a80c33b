// Sending domains on AWS (DESIGN §6): each is an SES v2 domain identity with Easy DKIM (2048-bit keys). SES
// returns three DKIM tokens; the customer publishes one CNAME per token, and SES verifies the domain once it
// sees them. Registering a name SES already has returns that identity's records (idempotent); deleting one
// that is gone is a no-op.
import {
  AlreadyExistsException,
  CreateEmailIdentityCommand,
  DeleteEmailIdentityCommand,
  type DkimAttributes,
  GetEmailIdentityCommand,
  type GetEmailIdentityResponse,
  NotFoundException,
  type SESv2Client,
} from '@aws-sdk/client-sesv2';
import type { DnsRecord, DomainProvider, DomainStatus } from '../../app/domains/ports';

/** Where Easy DKIM CNAMEs point (the SES host for the DKIM public keys). */
export const EASY_DKIM_DOMAIN = 'dkim.amazonses.com';

export class DkimRecordsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DkimRecordsError';
  }
}

/** The CNAMEs of an identity's Easy DKIM tokens: `<token>._domainkey.<domain>` → `<token>.dkim.amazonses.com`. */
export function dkimRecords(domain: string, attributes: DkimAttributes | undefined): DnsRecord[] {
  const tokens = attributes?.Tokens ?? [];
  if (tokens.length === 0) throw new DkimRecordsError(`SES returned no DKIM tokens for ${domain}`);
  return tokens.map((token) => ({
    type: 'CNAME',
    name: `${token}._domainkey.${domain}`,
    value: `${token}.${EASY_DKIM_DOMAIN}`,
  }));
}

/** SES's view of an identity as our status: verified for sending or DKIM verified; failed; else pending. */
export function identityStatus(identity: GetEmailIdentityResponse): DomainStatus {
  if (identity.VerifiedForSendingStatus || identity.DkimAttributes?.Status === 'SUCCESS') return 'verified';
  if (identity.DkimAttributes?.Status === 'FAILED' || identity.VerificationStatus === 'FAILED') return 'failed';
  return 'pending';
}

export class SesDomainProvider implements DomainProvider {
  constructor(private readonly client: SESv2Client) {}

  async register(name: string): Promise<readonly DnsRecord[]> {
    try {
      const created = await this.client.send(
        new CreateEmailIdentityCommand({
          EmailIdentity: name,
          DkimSigningAttributes: { NextSigningKeyLength: 'RSA_2048_BIT' },
        }),
      );
      return dkimRecords(name, created.DkimAttributes);
    } catch (error) {
      if (!(error instanceof AlreadyExistsException)) throw error;
      // Registered before (a retried request, or the name added again): its records are the ones to publish.
      const existing = await this.client.send(new GetEmailIdentityCommand({ EmailIdentity: name }));
      return dkimRecords(name, existing.DkimAttributes);
    }
  }

  /** A domain whose identity no longer exists can never verify: failed. */
  async status(domain: { name: string }): Promise<DomainStatus> {
    try {
      return identityStatus(await this.client.send(new GetEmailIdentityCommand({ EmailIdentity: domain.name })));
    } catch (error) {
      if (error instanceof NotFoundException) return 'failed';
      throw error;
    }
  }

  async remove(name: string): Promise<void> {
    try {
      await this.client.send(new DeleteEmailIdentityCommand({ EmailIdentity: name }));
    } catch (error) {
      if (!(error instanceof NotFoundException)) throw error;
    }
  }
}

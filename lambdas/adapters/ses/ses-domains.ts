// Sending domains on AWS (DESIGN §6): each is an SES v2 domain identity with Easy DKIM (2048-bit keys). SES
// returns three DKIM tokens; the customer publishes one CNAME per token, and SES verifies the domain once it
// sees them. Identities are shared by name across the whole AWS account (the operator's own, other stages'),
// so Sendflow tags each identity it creates with the deployment that owns it and the Sendflow account it was
// created for, and only ever uses, reports on or deletes an identity whose tags say it is that account's.
import {
  AlreadyExistsException,
  CreateEmailIdentityCommand,
  DeleteEmailIdentityCommand,
  type DkimAttributes,
  GetEmailIdentityCommand,
  type GetEmailIdentityResponse,
  NotFoundException,
  type SESv2Client,
  type Tag,
} from '@aws-sdk/client-sesv2';
import {
  type DnsRecord,
  type DomainProvider,
  type DomainStatus,
  IdentityUnavailableError,
} from '../../app/domains/ports';
import { SES_IDENTITY_TAGS } from '../../manifest';

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

/**
 * SES's view of an identity as our status: verified only once its own DKIM records are found. SES also reports
 * a subdomain of a verified parent as verified for sending (it inherits the parent's verification): that proves
 * nothing about who controls the subdomain, so it does not count here (a customer adding `x.<someone else's
 * domain>` never gets a verified domain). Failed when its DKIM failed; else pending.
 */
export function identityStatus(identity: GetEmailIdentityResponse): DomainStatus {
  if (identity.DkimAttributes?.Status === 'SUCCESS') return 'verified';
  if (identity.DkimAttributes?.Status === 'FAILED' || identity.VerificationStatus === 'FAILED') return 'failed';
  return 'pending';
}

/** The tags Sendflow puts on an identity it creates for `accountId` in deployment `owner`. */
export function identityTags(owner: string, accountId: string): Tag[] {
  return [
    { Key: SES_IDENTITY_TAGS.managed, Value: owner },
    { Key: SES_IDENTITY_TAGS.account, Value: accountId },
  ];
}

/** True when the identity's tags say this deployment created it for this account. */
export function ownedBy(tags: readonly Tag[] | undefined, owner: string, accountId: string): boolean {
  const value = (key: string) => tags?.find((tag) => tag.Key === key)?.Value;
  return value(SES_IDENTITY_TAGS.managed) === owner && value(SES_IDENTITY_TAGS.account) === accountId;
}

export interface SesDomainProviderOptions {
  /** The value of the `sendflow:managed` tag: the deployment's own name (SF_SES_IDENTITY_OWNER). */
  readonly owner: string;
}

export class SesDomainProvider implements DomainProvider {
  constructor(
    private readonly client: SESv2Client,
    private readonly options: SesDomainProviderOptions,
  ) {}

  /**
   * Creates the identity, tagged for `accountId`. A name SES has already is ours only when its tags say so (a
   * retried request); any other identity (the operator's own, another stage's, another account's) is
   * IdentityUnavailableError, and nothing about it is returned.
   */
  async register(name: string, accountId: string): Promise<readonly DnsRecord[]> {
    try {
      const created = await this.client.send(
        new CreateEmailIdentityCommand({
          EmailIdentity: name,
          DkimSigningAttributes: { NextSigningKeyLength: 'RSA_2048_BIT' },
          Tags: identityTags(this.options.owner, accountId),
        }),
      );
      return dkimRecords(name, created.DkimAttributes);
    } catch (error) {
      if (!(error instanceof AlreadyExistsException)) throw error;
    }
    const existing = await this.owned(name, accountId);
    if (!existing) throw new IdentityUnavailableError(name);
    return dkimRecords(name, existing.DkimAttributes);
  }

  /**
   * An identity that no longer exists, or is no longer ours, can never verify for this account: failed. A
   * denied read is rethrown here (the reconciler tries again next minute): a role deployed without the
   * permission must not fail every pending domain.
   */
  async status(domain: { name: string; accountId: string }): Promise<DomainStatus> {
    const identity = await this.owned(domain.name, domain.accountId, { deniedIsForeign: false });
    return identity ? identityStatus(identity) : 'failed';
  }

  /** Deletes the identity only when it is ours for this account; anything else is left as it is. */
  async remove(name: string, accountId: string): Promise<void> {
    if (!(await this.owned(name, accountId))) return;
    try {
      await this.client.send(new DeleteEmailIdentityCommand({ EmailIdentity: name }));
    } catch (error) {
      if (!(error instanceof NotFoundException)) throw error;
    }
  }

  /**
   * The identity when it exists and its tags say it is this account's; null otherwise. IAM lets our roles read
   * only identities tagged as this deployment's, so a denied read is someone else's identity too.
   */
  private async owned(
    name: string,
    accountId: string,
    { deniedIsForeign = true } = {},
  ): Promise<GetEmailIdentityResponse | null> {
    try {
      const identity = await this.client.send(new GetEmailIdentityCommand({ EmailIdentity: name }));
      return ownedBy(identity.Tags, this.options.owner, accountId) ? identity : null;
    } catch (error) {
      if (error instanceof NotFoundException || (deniedIsForeign && isAccessDenied(error))) return null;
      throw error;
    }
  }
}

/** SES models no AccessDeniedException: IAM's refusal arrives as a 403 service exception of that name. */
function isAccessDenied(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return error.name === 'AccessDeniedException' || status === 403;
}

// Contract tests for the SES domain identities (lambdas/adapters/ses/ses-domains.ts) through
// aws-sdk-client-mock: the exact CreateEmailIdentity request (Easy DKIM, 2048-bit, tagged with the deployment
// and the account), the three DKIM CNAMEs it returns, an identity that exists already used only when its tags
// say it is ours for that account (else IdentityUnavailableError), status from SES's verification attributes,
// and DeleteEmailIdentity only for an identity of ours, with a missing identity ignored.
import {
  AlreadyExistsException,
  BadRequestException,
  CreateEmailIdentityCommand,
  DeleteEmailIdentityCommand,
  GetEmailIdentityCommand,
  type GetEmailIdentityResponse,
  LimitExceededException,
  NotFoundException,
  SESv2Client,
} from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  DkimRecordsError,
  identityStatus,
  identityTags,
  SesDomainProvider,
} from '../../lambdas/adapters/ses/ses-domains';
import { IdentityUnavailableError } from '../../lambdas/app/domains/ports';

const ses = mockClient(SESv2Client);
const OWNER = 'SendflowApi-prod';
const ACCOUNT = 'acct_owner';
const provider = () => new SesDomainProvider(new SESv2Client({ region: 'eu-west-1' }), { owner: OWNER });
const OURS = [
  { Key: 'sendflow:managed', Value: OWNER },
  { Key: 'sendflow:account', Value: ACCOUNT },
];
/** Identities Sendflow did not create for ACCOUNT: the operator's own, another stage's, another account's. */
const FOREIGN = [
  ['untagged (the operator’s own identity)', undefined],
  ['tagged by someone else', [{ Key: 'team', Value: 'marketing' }]],
  ['created by another stage', [...identityTags('SendflowApi-staging', ACCOUNT)]],
  ['created for another account', [...identityTags(OWNER, 'acct_other')]],
  ['managed tag only', [{ Key: 'sendflow:managed', Value: OWNER }]],
] as const;
const accessDenied = () =>
  Object.assign(new Error('User is not authorized to perform: ses:GetEmailIdentity'), {
    name: 'AccessDeniedException',
    $metadata: { httpStatusCode: 403 },
  });
const TOKENS = [
  'ab3xkbvq7n2yqrmcl4qbtvxg5kzm2jk4',
  'c7ldm2p6hxqtbq2ejo4wf4zsb6gxzbwn',
  'vf2pzd5b6gzqk7qxn4tq6ohq3sd6m5b3',
];
const RECORDS = TOKENS.map((token) => ({
  type: 'CNAME',
  name: `${token}._domainkey.acme.example`,
  value: `${token}.dkim.amazonses.com`,
}));

const modelled = (Type: new (o: { message: string; $metadata: object }) => Error, message = 'x'): Error =>
  new Type({ message, $metadata: {} });

beforeEach(() => {
  ses.reset();
});

describe('register', () => {
  it('creates the identity with Easy DKIM (RSA 2048), tagged as ours for the account, one CNAME per token', async () => {
    // Arrange
    ses.on(CreateEmailIdentityCommand).resolves({
      IdentityType: 'DOMAIN',
      VerifiedForSendingStatus: false,
      DkimAttributes: { SigningEnabled: true, Status: 'PENDING', Tokens: TOKENS, NextSigningKeyLength: 'RSA_2048_BIT' },
    });

    // Act
    const records = await provider().register('acme.example', ACCOUNT);

    // Assert
    expect(ses).toHaveReceivedCommandTimes(CreateEmailIdentityCommand, 1);
    expect(ses.commandCalls(CreateEmailIdentityCommand)[0]?.args[0].input).toEqual({
      EmailIdentity: 'acme.example',
      DkimSigningAttributes: { NextSigningKeyLength: 'RSA_2048_BIT' },
      Tags: OURS,
    });
    expect(records).toEqual(RECORDS);
    expect(ses).not.toHaveReceivedCommand(GetEmailIdentityCommand);
  });

  it('reads the records of an identity it created for this account before (a retried request)', async () => {
    // Arrange
    ses.on(CreateEmailIdentityCommand).rejects(modelled(AlreadyExistsException));
    ses.on(GetEmailIdentityCommand).resolves({ DkimAttributes: { Status: 'SUCCESS', Tokens: TOKENS }, Tags: OURS });

    // Act
    const records = await provider().register('acme.example', ACCOUNT);

    // Assert
    expect(ses.commandCalls(GetEmailIdentityCommand)[0]?.args[0].input).toEqual({ EmailIdentity: 'acme.example' });
    expect(records).toEqual(RECORDS);
  });

  it.each(FOREIGN)('refuses an existing identity %s: IdentityUnavailableError, no records', async (_name, tags) => {
    // Arrange
    ses.on(CreateEmailIdentityCommand).rejects(modelled(AlreadyExistsException));
    ses.on(GetEmailIdentityCommand).resolves({
      VerifiedForSendingStatus: true,
      DkimAttributes: { Status: 'SUCCESS', Tokens: TOKENS },
      ...(tags ? { Tags: [...tags] } : {}),
    });

    // Act
    const attempt = provider().register('acme.example', ACCOUNT);

    // Assert
    await expect(attempt).rejects.toBeInstanceOf(IdentityUnavailableError);
    expect(ses).not.toHaveReceivedCommand(DeleteEmailIdentityCommand);
  });

  it('refuses an existing identity IAM will not let it read (not tagged as ours)', async () => {
    ses.on(CreateEmailIdentityCommand).rejects(modelled(AlreadyExistsException));
    ses.on(GetEmailIdentityCommand).rejects(accessDenied());
    await expect(provider().register('acme.example', ACCOUNT)).rejects.toBeInstanceOf(IdentityUnavailableError);
  });

  it.each([
    ['BadRequestException (not a domain SES accepts)', BadRequestException],
    ['LimitExceededException (identity quota)', LimitExceededException],
  ] as const)('rethrows %s', async (_name, Type) => {
    const error = modelled(Type);
    ses.on(CreateEmailIdentityCommand).rejects(error);
    await expect(provider().register('acme.example', ACCOUNT)).rejects.toBe(error);
  });

  it('refuses an answer without DKIM tokens instead of storing a domain nobody can verify', async () => {
    ses.on(CreateEmailIdentityCommand).resolves({ DkimAttributes: { Status: 'PENDING', Tokens: [] } });
    await expect(provider().register('acme.example', ACCOUNT)).rejects.toThrow(DkimRecordsError);
  });
});

describe('status', () => {
  it.each([
    ['verified for sending', { VerifiedForSendingStatus: true, DkimAttributes: { Status: 'SUCCESS' } }, 'verified'],
    ['DKIM verified', { VerifiedForSendingStatus: false, DkimAttributes: { Status: 'SUCCESS' } }, 'verified'],
    [
      'verified for sending by its parent domain only (its own DKIM records never published)',
      { VerifiedForSendingStatus: true, DkimAttributes: { Status: 'PENDING' } },
      'pending',
    ],
    ['DKIM pending', { DkimAttributes: { Status: 'PENDING' }, VerificationStatus: 'PENDING' }, 'pending'],
    ['DKIM not started', { DkimAttributes: { Status: 'NOT_STARTED' } }, 'pending'],
    ['a temporary failure', { DkimAttributes: { Status: 'TEMPORARY_FAILURE' } }, 'pending'],
    ['DKIM failed (records not found within 72 h)', { DkimAttributes: { Status: 'FAILED' } }, 'failed'],
    ['verification failed', { VerificationStatus: 'FAILED' }, 'failed'],
  ] as const)('%s → %s', async (_name, identity, expected) => {
    // Arrange
    ses.on(GetEmailIdentityCommand).resolves({ ...(identity as GetEmailIdentityResponse), Tags: OURS });

    // Act
    const status = await provider().status({ name: 'acme.example', accountId: ACCOUNT });

    // Assert
    expect(status).toBe(expected);
    expect(identityStatus(identity as GetEmailIdentityResponse)).toBe(expected);
    expect(ses).toHaveReceivedCommandWith(GetEmailIdentityCommand, { EmailIdentity: 'acme.example' });
  });

  it('reports an identity that no longer exists as failed', async () => {
    ses.on(GetEmailIdentityCommand).rejects(modelled(NotFoundException));
    await expect(provider().status({ name: 'acme.example', accountId: ACCOUNT })).resolves.toBe('failed');
  });

  it.each(FOREIGN)('reports a verified identity %s as failed, never verified', async (_name, tags) => {
    ses.on(GetEmailIdentityCommand).resolves({
      VerifiedForSendingStatus: true,
      DkimAttributes: { Status: 'SUCCESS' },
      ...(tags ? { Tags: [...tags] } : {}),
    });
    await expect(provider().status({ name: 'acme.example', accountId: ACCOUNT })).resolves.toBe('failed');
  });

  it.each([
    ['other errors', modelled(LimitExceededException)],
    ['a denied read (a role deployed without the permission must not fail every domain)', accessDenied()],
  ])('rethrows %s, so the reconciler tries again next minute', async (_name, error) => {
    ses.on(GetEmailIdentityCommand).rejects(error);
    await expect(provider().status({ name: 'acme.example', accountId: ACCOUNT })).rejects.toBe(error);
  });
});

describe('remove', () => {
  it('deletes an identity it created for this account', async () => {
    ses.on(GetEmailIdentityCommand).resolves({ Tags: OURS });
    ses.on(DeleteEmailIdentityCommand).resolves({});
    await provider().remove('acme.example', ACCOUNT);
    expect(ses.commandCalls(DeleteEmailIdentityCommand)[0]?.args[0].input).toEqual({ EmailIdentity: 'acme.example' });
  });

  it.each(FOREIGN)('never deletes an identity %s', async (_name, tags) => {
    // Arrange
    ses.on(GetEmailIdentityCommand).resolves({ VerifiedForSendingStatus: true, ...(tags ? { Tags: [...tags] } : {}) });
    ses.on(DeleteEmailIdentityCommand).resolves({});

    // Act
    await provider().remove('acme.example', ACCOUNT);

    // Assert
    expect(ses).not.toHaveReceivedCommand(DeleteEmailIdentityCommand);
  });

  it('never deletes an identity IAM will not let it read', async () => {
    ses.on(GetEmailIdentityCommand).rejects(accessDenied());
    await provider().remove('acme.example', ACCOUNT);
    expect(ses).not.toHaveReceivedCommand(DeleteEmailIdentityCommand);
  });

  it.each([
    ['before the delete', 'get'],
    ['between the read and the delete', 'delete'],
  ] as const)('ignores an identity that is gone already (%s)', async (_name, where) => {
    if (where === 'get') ses.on(GetEmailIdentityCommand).rejects(modelled(NotFoundException));
    else ses.on(GetEmailIdentityCommand).resolves({ Tags: OURS });
    ses.on(DeleteEmailIdentityCommand).rejects(modelled(NotFoundException));
    await expect(provider().remove('acme.example', ACCOUNT)).resolves.toBeUndefined();
    if (where === 'get') expect(ses).not.toHaveReceivedCommand(DeleteEmailIdentityCommand);
  });

  it('rethrows other errors', async () => {
    const error = modelled(BadRequestException);
    ses.on(GetEmailIdentityCommand).resolves({ Tags: OURS });
    ses.on(DeleteEmailIdentityCommand).rejects(error);
    await expect(provider().remove('acme.example', ACCOUNT)).rejects.toBe(error);
  });
});

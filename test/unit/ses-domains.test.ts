// Contract tests for the SES domain identities (lambdas/adapters/ses/ses-domains.ts) through
// aws-sdk-client-mock: the exact CreateEmailIdentity request (Easy DKIM, 2048-bit), the three DKIM CNAMEs it
// returns, an identity that exists already read back with GetEmailIdentity, status from SES's verification
// attributes, and DeleteEmailIdentity with a missing identity ignored.
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
import { DkimRecordsError, identityStatus, SesDomainProvider } from '../../lambdas/adapters/ses/ses-domains';

const ses = mockClient(SESv2Client);
const provider = () => new SesDomainProvider(new SESv2Client({ region: 'eu-west-1' }));
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
  it('creates the identity with Easy DKIM (RSA 2048) and returns one CNAME per DKIM token', async () => {
    // Arrange
    ses.on(CreateEmailIdentityCommand).resolves({
      IdentityType: 'DOMAIN',
      VerifiedForSendingStatus: false,
      DkimAttributes: { SigningEnabled: true, Status: 'PENDING', Tokens: TOKENS, NextSigningKeyLength: 'RSA_2048_BIT' },
    });

    // Act
    const records = await provider().register('acme.example');

    // Assert
    expect(ses).toHaveReceivedCommandTimes(CreateEmailIdentityCommand, 1);
    expect(ses.commandCalls(CreateEmailIdentityCommand)[0]?.args[0].input).toEqual({
      EmailIdentity: 'acme.example',
      DkimSigningAttributes: { NextSigningKeyLength: 'RSA_2048_BIT' },
    });
    expect(records).toEqual(RECORDS);
    expect(ses).not.toHaveReceivedCommand(GetEmailIdentityCommand);
  });

  it('reads the records of an identity that already exists (AlreadyExistsException)', async () => {
    // Arrange
    ses.on(CreateEmailIdentityCommand).rejects(modelled(AlreadyExistsException));
    ses.on(GetEmailIdentityCommand).resolves({ DkimAttributes: { Status: 'SUCCESS', Tokens: TOKENS } });

    // Act
    const records = await provider().register('acme.example');

    // Assert
    expect(ses.commandCalls(GetEmailIdentityCommand)[0]?.args[0].input).toEqual({ EmailIdentity: 'acme.example' });
    expect(records).toEqual(RECORDS);
  });

  it.each([
    ['BadRequestException (not a domain SES accepts)', BadRequestException],
    ['LimitExceededException (identity quota)', LimitExceededException],
  ] as const)('rethrows %s', async (_name, Type) => {
    const error = modelled(Type);
    ses.on(CreateEmailIdentityCommand).rejects(error);
    await expect(provider().register('acme.example')).rejects.toBe(error);
  });

  it('refuses an answer without DKIM tokens instead of storing a domain nobody can verify', async () => {
    ses.on(CreateEmailIdentityCommand).resolves({ DkimAttributes: { Status: 'PENDING', Tokens: [] } });
    await expect(provider().register('acme.example')).rejects.toThrow(DkimRecordsError);
  });
});

describe('status', () => {
  it.each([
    ['verified for sending', { VerifiedForSendingStatus: true, DkimAttributes: { Status: 'SUCCESS' } }, 'verified'],
    ['DKIM verified', { VerifiedForSendingStatus: false, DkimAttributes: { Status: 'SUCCESS' } }, 'verified'],
    ['DKIM pending', { DkimAttributes: { Status: 'PENDING' }, VerificationStatus: 'PENDING' }, 'pending'],
    ['DKIM not started', { DkimAttributes: { Status: 'NOT_STARTED' } }, 'pending'],
    ['a temporary failure', { DkimAttributes: { Status: 'TEMPORARY_FAILURE' } }, 'pending'],
    ['DKIM failed (records not found within 72 h)', { DkimAttributes: { Status: 'FAILED' } }, 'failed'],
    ['verification failed', { VerificationStatus: 'FAILED' }, 'failed'],
  ] as const)('%s → %s', async (_name, identity, expected) => {
    // Arrange
    ses.on(GetEmailIdentityCommand).resolves(identity as GetEmailIdentityResponse);

    // Act
    const status = await provider().status({ name: 'acme.example' });

    // Assert
    expect(status).toBe(expected);
    expect(identityStatus(identity as GetEmailIdentityResponse)).toBe(expected);
    expect(ses).toHaveReceivedCommandWith(GetEmailIdentityCommand, { EmailIdentity: 'acme.example' });
  });

  it('reports an identity that no longer exists as failed', async () => {
    ses.on(GetEmailIdentityCommand).rejects(modelled(NotFoundException));
    await expect(provider().status({ name: 'acme.example' })).resolves.toBe('failed');
  });

  it('rethrows other errors, so the reconciler tries again next minute', async () => {
    const error = modelled(LimitExceededException);
    ses.on(GetEmailIdentityCommand).rejects(error);
    await expect(provider().status({ name: 'acme.example' })).rejects.toBe(error);
  });
});

describe('remove', () => {
  it('deletes the identity', async () => {
    ses.on(DeleteEmailIdentityCommand).resolves({});
    await provider().remove('acme.example');
    expect(ses.commandCalls(DeleteEmailIdentityCommand)[0]?.args[0].input).toEqual({ EmailIdentity: 'acme.example' });
  });

  it('ignores an identity that is gone already', async () => {
    ses.on(DeleteEmailIdentityCommand).rejects(modelled(NotFoundException));
    await expect(provider().remove('acme.example')).resolves.toBeUndefined();
  });

  it('rethrows other errors', async () => {
    const error = modelled(BadRequestException);
    ses.on(DeleteEmailIdentityCommand).rejects(error);
    await expect(provider().remove('acme.example')).rejects.toBe(error);
  });
});

// Unit tests for the REQUEST authorizer (lambdas/handlers/authorizer.ts) and its context map
// (lambdas/handlers/authorizer-context.ts), wired to in-memory repositories.
import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAccount, createAccountKey } from '../../lambdas/app/accounts';
import type { Principal } from '../../lambdas/app/ports';
import { hashApiKey } from '../../lambdas/domain/api-keys';
import type { PlanName } from '../../lambdas/domain/plans';
import { SCOPES, type Scope } from '../../lambdas/domain/scopes';
import { createAuthorizerHandler, wildcardResource } from '../../lambdas/handlers/authorizer';
import { fromAuthorizerContext, toAuthorizerContext } from '../../lambdas/handlers/authorizer-context';
import {
  FakeClock,
  InMemoryAccountRepository,
  InMemoryApiKeyRepository,
  RecordingAuthorizerCache,
  RecordingUsagePlans,
  seededRandom,
} from '../support/fakes';

const METHOD_ARN = 'arn:aws:execute-api:eu-west-1:123456789012:abcdef1234/v1/POST/api-keys';
const WILDCARD = 'arn:aws:execute-api:eu-west-1:123456789012:abcdef1234/v1/*/*';

describe('authorizer context', () => {
  const principal: Principal = {
    accountId: 'acct_01',
    keyId: 'key_01',
    mode: 'test',
    scopes: ['email:send', 'webhook:read'],
    plan: 'growth',
  };

  it('maps a Principal to string values only', () => {
    // Act
    const context = toAuthorizerContext(principal);

    // Assert
    expect(context).toEqual({
      accountId: 'acct_01',
      keyId: 'key_01',
      mode: 'test',
      scopes: 'email:send,webhook:read',
      plan: 'growth',
    });
  });

  it.each<[string, readonly Scope[]]>([
    ['two scopes', ['email:send', 'webhook:read']],
    ['all scopes', SCOPES],
    ['one scope', ['domain:read']],
    ['no scopes', []],
  ])('round-trips a Principal with %s', (_, scopes) => {
    // Arrange
    const original: Principal = { ...principal, scopes };

    // Act
    const back = fromAuthorizerContext(toAuthorizerContext(original));

    // Assert
    expect(back).toEqual(original);
  });

  it('round-trips the one domain a restricted sending key may send from', () => {
    const original: Principal = { ...principal, scopes: ['email:send'], sendingDomain: 'mail.example.com' };
    expect(toAuthorizerContext(original)).toMatchObject({ sendingDomain: 'mail.example.com' });
    expect(fromAuthorizerContext(toAuthorizerContext(original))).toEqual(original);
  });

  it('ignores the keys API Gateway adds to the context (principalId, integrationLatency)', () => {
    // Arrange
    const context = { ...toAuthorizerContext(principal), principalId: 'key_01', integrationLatency: 12 };

    // Act
    const back = fromAuthorizerContext(context);

    // Assert
    expect(back).toEqual(principal);
  });

  it.each([
    ['null (no authorizer ran)', null],
    ['undefined', undefined],
    ['an empty object', {}],
    ['an unknown mode', { ...toAuthorizerContext(principal), mode: 'prod' }],
    ['an unknown plan', { ...toAuthorizerContext(principal), plan: 'enterprise' }],
    ['an unknown scope', { ...toAuthorizerContext(principal), scopes: 'email:send,admin' }],
    ['an empty account id', { ...toAuthorizerContext(principal), accountId: '' }],
    ['a missing key id', { ...toAuthorizerContext(principal), keyId: undefined }],
  ])('gives null for %s', (_, context) => {
    expect(fromAuthorizerContext(context)).toBeNull();
  });
});

describe('wildcardResource', () => {
  it.each([
    [METHOD_ARN, WILDCARD],
    [`${WILDCARD.slice(0, -4)}/DELETE/api-keys/key_123`, WILDCARD],
    ['arn:aws:execute-api:us-east-1:000000000000:api/v1/GET/', 'arn:aws:execute-api:us-east-1:000000000000:api/v1/*/*'],
    [
      'arn:aws:execute-api:local:000000000000:local/v1/GET/webhooks/wh_1/deliveries',
      'arn:aws:execute-api:local:000000000000:local/v1/*/*',
    ],
  ])('%s → %s', (arn, expected) => {
    expect(wildcardResource(arn)).toBe(expected);
  });
});

describe('authorizer handler', () => {
  let accounts: InMemoryAccountRepository;
  let apiKeys: InMemoryApiKeyRepository;
  let handler: ReturnType<typeof createAuthorizerHandler>;
  const clock = new FakeClock();
  const random = seededRandom('authorizer');

  beforeEach(() => {
    accounts = new InMemoryAccountRepository();
    apiKeys = new InMemoryApiKeyRepository();
    handler = createAuthorizerHandler({ accounts, apiKeys, logger: new Logger({ logLevel: 'SILENT' }) });
  });

  async function issue(options: { plan?: PlanName; usageKey?: string; scopes?: Scope[]; mode?: 'live' | 'test' }) {
    const usagePlans = new RecordingUsagePlans(
      options.usageKey ? { usageKey: options.usageKey, usageKeyId: 'usage-id-1' } : {},
    );
    const deps = { accounts, apiKeys, usagePlans, authorizerCache: new RecordingAuthorizerCache(), clock, random };
    const account = await createAccount(deps, options.plan ?? 'starter');
    const issued = await createAccountKey(deps, {
      accountId: account.id,
      mode: options.mode ?? 'live',
      ...(options.scopes ? { scopes: options.scopes } : {}),
    });
    return { account, ...issued };
  }

  function event(headers: Record<string, string> | null): APIGatewayRequestAuthorizerEvent {
    return {
      type: 'REQUEST',
      methodArn: METHOD_ARN,
      resource: '/api-keys',
      path: '/api-keys',
      httpMethod: 'POST',
      headers,
      multiValueHeaders: null,
      pathParameters: null,
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      stageVariables: null,
      requestContext: {} as APIGatewayRequestAuthorizerEvent['requestContext'],
    } as APIGatewayRequestAuthorizerEvent;
  }

  function expectDeny(result: Awaited<ReturnType<typeof handler>>) {
    expect(result.policyDocument).toEqual({
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Deny', Resource: WILDCARD }],
    });
    expect(result.context).toBeUndefined();
    expect(result.usageIdentifierKey).toBeUndefined();
  }

  it('allows a valid key with a wildcard resource and the caller in the context', async () => {
    // Arrange
    const { account, key, secret } = await issue({ plan: 'growth', scopes: ['email:send', 'webhook:read'] });

    // Act
    const result = await handler(event({ Authorization: `Bearer ${secret}` }));

    // Assert
    expect(result.principalId).toBe(key.id);
    expect(result.policyDocument).toEqual({
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: WILDCARD }],
    });
    expect(result.context).toEqual({
      accountId: account.id,
      keyId: key.id,
      mode: 'live',
      scopes: 'email:send,webhook:read',
      plan: 'growth',
    });
    expect(result.usageIdentifierKey).toBeUndefined();
  });

  it('returns the account usage key as usageIdentifierKey when it has one', async () => {
    // Arrange
    const { secret } = await issue({ usageKey: 'apigw-key-value-123' });

    // Act
    const result = await handler(event({ Authorization: `Bearer ${secret}` }));

    // Assert
    expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Allow' });
    expect(result.usageIdentifierKey).toBe('apigw-key-value-123');
  });

  it('reads the Authorization header case-insensitively and accepts a lower-case scheme', async () => {
    // Arrange
    const { secret } = await issue({ mode: 'test' });

    // Act
    const result = await handler(event({ authorization: `bearer ${secret}` }));

    // Assert
    expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Allow' });
    expect(result.context?.mode).toBe('test');
  });

  it('puts a context that the API handlers can read back', async () => {
    // Arrange
    const { account, key, secret } = await issue({ plan: 'scale' });

    // Act
    const result = await handler(event({ Authorization: `Bearer ${secret}` }));

    // Assert
    expect(fromAuthorizerContext(result.context)).toEqual({
      accountId: account.id,
      keyId: key.id,
      mode: 'live',
      scopes: [...SCOPES],
      plan: 'scale',
    });
  });

  it.each([
    ['no headers at all', null],
    ['no Authorization header', { 'Content-Type': 'application/json' }],
    ['an empty Authorization header', { Authorization: '' }],
    ['another scheme', { Authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` }],
    ['a malformed key', { Authorization: 'Bearer sf_live_short' }],
    ['a key with a foreign prefix', { Authorization: `Bearer sk_live_${'a'.repeat(40)}` }],
    ['an unknown well-formed key', { Authorization: `Bearer sf_live_${'a'.repeat(40)}` }],
  ])('denies a request with %s', async (_, headers) => {
    // Arrange: a real key exists, so a Deny is not just an empty store.
    await issue({});

    // Act
    const result = await handler(event(headers));

    // Assert
    expectDeny(result);
  });

  it('denies a revoked key', async () => {
    // Arrange
    const { key, secret } = await issue({});
    await apiKeys.revoke(key, new Date(clock.now()).toISOString());

    // Act
    const result = await handler(event({ Authorization: `Bearer ${secret}` }));

    // Assert
    expectDeny(result);
  });

  it('denies a key whose account no longer exists', async () => {
    // Arrange
    const { account, secret } = await issue({});
    accounts.items.delete(account.id);

    // Act
    const result = await handler(event({ Authorization: `Bearer ${secret}` }));

    // Assert
    expectDeny(result);
  });

  it('denies a key of the other mode prefix with the same secret body', async () => {
    // Arrange: the hash covers the prefix, so sf_test_<body> is not sf_live_<body>.
    const { secret } = await issue({ mode: 'live' });
    const swapped = secret.replace('sf_live_', 'sf_test_');
    expect(await apiKeys.findByHash(hashApiKey(swapped))).toBeNull();

    // Act
    const result = await handler(event({ Authorization: `Bearer ${swapped}` }));

    // Assert
    expectDeny(result);
  });

  it('lets repository failures through instead of denying (a 500, not a silent 401)', async () => {
    // Arrange
    const { secret } = await issue({});
    apiKeys.findByHash = async () => {
      throw new Error('DynamoDB unavailable');
    };

    // Act
    const act = handler(event({ Authorization: `Bearer ${secret}` }));

    // Assert
    await expect(act).rejects.toThrow('DynamoDB unavailable');
  });
});

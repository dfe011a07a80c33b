// Unit tests for the API Gateway UsagePlans adapter (lambdas/adapters/aws/usage-plans.ts): the exact
// API Gateway commands it sends, in order, through aws-sdk-client-mock.
import {
  APIGatewayClient,
  ConflictException,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanKeyCommand,
  GetUsagePlanKeyCommand,
  NotFoundException,
  TooManyRequestsException,
} from '@aws-sdk/client-api-gateway';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { ApiGatewayUsagePlans, UsagePlanError } from '../../lambdas/adapters/aws/usage-plans';
import type { Account } from '../../lambdas/app/ports';

const usagePlanIds = { free: 'up-free', starter: 'up-starter', growth: 'up-growth', scale: 'up-scale' } as const;
const account: Account = {
  id: 'acct_01',
  plan: 'free',
  createdAt: '2026-11-22T00:00:00.000Z',
  usageKey: 'K'.repeat(40),
  usageKeyId: 'apikey-1',
};

const gateway = mockClient(APIGatewayClient);
const meta = { $metadata: {} };

/** Command names in the order the adapter sent them. */
function sentCommands(): string[] {
  return gateway.calls().map((call) => call.args[0].constructor.name);
}

function plans(random?: (size: number) => Uint8Array) {
  return new ApiGatewayUsagePlans({ client: new APIGatewayClient({ region: 'eu-west-1' }), usagePlanIds, random });
}

beforeEach(() => {
  gateway.reset();
});

describe('ApiGatewayUsagePlans.enroll', () => {
  it('creates an enabled key named after the account and adds it to the plan', async () => {
    // Arrange
    gateway.on(CreateApiKeyCommand).resolves({ id: 'apikey-9' });
    gateway.on(CreateUsagePlanKeyCommand).resolves({});

    // Act
    const usage = await plans().enroll('acct_42', 'growth');

    // Assert
    expect(sentCommands()).toEqual(['CreateApiKeyCommand', 'CreateUsagePlanKeyCommand']);
    expect(gateway).toHaveReceivedCommandWith(CreateApiKeyCommand, {
      name: 'sendflow-acct_42',
      enabled: true,
      value: usage.usageKey,
    });
    expect(gateway).toHaveReceivedCommandWith(CreateUsagePlanKeyCommand, {
      usagePlanId: 'up-growth',
      keyId: 'apikey-9',
      keyType: 'API_KEY',
    });
    expect(usage.usageKeyId).toBe('apikey-9');
    expect(usage.usageKey).toMatch(/^[0-9A-Za-z]{40}$/);
  });

  it('draws the key value from the random source', async () => {
    // Arrange: bytes 0..61 map one-to-one onto the base62 alphabet.
    gateway.on(CreateApiKeyCommand).resolves({ id: 'apikey-9' });
    gateway.on(CreateUsagePlanKeyCommand).resolves({});
    const sequential = (size: number) => Uint8Array.from({ length: size }, (_, i) => i % 62);

    // Act
    const usage = await plans(sequential).enroll('acct_42', 'free');

    // Assert
    expect(usage.usageKey).toBe('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcd');
  });

  it('generates a different value for every account', async () => {
    // Arrange
    gateway.on(CreateApiKeyCommand).resolves({ id: 'apikey-9' });
    gateway.on(CreateUsagePlanKeyCommand).resolves({});
    const adapter = plans();

    // Act
    const first = await adapter.enroll('acct_1', 'free');
    const second = await adapter.enroll('acct_2', 'free');

    // Assert
    expect(first.usageKey).not.toBe(second.usageKey);
  });

  it('deletes the new key when it cannot join the plan, so no orphan counts toward the key limit', async () => {
    // Arrange
    const refused = new TooManyRequestsException({ message: 'slow down', ...meta });
    gateway.on(CreateApiKeyCommand).resolves({ id: 'apikey-9' });
    gateway.on(CreateUsagePlanKeyCommand).rejects(refused);
    gateway.on(DeleteApiKeyCommand).resolves({});

    // Act
    const attempt = plans().enroll('acct_42', 'scale');

    // Assert
    await expect(attempt).rejects.toBeInstanceOf(UsagePlanError);
    await expect(attempt).rejects.toMatchObject({ cause: refused });
    expect(sentCommands()).toEqual(['CreateApiKeyCommand', 'CreateUsagePlanKeyCommand', 'DeleteApiKeyCommand']);
    expect(gateway).toHaveReceivedCommandWith(DeleteApiKeyCommand, { apiKey: 'apikey-9' });
  });
});

describe('ApiGatewayUsagePlans.move', () => {
  it('removes the key from the old plan before adding it to the new one', async () => {
    // Arrange
    gateway.on(DeleteUsagePlanKeyCommand).resolves({});
    gateway.on(CreateUsagePlanKeyCommand).resolves({});

    // Act
    await plans().move(account, 'starter');

    // Assert
    expect(sentCommands()).toEqual(['DeleteUsagePlanKeyCommand', 'CreateUsagePlanKeyCommand']);
    expect(gateway).toHaveReceivedCommandWith(DeleteUsagePlanKeyCommand, { usagePlanId: 'up-free', keyId: 'apikey-1' });
    expect(gateway).toHaveReceivedCommandWith(CreateUsagePlanKeyCommand, {
      usagePlanId: 'up-starter',
      keyId: 'apikey-1',
      keyType: 'API_KEY',
    });
  });

  it('puts the key back on the old plan when the new plan refuses it', async () => {
    // Arrange
    const refused = new TooManyRequestsException({ message: 'slow down', ...meta });
    gateway.on(DeleteUsagePlanKeyCommand).resolves({});
    gateway.on(CreateUsagePlanKeyCommand, { usagePlanId: 'up-scale' }).rejects(refused);
    gateway.on(CreateUsagePlanKeyCommand, { usagePlanId: 'up-free' }).resolves({});

    // Act
    const attempt = plans().move(account, 'scale');

    // Assert
    await expect(attempt).rejects.toThrow(/stays on free/);
    expect(sentCommands()).toEqual([
      'DeleteUsagePlanKeyCommand',
      'CreateUsagePlanKeyCommand',
      'CreateUsagePlanKeyCommand',
    ]);
    expect(gateway).toHaveReceivedNthCommandWith(CreateUsagePlanKeyCommand, 1, { usagePlanId: 'up-scale' });
    expect(gateway).toHaveReceivedNthCommandWith(CreateUsagePlanKeyCommand, 2, {
      usagePlanId: 'up-free',
      keyId: 'apikey-1',
      keyType: 'API_KEY',
    });
  });

  it('says the key is in no plan when it cannot be put back either', async () => {
    // Arrange
    gateway.on(DeleteUsagePlanKeyCommand).resolves({});
    gateway.on(CreateUsagePlanKeyCommand).rejects(new TooManyRequestsException({ message: 'slow down', ...meta }));

    // Act
    const attempt = plans().move(account, 'scale');

    // Assert
    await expect(attempt).rejects.toThrow(/in no usage plan/);
  });

  it('can be retried after a move that reached API Gateway but was not recorded', async () => {
    // Arrange: the key already left free and already sits in starter.
    gateway
      .on(DeleteUsagePlanKeyCommand)
      .rejects(new NotFoundException({ message: 'Invalid Usage Plan Key', ...meta }));
    gateway.on(CreateUsagePlanKeyCommand).rejects(new ConflictException({ message: 'already exists', ...meta }));
    gateway.on(GetUsagePlanKeyCommand).resolves({ id: 'apikey-1', type: 'API_KEY' });

    // Act
    await plans().move(account, 'starter');

    // Assert
    expect(sentCommands()).toEqual([
      'DeleteUsagePlanKeyCommand',
      'CreateUsagePlanKeyCommand',
      'GetUsagePlanKeyCommand',
    ]);
    expect(gateway).toHaveReceivedCommandWith(GetUsagePlanKeyCommand, { usagePlanId: 'up-starter', keyId: 'apikey-1' });
  });

  it('treats a conflict as a failure when the key is not in the new plan', async () => {
    // Arrange: the key still sits in another plan of the stage.
    gateway.on(DeleteUsagePlanKeyCommand).resolves({});
    gateway
      .on(CreateUsagePlanKeyCommand, { usagePlanId: 'up-growth' })
      .rejects(
        new ConflictException({ message: 'cannot reference multiple Usage Plans with the same API Stage', ...meta }),
      );
    gateway.on(CreateUsagePlanKeyCommand, { usagePlanId: 'up-free' }).resolves({});
    gateway.on(GetUsagePlanKeyCommand).rejects(new NotFoundException({ message: 'not found', ...meta }));

    // Act
    const attempt = plans().move(account, 'growth');

    // Assert
    await expect(attempt).rejects.toBeInstanceOf(UsagePlanError);
  });

  it('refuses an account without an API Gateway key and sends nothing', async () => {
    // Arrange
    const { usageKeyId: _, usageKey: __, ...unenrolled } = account;

    // Act
    const attempt = plans().move(unenrolled, 'growth');

    // Assert
    await expect(attempt).rejects.toThrow(/no API Gateway key to move; enroll it first/);
    expect(gateway.calls()).toHaveLength(0);
  });

  it('does nothing when the account is already on the plan', async () => {
    // Act
    await plans().move(account, 'free');

    // Assert
    expect(gateway.calls()).toHaveLength(0);
  });
});

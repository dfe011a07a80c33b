// Contract suite for DynamoApiKeyRepository (ApiKeyRepository port), written once against a DynamoDB endpoint
// factory; dynamodb-repositories.test.ts runs it on dynalite and DynamoDB Local.
import { randomBytes } from 'node:crypto';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, expect, it } from 'vitest';
import { DynamoApiKeyRepository } from '../../../lambdas/adapters/dynamodb/api-keys';
import type { ApiKey } from '../../../lambdas/app/ports';
import { hashApiKey } from '../../../lambdas/domain/api-keys';
import { ConflictError } from '../../../lambdas/domain/errors';
import { localDynamoClient } from '../../../lambdas/runtime/local/dynamo';
import { type DynamoEndpointFactory, useDynamoTables } from '../../support/dynamo';

function newKey(overrides: Partial<ApiKey> = {}): ApiKey {
  const secret = `sf_test_${randomBytes(30).toString('base64url').replace(/[-_]/g, 'x')}`;
  return {
    id: `key_${randomBytes(8).toString('hex')}`,
    hash: hashApiKey(secret),
    accountId: 'acct_default',
    mode: 'test',
    scopes: ['email:send', 'webhook:read'],
    name: 'CI key',
    hint: `sf_test_…${secret.slice(-4)}`,
    createdAt: '2025-04-01T10:00:00.000Z',
    ...overrides,
  };
}

function uniqueAccount(): string {
  return `acct_${randomBytes(8).toString('hex')}`;
}

export function apiKeyRepositoryContract(factory: DynamoEndpointFactory): void {
  const db = useDynamoTables(factory);
  let repo: DynamoApiKeyRepository;

  beforeEach(() => {
    repo = new DynamoApiKeyRepository(db().doc, db().tables.apiKeys);
  });

  it('creates a key and finds it by hash', async () => {
    // Arrange
    const key = newKey({ mode: 'live', scopes: ['domain:read'] });

    // Act
    await repo.create(key);
    const found = await repo.findByHash(key.hash);

    // Assert
    expect(found).toEqual(key);
  });

  it('keeps the domain a sending key is restricted to', async () => {
    const key = newKey({ scopes: ['email:send'], sendingDomain: { id: 'dom_1', name: 'mail.example.com' } });
    await repo.create(key);
    expect(await repo.findByHash(key.hash)).toEqual(key);
    expect(await repo.listByAccount(key.accountId)).toContainEqual(key);
  });

  it('gives null for an unknown hash', async () => {
    expect(await repo.findByHash(hashApiKey('sf_test_nobody'))).toBeNull();
  });

  it('refuses a second key with the same hash with a ConflictError, keeping the first', async () => {
    // Arrange
    const key = newKey();
    await repo.create(key);

    // Act
    const act = repo.create({ ...key, id: 'key_other', accountId: 'acct_attacker' });

    // Assert
    await expect(act).rejects.toBeInstanceOf(ConflictError);
    expect(await repo.findByHash(key.hash)).toEqual(key);
  });

  it('lists the keys of one account only, oldest first, revoked ones included', async () => {
    // Arrange: inserted out of order, with another account's keys in between.
    const accountId = uniqueAccount();
    const times = ['2025-04-03', '2025-04-01', '2025-04-05', '2025-04-02', '2025-04-04'];
    const keys = times.map((day, i) => newKey({ accountId, id: `key_${i}`, createdAt: `${day}T00:00:00.000Z` }));
    for (const key of keys) {
      await repo.create(key);
      await repo.create(newKey({ accountId: uniqueAccount(), createdAt: key.createdAt }));
    }
    const revoked = await repo.revoke(keys[0] as ApiKey, '2025-04-06T00:00:00.000Z');

    // Act
    const listed = await repo.listByAccount(accountId);

    // Assert
    expect(listed.map((k) => k.createdAt)).toEqual([...times].sort().map((day) => `${day}T00:00:00.000Z`));
    expect(listed.map((k) => k.id)).toEqual(['key_1', 'key_3', 'key_0', 'key_4', 'key_2']);
    expect(listed.every((k) => k.accountId === accountId)).toBe(true);
    expect(listed.find((k) => k.id === 'key_0')).toEqual(revoked);
  });

  it('follows the query cursor across pages', async () => {
    // Arrange: a client whose queries return at most 2 items per page, so 7 keys take 4 pages.
    const pages: number[] = [];
    const client = localDynamoClient(db().endpoint);
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'QueryCommand') (args.input as { Limit?: number }).Limit = 2;
        const result = await next(args);
        if (context.commandName === 'QueryCommand') {
          pages.push(((result.output as { Items?: unknown[] }).Items ?? []).length);
        }
        return result;
      },
      { step: 'initialize', name: 'smallQueryPages' },
    );
    const paged = new DynamoApiKeyRepository(
      DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } }),
      db().tables.apiKeys,
    );
    const accountId = uniqueAccount();
    const keys = Array.from({ length: 7 }, (_, i) =>
      newKey({ accountId, id: `key_${i}`, createdAt: new Date(Date.UTC(2025, 0, 1, 0, 0, 7 - i)).toISOString() }),
    );
    for (const key of keys) await repo.create(key);

    try {
      // Act
      const listed = await paged.listByAccount(accountId);

      // Assert
      expect(listed.map((k) => k.id)).toEqual(['key_6', 'key_5', 'key_4', 'key_3', 'key_2', 'key_1', 'key_0']);
      expect(pages.length).toBeGreaterThanOrEqual(4);
      expect(pages.every((n) => n <= 2)).toBe(true);
    } finally {
      client.destroy();
    }
  });

  it('lists nothing for an account without keys', async () => {
    expect(await repo.listByAccount(uniqueAccount())).toEqual([]);
  });

  it('revokes a key: sets revokedAt, returns the revoked key, and the stored item shows it', async () => {
    // Arrange
    const key = newKey();
    await repo.create(key);

    // Act
    const revoked = await repo.revoke(key, '2025-05-01T12:00:00.000Z');

    // Assert
    expect(revoked).toEqual({ ...key, revokedAt: '2025-05-01T12:00:00.000Z' });
    expect(await repo.findByHash(key.hash)).toEqual(revoked);
  });

  it('returns null for a second revoke, keeping the first revokedAt', async () => {
    // Arrange
    const key = newKey();
    await repo.create(key);
    await repo.revoke(key, '2025-05-01T12:00:00.000Z');

    // Act
    const again = await repo.revoke(key, '2025-05-02T12:00:00.000Z');

    // Assert
    expect(again).toBeNull();
    expect((await repo.findByHash(key.hash))?.revokedAt).toBe('2025-05-01T12:00:00.000Z');
  });

  it('returns null when revoking a key that does not exist, and creates nothing', async () => {
    // Arrange
    const ghost = newKey();

    // Act
    const revoked = await repo.revoke(ghost, '2025-05-01T12:00:00.000Z');

    // Assert
    expect(revoked).toBeNull();
    const { Item } = await db().doc.send(new GetCommand({ TableName: db().tables.apiKeys, Key: { hash: ghost.hash } }));
    expect(Item).toBeUndefined();
  });
}

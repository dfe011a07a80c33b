// Contract suite for DynamoAccountRepository (AccountRepository port), written once against a DynamoDB endpoint
// factory; dynamodb-repositories.test.ts runs it on dynalite and DynamoDB Local.
import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, expect, it } from 'vitest';
import { DynamoAccountRepository } from '../../../lambdas/adapters/dynamodb/accounts';
import type { Account } from '../../../lambdas/app/ports';
import { ConflictError } from '../../../lambdas/domain/errors';
import { type DynamoEndpointFactory, useDynamoTables } from '../../support/dynamo';

function newAccount(overrides: Partial<Account> = {}): Account {
  return {
    id: `acct_${randomBytes(8).toString('hex')}`,
    plan: 'starter',
    createdAt: '2025-04-01T10:00:00.000Z',
    ...overrides,
  };
}

export function accountRepositoryContract(factory: DynamoEndpointFactory): void {
  const db = useDynamoTables(factory);
  let repo: DynamoAccountRepository;

  beforeEach(() => {
    repo = new DynamoAccountRepository(db().doc, db().tables.accounts);
  });

  it('creates an account and gets it back', async () => {
    // Arrange
    const account = newAccount({ plan: 'growth', usageKey: 'usage-key-value', usageKeyId: 'usage-key-id' });

    // Act
    await repo.create(account);
    const read = await repo.get(account.id);

    // Assert
    expect(read).toEqual(account);
  });

  it('round-trips an account without a usage identity (no empty attributes)', async () => {
    // Arrange
    const account = newAccount();

    // Act
    await repo.create(account);

    // Assert
    expect(await repo.get(account.id)).toEqual(account);
    const { Item } = await db().doc.send(new GetCommand({ TableName: db().tables.accounts, Key: { id: account.id } }));
    expect(Object.keys(Item ?? {}).sort()).toEqual(['createdAt', 'id', 'plan']);
  });

  it('sets and removes the address for notices (no empty attribute left), and not on an unknown id', async () => {
    const account = newAccount();
    await repo.create(account);

    const set = await repo.setNoticeEmail(account.id, 'ops@example.com');
    const read = await repo.get(account.id);
    const removed = await repo.setNoticeEmail(account.id, null);
    const { Item } = await db().doc.send(new GetCommand({ TableName: db().tables.accounts, Key: { id: account.id } }));

    expect(set).toBe(true);
    expect(read).toEqual({ ...account, noticeEmail: 'ops@example.com' });
    expect(removed).toBe(true);
    expect(await repo.get(account.id)).toEqual(account);
    expect(Object.keys(Item ?? {}).sort()).toEqual(['createdAt', 'id', 'plan']);
    expect(await repo.setNoticeEmail('acct_unknown', 'ops@example.com')).toBe(false);
    expect(await repo.get('acct_unknown')).toBeNull();
  });

  it('gives null for an unknown id', async () => {
    expect(await repo.get('acct_unknown')).toBeNull();
  });

  it('refuses to create the same id twice with a ConflictError, keeping the first', async () => {
    // Arrange
    const account = newAccount({ plan: 'free' });
    await repo.create(account);

    // Act
    const act = repo.create({ ...account, plan: 'scale' });

    // Assert
    await expect(act).rejects.toBeInstanceOf(ConflictError);
    expect(await repo.get(account.id)).toEqual(account);
  });

  it('updates an account and returns the new item', async () => {
    // Arrange
    const account = newAccount({ plan: 'free' });
    await repo.create(account);

    // Act
    const updated = await repo.update(account.id, { plan: 'scale', usageKey: 'k-1', usageKeyId: 'kid-1' });

    // Assert
    const expected = { ...account, plan: 'scale', usageKey: 'k-1', usageKeyId: 'kid-1' };
    expect(updated).toEqual(expected);
    expect(await repo.get(account.id)).toEqual(expected);
  });

  it('changes only the fields given, ignoring undefined ones', async () => {
    // Arrange
    const account = newAccount({ plan: 'free', usageKey: 'keep-me', usageKeyId: 'keep-id' });
    await repo.create(account);

    // Act
    const updated = await repo.update(account.id, { plan: 'growth', usageKey: undefined });

    // Assert
    expect(updated).toEqual({ ...account, plan: 'growth' });
  });

  it('returns the current account for an empty update', async () => {
    // Arrange
    const account = newAccount();
    await repo.create(account);

    // Act / Assert
    expect(await repo.update(account.id, {})).toEqual(account);
  });

  it('returns null when updating an unknown id, and creates nothing', async () => {
    // Act
    const updated = await repo.update('acct_ghost', { plan: 'scale' });

    // Assert
    expect(updated).toBeNull();
    expect(await repo.get('acct_ghost')).toBeNull();
    const { Item } = await db().doc.send(
      new GetCommand({ TableName: db().tables.accounts, Key: { id: 'acct_ghost' } }),
    );
    expect(Item).toBeUndefined();
  });

  it('any() is false on an empty table, then true once an account exists', async () => {
    // Arrange
    const empty = new DynamoAccountRepository(db().doc, (await db().freshTables()).accounts);

    // Act
    const before = await empty.any();
    await empty.create(newAccount());
    const after = await empty.any();

    // Assert
    expect(before).toBe(false);
    expect(after).toBe(true);
  });

  it('lists every account oldest first, following the Scan page by page; the default mark round-trips', async () => {
    // Arrange
    const tables = await db().freshTables();
    const fresh = new DynamoAccountRepository(db().doc, tables.accounts);
    const accounts = [
      newAccount({ createdAt: '2025-03-01T00:00:00.000Z', isDefault: true }),
      newAccount({ createdAt: '2025-01-01T00:00:00.000Z', plan: 'scale', usageKey: 'k', usageKeyId: 'kid' }),
      newAccount({ createdAt: '2025-02-01T00:00:00.000Z' }),
    ];
    for (const account of accounts) await fresh.create(account);

    // Act
    const listed = await fresh.list({ pageSize: 1 });

    // Assert
    expect(listed).toEqual([accounts[1], accounts[2], accounts[0]]);
    expect(await fresh.list()).toEqual(listed);
    expect(await new DynamoAccountRepository(db().doc, (await db().freshTables()).accounts).list()).toEqual([]);
  });

  it('refuses to return an item that is not a valid account (zod on read-back)', async () => {
    // Arrange
    await db().doc.send(
      new PutCommand({
        TableName: db().tables.accounts,
        Item: { id: 'acct_corrupt', plan: 'enterprise', createdAt: '2025-01-01T00:00:00.000Z' },
      }),
    );

    // Act
    const act = repo.get('acct_corrupt');

    // Assert
    await expect(act).rejects.toThrow();
  });
}

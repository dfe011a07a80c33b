// The DynamoDB call counter counts real calls sent to dynalite, per operation, through the repositories.
import { type DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countCalls } from '../../lambdas/adapters/dynamodb/call-counter';
import type { Account } from '../../lambdas/app/ports';
import { ConflictError } from '../../lambdas/domain/errors';
import { windowAt } from '../../lambdas/domain/rate-limit';
import { type TableName, tableNames } from '../../lambdas/manifest';
import { type LocalDynamo, startDynalite } from '../../lambdas/runtime/local/dynalite';
import { createTables, localDynamoClient } from '../../lambdas/runtime/local/dynamo';
import { createRepositories, type Repositories } from '../../lambdas/runtime/repositories';

const tables = Object.fromEntries(tableNames.map((table) => [table, `cc-${table}`])) as Record<TableName, string>;

describe('countCalls', () => {
  let dynamo: LocalDynamo;
  let client: DynamoDBClient;
  let repos: Repositories;
  let seq = 0;
  const account = (): Account => ({ id: `acct_${++seq}`, plan: 'free', createdAt: '2025-01-01T00:00:00.000Z' });

  beforeAll(async () => {
    dynamo = await startDynalite(':memory:');
    client = localDynamoClient(dynamo.endpoint);
    repos = createRepositories(client, tables);
  });

  afterAll(async () => {
    client.destroy();
    await dynamo.close();
  });

  beforeEach(async () => {
    await createTables(client, tables);
  });

  it('counts the calls made through the client, per operation', async () => {
    // Arrange
    const counts = countCalls(client);

    // Act
    await createTables(client, tables);

    // Assert: one CreateTable per table (each already exists), then one DescribeTable per table (each ACTIVE)
    expect(counts.snapshot()).toEqual({ CreateTable: tableNames.length, DescribeTable: tableNames.length });
    expect(counts.total()).toBe(2 * tableNames.length);
    counts.detach();
  });

  it('counts DocumentClient commands under their low-level names', async () => {
    // Arrange
    const counts = countCalls(client);
    const created = account();

    // Act
    await repos.accounts.create(created);
    await repos.accounts.get(created.id);
    await repos.accounts.get('acct_missing');
    await repos.apiKeys.listByAccount(created.id);
    await repos.counter.increment(`account:${created.id}`, windowAt(Date.now()));

    // Assert
    expect(counts.snapshot()).toEqual({ GetItem: 2, PutItem: 1, Query: 1, UpdateItem: 1 });
    expect(counts.total()).toBe(5);
    counts.detach();
  });

  it('splits the counts per table on request', async () => {
    // Arrange
    const counts = countCalls(client);

    // Act
    await repos.accounts.get('acct_x');
    await repos.apiKeys.findByHash('0'.repeat(64));
    await repos.apiKeys.findByHash('1'.repeat(64));

    // Assert
    expect(counts.snapshot({ byTable: true })).toEqual({ 'GetItem cc-accounts': 1, 'GetItem cc-apiKeys': 2 });
    expect(counts.snapshot()).toEqual({ GetItem: 3 });
    counts.detach();
  });

  it('names the table of a batch read', async () => {
    // Arrange
    const counts = countCalls(client);

    // Act
    await repos.webhooks.getMany([{ accountId: 'acct_x', mode: 'live', id: 'wh_1' }]);
    await repos.suppressions.find({ accountId: 'acct_x', mode: 'live' }, ['a@example.com']);

    // Assert
    expect(counts.snapshot({ byTable: true })).toEqual({
      'BatchGetItem cc-suppressions': 1,
      'BatchGetItem cc-webhooks': 1,
    });
    expect(counts.snapshot()).toEqual({ BatchGetItem: 2 });
    counts.detach();
  });

  it('counts a call that DynamoDB refuses', async () => {
    // Arrange
    const existing = account();
    await repos.accounts.create(existing);
    const counts = countCalls(client);

    // Act
    const attempt = repos.accounts.create(existing);

    // Assert
    await expect(attempt).rejects.toBeInstanceOf(ConflictError);
    expect(counts.snapshot()).toEqual({ PutItem: 1 });
    counts.detach();
  });

  it('starts again from zero after reset', async () => {
    // Arrange
    const counts = countCalls(client);
    await repos.accounts.get('acct_a');

    // Act
    counts.reset();
    await client.send(new GetItemCommand({ TableName: tables.accounts, Key: { id: { S: 'acct_b' } } }));
    await repos.apiKeys.listByAccount('acct_b');

    // Assert
    expect(counts.snapshot()).toEqual({ GetItem: 1, Query: 1 });
    counts.detach();
  });

  it('keeps two counters on one client apart, and stops counting once detached', async () => {
    // Arrange
    const first = countCalls(client);
    await repos.accounts.get('acct_c');
    const second = countCalls(client);

    // Act
    await repos.accounts.get('acct_d');
    first.detach();
    await repos.accounts.get('acct_e');

    // Assert
    expect(first.snapshot()).toEqual({ GetItem: 2 });
    expect(second.snapshot()).toEqual({ GetItem: 2 });
    second.detach();
    await repos.accounts.get('acct_f');
    expect(second.total()).toBe(2);
  });
});

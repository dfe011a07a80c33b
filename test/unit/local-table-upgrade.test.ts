// A local data directory made before an index changed (name or projection): createTables rebuilds the table
// with the manifest's indexes and keeps every item, so `npm start` on an old SF_DATA_DIR keeps working.
// dynalite cannot add a GSI to an existing table, so the rebuild copies the items through a new table.

import { CreateTableCommand, DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DynamoEmailHistory } from '../../lambdas/adapters/dynamodb/email-history';
import { DynamoOutbox } from '../../lambdas/adapters/dynamodb/outbox';
import { tenantShardKey } from '../../lambdas/adapters/dynamodb/tenant-index';
import { tables } from '../../lambdas/manifest';
import { createTableInput, createTables } from '../../lambdas/runtime/local/dynamo';
import { type DynamoEndpoint, dynaliteInMemory } from '../support/dynamo';

let dynamo: DynamoEndpoint;
let client: DynamoDBClient;
beforeAll(async () => {
  dynamo = await dynaliteInMemory.start();
  client = dynamo.client();
});
afterAll(async () => {
  client.destroy();
  await dynamo.stop();
});

async function untilActive(name: string) {
  while ((await client.send(new DescribeTableCommand({ TableName: name }))).Table?.TableStatus !== 'ACTIVE') {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const names = Object.fromEntries(Object.keys(tables).map((t) => [t, `upgrade-${t}`])) as Parameters<
  typeof createTables
>[1];

it('rebuilds a table whose indexes differ from the manifest, with every item, and leaves matching tables alone', async () => {
  // Arrange: the deliveries table as the single-key layout made it (byStatus and byDue, ALL), with 60 rows.
  const current = createTableInput(names.deliveries, tables.deliveries);
  await client.send(
    new CreateTableCommand({
      ...current,
      AttributeDefinitions: ['webhookId', 'id', 'statusKey', 'dueShard', 'dueAt'].map((name) => ({
        AttributeName: name,
        AttributeType: 'S',
      })),
      GlobalSecondaryIndexes: [
        {
          IndexName: 'byStatus',
          KeySchema: [
            { AttributeName: 'statusKey', KeyType: 'HASH' },
            { AttributeName: 'id', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
        {
          IndexName: 'byDue',
          KeySchema: [
            { AttributeName: 'dueShard', KeyType: 'HASH' },
            { AttributeName: 'dueAt', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    }),
  );
  await client.send(new CreateTableCommand(createTableInput(names.webhooks, tables.webhooks)));
  await untilActive(names.deliveries);
  await untilActive(names.webhooks);
  const doc = DynamoDBDocumentClient.from(client);
  const rows = Array.from({ length: 60 }, (_, i) => ({
    webhookId: 'wh_old',
    id: `dlv_${String(i).padStart(3, '0')}`,
    status: 'pending',
    attempts: 1,
    statusKey: 'wh_old#pending',
    dueShard: 'due',
    dueAt: String(1_000 + i).padStart(15, '0'),
  }));
  for (const Item of rows) await doc.send(new PutCommand({ TableName: names.deliveries, Item }));
  const webhooksBefore = await client.send(new DescribeTableCommand({ TableName: names.webhooks }));

  // Act
  await createTables(client, names);

  // Assert
  const { Table } = await client.send(new DescribeTableCommand({ TableName: names.deliveries }));
  expect(
    Table?.GlobalSecondaryIndexes?.map((i) => ({ name: i.IndexName, projection: i.Projection?.ProjectionType })),
  ).toEqual(tables.deliveries.indexes.map((i) => ({ name: i.name, projection: i.projection.type })));
  const { Items } = await doc.send(
    new QueryCommand({
      TableName: names.deliveries,
      IndexName: 'byDueShard',
      KeyConditionExpression: 'dueShard = :d',
      ExpressionAttributeValues: { ':d': 'due' },
    }),
  );
  expect(Items?.map((item) => item.id).sort()).toEqual(rows.map((row) => row.id));
  const webhooksAfter = await client.send(new DescribeTableCommand({ TableName: names.webhooks }));
  expect(webhooksAfter.Table?.CreationDateTime).toEqual(webhooksBefore.Table?.CreationDateTime);
});

it('gives the emails of a data directory from before byTenant their tenant, so GET /v1/emails lists them', async () => {
  // Arrange: the emails table without byTenant, an email stored then (no `tenant`), and a batch decision item.
  const older = Object.fromEntries(Object.keys(tables).map((t) => [t, `tenant-${t}`])) as typeof names;
  const before = { ...tables.emails, indexes: tables.emails.indexes.filter((index) => index.name !== 'byTenant') };
  await client.send(new CreateTableCommand(createTableInput(older.emails, before)));
  await untilActive(older.emails);
  const doc = DynamoDBDocumentClient.from(client);
  const email = { id: 'email_01old', accountId: 'acct_old', mode: 'live', subject: 'Kept' };
  await doc.send(new PutCommand({ TableName: older.emails, Item: email }));
  await doc.send(new PutCommand({ TableName: older.emails, Item: { id: 'batch#01old', decision: 'commit' } }));

  // Act
  const rebuilt = await createTables(client, older);

  // Assert
  expect(rebuilt).toEqual(['emails']);
  const listed = await doc.send(
    new QueryCommand({
      TableName: older.emails,
      IndexName: 'byTenant',
      KeyConditionExpression: 'tenant = :t',
      // Under its shard of the tenant's byTenant keys, as a new email would be.
      ExpressionAttributeValues: { ':t': tenantShardKey({ accountId: 'acct_old', mode: 'live' }, 'email_01old') },
    }),
  );
  expect(listed.Items?.map((item) => item.id)).toEqual(['email_01old']);
  const decision = await doc.send(new GetCommand({ TableName: older.emails, Key: { id: 'batch#01old' } }));
  expect(decision.Item?.tenant).toBeUndefined();
});

it('notes the status of the emails of a data directory from before the status index, so ?status= finds them', async () => {
  // Arrange: the history table without byStatus; an email with two events then, a cancelled one without any.
  const older = Object.fromEntries(Object.keys(tables).map((t) => [t, `status-${t}`])) as typeof names;
  const before = {
    ...tables.emailEvents,
    indexes: tables.emailEvents.indexes.filter((index) => index.name !== 'byStatus'),
  };
  await client.send(new CreateTableCommand(createTableInput(older.emailEvents, before)));
  await untilActive(older.emailEvents);
  await createTables(client, { ...older, emailEvents: 'status-unused' });
  const doc = DynamoDBDocumentClient.from(client);
  await doc.send(
    new PutCommand({ TableName: older.emails, Item: { id: 'email_02a', accountId: 'acct_s', mode: 'test' } }),
  );
  await doc.send(
    new PutCommand({
      TableName: older.emails,
      Item: { id: 'email_01b', accountId: 'acct_s', mode: 'test', canceledAt: '2026-01-02T00:00:00.000Z' },
    }),
  );
  for (const [eventId, type, timestamp] of [
    ['evt_1', 'email.sent', '2026-01-01T00:00:01.000Z'],
    ['evt_2', 'email.bounced', '2026-01-01T00:00:02.000Z'],
  ]) {
    await doc.send(
      new PutCommand({
        TableName: older.emailEvents,
        Item: { emailId: 'email_02a', eventId, type, timestamp, at: `${timestamp}#${eventId}` },
      }),
    );
  }

  // Act
  const rebuilt = await createTables(client, older);

  // Assert
  expect(rebuilt).toEqual(['emailEvents']);
  const history = new DynamoEmailHistory(doc, older.emailEvents);
  const tenant = { accountId: 'acct_s', mode: 'test' } as const;
  expect(await history.idsByStatus(tenant, 'bounced', { limit: 10 })).toEqual({ ids: ['email_02a'], hasMore: false });
  expect(await history.idsByStatus(tenant, 'canceled', { limit: 10 })).toEqual({ ids: ['email_01b'], hasMore: false });
});

it('moves a data directory from byOutbox (ALL) to byOutboxEvents (keys and events): a waiting outbox is still swept', async () => {
  // Arrange: the contacts table as issue 9 left it (byOutbox projecting whole items), a contact with an event
  // not yet relayed.
  const older = Object.fromEntries(Object.keys(tables).map((t) => [t, `outbox-${t}`])) as typeof names;
  const oldOutbox = { name: 'byOutbox', partitionKey: 'outboxShard', sortKey: 'outboxDue' };
  await client.send(
    new CreateTableCommand(createTableInput(older.contacts, { ...tables.contacts, indexes: [oldOutbox] })),
  );
  await untilActive(older.contacts);
  const doc = DynamoDBDocumentClient.from(client);
  const event = {
    id: 'evt_01old',
    type: 'contact.created',
    accountId: 'acct_old',
    mode: 'live',
    timestamp: '2025-01-01T00:00:00.000Z',
    data: { id: 'ct_old' },
  };
  await doc.send(
    new PutCommand({
      TableName: older.contacts,
      Item: {
        tenant: 'acct_old#live',
        id: 'ct_old',
        email: 'a@example.com',
        outbox: new Set([JSON.stringify(event)]),
        outboxShard: 'outbox',
        outboxDue: String(Date.parse(event.timestamp)).padStart(15, '0'),
      },
    }),
  );

  // Act
  const rebuilt = await createTables(client, older);
  const due = await new DynamoOutbox(doc, older.contacts, ['tenant', 'id']).due(Date.now(), 10);

  // Assert
  expect(rebuilt).toContain('contacts');
  const { Table } = await client.send(new DescribeTableCommand({ TableName: older.contacts }));
  expect(Table?.GlobalSecondaryIndexes?.map((i) => [i.IndexName, i.Projection])).toEqual([
    ['byOutboxEvents', { ProjectionType: 'INCLUDE', NonKeyAttributes: ['outbox'] }],
  ]);
  expect(due).toEqual([{ ref: { tenant: 'acct_old#live', id: 'ct_old' }, events: [event] }]);
});

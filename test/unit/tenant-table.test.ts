// TenantTable (lambdas/adapters/dynamodb/tenant-table.ts): a tenant's listing is read strongly consistent, so
// the per-account limits (webhooks, domains) count every item already created, on AWS as on dynalite.

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { TenantTable } from '../../lambdas/adapters/dynamodb/tenant-table';

describe('TenantTable.list', () => {
  it('queries the tenant partition with ConsistentRead, across pages', async () => {
    // Arrange
    const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));
    const dynamo = mockClient(doc);
    dynamo
      .on(QueryCommand)
      .resolvesOnce({ Items: [{ tenant: 'acct_1#test', id: 'wh_1' }], LastEvaluatedKey: { id: 'wh_1' } })
      .resolvesOnce({ Items: [{ tenant: 'acct_1#test', id: 'wh_2' }] });
    const table = new TenantTable(doc, 'webhooks', (item) => item.id as string);

    // Act
    const ids = await table.list({ accountId: 'acct_1', mode: 'test' });

    // Assert
    expect(ids).toEqual(['wh_1', 'wh_2']);
    const calls = dynamo.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(calls).toHaveLength(2);
    for (const input of calls) expect(input).toMatchObject({ TableName: 'webhooks', ConsistentRead: true });
  });
});

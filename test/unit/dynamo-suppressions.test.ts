// DynamoSuppressionList's reads, command by command: a send's check reads each recipient under its shard; until
// the table's layout mark is seen it also reads the earlier version's keys and the mark, in the same BatchGetItem,
// and once seen, never again (the mark is never removed).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  DynamoSuppressionList,
  SUPPRESSION_LAYOUT_MARK,
  suppressionKey,
} from '../../lambdas/adapters/dynamodb/suppressions';

const TABLE = 'sendflow-suppressions';
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const dynamo = mockClient(DynamoDBDocumentClient);
const tenant = { accountId: 'acct_1', mode: 'live' } as const;
const keysSent = (call: number) =>
  dynamo.commandCalls(BatchGetCommand)[call]?.args[0].input.RequestItems?.[TABLE]?.Keys;

describe('DynamoSuppressionList.find', () => {
  beforeEach(() => dynamo.reset());

  it("reads the old keys and the mark until the mark is found, then each address's shard only", async () => {
    // Arrange
    const list = new DynamoSuppressionList(doc, TABLE);
    const addresses = ['ada@example.com', 'bob@example.com'];
    dynamo
      .on(BatchGetCommand)
      .resolvesOnce({ Responses: { [TABLE]: [{ ...SUPPRESSION_LAYOUT_MARK }] } })
      .resolves({ Responses: { [TABLE]: [] } });

    // Act
    await list.find(tenant, addresses);
    await list.find(tenant, addresses);

    // Assert
    expect(keysSent(0)).toEqual([
      { tenant: suppressionKey(tenant, 'ada@example.com'), address: 'ada@example.com' },
      { tenant: suppressionKey(tenant, 'bob@example.com'), address: 'bob@example.com' },
      { tenant: 'acct_1#live', address: 'ada@example.com' },
      { tenant: 'acct_1#live', address: 'bob@example.com' },
      SUPPRESSION_LAYOUT_MARK,
    ]);
    expect(keysSent(1)).toEqual([
      { tenant: suppressionKey(tenant, 'ada@example.com'), address: 'ada@example.com' },
      { tenant: suppressionKey(tenant, 'bob@example.com'), address: 'bob@example.com' },
    ]);
  });

  it('keeps reading the old keys while the mark is absent (an upgrade not yet run)', async () => {
    // Arrange
    const list = new DynamoSuppressionList(doc, TABLE);
    dynamo.on(BatchGetCommand).resolves({
      Responses: {
        [TABLE]: [{ tenant: 'acct_1#live', address: 'ada@example.com', reason: 'complaint', createdAt: 'x' }],
      },
    });

    // Act
    const first = await list.find(tenant, ['ada@example.com']);
    await list.find(tenant, ['ada@example.com']);

    // Assert
    expect(first.get('ada@example.com')?.reason).toBe('complaint');
    expect(keysSent(1)).toContainEqual({ tenant: 'acct_1#live', address: 'ada@example.com' });
  });

  it("gives the shard's reason when both layouts hold the address (mid-upgrade), as the upgrade keeps it", async () => {
    // Arrange
    const list = new DynamoSuppressionList(doc, TABLE);
    const address = 'ada@example.com';
    dynamo.on(BatchGetCommand).resolves({
      Responses: {
        [TABLE]: [
          { tenant: suppressionKey(tenant, address), address, reason: 'hard_bounce', createdAt: 'b' },
          { tenant: 'acct_1#live', address, reason: 'complaint', createdAt: 'a' },
        ],
      },
    });

    // Act
    const found = await list.find(tenant, [address]);

    // Assert
    expect(found.get(address)).toEqual({ address, reason: 'hard_bounce', createdAt: 'b' });
  });
});

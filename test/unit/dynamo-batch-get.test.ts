// batchGetAll: every key read once, in BatchGetItem calls of at most 100 keys, with what DynamoDB leaves
// unprocessed asked for again after a pause, and a clear error when it keeps leaving keys behind.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { batchGetAll } from '../../lambdas/adapters/dynamodb/operations';

const TABLE = 'sendflow-webhooks';
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const dynamo = mockClient(DynamoDBDocumentClient);
const key = (id: string) => ({ tenant: 'acct_1#live', id });
const keysSent = (call: number) =>
  dynamo.commandCalls(BatchGetCommand)[call]?.args[0].input.RequestItems?.[TABLE]?.Keys;

describe('batchGetAll', () => {
  beforeEach(() => {
    dynamo.reset();
    vi.useFakeTimers();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('asks again, after a pause, for exactly the keys DynamoDB left unprocessed', async () => {
    // Arrange
    dynamo
      .on(BatchGetCommand)
      .resolvesOnce({
        Responses: { [TABLE]: [{ ...key('wh_a'), n: 1 }] },
        UnprocessedKeys: { [TABLE]: { Keys: [key('wh_b')] } },
      })
      .resolvesOnce({ Responses: { [TABLE]: [{ ...key('wh_b'), n: 2 }] } });

    // Act
    const reading = batchGetAll(doc, TABLE, [key('wh_a'), key('wh_b'), key('wh_a')]);
    await vi.advanceTimersByTimeAsync(49);
    const callsBeforePause = dynamo.commandCalls(BatchGetCommand).length;
    await vi.advanceTimersByTimeAsync(1);
    const items = await reading;

    // Assert
    expect(items).toEqual([
      { ...key('wh_a'), n: 1 },
      { ...key('wh_b'), n: 2 },
    ]);
    expect(callsBeforePause).toBe(1);
    expect(keysSent(0)).toEqual([key('wh_a'), key('wh_b')]);
    expect(keysSent(1)).toEqual([key('wh_b')]);
  });

  it('splits more than 100 keys into calls of 100', async () => {
    // Arrange
    dynamo.on(BatchGetCommand).resolves({ Responses: { [TABLE]: [] } });
    const keys = Array.from({ length: 250 }, (_, i) => key(`wh_${i}`));

    // Act
    await batchGetAll(doc, TABLE, keys);

    // Assert
    expect([0, 1, 2].map((call) => keysSent(call)?.length)).toEqual([100, 100, 50]);
    expect([0, 1, 2].flatMap((call) => keysSent(call))).toEqual(keys);
  });

  it('makes no call for no keys', async () => {
    // Act
    const items = await batchGetAll(doc, TABLE, []);

    // Assert
    expect(items).toEqual([]);
    expect(dynamo.commandCalls(BatchGetCommand)).toHaveLength(0);
  });

  it('gives up with an error naming the table after 10 rounds of unprocessed keys', async () => {
    // Arrange
    dynamo
      .on(BatchGetCommand)
      .resolves({ Responses: { [TABLE]: [] }, UnprocessedKeys: { [TABLE]: { Keys: [key('wh_a')] } } });

    // Act
    const reading = batchGetAll(doc, TABLE, [key('wh_a')]).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(10_000);

    // Assert
    expect(((await reading) as Error).message).toBe(`DynamoDB left keys of ${TABLE} unprocessed`);
    expect(dynamo.commandCalls(BatchGetCommand)).toHaveLength(10);
  });
});

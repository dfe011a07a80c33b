// The DynamoDB idioms the repositories share: a conditional write whose failed condition is an expected
// answer (not an error), a query read across all its pages, and a batch read of every key it is given.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';

/** BatchGetItem takes at most 100 keys. */
const BATCH_GET_KEYS = 100;
/** Rounds of UnprocessedKeys before giving up (backoff 50 ms doubling, capped at 1 s: about 5 s in all). */
const BATCH_GET_ROUNDS = 10;

/** The write's result, or null when its condition failed; any other error is thrown. */
export async function unlessConditionFails<T>(write: Promise<T>): Promise<T | null> {
  try {
    return await write;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return null;
    throw error;
  }
}

/** Whether the conditional write went through (false: its condition failed). */
export async function conditionHeld(write: Promise<unknown>): Promise<boolean> {
  return (await unlessConditionFails(write)) !== null;
}

/** Every item a query matches, following LastEvaluatedKey. */
export async function queryAll(
  doc: DynamoDBDocumentClient,
  input: QueryCommandInput,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let cursor: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(new QueryCommand({ ...input, ExclusiveStartKey: cursor }));
    items.push(...(page.Items ?? []));
    cursor = page.LastEvaluatedKey;
  } while (cursor);
  return items;
}

/**
 * The items stored under `keys` (missing ones are left out, duplicates read once), in BatchGetItem calls of
 * 100 keys, retrying what DynamoDB leaves unprocessed with a growing pause, as AWS recommends.
 */
export async function batchGetAll(
  doc: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly Record<string, string>[],
): Promise<Record<string, unknown>[]> {
  const unique = [...new Map(keys.map((key) => [JSON.stringify(key), key])).values()];
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < unique.length; i += BATCH_GET_KEYS) {
    let pending: Record<string, unknown>[] | undefined = unique.slice(i, i + BATCH_GET_KEYS);
    for (let round = 0; pending?.length; round++) {
      if (round === BATCH_GET_ROUNDS) throw new Error(`DynamoDB left keys of ${tableName} unprocessed`);
      if (round > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** round)));
      const result: BatchGetCommandOutput = await doc.send(
        new BatchGetCommand({ RequestItems: { [tableName]: { Keys: pending } } }),
      );
      items.push(...(result.Responses?.[tableName] ?? []));
      pending = result.UnprocessedKeys?.[tableName]?.Keys;
    }
  }
  return items;
}

// The DynamoDB idioms the repositories share: a conditional write whose failed condition is an expected
// answer (not an error), a query read across all its pages, and batch reads and writes that see every key or
// item through, whatever DynamoDB leaves unprocessed.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';

/** BatchGetItem takes at most 100 keys, BatchWriteItem 25 requests. */
const BATCH_GET_KEYS = 100;
const BATCH_WRITE_ITEMS = 25;
/** Rounds of unprocessed keys or items before giving up (pause 50 ms doubling, capped at 1 s: about 5 s in all). */
const BATCH_ROUNDS = 10;

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
 * 100 keys; only the `attributes` named, when given (each through a placeholder: many are reserved words);
 * strongly consistent when `consistent` (twice the read units).
 */
export async function batchGetAll(
  doc: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly Record<string, string>[],
  attributes?: readonly string[],
  consistent = false,
): Promise<Record<string, unknown>[]> {
  const unique = [...new Map(keys.map((key) => [JSON.stringify(key), key])).values()];
  const projection = attributes
    ? {
        ProjectionExpression: attributes.map((_, i) => `#p${i}`).join(', '),
        ExpressionAttributeNames: Object.fromEntries(attributes.map((name, i) => [`#p${i}`, name])),
      }
    : {};
  const items: Record<string, unknown>[] = [];
  await untilProcessed(`keys of ${tableName}`, unique, BATCH_GET_KEYS, async (Keys) => {
    const result = await doc.send(
      new BatchGetCommand({
        RequestItems: { [tableName]: { Keys, ...projection, ...(consistent ? { ConsistentRead: true } : {}) } },
      }),
    );
    items.push(...(result.Responses?.[tableName] ?? []));
    return result.UnprocessedKeys?.[tableName]?.Keys;
  });
  return items;
}

/** Puts every item (unconditionally), in BatchWriteItem calls of 25. */
export async function batchPutAll(
  doc: DynamoDBDocumentClient,
  tableName: string,
  items: readonly Record<string, unknown>[],
): Promise<void> {
  const puts = items.map((Item) => ({ PutRequest: { Item } }));
  await untilProcessed(`items of ${tableName}`, puts, BATCH_WRITE_ITEMS, async (chunk) => {
    const result = await doc.send(new BatchWriteCommand({ RequestItems: { [tableName]: chunk } }));
    return result.UnprocessedItems?.[tableName] as typeof puts | undefined;
  });
}

/**
 * Sends `requests` in chunks of `size`. `send` returns what DynamoDB left unprocessed, which goes again after
 * a growing pause, as AWS recommends; after 10 rounds it gives up with an error naming `what`.
 */
async function untilProcessed<T>(
  what: string,
  requests: readonly T[],
  size: number,
  send: (chunk: T[]) => Promise<T[] | undefined>,
): Promise<void> {
  for (let i = 0; i < requests.length; i += size) {
    let pending: T[] | undefined = requests.slice(i, i + size);
    for (let round = 0; pending?.length; round++) {
      if (round === BATCH_ROUNDS) throw new Error(`DynamoDB left ${what} unprocessed`);
      if (round > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** round)));
      pending = await send(pending);
    }
  }
}

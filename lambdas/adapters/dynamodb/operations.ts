// The two DynamoDB idioms every repository uses: a conditional write whose failed condition is an
// expected answer (not an error), and a query read across all its pages.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';

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

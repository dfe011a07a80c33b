// Idempotency records in DynamoDB: one conditional Put claims a key; TTL removes it after 24 h.
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import {
  IDEMPOTENCY_LOCK_MS,
  IDEMPOTENCY_TTL_MS,
  type IdempotencyClaim,
  type IdempotencyStore,
  type StoredResponse,
} from '../../app/idempotency';
import { conditionHeld, unlessConditionFails } from './operations';

const record = z.object({
  fingerprint: z.string(),
  state: z.enum(['in_progress', 'done']),
  lockedUntil: z.number(),
  expiresAt: z.number(),
  response: z.object({ statusCode: z.number(), body: z.string() }).optional(),
});

export class DynamoIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async begin(key: string, fingerprint: string, nowMs: number): Promise<IdempotencyClaim> {
    const claimed = await conditionHeld(
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            key,
            fingerprint,
            state: 'in_progress',
            lockedUntil: nowMs + IDEMPOTENCY_LOCK_MS,
            expiresAt: Math.floor((nowMs + IDEMPOTENCY_TTL_MS) / 1000),
          },
          ConditionExpression: 'attribute_not_exists(#k) OR expiresAt < :nowSec OR (#s = :busy AND lockedUntil < :now)',
          ExpressionAttributeNames: { '#k': 'key', '#s': 'state' },
          ExpressionAttributeValues: { ':nowSec': Math.floor(nowMs / 1000), ':busy': 'in_progress', ':now': nowMs },
        }),
      ),
    );
    if (claimed) return { kind: 'new' };
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { key }, ConsistentRead: true }),
    );
    if (!Item) return { kind: 'in_progress' };
    const existing = record.parse(Item);
    if (existing.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (existing.state === 'done' && existing.response) return { kind: 'replay', response: existing.response };
    return { kind: 'in_progress' };
  }

  async complete(key: string, fingerprint: string, response: StoredResponse): Promise<void> {
    await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { key },
        UpdateExpression: 'SET #s = :done, #r = :response',
        ConditionExpression: 'fingerprint = :f',
        ExpressionAttributeNames: { '#s': 'state', '#r': 'response' },
        ExpressionAttributeValues: { ':done': 'done', ':response': response, ':f': fingerprint },
      }),
    );
  }

  async release(key: string, fingerprint: string): Promise<void> {
    // A failed condition: the key is not ours to free any more (completed, or claimed anew). Nothing to do.
    await unlessConditionFails(
      this.doc.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { key },
          ConditionExpression: 'fingerprint = :f AND #s = :busy',
          ExpressionAttributeNames: { '#s': 'state' },
          ExpressionAttributeValues: { ':f': fingerprint, ':busy': 'in_progress' },
        }),
      ),
    );
  }
}

// The rate-limit counter: one atomic UpdateItem ADD per request on an item per subject and window, or, for a
// window of more requests than one item is sized for (domain/rate-limit.ts counterShards), on one of several
// items whose counts are then read back (consistently) and summed. Items expire by TTL a minute after their
// window; nothing ever reads an old window.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { RateLimitCounter } from '../../app/ports';
import type { RateWindow } from '../../domain/rate-limit';
import { batchGetAll } from './operations';

const EXPIRY_GRACE_SECONDS = 60;

export class DynamoRateLimitCounter implements RateLimitCounter {
  /** Which shard this container adds to next: turns spread its requests evenly, the random start the containers. */
  private turn = Math.floor(Math.random() * 1_000);

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async increment(subject: string, window: RateWindow, shards = 1): Promise<number> {
    if (shards <= 1) return this.add(`${subject}#${window.start}`, window);
    const keys = Array.from({ length: shards }, (_, s) => `${subject}#${window.start}#${s}`);
    const mine = this.turn++ % shards;
    const own = await this.add(keys[mine] as string, window);
    // Read after the addition and consistently: every request added before this one is in the sum, so of the
    // requests that see a sum within the limit there are never more than the limit.
    const others = await batchGetAll(
      this.doc,
      this.tableName,
      keys.filter((_, s) => s !== mine).map((key) => ({ key })),
      ['n'],
      true,
    );
    return others.reduce((sum, item) => sum + (typeof item.n === 'number' ? item.n : 0), own);
  }

  private async add(key: string, window: RateWindow): Promise<number> {
    const { Attributes } = await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { key },
        UpdateExpression: 'ADD #n :one SET expiresAt = if_not_exists(expiresAt, :exp)',
        ExpressionAttributeNames: { '#n': 'n' },
        ExpressionAttributeValues: { ':one': 1, ':exp': window.reset + EXPIRY_GRACE_SECONDS },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const count = Attributes?.n;
    if (typeof count !== 'number') throw new Error('Rate-limit counter returned no count');
    return count;
  }
}

// The rate-limit counter: one atomic UpdateItem ADD per request on an item per subject and window.
// The item expires by TTL a minute after its window; nothing ever reads an old window.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { RateLimitCounter } from '../../app/ports';
import type { RateWindow } from '../../domain/rate-limit';

const EXPIRY_GRACE_SECONDS = 60;

export class DynamoRateLimitCounter implements RateLimitCounter {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async increment(subject: string, window: RateWindow): Promise<number> {
    const { Attributes } = await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { key: `${subject}#${window.start}` },
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

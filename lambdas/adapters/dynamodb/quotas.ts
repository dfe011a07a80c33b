// The monthly email counter: one conditional UpdateItem ADD per send request, refused (and unchanged)
// when it would pass the limit. Lives in the counters (rateLimits) table, expiring after its month.
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { QuotaCounter } from '../../app/ports';
import type { QuotaWindow } from '../../domain/email/quota';
import { unlessConditionFails } from './operations';

const KEEP_AFTER_MONTH_SECONDS = 35 * 86_400;

export class DynamoQuotaCounter implements QuotaCounter {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async consume(accountId: string, window: QuotaWindow, count: number, limit: number): Promise<boolean> {
    if (count > limit) return false;
    return (
      (await unlessConditionFails(
        this.doc.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { key: `quota#${accountId}#${window.month}` },
            UpdateExpression: 'ADD #n :count SET expiresAt = if_not_exists(expiresAt, :exp)',
            ConditionExpression: 'attribute_not_exists(#n) OR #n <= :max',
            ExpressionAttributeNames: { '#n': 'n' },
            ExpressionAttributeValues: {
              ':count': count,
              ':max': limit - count,
              ':exp': window.resetsAt + KEEP_AFTER_MONTH_SECONDS,
            },
          }),
        ),
      )) !== null
    );
  }

  async release(accountId: string, window: QuotaWindow, count: number): Promise<void> {
    await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { key: `quota#${accountId}#${window.month}` },
          UpdateExpression: 'ADD #n :minus',
          ConditionExpression: '#n >= :count',
          ExpressionAttributeNames: { '#n': 'n' },
          ExpressionAttributeValues: { ':minus': -count, ':count': count },
        }),
      ),
    );
  }

  async used(accountId: string, window: QuotaWindow): Promise<number> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { key: `quota#${accountId}#${window.month}` } }),
    );
    const n = Item?.n;
    return typeof n === 'number' && n > 0 ? n : 0;
  }
}

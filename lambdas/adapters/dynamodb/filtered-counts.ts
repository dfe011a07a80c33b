// Events a webhook's payload filter kept from it (filtered_24h), in the counters (rateLimits) table: one item per
// webhook and hour (`filtered#<webhookId>#<hour>`), only ever ADDed to (one UpdateItem per webhook per events
// batch: app/webhooks/filtered-tally), expiring a day after its hour. A read sums the 24 items of the last day with
// one BatchGetItem.
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { FilteredCounts } from '../../app/webhooks/ports';
import { batchGetAll } from './operations';

/** The partition key prefix of these counters (the IAM grants of the functions that count name it). */
export const FILTERED_PREFIX = 'filtered#';
const HOUR_SECONDS = 3600;
/** An hour's counter is read for 24 hours after it ends, then expires (TTL deletes lazily: reads check the hour). */
const KEEP_HOURS = 25;

const keyOf = (webhookId: string, hour: number) => ({ key: `${FILTERED_PREFIX}${webhookId}#${hour}` });

export class DynamoFilteredCounts implements FilteredCounts {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async add(entries: readonly { webhookId: string; hour: number; count: number }[]): Promise<void> {
    await Promise.all(
      entries
        .filter((entry) => entry.count > 0)
        .map((entry) =>
          this.doc.send(
            new UpdateCommand({
              TableName: this.tableName,
              Key: keyOf(entry.webhookId, entry.hour),
              UpdateExpression: 'ADD #n :count SET expiresAt = if_not_exists(expiresAt, :exp)',
              ExpressionAttributeNames: { '#n': 'n' },
              ExpressionAttributeValues: {
                ':count': entry.count,
                ':exp': (entry.hour + KEEP_HOURS) * HOUR_SECONDS,
              },
            }),
          ),
        ),
    );
  }

  async last24h(webhookId: string, hour: number): Promise<number> {
    const keys = Array.from({ length: 24 }, (_, i) => keyOf(webhookId, hour - i));
    const items = await batchGetAll(this.doc, this.tableName, keys, ['n']);
    return items.reduce((sum, item) => sum + (typeof item.n === 'number' && item.n > 0 ? item.n : 0), 0);
  }
}

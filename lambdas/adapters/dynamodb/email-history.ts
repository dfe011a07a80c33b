// Email histories in DynamoDB: one small item per event (emailId, eventId), written with a conditional put so a
// redelivered event is recorded once, and read newest first through the byTime index (at = time#eventId).
import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { EmailEventEntry, EmailHistory, HistoryPage } from '../../app/emails/ports';
import { historyOrderKey } from '../../domain/email/history';
import { expired } from './email-bodies';
import { DEFAULT_EMAIL_RETENTION_SECONDS } from './emails';
import { unlessConditionFails } from './operations';

const historyItem = z.object({
  eventId: z.string(),
  type: z.string(),
  to: z.string().optional(),
  timestamp: z.string(),
});

export class DynamoEmailHistory implements EmailHistory {
  private readonly retentionSeconds: number;
  private readonly now: () => number;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    options: { readonly retentionSeconds?: number; readonly now?: () => number } = {},
  ) {
    this.retentionSeconds = options.retentionSeconds ?? DEFAULT_EMAIL_RETENTION_SECONDS;
    this.now = options.now ?? Date.now;
  }

  async record(emailId: string, entry: EmailEventEntry): Promise<boolean> {
    const written = await unlessConditionFails(
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            emailId,
            eventId: entry.id,
            at: historyOrderKey(entry),
            type: entry.type,
            timestamp: entry.timestamp,
            ...(entry.to !== undefined ? { to: entry.to } : {}),
            // The email retention from when it was recorded: an email's events go with it (its items expire
            // after the same retention from its acceptance, before any event of it).
            expiresAt: Math.floor(this.now() / 1000) + this.retentionSeconds,
          },
          // A redelivery finds its event recorded, and leaves the first record as it was.
          ConditionExpression: 'attribute_not_exists(eventId)',
        }),
      ),
    );
    return written !== null;
  }

  async latest(emailId: string, limit: number): Promise<HistoryPage> {
    const { Items = [] } = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: 'byTime',
        KeyConditionExpression: 'emailId = :id',
        ExpressionAttributeValues: { ':id': emailId },
        ScanIndexForward: false,
        // One more than asked: whether older events exist, without counting them.
        Limit: limit + 1,
      }),
    );
    const now = this.now();
    const events = Items.slice(0, limit)
      .filter((item) => !expired(item, now))
      .map((item) => historyItem.parse(item))
      .map(({ eventId, ...rest }) => ({ id: eventId, ...rest }))
      .reverse();
    return { events, truncated: Items.length > limit };
  }
}

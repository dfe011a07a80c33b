// Emails in DynamoDB, keyed by id (GET /v1/emails/:id checks account and mode on the item). Each event is
// appended once: its id goes into a string set, and a redelivered event fails the condition.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import type { EmailEventEntry, EmailRecord, EmailRepository } from '../../app/emails/ports';
import { MODES } from '../../domain/api-keys';

const emailItem = z.object({
  id: z.string(),
  accountId: z.string(),
  mode: z.enum(MODES),
  from: z.string(),
  to: z.array(z.string()),
  cc: z.array(z.string()),
  bcc: z.array(z.string()),
  replyTo: z.array(z.string()),
  subject: z.string(),
  html: z.string().optional(),
  text: z.string().optional(),
  headers: z.record(z.string(), z.string()),
  tags: z.array(z.object({ name: z.string(), value: z.string() })),
  createdAt: z.string(),
  events: z.array(z.object({ id: z.string(), type: z.string(), to: z.string().optional(), timestamp: z.string() })),
  suppressed: z.array(z.string()).default([]),
});

export class DynamoEmailRepository implements EmailRepository {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async createMany(emails: readonly EmailRecord[]): Promise<void> {
    for (let i = 0; i < emails.length; i += 25) {
      let requests: Record<string, unknown>[] | undefined = emails
        .slice(i, i + 25)
        .map((email) => ({ PutRequest: { Item: email } }));
      for (let round = 0; requests?.length; round++) {
        if (round > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** round)));
        const { UnprocessedItems } = await this.doc.send(
          new BatchWriteCommand({ RequestItems: { [this.tableName]: requests as never } }),
        );
        requests = UnprocessedItems?.[this.tableName] as Record<string, unknown>[] | undefined;
        if (round > 8 && requests?.length) throw new Error('DynamoDB kept items unprocessed');
      }
    }
  }

  async get(id: string): Promise<EmailRecord | null> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: { id } }));
    return Item ? emailItem.parse(Item) : null;
  }

  async appendEvent(id: string, entry: EmailEventEntry): Promise<void> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { id },
          UpdateExpression: 'SET #events = list_append(if_not_exists(#events, :none), :entry) ADD eventIds :ids',
          ConditionExpression: 'attribute_exists(id) AND NOT contains(eventIds, :id)',
          ExpressionAttributeNames: { '#events': 'events' },
          ExpressionAttributeValues: { ':none': [], ':entry': [entry], ':ids': new Set([entry.id]), ':id': entry.id },
        }),
      );
    } catch (error) {
      // Already recorded (a redelivery), or an email we do not store: nothing to do either way.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}

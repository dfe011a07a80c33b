// Emails in DynamoDB, keyed by id (GET /v1/emails/:id checks account and mode on the item). Their event
// history lives apart, in the emailEvents table (email-history.ts), so the item never grows with it.
import { type DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import type { EmailRecord, EmailRepository } from '../../app/emails/ports';
import { MODES } from '../../domain/api-keys';
import { batchPutAll, unlessConditionFails } from './operations';

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
  // A list of [name, value] pairs since headers may be named `constructor` or `__proto__`, which the SDK's
  // marshaller cannot write as map keys; items from before are maps. Read back into a record without a prototype.
  headers: z
    .union([z.array(z.tuple([z.string(), z.string()])), z.record(z.string(), z.string()).transform(Object.entries)])
    .transform((pairs) => {
      const headers: Record<string, string> = Object.create(null);
      for (const [name, value] of pairs) headers[name] = value;
      return headers;
    }),
  tags: z.array(z.object({ name: z.string(), value: z.string() })),
  createdAt: z.string(),
  suppressed: z.array(z.string()).default([]),
  unsubscribeUrls: z.record(z.string(), z.string()).default({}),
  scheduledAt: z.string().optional(),
  sentAt: z.string().optional(),
  canceledAt: z.string().optional(),
});

const SCHEDULE_SHARD = 'scheduled';
/** Zero-padded epoch ms: a string sort key that orders like the number. */
const dueKey = (ms: number) => String(Math.max(0, Math.floor(ms))).padStart(15, '0');

/** A scheduled email waiting to be sent sits in the sparse byScheduled index. */
function toItem(email: EmailRecord): Record<string, unknown> {
  const waiting = !email.sentAt && !email.canceledAt;
  const due = Date.parse(email.scheduledAt ?? email.createdAt);
  const item = { ...email, headers: Object.entries(email.headers) };
  return waiting ? { ...item, scheduleShard: SCHEDULE_SHARD, sendAt: dueKey(due) } : item;
}

export class DynamoEmailRepository implements EmailRepository {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  createMany(emails: readonly EmailRecord[]): Promise<void> {
    return batchPutAll(this.doc, this.tableName, emails.map(toItem));
  }

  async get(id: string): Promise<EmailRecord | null> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: { id } }));
    return Item ? emailItem.parse(Item) : null;
  }

  async releaseScheduled(
    id: string,
    outcome: 'sent' | 'canceled',
    at: string,
    suppressed?: readonly string[],
  ): Promise<EmailRecord | null> {
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { id },
          UpdateExpression: `SET #at = :at${suppressed ? ', suppressed = :s' : ''} REMOVE scheduleShard, sendAt`,
          ConditionExpression: 'attribute_exists(scheduleShard)',
          ExpressionAttributeNames: { '#at': outcome === 'sent' ? 'sentAt' : 'canceledAt' },
          ExpressionAttributeValues: { ':at': at, ...(suppressed ? { ':s': suppressed } : {}) },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return written ? emailItem.parse(written.Attributes) : null;
  }

  async listScheduled(dueBefore: number, limit: number): Promise<{ id: string; sendAt: number }[]> {
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: 'byScheduled',
        KeyConditionExpression: 'scheduleShard = :s AND sendAt <= :before',
        ExpressionAttributeValues: { ':s': SCHEDULE_SHARD, ':before': dueKey(Math.min(dueBefore, 1e15 - 1)) },
        Limit: limit,
      }),
    );
    return (Items ?? []).map((item) => ({ id: item.id as string, sendAt: Number(item.sendAt) }));
  }
}

// Emails in DynamoDB, keyed by id (GET /v1/emails/:id checks account and mode on the item); byAccount lists an
// account's ids newest first (GET /v1/emails). Their event history lives apart, in the emailEvents table
// (email-history.ts), so the item never grows with it. Each recipient's send state lives in the `recipientStates`
// map (by recipient index), changed one conditional UpdateItem at a time, with the event it causes (email.failed,
// email.suppressed) recorded in the item's outbox.
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type {
  BatchState,
  EmailListQuery,
  EmailPage,
  EmailRecord,
  EmailRepository,
  RecipientExpectation,
  RecipientState,
} from '../../app/emails/ports';
import type { PendingEvents } from '../../app/outbox';
import type { Tenant } from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import { bareAddress, recipients } from '../../domain/email/email';
import type { SendflowEvent } from '../../domain/events';
import { batchGetAll, batchPutAll, conditionHeld, unlessConditionFails } from './operations';
import { DynamoOutbox, outboxAttributes, recordEvents, updateExpression } from './outbox';
import { dueKey, shardOf } from './shards';

const recipientState = z.object({
  state: z.enum(['pending', 'claimed', 'sent', 'failed', 'suppressed']),
  tries: z.number(),
  until: z.number().optional(),
  epoch: z.number().optional(),
  reason: z.string().optional(),
});

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
  recipientStates: z.record(z.string(), recipientState).optional(),
  batchId: z.string().optional(),
});

/** A batch's decision lives in the emails table as an item of this kind, keyed by the batch id. */
const BATCH_KIND = 'batch';

/** The email as stored; `suppressed` also names the recipients whose state is suppressed. */
function parseEmail(item: unknown): EmailRecord {
  const email = emailItem.parse(item) as EmailRecord;
  const states = email.recipientStates ?? {};
  const byState = recipients(email).filter((_, i) => states[String(i)]?.state === 'suppressed');
  return { ...email, suppressed: [...new Set([...email.suppressed, ...byState])] };
}

/**
 * byAccount entries a listing reads per Query: keys and mode, about 100 bytes each, so one page is well under
 * DynamoDB's 1 MB however the account's emails split between modes.
 */
const LIST_PAGE = 500;
/** Emails read per BatchGetItem while a `to` filter is applied (no filter: only as many as the page needs). */
const FILTERED_CHUNK = 100;

/** Whether `address` (bare, lower-cased) is among the email's recipients. */
const sentTo = (email: EmailRecord, address: string) => recipients(email).some((r) => bareAddress(r) === address);

/** byScheduleShard key values (no single key value takes every waiting email); the reconciler reads each. */
const SCHEDULE_SHARDS = 8;
/** The single key value of emails written before the shards (docs/runbook.md ("Upgrading a stage across an index change")): read until they leave. */
const LEGACY_SCHEDULE_SHARD = 'scheduled';
const scheduleShardOf = (id: string) => `scheduled#${shardOf(id, SCHEDULE_SHARDS)}`;
const ALL_SCHEDULE_SHARDS = [
  LEGACY_SCHEDULE_SHARD,
  ...Array.from({ length: SCHEDULE_SHARDS }, (_, n) => `scheduled#${n}`),
];

/**
 * An email with recipients still to settle (scheduled, or sent now and not yet finished) sits in the sparse
 * byScheduleShard index, keys only: an entry costs one write unit however large the email.
 */
function toItem(email: EmailRecord): Record<string, unknown> {
  const waiting = !email.sentAt && !email.canceledAt;
  const due = Date.parse(email.scheduledAt ?? email.createdAt);
  const item = { ...email, headers: Object.entries(email.headers) };
  return waiting ? { ...item, scheduleShard: scheduleShardOf(email.id), sendAt: dueKey(due) } : item;
}

export class DynamoEmailRepository implements EmailRepository {
  readonly outbox: DynamoOutbox;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.outbox = new DynamoOutbox(doc, tableName, ['id']);
  }

  async createMany(emails: readonly EmailRecord[], events: readonly SendflowEvent[] = []): Promise<PendingEvents[]> {
    const eventsOf = (email: EmailRecord) => events.filter((event) => event.emailId === email.id);
    await batchPutAll(
      this.doc,
      this.tableName,
      emails.map((email) => ({ ...toItem(email), ...outboxAttributes(eventsOf(email)) })),
    );
    return emails.map((email) => this.outbox.pending({ id: email.id }, eventsOf(email)));
  }

  async get(id: string): Promise<EmailRecord | null> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: { id } }));
    return Item && Item.kind !== BATCH_KIND ? parseEmail(Item) : null;
  }

  /**
   * byAccount newest first, filtered on mode in the Query (entries are small: large pages); the page's emails
   * are then read by key (BatchGetItem), only as many as the page still needs when there is no `to` filter.
   */
  async list(tenant: Tenant, query: EmailListQuery): Promise<EmailPage> {
    const items: EmailRecord[] = [];
    let cursor: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: 'byAccount',
          KeyConditionExpression: query.after ? 'accountId = :a AND id < :after' : 'accountId = :a',
          FilterExpression: '#mode = :m',
          ExpressionAttributeNames: { '#mode': 'mode' },
          ExpressionAttributeValues: {
            ':a': tenant.accountId,
            ':m': tenant.mode,
            ...(query.after ? { ':after': query.after } : {}),
          },
          ScanIndexForward: false,
          Limit: LIST_PAGE,
          ExclusiveStartKey: cursor,
        }),
      );
      const ids = (page.Items ?? []).map((entry) => entry.id as string);
      for (let i = 0; i < ids.length && items.length <= query.limit; ) {
        const size = query.to ? FILTERED_CHUNK : query.limit + 1 - items.length;
        const chunk = ids.slice(i, i + size);
        i += chunk.length;
        const rows = await batchGetAll(
          this.doc,
          this.tableName,
          chunk.map((id) => ({ id })),
        );
        const found = new Map(rows.map((item) => [item.id as string, item]));
        for (const id of chunk) {
          const item = found.get(id);
          if (!item || item.kind === BATCH_KIND) continue;
          const email = parseEmail(item);
          // The index said so; the item must too (defence in depth), and match the filter.
          if (email.accountId !== tenant.accountId || email.mode !== tenant.mode) continue;
          if (query.to && !sentTo(email, query.to)) continue;
          items.push(email);
        }
      }
      cursor = page.LastEvaluatedKey;
    } while (cursor && items.length <= query.limit);
    return { items: items.slice(0, query.limit), hasMore: items.length > query.limit };
  }

  async decideBatch(
    batchId: string,
    state: BatchState,
    events: readonly SendflowEvent[] = [],
  ): Promise<{ state: BatchState; pending: PendingEvents | null }> {
    const decided = await conditionHeld(
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { id: batchId, kind: BATCH_KIND, batchState: state, ...outboxAttributes(events) },
          ConditionExpression: 'attribute_not_exists(id)',
        }),
      ),
    );
    if (decided) return { state, pending: this.outbox.pending({ id: batchId }, events) };
    return { state: (await this.batchState(batchId)) ?? state, pending: null };
  }

  async batchState(batchId: string): Promise<BatchState | null> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { id: batchId }, ConsistentRead: true }),
    );
    return Item?.kind === BATCH_KIND ? (Item.batchState as BatchState) : null;
  }

  async startSending(id: string, at: string): Promise<EmailRecord | null> {
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { id },
          UpdateExpression:
            'SET sentAt = if_not_exists(sentAt, :at), recipientStates = if_not_exists(recipientStates, :none)',
          ConditionExpression: 'attribute_exists(scheduleShard) AND attribute_not_exists(canceledAt)',
          ExpressionAttributeValues: { ':at': at, ':none': {} },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return written ? parseEmail(written.Attributes) : null;
  }

  async cancel(id: string, at: string): Promise<EmailRecord | null> {
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { id },
          UpdateExpression: 'SET canceledAt = :at REMOVE scheduleShard, sendAt',
          ConditionExpression: 'attribute_exists(scheduleShard) AND attribute_not_exists(sentAt)',
          ExpressionAttributeValues: { ':at': at },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return written ? parseEmail(written.Attributes) : null;
  }

  async setRecipient(
    id: string,
    index: number,
    expect: RecipientExpectation,
    to: RecipientState,
    events: readonly SendflowEvent[],
  ): Promise<PendingEvents | null> {
    const path = 'recipientStates.#r';
    const conditions: Record<RecipientExpectation['state'], string> = {
      pending: `attribute_exists(recipientStates) AND (attribute_not_exists(${path}) OR ${path}.#st = :pending)`,
      claimed: `${path}.#st = :claimed AND ${path}.#tries = :tries`,
      lapsed: `${path}.#st = :claimed AND ${path}.#until < :now`,
      orphaned: `${path}.#st = :claimed AND ${path}.#epoch < :epoch`,
    };
    const values: Record<string, unknown> = { ':to': to };
    if (expect.state === 'pending') values[':pending'] = 'pending';
    if (expect.state === 'claimed') Object.assign(values, { ':claimed': 'claimed', ':tries': expect.tries });
    if (expect.state === 'lapsed') Object.assign(values, { ':claimed': 'claimed', ':now': expect.now });
    if (expect.state === 'orphaned') Object.assign(values, { ':claimed': 'claimed', ':epoch': expect.epoch });
    const names: Record<string, string> = { '#r': String(index) };
    names['#st'] = 'state';
    if (expect.state === 'claimed') names['#tries'] = 'tries';
    if (expect.state === 'lapsed') names['#until'] = 'until';
    if (expect.state === 'orphaned') names['#epoch'] = 'epoch';
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { id },
          ...updateExpression({ set: [`${path} = :to`], names, values }, recordEvents(events)),
          ConditionExpression: conditions[expect.state],
        }),
      ),
    );
    return written ? this.outbox.pending({ id }, events) : null;
  }

  async deferSend(id: string, untilMs: number): Promise<void> {
    await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { id },
          UpdateExpression: 'SET sendAt = :due',
          ConditionExpression: 'attribute_exists(scheduleShard)',
          ExpressionAttributeValues: { ':due': dueKey(untilMs) },
        }),
      ),
    );
  }

  async finishSending(id: string): Promise<void> {
    await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { id },
          UpdateExpression: 'REMOVE scheduleShard, sendAt',
          ConditionExpression: 'attribute_exists(scheduleShard)',
        }),
      ),
    );
  }

  async listScheduled(dueBefore: number, limit: number): Promise<{ id: string; sendAt: number }[]> {
    const before = dueKey(Math.min(dueBefore, 1e15 - 1));
    // The earliest `limit` of every shard, merged: the earliest `limit` overall.
    const perShard = await Promise.all(
      ALL_SCHEDULE_SHARDS.map(async (shard) => {
        const { Items } = await this.doc.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: 'byScheduleShard',
            KeyConditionExpression: 'scheduleShard = :s AND sendAt <= :before',
            ExpressionAttributeValues: { ':s': shard, ':before': before },
            Limit: limit,
          }),
        );
        return (Items ?? []).map((item) => ({ id: item.id as string, sendAt: item.sendAt as string }));
      }),
    );
    return perShard
      .flat()
      .sort((a, b) => (a.sendAt < b.sendAt ? -1 : a.sendAt > b.sendAt ? 1 : a.id < b.id ? -1 : 1))
      .slice(0, limit)
      .map(({ id, sendAt }) => ({ id, sendAt: Number(sendAt) }));
  }
}

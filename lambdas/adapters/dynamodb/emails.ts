// Emails in DynamoDB, keyed by id (GET /v1/emails/:id checks account and mode on the item); byTenant lists an
// account's ids of one mode newest first (GET /v1/emails). Their event history lives apart, in the emailEvents table
// (email-history.ts), so the item never grows with it. Each recipient's send state lives in the `recipientStates`
// map (by recipient index), changed one conditional UpdateItem at a time, with the event it causes (email.failed,
// email.suppressed) recorded in the item's outbox.
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import {
  type BatchState,
  EMAIL_LIST_EXAMINE,
  type EmailListQuery,
  type EmailPage,
  type EmailRecord,
  type EmailRepository,
  type RecipientExpectation,
  type RecipientState,
} from '../../app/emails/ports';
import type { PendingEvents } from '../../app/outbox';
import { sameTenant, type Tenant } from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import { bareAddress, recipients } from '../../domain/email/email';
import type { SendflowEvent } from '../../domain/events';
import { batchGetAll, batchPutAll, conditionHeld, unlessConditionFails } from './operations';
import { DynamoOutbox, outboxAttributes, recordEvents, updateExpression } from './outbox';
import { dueKey, shardOf } from './shards';
import { tenantKey } from './tenant-table';

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

/** Index entries a listing with a `to` filter reads per Query (then their emails per BatchGetItem). */
const FILTERED_CHUNK = 100;

/**
 * What a listed email is read with: everything the list view shows or derives from (status, suppressed), never
 * the bodies (up to 256 KB) nor the headers. `kind` tells a batch decision item apart.
 */
const LISTED_ATTRIBUTES = [
  'id',
  'kind',
  'accountId',
  'mode',
  'from',
  'to',
  'cc',
  'bcc',
  'replyTo',
  'subject',
  'tags',
  'createdAt',
  'suppressed',
  'unsubscribeUrls',
  'scheduledAt',
  'sentAt',
  'canceledAt',
  'recipientStates',
  'batchId',
];

/**
 * Gives every email stored before byTenant its `tenant`, so GET /v1/emails lists it: one Scan of the emails
 * that lack it (batch decision items have no account and are left alone), one conditional UpdateItem each.
 * Idempotent; the local runtime runs it when it rebuilt the table, operators with `admin upgrade-emails`.
 * Returns how many emails it changed.
 */
export async function backfillEmailTenants(doc: DynamoDBDocumentClient, tableName: string): Promise<number> {
  let changed = 0;
  let cursor: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: 'attribute_exists(accountId) AND attribute_exists(#mode) AND attribute_not_exists(tenant)',
        ProjectionExpression: 'id, accountId, #mode',
        ExpressionAttributeNames: { '#mode': 'mode' },
        ExclusiveStartKey: cursor,
      }),
    );
    for (const item of page.Items ?? []) {
      const tenant = tenantKey({ accountId: String(item.accountId), mode: item.mode as Tenant['mode'] });
      const written = await conditionHeld(
        doc.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { id: item.id },
            UpdateExpression: 'SET tenant = :t',
            ConditionExpression: 'attribute_exists(id) AND attribute_not_exists(tenant)',
            ExpressionAttributeValues: { ':t': tenant },
          }),
        ),
      );
      if (written) changed += 1;
    }
    cursor = page.LastEvaluatedKey;
  } while (cursor);
  return changed;
}

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
 * byScheduleShard index, keys only: an entry costs one write unit however large the email. Every email carries
 * its `tenant` (account#mode), the byTenant key.
 */
function toItem(email: EmailRecord): Record<string, unknown> {
  const waiting = !email.sentAt && !email.canceledAt;
  const due = Date.parse(email.scheduledAt ?? email.createdAt);
  const item = { ...email, headers: Object.entries(email.headers), tenant: tenantKey(email) };
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
   * byTenant newest first (keys only, no filter: every entry read is one of the tenant's emails), only as many
   * entries per Query as the page still needs (a `to` filter: chunks of FILTERED_CHUNK), at most `examine` in all;
   * then those emails by key (BatchGetItem) without their bodies.
   */
  async list(tenant: Tenant, query: EmailListQuery): Promise<EmailPage> {
    const examine = Math.max(1, query.examine ?? EMAIL_LIST_EXAMINE);
    const key = tenantKey(tenant);
    const items: EmailRecord[] = [];
    let examined = 0;
    let lastExamined: string | undefined;
    let cursor: Record<string, unknown> | undefined;
    let more = true;
    while (more && items.length <= query.limit && examined < examine) {
      const room = examine - examined;
      const need = query.to ? FILTERED_CHUNK : query.limit + 1 - items.length;
      const take = Math.min(need, room);
      const page = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: 'byTenant',
          KeyConditionExpression: query.after ? 'tenant = :t AND id < :after' : 'tenant = :t',
          ExpressionAttributeValues: { ':t': key, ...(query.after ? { ':after': query.after } : {}) },
          ScanIndexForward: false,
          // One entry past the bound says whether any is left once the bound is reached.
          Limit: take === room ? take + 1 : take,
          ExclusiveStartKey: cursor,
        }),
      );
      const entries = page.Items ?? [];
      const ids = entries.slice(0, take).map((entry) => entry.id as string);
      more = entries.length > take || (entries.length === take && page.LastEvaluatedKey !== undefined);
      examined += ids.length;
      lastExamined = ids.at(-1) ?? lastExamined;
      if (lastExamined !== undefined) cursor = { tenant: key, id: lastExamined };
      items.push(...(await this.listed(tenant, ids, query.to)));
    }
    if (items.length > query.limit) return { items: items.slice(0, query.limit), hasMore: true };
    if (more && lastExamined !== undefined) return { items, hasMore: true, resumeAfter: lastExamined };
    return { items, hasMore: false };
  }

  /** The emails under these ids, in their order, without bodies; those of the tenant that match `to` only. */
  private async listed(tenant: Tenant, ids: readonly string[], to: string | undefined): Promise<EmailRecord[]> {
    if (ids.length === 0) return [];
    const rows = await batchGetAll(
      this.doc,
      this.tableName,
      ids.map((id) => ({ id })),
      LISTED_ATTRIBUTES,
    );
    const found = new Map(rows.map((item) => [item.id as string, item]));
    const emails: EmailRecord[] = [];
    for (const id of ids) {
      const item = found.get(id);
      if (!item || item.kind === BATCH_KIND) continue;
      const email = parseEmail({ ...item, headers: [] });
      // The index said so; the item must too (defence in depth), and match the filter.
      if (!sameTenant(email, tenant)) continue;
      if (to && !sentTo(email, to)) continue;
      emails.push(email);
    }
    return emails;
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

// Emails in DynamoDB, priced by AWS's rules (a write is billed by the whole item's size, 1 WRU per started KB):
// the email item in the emails table, keyed by id, holds only its metadata (addresses, subject, tags, times,
// batch, schedule keys), so the few writes that change it (start, finish) stay small. What is large or changed
// per recipient lives in the emailParts table under the email's id: the body (EmailBodyStore: written once, never
// rewritten), `links` (each recipient's unsubscribe URL, written once; in the email item itself while that keeps it
// within one write unit, as for one recipient) and one `r#NNN` item per recipient with its
// send state, changed one conditional UpdateItem at a time with the event it causes (email.failed,
// email.suppressed) in that item's outbox: a change of one recipient writes a few hundred bytes.
// byTenant lists an account's ids of one mode newest first (GET /v1/emails), spread over a few keys per tenant
// (tenant-index.ts) so one tenant's sending never heats one partition. The event history lives in the
// emailEvents table (email-history.ts). Every item carries `expiresAt` (the stage's email retention).
// Emails written before the parts (body, unsubscribe URLs and `recipientStates` inside the email item) are read
// as they are; `admin upgrade-emails` moves them (splitEmailItems).
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
  type EmailBody,
  type EmailBodyStore,
  type EmailListQuery,
  type EmailPage,
  type EmailRecord,
  type EmailRepository,
  RESCHEDULE_MARGIN_MS,
  type RecipientExpectation,
  type RecipientState,
  type RescheduleResult,
  type SendingEmail,
} from '../../app/emails/ports';
import type { Outbox, PendingEvents } from '../../app/outbox';
import { sameTenant, type Tenant } from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import { bareAddress, recipients } from '../../domain/email/email';
import type { SendflowEvent } from '../../domain/events';
import { DynamoEmailBodyStore, expired, storedHeaders } from './email-bodies';
import { batchGetAll, batchPutAll, conditionHeld, queryAll, unlessConditionFails } from './operations';
import { DynamoOutbox, outboxAttributes } from './outbox';
import { dueKey, shardOf } from './shards';
import { TenantIndexWalk, tenantShardKey } from './tenant-index';

const recipientState = z
  .object({
    state: z.enum(['pending', 'claimed', 'sent', 'failed', 'suppressed']),
    tries: z.number(),
    until: z.number().optional(),
    epoch: z.number().optional(),
    since: z.number().optional(),
    reason: z.string().optional(),
  })
  .transform((state) => state as RecipientState);

/** The email item: metadata, plus (emails written before the parts only) body, links and recipient states. */
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
  tags: z.array(z.object({ name: z.string(), value: z.string() })),
  createdAt: z.string(),
  suppressed: z.array(z.string()).default([]),
  scheduledAt: z.string().optional(),
  sentAt: z.string().optional(),
  canceledAt: z.string().optional(),
  batchId: z.string().optional(),
  // Sent by template (a release before templates ignores it: the email reads and sends as any other).
  templateId: z.string().optional(),
  // The accepting request's trace (issue 32); a release before it ignores the attribute.
  trace: z.string().optional(),
  // Legacy (inside the item before the parts): read as they are until `admin upgrade-emails` moves them.
  html: z.string().optional(),
  text: z.string().optional(),
  headers: storedHeaders.optional(),
  unsubscribeUrls: z.record(z.string(), z.string()).optional(),
  recipientStates: z.record(z.string(), recipientState).optional(),
});

/** The attributes of a legacy email item that move to its parts. */
const LEGACY_ATTRIBUTES = ['html', 'text', 'headers', 'unsubscribeUrls', 'recipientStates'] as const;

/** A batch's decision lives in the emails table as an item of this kind, keyed by the batch id. */
const BATCH_KIND = 'batch';
/** An email id whose message was dropped before the email was stored (abandon): an item of this kind fences it. */
const ABANDONED_KIND = 'abandoned';
/** A batch's decision or an abandoned id: an item of the emails table that is not an email. */
const notAnEmail = (item: Record<string, unknown>) => item.kind !== undefined;

/** The emailParts sort keys besides the body: the unsubscribe links, and each recipient's state. */
const LINKS_PART = 'links';
const RECIPIENT_PREFIX = 'r#';
const recipientPart = (index: number) => `${RECIPIENT_PREFIX}${String(index).padStart(3, '0')}`;

/** Default retention of an email and everything of it (SF_EMAIL_RETENTION_DAYS). */
export const DEFAULT_EMAIL_RETENTION_SECONDS = 30 * 86_400;

export interface EmailStorageOptions {
  /** How long an email and all of it (parts, history) is kept after it is accepted (or scheduled for). */
  readonly retentionSeconds?: number;
  /** Where bodies go: the emailParts table's `body` items when absent. */
  readonly bodies?: EmailBodyStore;
  /** Epoch ms; the expiry checks of reads and the TTLs of writes use it. */
  readonly now?: () => number;
}

export interface EmailTables {
  readonly emails: string;
  readonly emailParts: string;
}

/** When an email's items expire (epoch seconds): the retention after it is accepted, or after its schedule. */
function expiryOf(email: Pick<EmailRecord, 'scheduledAt'>, nowMs: number, retentionSeconds: number): number {
  const from = Math.max(nowMs, email.scheduledAt ? Date.parse(email.scheduledAt) : 0);
  return Math.floor(from / 1000) + retentionSeconds;
}

/** What the parts of one email say: its links and each recipient's state (by index). */
interface Parts {
  readonly unsubscribeUrls?: Record<string, string>;
  readonly states: Record<string, RecipientState>;
}

function partsFrom(items: readonly Record<string, unknown>[], nowMs: number): Parts {
  let unsubscribeUrls: Record<string, string> | undefined;
  const states: Record<string, RecipientState> = {};
  for (const item of items) {
    if (expired(item, nowMs)) continue;
    const part = String(item.part);
    if (part === LINKS_PART) unsubscribeUrls = z.record(z.string(), z.string()).parse(item.unsubscribeUrls);
    else if (part.startsWith(RECIPIENT_PREFIX) && item.recipientState !== undefined) {
      states[String(Number(part.slice(RECIPIENT_PREFIX.length)))] = recipientState.parse(item.recipientState);
    }
  }
  return { ...(unsubscribeUrls ? { unsubscribeUrls } : {}), states };
}

/**
 * The email as the port gives it: metadata from its item, body and links from its parts (or, for a legacy item,
 * from the item itself), recipient states from its parts over any legacy ones; `suppressed` also names the
 * recipients whose state is suppressed. `recipientStates` is there once sending started (or any state is).
 */
function assemble(item: unknown, parts: Parts, body: EmailBody | null): EmailRecord {
  const { html, text, headers, unsubscribeUrls, recipientStates: legacyStates, ...meta } = emailItem.parse(item);
  const states = { ...(legacyStates ?? {}), ...parts.states };
  const content = body ?? {
    ...(html !== undefined ? { html } : {}),
    ...(text !== undefined ? { text } : {}),
    headers: headers ?? Object.create(null),
  };
  const email: EmailRecord = {
    ...meta,
    ...content,
    unsubscribeUrls: parts.unsubscribeUrls ?? unsubscribeUrls ?? {},
    ...(meta.sentAt || legacyStates || Object.keys(states).length ? { recipientStates: states } : {}),
  };
  const byState = recipients(email).filter((_, i) => states[String(i)]?.state === 'suppressed');
  return { ...email, suppressed: [...new Set([...email.suppressed, ...byState])] };
}

/** Index entries a listing with a `to` filter reads per Query (then their emails per BatchGetItem). */
const FILTERED_CHUNK = 100;

/**
 * What a listed email is read with: everything the list view shows or derives from (status, suppressed), never
 * a legacy item's body (up to 256 KB) nor its headers. `kind` tells a batch decision item apart.
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
  'scheduledAt',
  'sentAt',
  'canceledAt',
  'batchId',
  'expiresAt',
  // Legacy items only (new ones keep them in their parts).
  'unsubscribeUrls',
  'recipientStates',
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
      const tenant = tenantShardKey(
        { accountId: String(item.accountId), mode: item.mode as Tenant['mode'] },
        String(item.id),
      );
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

/**
 * Moves what emails written before the parts hold inside their item (body, unsubscribe links, recipient states)
 * to their parts, and gives every email item its `expiresAt`: one Scan of the emails that need it, then per email
 * the body (EmailBodyStore), the links and each recipient's state (a conditional PutItem: a state the send worker
 * already wrote to the parts is newer and stays), and last one UpdateItem that removes the moved attributes.
 * Idempotent, and safe to stop anywhere (a run after a stop redoes the unfinished emails). Also gives event
 * history rows their `expiresAt` (the retention from now). The local runtime runs it at each start; operators
 * with `admin upgrade-emails`. Returns how many email items it changed and how many history rows.
 */
export async function splitEmailItems(
  doc: DynamoDBDocumentClient,
  tables: EmailTables & { readonly emailEvents: string },
  options: EmailStorageOptions = {},
): Promise<{ emails: number; events: number }> {
  const now = (options.now ?? Date.now)();
  const retention = options.retentionSeconds ?? DEFAULT_EMAIL_RETENTION_SECONDS;
  const bodies = options.bodies ?? new DynamoEmailBodyStore(doc, tables.emailParts, () => now);
  let emails = 0;
  let cursor: Record<string, unknown> | undefined;
  do {
    const page: { Items?: Record<string, unknown>[]; LastEvaluatedKey?: Record<string, unknown> } = await doc.send(
      new ScanCommand({
        TableName: tables.emails,
        FilterExpression: 'attribute_exists(headers) OR attribute_not_exists(expiresAt)',
        ExclusiveStartKey: cursor,
      }),
    );
    for (const item of page.Items ?? []) {
      if (notAnEmail(item)) {
        await expireItem(doc, tables.emails, { id: item.id }, now, retention);
        continue;
      }
      const legacy = emailItem.parse(item);
      const created = Date.parse(legacy.scheduledAt ?? legacy.createdAt);
      const expiresAt = Math.floor(Math.max(created, 0) / 1000) + retention;
      if (legacy.headers !== undefined) {
        await bodies.putMany([
          {
            emailId: legacy.id,
            body: {
              ...(legacy.html !== undefined ? { html: legacy.html } : {}),
              ...(legacy.text !== undefined ? { text: legacy.text } : {}),
              headers: legacy.headers,
            },
            expiresAt,
          },
        ]);
        await doc.send(
          new PutCommand({
            TableName: tables.emailParts,
            Item: { emailId: legacy.id, part: LINKS_PART, unsubscribeUrls: legacy.unsubscribeUrls ?? {}, expiresAt },
          }),
        );
        for (const [index, state] of Object.entries(legacy.recipientStates ?? {})) {
          await conditionHeld(
            doc.send(
              new PutCommand({
                TableName: tables.emailParts,
                Item: { emailId: legacy.id, part: recipientPart(Number(index)), recipientState: state, expiresAt },
                ConditionExpression: 'attribute_not_exists(part)',
              }),
            ),
          );
        }
      }
      const names = Object.fromEntries(LEGACY_ATTRIBUTES.map((name, i) => [`#l${i}`, name]));
      const written = await conditionHeld(
        doc.send(
          new UpdateCommand({
            TableName: tables.emails,
            Key: { id: legacy.id },
            UpdateExpression: `SET expiresAt = if_not_exists(expiresAt, :expiresAt) REMOVE ${Object.keys(names).join(', ')}`,
            ConditionExpression: 'attribute_exists(id)',
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: { ':expiresAt': expiresAt },
          }),
        ),
      );
      if (written) emails += 1;
    }
    cursor = page.LastEvaluatedKey;
  } while (cursor);
  let events = 0;
  do {
    const page: { Items?: Record<string, unknown>[]; LastEvaluatedKey?: Record<string, unknown> } = await doc.send(
      new ScanCommand({
        TableName: tables.emailEvents,
        FilterExpression: 'attribute_not_exists(expiresAt)',
        ProjectionExpression: 'emailId, eventId',
        ExclusiveStartKey: cursor,
      }),
    );
    for (const item of page.Items ?? []) {
      const key = { emailId: item.emailId, eventId: item.eventId };
      if (await expireItem(doc, tables.emailEvents, key, now, retention)) events += 1;
    }
    cursor = page.LastEvaluatedKey;
  } while (cursor);
  return { emails, events };
}

/** What `admin upgrade-emails` changed: emails given their tenant, emails split into parts, history rows dated. */
export interface EmailUpgrade {
  readonly tenants: number;
  readonly emails: number;
  readonly events: number;
}

/**
 * Everything emails stored by earlier versions need, idempotent: their `tenant` (backfillEmailTenants), their
 * parts and `expiresAt` (splitEmailItems).
 */
export async function upgradeEmails(
  doc: DynamoDBDocumentClient,
  tables: EmailTables & { readonly emailEvents: string },
  options: EmailStorageOptions = {},
): Promise<EmailUpgrade> {
  const tenants = await backfillEmailTenants(doc, tables.emails);
  return { tenants, ...(await splitEmailItems(doc, tables, options)) };
}

/** Gives an item without one an `expiresAt`, the retention from now. */
function expireItem(
  doc: DynamoDBDocumentClient,
  table: string,
  key: Record<string, unknown>,
  now: number,
  retention: number,
): Promise<boolean> {
  return conditionHeld(
    doc.send(
      new UpdateCommand({
        TableName: table,
        Key: key,
        UpdateExpression: 'SET expiresAt = :expiresAt',
        ConditionExpression: 'attribute_not_exists(expiresAt)',
        ExpressionAttributeValues: { ':expiresAt': Math.floor(now / 1000) + retention },
      }),
    ),
  );
}

/** Whether `address` (bare, lower-cased) is among the email's recipients. */
const sentTo = (email: EmailRecord, address: string) => recipients(email).some((r) => bareAddress(r) === address);

/** byScheduleShard key values (no single key value takes every waiting email); the reconciler reads each. */
export const SCHEDULE_SHARDS = 8;
/** The single key value of emails written before the shards (docs/runbook.md ("Upgrading a stage across an index change")): read until they leave. */
const LEGACY_SCHEDULE_SHARD = 'scheduled';
const scheduleShardOf = (id: string) => `scheduled#${shardOf(id, SCHEDULE_SHARDS)}`;
const ALL_SCHEDULE_SHARDS = [
  LEGACY_SCHEDULE_SHARD,
  ...Array.from({ length: SCHEDULE_SHARDS }, (_, n) => `scheduled#${n}`),
];

/**
 * An email with recipients still to settle (scheduled, or sent now and not yet finished) sits in the sparse
 * byScheduleShard index, keys only: an entry costs one write unit however large the email, and one more when it
 * leaves. A single email sent now is not (`queued`: its message, on the sends queue before the email was
 * stored, stands for it) unless its send is left for later (deferSend). Every email carries
 * its `tenant` (account#mode#shard), the byTenant key, and its `expiresAt`. Body and states are not in it; its links
 * only when they are small (withLinksIfSmall).
 */
function toItem(email: EmailRecord, expiresAt: number, queued: boolean): Record<string, unknown> {
  const {
    attachments: _attachments,
    html: _html,
    text: _text,
    headers: _headers,
    unsubscribeUrls: _links,
    recipientStates: _states,
    ...meta
  } = email;
  const waiting = !email.sentAt && !email.canceledAt && !queued;
  const due = Date.parse(email.scheduledAt ?? email.createdAt);
  const item = { ...meta, tenant: tenantShardKey(email, email.id), expiresAt };
  return waiting ? { ...item, scheduleShard: scheduleShardOf(email.id), sendAt: dueKey(due) } : item;
}

/**
 * The email item's size at most (its JSON, which counts more than DynamoDB does) for its links to ride in it: they
 * are written once with it, instead of in a `links` part of their own (one write unit less), while each later write
 * of the item (start, finish, cancel) stays one unit. One recipient's link fits; ten do not.
 */
const LINKS_IN_ITEM_MAX_BYTES = 950;

function withLinksIfSmall(item: Record<string, unknown>, email: EmailRecord): Record<string, unknown> {
  const withLinks = { ...item, unsubscribeUrls: email.unsubscribeUrls };
  return Buffer.byteLength(JSON.stringify(withLinks), 'utf8') <= LINKS_IN_ITEM_MAX_BYTES ? withLinks : item;
}

/**
 * The outboxes of an email's items: the email item's (email.scheduled, a batch's decision) and its recipients'
 * (email.failed, email.suppressed), swept and cleared as one; a reference names its table by its keys.
 */
class EmailOutboxes implements Outbox {
  readonly name: string;

  constructor(
    readonly emails: DynamoOutbox,
    readonly parts: DynamoOutbox,
  ) {
    this.name = emails.name;
  }

  clear(pending: PendingEvents): Promise<void> {
    return ('part' in pending.ref ? this.parts : this.emails).clear(pending);
  }

  async due(before: number, limit: number): Promise<PendingEvents[]> {
    const [emails, parts] = await Promise.all([this.emails.due(before, limit), this.parts.due(before, limit)]);
    return [...emails, ...parts];
  }
}

export class DynamoEmailRepository implements EmailRepository {
  readonly outbox: EmailOutboxes;
  readonly bodies: EmailBodyStore;
  private readonly retentionSeconds: number;
  private readonly now: () => number;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tables: EmailTables,
    options: EmailStorageOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.retentionSeconds = options.retentionSeconds ?? DEFAULT_EMAIL_RETENTION_SECONDS;
    this.bodies = options.bodies ?? new DynamoEmailBodyStore(doc, tables.emailParts, this.now);
    this.outbox = new EmailOutboxes(
      new DynamoOutbox(doc, tables.emails, ['id']),
      new DynamoOutbox(doc, tables.emailParts, ['emailId', 'part']),
    );
  }

  /**
   * Parts first (body, links), then the email items that make them sendable: a crash in between leaves parts
   * without an email, which expire; never an email without its body.
   */
  async createMany(
    emails: readonly EmailRecord[],
    events: readonly SendflowEvent[] = [],
    options: { readonly queued?: boolean } = {},
  ): Promise<PendingEvents[]> {
    if (emails.length === 0) return [];
    const now = this.now();
    const expiries = new Map(emails.map((email) => [email.id, expiryOf(email, now, this.retentionSeconds)]));
    const expiry = (email: EmailRecord) => expiries.get(email.id) as number;
    const eventsOf = (email: EmailRecord) => events.filter((event) => event.emailId === email.id);
    await this.bodies.putMany(
      emails.map((email) => ({
        emailId: email.id,
        body: {
          ...(email.html !== undefined ? { html: email.html } : {}),
          ...(email.text !== undefined ? { text: email.text } : {}),
          headers: email.headers,
          ...(email.attachments?.length ? { attachments: email.attachments } : {}),
        },
        expiresAt: expiry(email),
      })),
    );
    const items = emails.map((email) => withLinksIfSmall(toItem(email, expiry(email), options.queued === true), email));
    await batchPutAll(
      this.doc,
      this.tables.emailParts,
      emails
        .filter((_, i) => items[i]?.unsubscribeUrls === undefined)
        .map((email) => ({
          emailId: email.id,
          part: LINKS_PART,
          unsubscribeUrls: email.unsubscribeUrls,
          expiresAt: expiry(email),
        })),
    );
    const stored = emails.map((email, i) => ({ ...items[i], ...outboxAttributes(eventsOf(email)) }));
    if (!options.queued) await batchPutAll(this.doc, this.tables.emails, stored);
    else {
      // Its message went out first: a store that comes after the send worker gave up on it (abandon) fails,
      // instead of leaving an email that nothing sends. A put retried after its answer was lost meets its own
      // item: that is the store done, not a refusal (answering 5xx for it would have the client send it again).
      for (const Item of stored) {
        const written = await unlessConditionFails(
          this.doc.send(
            new PutCommand({ TableName: this.tables.emails, Item, ConditionExpression: 'attribute_not_exists(id)' }),
          ),
        );
        if (written === null && !(await this.isStored(Item))) {
          throw new Error(`Email ${String(Item.id)} was abandoned by the send worker before it was stored`);
        }
      }
    }
    return emails.map((email) => this.outbox.emails.pending({ id: email.id }, eventsOf(email)));
  }

  /** Whether the item with this one's id is this email (not an abandoned id's marker), read strongly consistent. */
  private async isStored(item: Record<string, unknown>): Promise<boolean> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tables.emails, Key: { id: item.id }, ConsistentRead: true }),
    );
    return Item !== undefined && !notAnEmail(Item) && Item.createdAt === item.createdAt;
  }

  async abandon(id: string): Promise<boolean> {
    const written = await unlessConditionFails(
      this.doc.send(
        new PutCommand({
          TableName: this.tables.emails,
          // Kept as long as an email would be: a store of this id can come no later.
          Item: { id, kind: ABANDONED_KIND, expiresAt: Math.floor(this.now() / 1000) + this.retentionSeconds },
          ConditionExpression: 'attribute_not_exists(id)',
        }),
      ),
    );
    return written !== null;
  }

  async get(id: string, options: { metadataOnly?: boolean; consistent?: boolean } = {}): Promise<EmailRecord | null> {
    const { Item } = await this.doc.send(
      new GetCommand({
        TableName: this.tables.emails,
        Key: { id },
        ...(options.consistent ? { ConsistentRead: true } : {}),
      }),
    );
    if (!options.metadataOnly) return this.whole(Item);
    if (!Item || notAnEmail(Item) || expired(Item, this.now())) return null;
    const {
      html: _html,
      text: _text,
      headers: _headers,
      unsubscribeUrls: _links,
      recipientStates: _states,
      ...meta
    } = Item;
    return assemble(meta, { states: {} }, { headers: {} });
  }

  /** A stored email item (not a batch's, not expired) with its parts and body; null otherwise. */
  private async whole(item: Record<string, unknown> | undefined): Promise<EmailRecord | null> {
    if (!item || notAnEmail(item) || expired(item, this.now())) return null;
    const id = String(item.id);
    const legacy = item.headers !== undefined;
    const [parts, body] = await Promise.all([this.partsOf(id, true), legacy ? null : this.bodies.get(id)]);
    return assemble(item, parts, legacy ? null : (body ?? { headers: {} }));
  }

  /** The email's links and recipient states (never its body: the Query starts past it). */
  private async partsOf(id: string, consistent: boolean): Promise<Parts> {
    const items = await queryAll(this.doc, {
      TableName: this.tables.emailParts,
      KeyConditionExpression: 'emailId = :id AND part >= :links',
      ExpressionAttributeValues: { ':id': id, ':links': LINKS_PART },
      ConsistentRead: consistent,
    });
    return partsFrom(items, this.now());
  }

  async recipientStates(id: string): Promise<Readonly<Record<string, RecipientState>> | null> {
    const { Item } = await this.doc.send(
      new GetCommand({
        TableName: this.tables.emails,
        Key: { id },
        ProjectionExpression: 'id, kind, expiresAt, recipientStates',
        ConsistentRead: true,
      }),
    );
    if (!Item || notAnEmail(Item) || expired(Item, this.now())) return null;
    const legacy = z.record(z.string(), recipientState).optional().parse(Item.recipientStates) ?? {};
    return { ...legacy, ...(await this.partsOf(id, true)).states };
  }

  /**
   * byTenant newest first, its keys merged (TenantIndexWalk; keys only, no filter: every entry read is one of the
   * tenant's emails), only as many entries per key as the page still needs (a `to` filter: chunks of
   * FILTERED_CHUNK), at most `examine` in all; then those emails by key (BatchGetItem) without their bodies, and
   * their links and states.
   */
  async list(tenant: Tenant, query: EmailListQuery): Promise<EmailPage> {
    const examine = Math.max(1, query.examine ?? EMAIL_LIST_EXAMINE);
    const expected = query.to ? FILTERED_CHUNK : query.limit + 1;
    const walk = new TenantIndexWalk(
      this.doc,
      this.tables.emails,
      tenant,
      query.after,
      Math.min(expected, examine),
      query.from,
    );
    const items: EmailRecord[] = [];
    let examined = 0;
    let lastExamined: string | undefined;
    let more = true;
    while (more && items.length <= query.limit && examined < examine) {
      const need = query.to ? FILTERED_CHUNK : query.limit + 1 - items.length;
      const page = await walk.next(Math.min(need, examine - examined));
      more = page.more;
      examined += page.ids.length;
      lastExamined = page.ids.at(-1) ?? lastExamined;
      items.push(...(await this.listedByIds(tenant, page.ids, query.to, query.parts)));
    }
    if (items.length > query.limit) return { items: items.slice(0, query.limit), hasMore: true };
    if (more && lastExamined !== undefined) return { items, hasMore: true, resumeAfter: lastExamined };
    return { items, hasMore: false };
  }

  /**
   * The emails under these ids, in their order, without bodies; those of the tenant that match `to` only. `parts`
   * false: without their links and states too (no Query of emailParts per email).
   */
  async listedByIds(tenant: Tenant, ids: readonly string[], to?: string, parts?: false): Promise<EmailRecord[]> {
    if (ids.length === 0) return [];
    const rows = await batchGetAll(
      this.doc,
      this.tables.emails,
      ids.map((id) => ({ id })),
      LISTED_ATTRIBUTES,
    );
    const found = new Map(rows.map((item) => [item.id as string, item]));
    const now = this.now();
    const matching = ids.flatMap((id) => {
      const item = found.get(id);
      if (!item || notAnEmail(item) || expired(item, now)) return [];
      const email = assemble(item, { states: {} }, { headers: {} });
      // The index said so; the item must too (defence in depth), and match the filter.
      if (!sameTenant(email, tenant)) return [];
      if (to && !sentTo(email, to)) return [];
      return [item];
    });
    if (parts === false) return matching.map((item) => assemble(item, { states: {} }, { headers: {} }));
    // Links and states of the page's emails, in parallel (eventually consistent: a listing is a view).
    return Promise.all(
      matching.map(async (item) => assemble(item, await this.partsOf(String(item.id), false), { headers: {} })),
    );
  }

  async decideBatch(
    batchId: string,
    state: BatchState,
    events: readonly SendflowEvent[] = [],
  ): Promise<{ state: BatchState; pending: PendingEvents | null }> {
    const expiresAt = Math.floor(this.now() / 1000) + this.retentionSeconds;
    const decided = await conditionHeld(
      this.doc.send(
        new PutCommand({
          TableName: this.tables.emails,
          Item: { id: batchId, kind: BATCH_KIND, batchState: state, expiresAt, ...outboxAttributes(events) },
          ConditionExpression: 'attribute_not_exists(id)',
        }),
      ),
    );
    if (decided) return { state, pending: this.outbox.emails.pending({ id: batchId }, events) };
    return { state: (await this.batchState(batchId)) ?? state, pending: null };
  }

  async batchState(batchId: string): Promise<BatchState | null> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tables.emails, Key: { id: batchId }, ConsistentRead: true }),
    );
    return Item?.kind === BATCH_KIND ? (Item.batchState as BatchState) : null;
  }

  async startSending(
    id: string,
    at: string,
    options: { scheduled?: boolean; dueBy?: string } = {},
  ): Promise<SendingEmail | null> {
    if (options.scheduled === false) {
      // A read (1 RRU) instead of a write (1 WRU): only a scheduled email can be cancelled.
      const { Item } = await this.doc.send(
        new GetCommand({ TableName: this.tables.emails, Key: { id }, ConsistentRead: true }),
      );
      if (!Item || Item.canceledAt !== undefined) return null;
      const email = await this.whole(Item);
      return (
        email && { ...email, recipientStates: email.recipientStates ?? {}, indexed: Item.scheduleShard !== undefined }
      );
    }
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tables.emails,
          Key: { id },
          UpdateExpression: 'SET sentAt = if_not_exists(sentAt, :at)',
          ConditionExpression:
            'attribute_exists(scheduleShard) AND attribute_not_exists(canceledAt)' +
            // ISO times in one format (toISOString) order as strings do.
            (options.dueBy !== undefined ? ' AND scheduledAt <= :due' : ''),
          ExpressionAttributeValues: { ':at': at, ...(options.dueBy !== undefined ? { ':due': options.dueBy } : {}) },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    const email = written ? await this.whole(written.Attributes) : null;
    return email && { ...email, indexed: true };
  }

  async cancel(id: string, at: string): Promise<EmailRecord | null> {
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tables.emails,
          Key: { id },
          UpdateExpression: 'SET canceledAt = :at REMOVE scheduleShard, sendAt',
          ConditionExpression: 'attribute_exists(scheduleShard) AND attribute_not_exists(sentAt)',
          ExpressionAttributeValues: { ':at': at },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return written ? this.whole(written.Attributes) : null;
  }

  /**
   * One conditional UpdateItem: still waiting (in the schedule index), never started (no sentAt), and kept past
   * the new time (expiresAt, fixed at acceptance like its body's). sendAt moves with it, so the reconciler only
   * finds it overdue after the new time. Why a refused write was refused is read afterwards.
   */
  async reschedule(id: string, scheduledAt: string): Promise<RescheduleResult> {
    const due = Date.parse(scheduledAt);
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tables.emails,
          Key: { id },
          UpdateExpression: 'SET scheduledAt = :s, sendAt = :k',
          ConditionExpression:
            'attribute_exists(scheduleShard) AND attribute_exists(scheduledAt) AND attribute_not_exists(sentAt) ' +
            'AND attribute_not_exists(canceledAt) AND (attribute_not_exists(expiresAt) OR expiresAt >= :keep)',
          ExpressionAttributeValues: {
            ':s': scheduledAt,
            ':k': dueKey(due),
            ':keep': Math.ceil((due + RESCHEDULE_MARGIN_MS) / 1000),
          },
        }),
      ),
    );
    if (written) return { kind: 'rescheduled' };
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tables.emails, Key: { id }, ConsistentRead: true }),
    );
    const waiting =
      Item?.scheduleShard !== undefined && Item.scheduledAt !== undefined && !Item.sentAt && !Item.canceledAt;
    if (!waiting || typeof Item?.expiresAt !== 'number') return { kind: 'not_waiting' };
    return {
      kind: 'beyond_retention',
      latest: new Date(Item.expiresAt * 1000 - RESCHEDULE_MARGIN_MS).toISOString(),
    };
  }

  /**
   * One conditional UpdateItem of the recipient's own small item (made by its first claim), its events in that
   * item's outbox: a few hundred bytes written, whatever the email's size. The send worker starts the email
   * (startSending) before it claims anyone, and a started email cannot be cancelled.
   */
  async setRecipient(
    id: string,
    index: number,
    expect: RecipientExpectation,
    to: RecipientState,
    events: readonly SendflowEvent[],
  ): Promise<PendingEvents | null> {
    const path = 'recipientState';
    const conditions: Record<RecipientExpectation['state'], string> = {
      pending: `attribute_not_exists(${path}) OR ${path}.#st = :pending`,
      claimed: `${path}.#st = :claimed AND ${path}.#tries = :tries`,
      lapsed: `${path}.#st = :claimed AND ${path}.#until < :now`,
      orphaned: `${path}.#st = :claimed AND ${path}.#epoch < :epoch`,
    };
    const values: Record<string, unknown> = {
      ':to': to,
      ':expiresAt': Math.floor(this.now() / 1000) + this.retentionSeconds,
    };
    if (expect.state === 'pending') values[':pending'] = 'pending';
    if (expect.state === 'claimed') Object.assign(values, { ':claimed': 'claimed', ':tries': expect.tries });
    if (expect.state === 'lapsed') Object.assign(values, { ':claimed': 'claimed', ':now': expect.now });
    if (expect.state === 'orphaned') Object.assign(values, { ':claimed': 'claimed', ':epoch': expect.epoch });
    const names: Record<string, string> = { '#st': 'state' };
    if (expect.state === 'claimed') names['#tries'] = 'tries';
    if (expect.state === 'lapsed') names['#until'] = 'until';
    if (expect.state === 'orphaned') names['#epoch'] = 'epoch';
    return this.outbox.parts.write(
      { emailId: id, part: recipientPart(index) },
      [{ set: [`${path} = :to`, 'expiresAt = if_not_exists(expiresAt, :expiresAt)'], names, values }],
      conditions[expect.state],
      events,
    );
  }

  async deferSend(id: string, untilMs: number): Promise<void> {
    await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tables.emails,
          Key: { id },
          UpdateExpression: 'SET scheduleShard = :shard, sendAt = :due',
          // Never a scheduled email not yet started: its entry stays at its time (the reconciler would queue it early).
          ConditionExpression:
            'attribute_exists(id) AND attribute_not_exists(canceledAt) AND attribute_not_exists(#kind) AND ' +
            '(attribute_not_exists(scheduledAt) OR attribute_exists(sentAt))',
          ExpressionAttributeNames: { '#kind': 'kind' },
          ExpressionAttributeValues: { ':shard': scheduleShardOf(id), ':due': dueKey(untilMs) },
        }),
      ),
    );
  }

  async finishSending(id: string): Promise<void> {
    await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tables.emails,
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
            TableName: this.tables.emails,
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

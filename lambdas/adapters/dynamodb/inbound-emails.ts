// Received emails in DynamoDB: one item per (tenant, email), keyed by the time-ordered id so a Query reads a
// tenant's newest first; created once with email.received in its outbox (a replay's create fails its condition).
import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { ReceivedEmail, ReceivedEmailRepository, ReceivedPage, ReceivedPageQuery } from '../../app/inbound/ports';
import type { PendingEvents } from '../../app/outbox';
import type { Tenant } from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import type { SendflowEvent } from '../../domain/events';
import { DynamoOutbox, setFields, type UpdateParts } from './outbox';
import { tenantKey } from './tenant-table';

const KEY = ['tenant', 'id'];
/** The fields only partial and failed emails carry. */
const OPTIONAL = ['status', 'notes', 'omitted'] as const;
const verdict = z.enum(['pass', 'fail', 'gray', 'processing_failed']);
const count = z.number().int().min(0);
const item = z.object({
  id: z.string(),
  accountId: z.string(),
  mode: z.enum(MODES),
  createdAt: z.string(),
  from: z.string(),
  to: z.array(z.string()),
  cc: z.array(z.string()),
  bcc: z.array(z.string()),
  replyTo: z.array(z.string()),
  receivedFor: z.array(z.string()),
  subject: z.string(),
  messageId: z.string(),
  attachments: z.array(
    z.object({
      id: z.string(),
      filename: z.string().nullable(),
      contentType: z.string(),
      contentDisposition: z.enum(['inline', 'attachment']),
      contentId: z.string().nullable(),
      size: z.number().int().min(0),
      key: z.string(),
    }),
  ),
  verdicts: z.object({ spam: verdict, virus: verdict, spf: verdict, dkim: verdict, dmarc: verdict }).nullable(),
  rawKey: z.string(),
  rawSize: z.number().int().min(0),
  bodyKey: z.string(),
  sourceId: z.string(),
  expiresAt: z.number().int(),
  // Written since issue 28, only on partial and failed emails; absent reads as received (expand/contract: the
  // release before ignores them, this one reads items written before them).
  status: z.enum(['received', 'partial', 'failed']).optional(),
  notes: z
    .array(
      z.object({
        code: z.enum(['mime_limit', 'parse_timeout', 'parse_failed', 'fields_cut', 'headers_cut', 'storage_failed']),
        message: z.string(),
      }),
    )
    .optional(),
  omitted: z
    .object({
      to: count,
      cc: count,
      bcc: count,
      replyTo: count,
      receivedFor: count,
      attachments: count,
    })
    .partial()
    .optional(),
});

const parse = (stored: Record<string, unknown>): ReceivedEmail => {
  const { tenant: _tenant, outbox: _outbox, outboxShard: _shard, outboxDue: _due, ...rest } = stored;
  return item.parse(rest);
};

export class DynamoReceivedEmailRepository implements ReceivedEmailRepository {
  readonly outbox: DynamoOutbox;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {
    this.outbox = new DynamoOutbox(doc, tableName, KEY);
  }

  create(email: ReceivedEmail, events: readonly SendflowEvent[]): Promise<PendingEvents | null> {
    const key = { tenant: tenantKey(email), id: email.id };
    // Empty lists are fine in DynamoDB; a null verdicts is stored as NULL.
    if (email.status === 'failed') {
      return this.outbox.write(key, [setFields(email, KEY)], 'attribute_not_exists(id)', events);
    }
    // Over a failed email of the same arrival: its status, notes and omitted go unless this one has its own.
    const absent = OPTIONAL.filter((name) => email[name] === undefined);
    const replacing: UpdateParts = {
      remove: absent.map((_, i) => `#absent${i}`),
      names: { '#createStatus': 'status', ...Object.fromEntries(absent.map((name, i) => [`#absent${i}`, name])) },
      values: { ':failedStatus': 'failed' },
    };
    return this.outbox.write(
      key,
      [setFields(email, KEY), replacing],
      'attribute_not_exists(id) OR #createStatus = :failedStatus',
      events,
    );
  }

  async get(tenant: Tenant, id: string): Promise<ReceivedEmail | null> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { tenant: tenantKey(tenant), id } }),
    );
    if (!Item || !this.live(Item)) return null;
    return parse(Item);
  }

  async list(tenant: Tenant, query: ReceivedPageQuery): Promise<ReceivedPage> {
    // `before` reads upwards from the cursor (then the page is turned newest first); otherwise downwards.
    const upwards = query.before !== undefined && query.after === undefined;
    const cursor = upwards ? query.before : query.after;
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: cursor === undefined ? 'tenant = :t' : `tenant = :t AND id ${upwards ? '>' : '<'} :c`,
        // TTL deletes lazily: an expired email is skipped (they are the oldest, so at the end of the list).
        FilterExpression: 'expiresAt > :now',
        ExpressionAttributeValues: {
          ':t': tenantKey(tenant),
          ':now': Math.floor(this.now() / 1000),
          ...(cursor === undefined ? {} : { ':c': cursor }),
        },
        ScanIndexForward: upwards,
        Limit: query.limit + 1,
      }),
    );
    const items = (Items ?? []).map(parse);
    const page = items.slice(0, query.limit);
    return { emails: upwards ? page.reverse() : page, hasMore: items.length > query.limit };
  }

  private live(stored: Record<string, unknown>): boolean {
    return typeof stored.expiresAt === 'number' && stored.expiresAt > Math.floor(this.now() / 1000);
  }
}

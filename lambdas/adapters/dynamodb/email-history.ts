// Email histories in DynamoDB: one small item per event (emailId, eventId), written with a conditional put so a
// redelivered event is recorded once. An event whose id is made at its own time (SES's, the pipeline's) sorts by
// id exactly as by time, so it is read newest first from the table itself and written without `at`: one write
// unit, no index entry. Any other (an unsubscribe's id is made at the send, a simulated event's at its step, and
// every event written before this rule) carries `at` (time#eventId) and is read through the sparse byTime index;
// the two newest-first reads are merged. Beside them, one status item per email (eventId STATUS_ITEM, no `at`: out
// of byTime) holds the rank of the highest-ranked event noted and, when its status is an indexed one, `statusKey`
// (tenant#status#shard), the key of the sparse byStatus index (keys only) that GET /v1/emails?status= reads a
// bounded page of. Most emails only pass through scanned statuses (sent, delivered): they get no status item.
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { EmailEventEntry, EmailHistory, HistoryPage, NotedStatus, StatusPage } from '../../app/emails/ports';
import { EMAIL_HISTORY_LIMIT } from '../../app/emails/read-email';
import type { Tenant } from '../../app/webhooks/ports';
import { historyOrderKey, idOrdersByTime } from '../../domain/email/history';
import { isIndexedStatus, rankedStatus } from '../../domain/email/status';
import { expired } from './email-bodies';
import { DEFAULT_EMAIL_RETENTION_SECONDS } from './emails';
import { batchGetAll, unlessConditionFails } from './operations';
import { shardOf } from './shards';
import { tenantKey } from './tenant-table';

/** The status item's sort key: `#` sorts before every event id (evt_…). */
const STATUS_ITEM = '#status';
/**
 * byStatus key values per tenant and status: one tenant's 1,000 emails a second changing status spread over
 * them (each change writes two index entries: the old key's removal and the new one), each well under a
 * partition's 1,000 writes a second.
 */
export const STATUS_SHARDS = 8;
const statusKey = (tenant: Tenant, status: string, shard: number) => `${tenantKey(tenant)}#${status}#${shard}`;

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
            // Only where the id's order is not the time's: the index entry is a second write unit.
            ...(idOrdersByTime(entry) ? {} : { at: historyOrderKey(entry) }),
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

  async recorded(emailId: string, eventIds: readonly string[]): Promise<ReadonlySet<string>> {
    if (eventIds.length === 0) return new Set();
    const keys = eventIds.map((eventId) => ({ emailId, eventId }));
    const items = await batchGetAll(this.doc, this.tableName, keys, ['eventId', 'type'], true);
    // Events only: the status item shares the partition (and has no type).
    return new Set(items.filter((item) => item.type !== undefined).map((item) => String(item.eventId)));
  }

  async latest(emailId: string, limit: number): Promise<HistoryPage> {
    // One more than asked from each: whether older events exist, without counting them. The newest `limit + 1`
    // of all are among the newest `limit + 1` of each kind.
    const want = limit + 1;
    const [byId, byTime] = await Promise.all([this.newestById(emailId, want), this.newestByTime(emailId, want)]);
    const keyed = [
      ...byId.map((item) => ({
        item,
        key: historyOrderKey({ id: String(item.eventId), timestamp: String(item.timestamp) }),
      })),
      ...byTime.map((item) => ({ item, key: String(item.at) })),
    ].sort((a, b) => (a.key < b.key ? 1 : a.key > b.key ? -1 : 0));
    const Items = keyed.slice(0, want).map(({ item }) => item);
    const now = this.now();
    const events = Items.slice(0, limit)
      .filter((item) => !expired(item, now))
      .map((item) => historyItem.parse(item))
      .map(({ eventId, ...rest }) => ({ id: eventId, ...rest }))
      .reverse();
    return { events, truncated: Items.length > limit };
  }

  /**
   * The newest `want` events without `at` (their id orders them by time), from the table, newest id first. Items
   * with `at` met on the way are skipped (byTime has them), so it pages on while they fill a page.
   */
  private async newestById(emailId: string, want: number): Promise<Record<string, unknown>[]> {
    const found: Record<string, unknown>[] = [];
    let cursor: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          // Past the status item (`#status` sorts before every event id).
          KeyConditionExpression: 'emailId = :id AND eventId > :status',
          ExpressionAttributeValues: { ':id': emailId, ':status': STATUS_ITEM },
          ScanIndexForward: false,
          Limit: want,
          ExclusiveStartKey: cursor,
        }),
      );
      for (const item of page.Items ?? []) if (item.at === undefined && found.length < want) found.push(item);
      cursor = page.LastEvaluatedKey;
    } while (cursor && found.length < want);
    return found;
  }

  /** The newest `want` events with `at`, from the sparse byTime index. */
  private async newestByTime(emailId: string, want: number): Promise<Record<string, unknown>[]> {
    const { Items = [] } = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: 'byTime',
        KeyConditionExpression: 'emailId = :id',
        ExpressionAttributeValues: { ':id': emailId },
        ScanIndexForward: false,
        Limit: want,
      }),
    );
    return Items;
  }

  async noteStatus(tenant: Tenant, emailId: string, noted: NotedStatus): Promise<void> {
    // Many events do not raise the email's status (each recipient's `delivered` after the first, redeliveries):
    // a read of the rank (half a read unit) spares their write, which DynamoDB bills (1 unit) even when its
    // condition fails. The write stays conditional: a read that lags only lets a write through to its condition.
    const { Item } = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { emailId, eventId: STATUS_ITEM },
        ProjectionExpression: '#rank, statusKey',
        ExpressionAttributeNames: { '#rank': 'rank' },
      }),
    );
    if (typeof Item?.rank === 'number' && Item.rank >= noted.rank) return;
    const indexed = isIndexedStatus(noted.status);
    // A scanned status needs no entry: written only to take the email out of the index.
    if (!indexed && Item?.statusKey === undefined) return;
    const rank = 'SET #rank = :r, expiresAt = :exp';
    await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { emailId, eventId: STATUS_ITEM },
          // Expires with the email's other items (each note renews it, as each event's row is newer).
          UpdateExpression: indexed ? `${rank}, statusKey = :k` : `${rank} REMOVE statusKey`,
          ConditionExpression: 'attribute_not_exists(#rank) OR #rank < :r',
          ExpressionAttributeNames: { '#rank': 'rank' },
          ExpressionAttributeValues: {
            ...(indexed ? { ':k': statusKey(tenant, noted.status, shardOf(emailId, STATUS_SHARDS)) } : {}),
            ':r': noted.rank,
            ':exp': Math.floor(this.now() / 1000) + this.retentionSeconds,
          },
        }),
      ),
    );
  }

  async idsByStatus(tenant: Tenant, status: string, page: { limit: number; after?: string }): Promise<StatusPage> {
    // Entries noted before scanned statuses left the index (until they expire) are not listed.
    if (!isIndexedStatus(status)) return { ids: [], hasMore: false };
    // The newest `limit + 1` of each shard, merged: the newest `limit + 1` of all (ids are time-ordered).
    const perShard = await Promise.all(
      Array.from({ length: STATUS_SHARDS }, async (_, shard) => {
        const { Items = [] } = await this.doc.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: 'byStatus',
            KeyConditionExpression: page.after ? 'statusKey = :k AND emailId < :after' : 'statusKey = :k',
            ExpressionAttributeValues: {
              ':k': statusKey(tenant, status, shard),
              ...(page.after ? { ':after': page.after } : {}),
            },
            ScanIndexForward: false,
            Limit: page.limit + 1,
          }),
        );
        return Items.map((item) => String(item.emailId));
      }),
    );
    const ids = [...new Set(perShard.flat())].sort().reverse();
    return { ids: ids.slice(0, page.limit), hasMore: ids.length > page.limit };
  }
}

/**
 * Notes the status of every email stored before the status index (its history's highest-ranked event, or its
 * cancel), so `GET /v1/emails?status=` finds it: one Scan of the emails (batch decision items have no account and
 * are left alone), then each one's newest events. Idempotent (a note never lowers a rank); the local runtime runs
 * it when it rebuilt the history table with the index, operators with `admin upgrade-emails`. Returns how many
 * emails it noted.
 */
export async function backfillEmailStatuses(
  doc: DynamoDBDocumentClient,
  emailsTable: string,
  eventsTable: string,
): Promise<number> {
  const history = new DynamoEmailHistory(doc, eventsTable);
  let noted = 0;
  let cursor: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new ScanCommand({
        TableName: emailsTable,
        FilterExpression: 'attribute_exists(accountId) AND attribute_exists(#mode)',
        ProjectionExpression: 'id, accountId, #mode, canceledAt',
        ExpressionAttributeNames: { '#mode': 'mode' },
        ExclusiveStartKey: cursor,
      }),
    );
    for (const item of page.Items ?? []) {
      const tenant = { accountId: String(item.accountId), mode: item.mode as Tenant['mode'] };
      const { events } = await history.latest(String(item.id), EMAIL_HISTORY_LIMIT);
      const best = rankedStatus(events, item.canceledAt as string | undefined);
      if (!best) continue;
      await history.noteStatus(tenant, String(item.id), best);
      noted += 1;
    }
    cursor = page.LastEvaluatedKey;
  } while (cursor);
  return noted;
}

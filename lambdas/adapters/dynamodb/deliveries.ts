// Deliveries in DynamoDB. Partition by webhook, sharded: a row lives in `webhookId#n` (n from its id, of
// DELIVERY_SHARDS), so one busy webhook spreads its writes over several partition keys; sort by the time-ordered
// delivery id: a listing merges the shards newest first (ShardMerge), and `after` cursors resume every shard at
// once. Rows written before the shards stay in the unsuffixed `webhookId` partition (with the webhook's recovery
// jobs) until they expire: reads include it, and a write that finds no row in its shard tries it (no migration).
// New rows go there too while the stored format `deliveryShards` is off (domain/stored-formats.ts: a stage that
// must stay able to roll back past the shards' reader); the payload is deflated only while `deliveryPayloadZ1` is on.
// Two sparse, small indexes, so that a first attempt that succeeds
// costs no index write: byDueShard holds pending retries only (the reconciler's due list),
// byStatusKey failed rows only (`?status=failed`, alone or with `?error_class=`). Succeeded rows, the bulk of a
// log, are in no index: their filter reads the partition, as does `?error_class=` alone or with another status
// (on the row's `latestErrorClass`). A filtered read examines at most DELIVERY_LIST_EXAMINE rows a request.
// Every state change is conditional on the claim.
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import {
  type Claim,
  type ClaimExpectation,
  DELIVERY_LIST_EXAMINE,
  type Delivery,
  type DeliveryKey,
  type DeliveryListQuery,
  type DeliveryPage,
  type DeliveryRepository,
  type DueDelivery,
  isDue,
} from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import { defaultStoredFormats, type StoredFormats } from '../../domain/stored-formats';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../domain/webhooks/delivery';
import { ERROR_CLASSES, isTransformationError } from '../../domain/webhooks/error-class';
import { FORMATS } from '../../domain/webhooks/format';
import { compactDelivery, expandDelivery } from './delivery-codec';
import { batchGetAll, conditionHeld, unlessConditionFails } from './operations';
import { ShardMerge } from './shard-merge';
import { dueKey, shardOf } from './shards';

/**
 * Partition keys per webhook: one webhook at 2,000 first attempts a second (2 writes of 1 unit each) puts
 * 250 WCU/s on each (8 would make 500, right at the target of half DynamoDB's 1,000 per key, with no margin
 * for a second's unevenness). A listing reads every shard (and the legacy partition): DELIVERY_SHARDS + 1
 * Queries, at least half a read unit each.
 */
export const DELIVERY_SHARDS = 16;
/** The stored partition key value of a delivery: its webhook and its shard. */
export const shardKeyOf = (webhookId: string, id: string) => `${webhookId}#${shardOf(id, DELIVERY_SHARDS)}`;
/** Every partition a webhook's deliveries may be in: its shards, then the unsuffixed one of rows written before. */
export const deliveryPartitionsOf = (webhookId: string) => [
  ...Array.from({ length: DELIVERY_SHARDS }, (_, n) => `${webhookId}#${n}`),
  webhookId,
];
/** The table keys a delivery may be under: its shard first, then the legacy partition. */
const keysOf = (webhookId: string, id: string) => [
  { webhookId: shardKeyOf(webhookId, id), id },
  { webhookId, id },
];
/** The webhook id of a stored partition key value (webhook ids never hold `#`). */
const webhookOf = (partition: unknown) => String(partition).split('#')[0] as string;

/** byDueShard key values: the reconciler reads each (no single key value takes every pending row). */
const DUE_SHARDS = 16;
/** A webhook's pending rows spread over this many consecutive shards, so one busy endpoint is not one key. */
const DUE_SPREAD = 4;
/** The single key value of rows written before the shards (docs/runbook.md, "Upgrading a stage across an index change"): read until they move. */
const LEGACY_DUE_SHARD = 'due';
const dueShard = (n: number) => `due#${n % DUE_SHARDS}`;
const ALL_DUE_SHARDS = [LEGACY_DUE_SHARD, ...Array.from({ length: DUE_SHARDS }, (_, n) => dueShard(n))];
const dueShardFor = (webhookId: string, id: string) =>
  dueShard(shardOf(webhookId, DUE_SHARDS) + shardOf(id, DUE_SPREAD));

/** A byDueShard entry: the keys and `attempts` (the index's projection). */
const dueEntry = z.object({
  id: z.string(),
  webhookId: z.string(),
  attempts: z.number().int(),
  dueAt: z.string().regex(/^\d{15}$/),
});
type DueEntry = z.infer<typeof dueEntry>;

const deliveryItem = z.object({
  id: z.string(),
  webhookId: z.string(),
  accountId: z.string(),
  mode: z.enum(MODES),
  eventId: z.string(),
  event: z.string(),
  format: z.enum(FORMATS),
  payload: z.string(),
  status: z.enum(DELIVERY_STATUSES as [DeliveryStatus, ...DeliveryStatus[]]),
  attempts: z.number().int(),
  maxAttempts: z.number().int(),
  attemptLog: z.array(
    z.object({
      at: z.number(),
      statusCode: z.number().nullable(),
      durationMs: z.number(),
      error: z.string().nullable(),
      // Absent on entries stored before classes and timings were recorded.
      errorClass: z.enum(ERROR_CLASSES).nullable().optional(),
      timings: z
        .object({
          dnsMs: z.number().nullable(),
          connectMs: z.number().nullable(),
          tlsMs: z.number().nullable(),
          ttfbMs: z.number().nullable(),
        })
        .optional(),
      // Absent on entries stored before they were recorded; the headers only on the latest attempt.
      kind: z.enum(['automatic', 'manual', 'test']).optional(),
      requestHeaders: z.record(z.string(), z.string()).optional(),
      responseHeaders: z.record(z.string(), z.string()).optional(),
      retryAfterSeconds: z.number().optional(),
      // AWS destinations' attempts only (after retryAfterSeconds in the stored entry: older releases drop them).
      awsErrorCode: z.string().optional(),
      awsRequestId: z.string().optional(),
    }),
  ),
  response: z.string(),
  nextAttemptAt: z.number().nullable(),
  deliveredAt: z.number().nullable(),
  createdAt: z.number(),
  claim: z
    .object({ attempt: z.number().int(), until: z.number(), epoch: z.number().optional(), by: z.string().optional() })
    .optional(),
  claimedAt: z.number().optional(),
  settledAt: z.number().optional(),
  retriedAt: z.number().optional(),
  deadLetters: z.number().int().optional(),
  expiresAt: z.number().optional(),
  emailId: z.string().optional(),
  sequence: z.number().int().optional(),
  waitingFor: z.number().int().optional(),
  // The event span's trace context (issue 32): only on rows of traced events; a release before it ignores it.
  trace: z.string().optional(),
});

const parse = (item: Record<string, unknown>): Delivery =>
  withStoredClasses(deliveryItem.parse({ ...expandDelivery(item), webhookId: webhookOf(item.webhookId) }));

/**
 * Classes a release before them cannot parse (its attempt entries take a closed list) are stored without the
 * class: their error text names it (TRANSFORMATION_ERROR_PREFIX), as for entries stored before classes were
 * recorded, and it is put back on read. The previous release reads such an entry as a `network_error`.
 */
const withoutNewClasses = (delivery: Delivery): Delivery =>
  delivery.attemptLog.some((entry) => entry.errorClass === 'transformation_error')
    ? {
        ...delivery,
        attemptLog: delivery.attemptLog.map(({ errorClass, ...entry }) =>
          errorClass === 'transformation_error'
            ? entry
            : { ...entry, ...(errorClass === undefined ? {} : { errorClass }) },
        ),
      }
    : delivery;
const withStoredClasses = (delivery: Delivery): Delivery =>
  delivery.attemptLog.some((entry) => entry.errorClass === undefined && isTransformationError(entry.error))
    ? {
        ...delivery,
        attemptLog: delivery.attemptLog.map((entry) =>
          entry.errorClass === undefined && isTransformationError(entry.error)
            ? { ...entry, errorClass: 'transformation_error' as const }
            : entry,
        ),
      }
    : delivery;

/**
 * The stored item: a pending retry (an attempt made, the next one due) carries its byDueShard keys, a failed
 * row its byStatusKey key. A first attempt in flight carries neither: its job stays in the queue until the
 * record (redelivered after the visibility timeout, and a dead-lettered job is recorded failed: DLQ consumer),
 * so a first attempt that succeeds is two table writes and no index write. A PutItem replaces the item, so a
 * row that changes status leaves the index it no longer belongs in. `latestErrorClass` (the latest attempt's
 * class, absent after a success or before any attempt) is what `?error_class=` filters on. The row itself is
 * stored compact (delivery-codec.ts).
 */
function toItem(delivery: Delivery, partition: string, formats: DeliveryFormats): Record<string, unknown> {
  const { webhookId, id, status, nextAttemptAt } = delivery;
  const latest = delivery.attemptLog.at(-1);
  const latestErrorClass = latest?.errorClass ?? null;
  return {
    ...compactDelivery(withoutNewClasses(delivery), { deflate: formats.deliveryPayloadZ1 }),
    webhookId: partition,
    ...(latestErrorClass !== null ? { latestErrorClass } : {}),
    ...(status === 'failed' ? { statusKey: `${webhookId}#failed` } : {}),
    ...(isDue(delivery) && nextAttemptAt !== null
      ? { dueShard: dueShardFor(webhookId, id), dueAt: dueKey(nextAttemptAt) }
      : {}),
  };
}

const expiryFilter = 'attribute_not_exists(expiresAt) OR expiresAt > :now';
const DELIVERY_ID_PREFIX = 'dlv_';

/** Rows a filtered read of a webhook's log evaluates per Query (about 650 bytes each: well under 1 MB). */
const FILTERED_PAGE = 500;
/** byStatusKey entries a failed read filtered on a class takes per Query (their rows: one BatchGetItem). */
const FILTERED_CHUNK = 100;

/** The reconciler's order: due time, then the table key (a total order, so pages never skip or repeat). */
function dueOrder(a: Pick<DueEntry, 'dueAt' | 'webhookId' | 'id'>, b: Pick<DueEntry, 'dueAt' | 'webhookId' | 'id'>) {
  for (const key of ['dueAt', 'webhookId', 'id'] as const) {
    if (a[key] !== b[key]) return a[key] < b[key] ? -1 : 1;
  }
  return 0;
}

/** The stored formats (domain/stored-formats.ts) this repository writes. */
export type DeliveryFormats = Pick<StoredFormats, 'deliveryShards' | 'deliveryPayloadZ1'>;

export class DynamoDeliveryRepository implements DeliveryRepository {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly formats: DeliveryFormats = defaultStoredFormats(),
  ) {}

  async createClaimed(delivery: Delivery): Promise<boolean> {
    // In its shard (deliveryShards on), or in the unsuffixed partition as the release before the shards wrote it.
    // A row of the same id in the other partition (a job received again across a change of layout) is not seen,
    // so that job may be attempted once more (at least once, as ever).
    const { webhookId, id } = delivery;
    const partition = this.formats.deliveryShards ? shardKeyOf(webhookId, id) : webhookId;
    return this.conditional(
      new PutCommand({
        TableName: this.tableName,
        Item: toItem(delivery, partition, this.formats),
        ConditionExpression: 'attribute_not_exists(id)',
      }),
    );
  }

  async claim(webhookId: string, id: string, expect: ClaimExpectation, claim: Claim): Promise<Delivery | null> {
    const statuses = Object.fromEntries(expect.statuses.map((status, i) => [`:s${i}`, status]));
    const since = expect.claimedBefore;
    // Single-flight manual retries: no attempt was in flight when the request arrived, nor claimed since.
    const notSince =
      since === undefined
        ? ''
        : ' AND (attribute_not_exists(claimedAt) OR claimedAt < :since)' +
          ' AND (attribute_not_exists(settledAt) OR settledAt < :since)';
    const retried = expect.retriedBefore;
    const notRetried = retried === undefined ? '' : ' AND (attribute_not_exists(retriedAt) OR retriedAt < :retried)';
    // The row's shard, then the legacy partition: a condition that fails on a missing item creates nothing.
    for (const Key of keysOf(webhookId, id)) {
      const written = await unlessConditionFails(
        this.doc.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key,
            UpdateExpression: `SET #claim = :claim, claimedAt = :now${retried === undefined ? '' : ', retriedAt = :now'}`,
            ConditionExpression: `attempts = :before AND #status IN (${Object.keys(statuses).join(', ')}) AND (attribute_not_exists(#claim) OR #claim.#until < :now OR #claim.#epoch < :epoch)${notSince}${notRetried}`,
            ExpressionAttributeNames: { '#claim': 'claim', '#status': 'status', '#until': 'until', '#epoch': 'epoch' },
            ExpressionAttributeValues: {
              ':claim': claim,
              ':before': expect.attemptsBefore,
              ':now': expect.nowMs,
              ':epoch': claim.epoch ?? 0,
              ...(since === undefined ? {} : { ':since': since }),
              ...(retried === undefined ? {} : { ':retried': retried }),
              ...statuses,
            },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      if (written?.Attributes) return parse(written.Attributes);
    }
    return null;
  }

  async record(delivery: Delivery, claimedAttempt: number): Promise<boolean> {
    for (const { webhookId } of keysOf(delivery.webhookId, delivery.id)) {
      const stored = await this.conditional(
        new PutCommand({
          TableName: this.tableName,
          Item: toItem(delivery, webhookId, this.formats),
          ConditionExpression: '#claim.#attempt = :n',
          ExpressionAttributeNames: { '#claim': 'claim', '#attempt': 'attempt' },
          ExpressionAttributeValues: { ':n': claimedAttempt },
        }),
      );
      if (stored) return true;
    }
    return false;
  }

  async get(webhookId: string, id: string, nowMs: number): Promise<Delivery | null> {
    // The partition also holds recovery jobs (`rec_`): only a delivery id names a delivery.
    if (!id.startsWith(DELIVERY_ID_PREFIX)) return null;
    for (const Key of keysOf(webhookId, id)) {
      const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key }));
      if (!Item) continue;
      const delivery = parse(Item);
      return live(delivery, nowMs) ? delivery : null;
    }
    return null;
  }

  async getMany(keys: readonly DeliveryKey[], nowMs: number): Promise<Delivery[]> {
    const wanted = keys.filter((key) => key.id.startsWith(DELIVERY_ID_PREFIX));
    if (wanted.length === 0) return [];
    const read = async (at: 0 | 1, of: readonly DeliveryKey[]) =>
      (
        await batchGetAll(
          this.doc,
          this.tableName,
          of.map(({ webhookId, id }) => keysOf(webhookId, id)[at] as Record<string, string>),
        )
      ).map(parse);
    const found = new Map((await read(0, wanted)).map((row) => [`${row.webhookId}#${row.id}`, row]));
    // Rows written before the shards: only those not found in their shard are looked for there.
    const missing = wanted.filter(({ webhookId, id }) => !found.has(`${webhookId}#${id}`));
    if (missing.length) for (const row of await read(1, missing)) found.set(`${row.webhookId}#${row.id}`, row);
    const seen = new Set<string>();
    const rows: Delivery[] = [];
    for (const { webhookId, id } of wanted) {
      const key = `${webhookId}#${id}`;
      const row = found.get(key);
      if (!row || seen.has(key) || !live(row, nowMs)) continue;
      seen.add(key);
      rows.push(row);
    }
    return rows;
  }

  async list(webhookId: string, query: DeliveryListQuery, nowMs: number): Promise<DeliveryPage> {
    const examine = Math.max(1, query.examine ?? DELIVERY_LIST_EXAMINE);
    if (query.status === 'failed') return this.listFailed(webhookId, { ...query, examine }, nowMs);
    // The whole log, or its rows of one status and/or one latest error class: the webhook's own partitions,
    // merged newest first and filtered here. Never an index shared with other webhooks: another tenant's backlog
    // must not slow this read. A filtered read takes large pages (a log of mostly failures is a few round trips,
    // not hundreds), and examines at most `examine` rows in all (in merged order): a rare match stops there.
    const { status, errorClass, from } = query;
    const types = query.eventTypes ? new Set(query.eventTypes) : undefined;
    if (isBelow(query.after, from)) return { items: [], hasMore: false };
    const filtered = status !== undefined || errorClass !== undefined || types !== undefined;
    const now = Math.floor(nowMs / 1000);
    const merge = new ShardMerge(this.doc, {
      queries: deliveryPartitionsOf(webhookId).map((partition) => ({
        TableName: this.tableName,
        // The legacy partition also holds the webhook's recovery jobs (adapters/dynamodb/recoveries): deliveries only.
        // A window's lower end is a key condition: rows older than it are never read.
        ...(from === undefined
          ? {
              KeyConditionExpression: 'webhookId = :p AND begins_with(id, :dlv)',
              ExpressionAttributeValues: { ':p': partition, ':dlv': DELIVERY_ID_PREFIX },
            }
          : {
              KeyConditionExpression: 'webhookId = :p AND id BETWEEN :from AND :to',
              ExpressionAttributeValues: { ':p': partition, ...idRange(from, query.after) },
            }),
        ScanIndexForward: false,
        ...(query.after ? { ExclusiveStartKey: { webhookId: partition, id: query.after } } : {}),
      })),
      sortKey: 'id',
      descending: true,
      expected: Math.min(filtered ? FILTERED_PAGE : query.limit + 1, examine),
      maxPage: FILTERED_PAGE,
    });
    const matches = (item: Record<string, unknown>) =>
      (item.expiresAt === undefined || Number(item.expiresAt) > now) &&
      (status === undefined || item.status === status) &&
      (errorClass === undefined || item.latestErrorClass === errorClass);
    const items: Delivery[] = [];
    let examined = 0;
    let last: string | undefined;
    while (items.length <= query.limit && examined < examine) {
      const item = await merge.next();
      if (!item) return { items, hasMore: false };
      examined += 1;
      last = String(item.id);
      if (!matches(item)) continue;
      // The event type is in the payload's head for most rows (delivery-codec): checked on the parsed row.
      const delivery = parse(item);
      if (types === undefined || types.has(delivery.event)) items.push(delivery);
    }
    if (items.length > query.limit) return { items: items.slice(0, query.limit), hasMore: true };
    // Stopped at the bound of rows examined: more only if a row is left past the last one examined.
    return last !== undefined && (await merge.hasMore())
      ? { items, hasMore: true, resumeAfter: last }
      : { items, hasMore: false };
  }

  /**
   * Failed rows, of one latest error class when asked: byStatusKey (keys and expiry: failed rows only, whatever
   * the rest of the log, every shard's in one index partition) page by page, at most `examine` entries in all,
   * each page's rows read with BatchGetItem and the class checked on them.
   */
  private async listFailed(
    webhookId: string,
    query: DeliveryListQuery & { examine: number },
    nowMs: number,
  ): Promise<DeliveryPage> {
    const partition = `${webhookId}#failed`;
    if (isBelow(query.after, query.from)) return { items: [], hasMore: false };
    const types = query.eventTypes ? new Set(query.eventTypes) : undefined;
    const range = query.from === undefined ? undefined : idRange(query.from, query.after);
    const base = {
      TableName: this.tableName,
      IndexName: 'byStatusKey',
      KeyConditionExpression: range ? 'statusKey = :p AND id BETWEEN :from AND :to' : 'statusKey = :p',
      ScanIndexForward: false,
    };
    const keyValues = { ':p': partition, ...range };
    // The index orders by id alone (ids are unique): the table key part of the start key only has to be a key.
    let cursor: Record<string, unknown> | undefined = query.after
      ? { webhookId: shardKeyOf(webhookId, query.after), id: query.after, statusKey: partition }
      : undefined;
    const items: Delivery[] = [];
    let examined = 0;
    do {
      const need = query.errorClass || types ? FILTERED_CHUNK : query.limit + 1 - items.length;
      const page = await this.doc.send(
        new QueryCommand({
          ...base,
          FilterExpression: expiryFilter,
          ExpressionAttributeValues: { ...keyValues, ':now': Math.floor(nowMs / 1000) },
          Limit: Math.min(need, query.examine - examined),
          ExclusiveStartKey: cursor,
        }),
      );
      examined += page.ScannedCount ?? page.Items?.length ?? 0;
      const rows = await this.rows(page.Items ?? [], 'failed', nowMs);
      items.push(
        ...rows.filter(
          (row) =>
            (!query.errorClass || row.attemptLog.at(-1)?.errorClass === query.errorClass) &&
            (!types || types.has(row.event)),
        ),
      );
      cursor = page.LastEvaluatedKey;
    } while (cursor && items.length <= query.limit && examined < query.examine);
    return this.pageOf(items, query.limit, cursor, { ...base, ExpressionAttributeValues: keyValues });
  }

  /**
   * A failed read's page: `limit` of `items` (one more says there is more). A read that stopped at its bound
   * of rows examined (`cursor` left) has more only if a row is left past the last one examined, which `query`
   * (the read's key condition, no filter) reads with Limit 1; the page then resumes after that row.
   */
  private async pageOf(
    items: Delivery[],
    limit: number,
    cursor: Record<string, unknown> | undefined,
    query: Omit<QueryCommandInput, 'Limit' | 'ExclusiveStartKey'>,
  ): Promise<DeliveryPage> {
    if (items.length > limit) return { items: items.slice(0, limit), hasMore: true };
    if (!cursor) return { items, hasMore: false };
    const probe = { ...query, ProjectionExpression: 'id', Limit: 1, ExclusiveStartKey: cursor };
    const left = await this.doc.send(new QueryCommand(probe));
    return (left.Items ?? []).length > 0
      ? { items, hasMore: true, resumeAfter: String(cursor.id) }
      : { items, hasMore: false };
  }

  async range(
    webhookId: string,
    query: { from: string; to: string; onlyFailed: boolean; limit: number; after?: string },
    nowMs: number,
  ): Promise<{ ids: string[]; next: string | null }> {
    // Failed rows from byStatusKey (a sparse index: a window of mostly succeeded rows is not read through);
    // every row from the webhook's partitions, merged oldest first. Keys and expiry only.
    const now = Math.floor(nowMs / 1000);
    const read = query.onlyFailed ? await this.failedRange(webhookId, query) : await this.wholeRange(webhookId, query);
    const ids = read.filter((item) => item.expiresAt === undefined || Number(item.expiresAt) > now).map((i) => i.id);
    return { ids, next: read.length === query.limit ? (read.at(-1)?.id ?? null) : null };
  }

  private async failedRange(
    webhookId: string,
    query: { from: string; to: string; limit: number; after?: string },
  ): Promise<{ id: string; expiresAt?: unknown }[]> {
    const partition = `${webhookId}#failed`;
    const page = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: 'byStatusKey',
        KeyConditionExpression: 'statusKey = :p AND id BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':p': partition, ':from': query.from, ':to': query.to },
        Limit: query.limit,
        ...(query.after
          ? {
              ExclusiveStartKey: {
                webhookId: shardKeyOf(webhookId, query.after),
                id: query.after,
                statusKey: partition,
              },
            }
          : {}),
      }),
    );
    return (page.Items ?? []).map((item) => ({ id: String(item.id), expiresAt: item.expiresAt }));
  }

  private async wholeRange(
    webhookId: string,
    query: { from: string; to: string; limit: number; after?: string },
  ): Promise<{ id: string; expiresAt?: unknown }[]> {
    const merge = new ShardMerge(this.doc, {
      queries: deliveryPartitionsOf(webhookId).map((partition) => ({
        TableName: this.tableName,
        KeyConditionExpression: 'webhookId = :p AND id BETWEEN :from AND :to',
        ProjectionExpression: 'id, expiresAt',
        ExpressionAttributeValues: { ':p': partition, ':from': query.from, ':to': query.to },
        ...(query.after ? { ExclusiveStartKey: { webhookId: partition, id: query.after } } : {}),
      })),
      sortKey: 'id',
      descending: false,
      expected: query.limit,
      maxPage: Math.max(1, query.limit),
    });
    const read: { id: string; expiresAt?: unknown }[] = [];
    while (read.length < query.limit) {
      const item = await merge.next();
      if (!item) break;
      read.push({ id: String(item.id), expiresAt: item.expiresAt });
    }
    return read;
  }

  /**
   * The rows under these index entries (their table keys: shard or legacy partition), in their order; a row
   * whose status changed since the index was read (an attempt recorded meanwhile), or that expired, is left out.
   */
  private async rows(entries: readonly Record<string, unknown>[], status: DeliveryStatus, nowMs: number) {
    if (entries.length === 0) return [];
    const keys = entries.map((entry) => ({ webhookId: entry.webhookId as string, id: entry.id as string }));
    const found = new Map(
      (await batchGetAll(this.doc, this.tableName, keys)).map((item) => [item.id as string, parse(item)]),
    );
    return keys
      .map((key) => found.get(key.id))
      .filter((row): row is Delivery => row !== undefined && row.status === status && live(row, nowMs));
  }

  async listDue(dueBefore: number, limit: number, after?: DueDelivery): Promise<DueDelivery[]> {
    const before = dueKey(Math.min(dueBefore, 1e15 - 1));
    const start = after ? { dueAt: dueKey(after.nextAttemptAt ?? 0), webhookId: after.webhookId, id: after.id } : null;
    const from = start?.dueAt ?? dueKey(0);
    if (from > before) return [];
    // Up to `limit` rows past `after` from every shard, merged in one order: the first `limit` of them are the
    // page (rows due at the same time as `after` may sit in any shard). The index orders rows of equal due time
    // in no particular order, so a shard is read until its `limit`-th row's due time is passed: a tie group is
    // never cut, and no row that sorts before the page's last one is left for a later page (which would skip it).
    const perShard = await Promise.all(
      ALL_DUE_SHARDS.map(async (shard) => {
        const rows: DueEntry[] = [];
        let lastRead = '';
        let cursor: Record<string, unknown> | undefined;
        do {
          const page = await this.doc.send(
            new QueryCommand({
              TableName: this.tableName,
              IndexName: 'byDueShard',
              KeyConditionExpression: 'dueShard = :d AND dueAt BETWEEN :from AND :before',
              ExpressionAttributeValues: { ':d': shard, ':from': from, ':before': before },
              Limit: limit,
              ExclusiveStartKey: cursor,
            }),
          );
          for (const item of page.Items ?? []) {
            // The entry's table key names the row's shard: the webhook is what the reconciler's job names.
            const row = dueEntry.parse({ ...item, webhookId: webhookOf(item.webhookId) });
            lastRead = row.dueAt;
            if (!start || dueOrder(row, start) > 0) rows.push(row);
          }
          cursor = page.LastEvaluatedKey;
        } while (cursor && (rows.length < limit || lastRead === rows[limit - 1]?.dueAt));
        return rows;
      }),
    );
    return perShard
      .flat()
      .sort(dueOrder)
      .slice(0, limit)
      .map(({ id, webhookId, attempts, dueAt }) => ({ id, webhookId, attempts, nextAttemptAt: Number(dueAt) }));
  }

  private async conditional(command: PutCommand): Promise<boolean> {
    return conditionHeld(this.doc.send(command));
  }
}

function live(delivery: Delivery, nowMs: number): boolean {
  return delivery.expiresAt === undefined || delivery.expiresAt > Math.floor(nowMs / 1000);
}

/** True when a cursor `after` leaves nothing at or above `from` (the window's lower end): the page is empty. */
function isBelow(after: string | undefined, from: string | undefined): boolean {
  return after !== undefined && from !== undefined && after <= from;
}

/**
 * A window's key range, newest first: from `from` up to `after` (an ExclusiveStartKey at the top of the range:
 * DynamoDB refuses one outside it), or every delivery id above `from` (`~` sorts after an id's characters).
 */
function idRange(from: string, after: string | undefined) {
  return { ':from': from, ':to': after ?? `${DELIVERY_ID_PREFIX}~` };
}

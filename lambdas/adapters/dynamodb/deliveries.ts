// Deliveries in DynamoDB. Partition by webhook, sort by the time-ordered delivery id: newest-first listing
// and `after` cursors fall out of the key. Two sparse, small indexes, so that a first attempt that succeeds
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
} from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../domain/webhooks/delivery';
import { ERROR_CLASSES } from '../../domain/webhooks/error-class';
import { FORMATS } from '../../domain/webhooks/format';
import { batchGetAll, conditionHeld, unlessConditionFails } from './operations';
import { dueKey, shardOf } from './shards';

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
  expiresAt: z.number().optional(),
});

const parse = (item: Record<string, unknown>): Delivery => deliveryItem.parse(item);

/**
 * The stored item: a pending retry (an attempt made, the next one due) carries its byDueShard keys, a failed
 * row its byStatusKey key. A first attempt in flight carries neither: its job stays in the queue until the
 * record (redelivered after the visibility timeout, and a dead-lettered job is recorded failed: DLQ consumer),
 * so a first attempt that succeeds is two table writes and no index write. A PutItem replaces the item, so a
 * row that changes status leaves the index it no longer belongs in. `latestErrorClass` (the latest attempt's
 * class, absent after a success or before any attempt) is what `?error_class=` filters on.
 */
function toItem(delivery: Delivery): Record<string, unknown> {
  const { webhookId, id, status, nextAttemptAt } = delivery;
  const latest = delivery.attemptLog.at(-1);
  const latestErrorClass = latest?.errorClass ?? null;
  return {
    ...delivery,
    ...(latestErrorClass !== null ? { latestErrorClass } : {}),
    ...(status === 'failed' ? { statusKey: `${webhookId}#failed` } : {}),
    ...(status === 'pending' && delivery.attempts > 0 && nextAttemptAt !== null
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

export class DynamoDeliveryRepository implements DeliveryRepository {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async createClaimed(delivery: Delivery): Promise<boolean> {
    return this.conditional(
      new PutCommand({
        TableName: this.tableName,
        Item: toItem(delivery),
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
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { webhookId, id },
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
    if (written === null) return null;
    return written.Attributes ? parse(written.Attributes) : null;
  }

  async record(delivery: Delivery, claimedAttempt: number): Promise<boolean> {
    return this.conditional(
      new PutCommand({
        TableName: this.tableName,
        Item: toItem(delivery),
        ConditionExpression: '#claim.#attempt = :n',
        ExpressionAttributeNames: { '#claim': 'claim', '#attempt': 'attempt' },
        ExpressionAttributeValues: { ':n': claimedAttempt },
      }),
    );
  }

  async get(webhookId: string, id: string, nowMs: number): Promise<Delivery | null> {
    // The partition also holds recovery jobs (`rec_`): only a delivery id names a delivery.
    if (!id.startsWith(DELIVERY_ID_PREFIX)) return null;
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: { webhookId, id } }));
    if (!Item) return null;
    const delivery = parse(Item);
    return live(delivery, nowMs) ? delivery : null;
  }

  async getMany(keys: readonly DeliveryKey[], nowMs: number): Promise<Delivery[]> {
    const wanted = keys.filter((key) => key.id.startsWith(DELIVERY_ID_PREFIX));
    if (wanted.length === 0) return [];
    const items = await batchGetAll(
      this.doc,
      this.tableName,
      wanted.map(({ webhookId, id }) => ({ webhookId, id })),
    );
    const found = new Map(items.map((item) => [`${item.webhookId}#${item.id}`, parse(item)]));
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
    // The whole log, or its rows of one status and/or one latest error class: the webhook's own partition,
    // filtered. Never an index shared with other webhooks: another tenant's backlog must not slow this read.
    // DynamoDB applies Limit before the filter, so a filtered read takes large pages (a log of mostly failures is
    // a few round trips, not hundreds), and at most `examine` rows in all: a rare match stops there.
    const { status, errorClass } = query;
    const filters = [`(${expiryFilter})`];
    if (status) filters.push('#status = :s');
    if (errorClass) filters.push('latestErrorClass = :c');
    const filtered = filters.length > 1;
    const base = {
      TableName: this.tableName,
      // The partition also holds the webhook's recovery jobs (adapters/dynamodb/recoveries): deliveries only.
      KeyConditionExpression: 'webhookId = :p AND begins_with(id, :dlv)',
      ScanIndexForward: false,
    };
    const keyValues = { ':p': webhookId, ':dlv': DELIVERY_ID_PREFIX };
    let cursor: Record<string, unknown> | undefined = query.after ? { webhookId, id: query.after } : undefined;
    const items: Delivery[] = [];
    let examined = 0;
    do {
      const page = await this.doc.send(
        new QueryCommand({
          ...base,
          FilterExpression: filtered ? filters.join(' AND ') : expiryFilter,
          ...(status ? { ExpressionAttributeNames: { '#status': 'status' } } : {}),
          ExpressionAttributeValues: {
            ...keyValues,
            ':now': Math.floor(nowMs / 1000),
            ...(status ? { ':s': status } : {}),
            ...(errorClass ? { ':c': errorClass } : {}),
          },
          Limit: Math.min(filtered ? FILTERED_PAGE : query.limit + 1 - items.length, examine - examined),
          ExclusiveStartKey: cursor,
        }),
      );
      examined += page.ScannedCount ?? page.Items?.length ?? 0;
      for (const item of page.Items ?? []) items.push(parse(item));
      cursor = page.LastEvaluatedKey;
    } while (cursor && items.length <= query.limit && examined < examine);
    return this.pageOf(items, query.limit, cursor, { ...base, ExpressionAttributeValues: keyValues });
  }

  /**
   * Failed rows, of one latest error class when asked: byStatusKey (keys and expiry: failed rows only, whatever
   * the rest of the log) page by page, at most `examine` entries in all, each page's rows read with BatchGetItem
   * and the class checked on them.
   */
  private async listFailed(
    webhookId: string,
    query: DeliveryListQuery & { examine: number },
    nowMs: number,
  ): Promise<DeliveryPage> {
    const partition = `${webhookId}#failed`;
    const base = {
      TableName: this.tableName,
      IndexName: 'byStatusKey',
      KeyConditionExpression: 'statusKey = :p',
      ScanIndexForward: false,
    };
    let cursor: Record<string, unknown> | undefined = query.after
      ? { webhookId, id: query.after, statusKey: partition }
      : undefined;
    const items: Delivery[] = [];
    let examined = 0;
    do {
      const need = query.errorClass ? FILTERED_CHUNK : query.limit + 1 - items.length;
      const page = await this.doc.send(
        new QueryCommand({
          ...base,
          FilterExpression: expiryFilter,
          ExpressionAttributeValues: { ':p': partition, ':now': Math.floor(nowMs / 1000) },
          Limit: Math.min(need, query.examine - examined),
          ExclusiveStartKey: cursor,
        }),
      );
      examined += page.ScannedCount ?? page.Items?.length ?? 0;
      const rows = await this.rows(page.Items ?? [], 'failed', nowMs);
      items.push(...rows.filter((row) => !query.errorClass || row.attemptLog.at(-1)?.errorClass === query.errorClass));
      cursor = page.LastEvaluatedKey;
    } while (cursor && items.length <= query.limit && examined < query.examine);
    return this.pageOf(items, query.limit, cursor, { ...base, ExpressionAttributeValues: { ':p': partition } });
  }

  /**
   * A filtered read's page: `limit` of `items` (one more says there is more). A read that stopped at its bound
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
    // every row from the webhook's partition. Keys and expiry only.
    const partition = query.onlyFailed ? `${webhookId}#failed` : webhookId;
    const key = query.onlyFailed ? 'statusKey' : 'webhookId';
    const page = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        ...(query.onlyFailed ? { IndexName: 'byStatusKey' } : {}),
        KeyConditionExpression: `${key} = :p AND id BETWEEN :from AND :to`,
        FilterExpression: expiryFilter,
        ProjectionExpression: 'id',
        ExpressionAttributeValues: {
          ':p': partition,
          ':from': query.from,
          ':to': query.to,
          ':now': Math.floor(nowMs / 1000),
        },
        Limit: query.limit,
        ...(query.after
          ? { ExclusiveStartKey: { webhookId, id: query.after, ...(query.onlyFailed ? { statusKey: partition } : {}) } }
          : {}),
      }),
    );
    const last = page.LastEvaluatedKey?.id;
    return { ids: (page.Items ?? []).map((item) => String(item.id)), next: typeof last === 'string' ? last : null };
  }

  /**
   * The rows under these index entries, in their order; a row whose status changed since the index was read
   * (an attempt recorded meanwhile), or that expired, is left out.
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
            const row = dueEntry.parse(item);
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

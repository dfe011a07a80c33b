// The suppression list in DynamoDB: one item per (account and mode, address), under the partition key
// `account#mode#n`, n a hash of the address over 16 shards: every send reads each recipient's item, so one
// tenant's reads spread over 16 partition key values instead of heating one (docs/benchmarks.md, "Busiest
// partition keys"). Adding is a conditional Put, so the first reason wins and a repeat says "already there";
// checking a send is one BatchGetItem. A one-click unsubscribe is one conditional UpdateItem that suppresses,
// notes the email in `unsubscribedEmails` and records email.unsubscribed in the item's outbox, so the event is
// recorded once per email and address, with the change.
// Earlier versions stored every item under `account#mode`: until upgradeSuppressions has moved them and left its
// layout mark, a check also reads those keys (and the mark, in the same BatchGetItem), so no suppression is
// ever missed; a container that has seen the mark never reads them again.
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type {
  Suppression,
  SuppressionList,
  SuppressionPage,
  SuppressionQuery,
  SuppressionReason,
} from '../../app/emails/ports';
import type { PendingEvents } from '../../app/outbox';
import type { Tenant } from '../../app/webhooks/ports';
import type { SendflowEvent } from '../../domain/events';
import { batchGetAll, conditionHeld, unlessConditionFails } from './operations';
import { DynamoOutbox, recordEvents, setFields, TOMBSTONE, tombstone, updateExpression } from './outbox';
import { shardOf } from './shards';
import { tenantKey } from './tenant-table';

/** Partition key values per tenant; more costs nothing (a check reads by key), fewer heats each one more. */
export const SUPPRESSION_SHARDS = 16;

/** The partition key of a tenant's suppression of `address`. */
export const suppressionKey = (tenant: Tenant, address: string) =>
  `${tenantKey(tenant)}#${shardOf(address, SUPPRESSION_SHARDS)}`;

/** Written by upgradeSuppressions once no item is left under an earlier version's key (no tenant is `#layout`). */
export const SUPPRESSION_LAYOUT_MARK = { tenant: '#layout', address: `shards-${SUPPRESSION_SHARDS}` } as const;

/** An earlier version's partition key: `account#mode`, no shard. */
const isLegacyKey = (tenant: unknown) => typeof tenant === 'string' && /^[^#]+#[^#]+$/.test(tenant);

/**
 * A removed suppression whose suppression.removed is still to be relayed: its fields are gone (no `reason`) and
 * it is marked; reads skip it, and relaying deletes it (the outbox's tombstones).
 */
const isRemoved = (item: Record<string, unknown>) => item[TOMBSTONE] !== undefined || item.reason === undefined;

/** A suppression's fields, the parts REMOVEd from its tombstone. */
const SUPPRESSION_FIELDS = ['reason', 'createdAt', 'emailId', 'unsubscribedEmails'] as const;

/** Query pages one listing reads at most per partition before it answers with what it is sure of. */
const LIST_PAGES_PER_PARTITION = 5;

function suppressionOf(item: Record<string, unknown>): Suppression {
  return {
    address: item.address,
    reason: item.reason,
    createdAt: item.createdAt,
    ...(item.emailId ? { emailId: item.emailId } : {}),
  } as Suppression;
}

export class DynamoSuppressionList implements SuppressionList {
  readonly outbox: DynamoOutbox;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    // Tombstones: a removal with its suppression.removed leaves one, deleted once the event is relayed.
    this.outbox = new DynamoOutbox(doc, tableName, ['tenant', 'address'], { tombstones: true });
  }

  /** Whether this container has seen the layout mark: the mark is never removed, so this is never stale. */
  private upgraded = false;

  async unsubscribe(
    tenant: Tenant,
    suppression: Suppression & { readonly emailId: string },
    events: readonly SendflowEvent[],
  ): Promise<PendingEvents | null> {
    const Key = { tenant: suppressionKey(tenant, suppression.address), address: suppression.address };
    const first = {
      set: ['reason = if_not_exists(reason, :r)', 'createdAt = if_not_exists(createdAt, :c)'],
      // A removed suppression's tombstone (its fields gone) becomes this one.
      remove: [TOMBSTONE],
      add: ['unsubscribedEmails :emails'],
      values: {
        ':r': suppression.reason,
        ':c': suppression.createdAt,
        ':emails': new Set([suppression.emailId]),
        ':e': suppression.emailId,
      },
    };
    const written = await conditionHeld(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key,
          // The first reason (and the email that caused it) stays.
          ...updateExpression(first, { set: ['emailId = if_not_exists(emailId, :e)'] }, recordEvents(events)),
          ConditionExpression: 'NOT contains(unsubscribedEmails, :e)',
        }),
      ),
    );
    return written ? this.outbox.pending(Key, events) : null;
  }

  async add(tenant: Tenant, suppression: Suppression): Promise<boolean> {
    return (
      (await unlessConditionFails(
        this.doc.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { tenant: suppressionKey(tenant, suppression.address), ...suppression },
            // A removed one's tombstone (no reason) is replaced.
            ConditionExpression: 'attribute_not_exists(address) OR attribute_not_exists(reason)',
          }),
        ),
      )) !== null
    );
  }

  async record(
    tenant: Tenant,
    suppression: Suppression,
    events: readonly SendflowEvent[],
  ): Promise<PendingEvents | null> {
    // An UpdateItem, so the outbox of a tombstone it replaces (a suppression.removed not yet relayed) stays.
    const Key = { tenant: suppressionKey(tenant, suppression.address), address: suppression.address };
    return this.outbox.write(
      Key,
      [setFields(suppression, ['tenant', 'address'])],
      'attribute_not_exists(address) OR attribute_not_exists(reason)',
      events,
    );
  }

  async remove(tenant: Tenant, address: string, events: readonly SendflowEvent[]): Promise<PendingEvents | null> {
    const Key = { tenant: suppressionKey(tenant, address), address };
    const live = 'attribute_exists(reason) AND attribute_not_exists(#tombstone)';
    const names = { '#tombstone': TOMBSTONE };
    // An earlier version's copy (until upgradeSuppressions has moved it) goes too, unless it has events to relay.
    if (!this.upgraded) {
      await unlessConditionFails(
        this.doc.send(
          new DeleteCommand({
            TableName: this.tableName,
            Key: { tenant: tenantKey(tenant), address },
            ConditionExpression: 'attribute_not_exists(outbox)',
          }),
        ),
      );
    }
    if (events.length === 0) {
      const deleted = await unlessConditionFails(
        this.doc.send(
          new DeleteCommand({
            TableName: this.tableName,
            Key,
            // An item with events still to relay (an unsubscribe's) becomes a tombstone below instead.
            ConditionExpression: `${live} AND attribute_not_exists(outbox)`,
            ExpressionAttributeNames: names,
          }),
        ),
      );
      if (deleted !== null) return this.outbox.pending(Key, []);
    }
    return this.outbox.write(
      Key,
      [tombstone(new Date().toISOString()), { remove: [...SUPPRESSION_FIELDS], names }],
      live,
      events,
    );
  }

  async list(tenant: Tenant, query: SuppressionQuery): Promise<SuppressionPage> {
    const base = tenantKey(tenant);
    const partitions = [
      ...Array.from({ length: SUPPRESSION_SHARDS }, (_, n) => `${base}#${n}`),
      // An earlier version's key, until the upgrade's mark is seen (a shard's copy wins, as in find).
      ...(this.upgraded ? [] : [base]),
    ];
    const want = query.limit + 1;
    const reads = await Promise.all(partitions.map((partition) => this.readPartition(partition, query, want)));
    // A partition that may hold more bounds what is certain: every address up to the smallest such bound is known.
    const bounds = reads.flatMap((read) => (read.frontier === undefined ? [] : [read.frontier]));
    const bound = bounds.length ? bounds.reduce((a, b) => (a < b ? a : b)) : undefined;
    const byAddress = new Map<string, Suppression>();
    for (const read of [...reads].sort((a, b) => Number(b.legacy) - Number(a.legacy))) {
      for (const item of read.items) byAddress.set(item.address, item);
    }
    const known = [...byAddress.values()]
      .filter((item) => bound === undefined || item.address <= bound)
      .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
    const items = known.slice(0, query.limit);
    const hasMore = known.length > query.limit || bound !== undefined;
    const nextAfter = !hasMore ? null : known.length > query.limit ? (items.at(-1)?.address ?? null) : (bound ?? null);
    return { items, hasMore, nextAfter };
  }

  /**
   * Up to `want` live suppressions of one partition after `query.after`; `frontier` is set when the partition may
   * hold more beyond them: the last address read.
   */
  private async readPartition(
    partition: string,
    query: SuppressionQuery,
    want: number,
  ): Promise<{ items: Suppression[]; frontier?: string; legacy: boolean }> {
    const reasons = query.reasons ?? [];
    const items: Suppression[] = [];
    let cursor: Record<string, unknown> | undefined;
    let last: string | undefined;
    for (let page = 0; page < LIST_PAGES_PER_PARTITION; page += 1) {
      const { Items = [], LastEvaluatedKey } = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: query.after ? 'tenant = :t AND address > :after' : 'tenant = :t',
          FilterExpression: [
            'attribute_exists(reason) AND attribute_not_exists(#tombstone)',
            ...(reasons.length ? [`reason IN (${reasons.map((_, i) => `:r${i}`).join(', ')})`] : []),
          ].join(' AND '),
          ExpressionAttributeNames: { '#tombstone': TOMBSTONE },
          ExpressionAttributeValues: {
            ':t': partition,
            ...(query.after ? { ':after': query.after } : {}),
            ...Object.fromEntries(reasons.map((reason: SuppressionReason, i) => [`:r${i}`, reason])),
          },
          Limit: want - items.length,
          ...(cursor ? { ExclusiveStartKey: cursor } : {}),
        }),
      );
      items.push(...Items.filter((item) => !isRemoved(item)).map(suppressionOf));
      cursor = LastEvaluatedKey;
      last = typeof LastEvaluatedKey?.address === 'string' ? LastEvaluatedKey.address : last;
      if (!cursor || items.length >= want) break;
    }
    const legacy = isLegacyKey(partition);
    if (items.length >= want) return { items, frontier: items.at(-1)?.address as string, legacy };
    return cursor ? { items, frontier: last as string, legacy } : { items, legacy };
  }

  async find(tenant: Tenant, addresses: readonly string[]): Promise<Map<string, Suppression>> {
    const keys = addresses.map((address) => ({ tenant: suppressionKey(tenant, address), address }));
    const legacy = this.upgraded
      ? []
      : [...addresses.map((address) => ({ tenant: tenantKey(tenant), address })), SUPPRESSION_LAYOUT_MARK];
    const items = await batchGetAll(this.doc, this.tableName, [...keys, ...legacy]);
    if (items.some((item) => item.tenant === SUPPRESSION_LAYOUT_MARK.tenant)) this.upgraded = true;
    // An earlier version's copy first, so the shard's item (set after it) wins, as the upgrade keeps it (both
    // exist only mid-upgrade).
    const found = items
      .filter((item) => item.tenant !== SUPPRESSION_LAYOUT_MARK.tenant)
      .sort((a, b) => Number(isLegacyKey(b.tenant)) - Number(isLegacyKey(a.tenant)));
    // A removed one's tombstone (in its shard) hides an earlier version's copy too: the shard's item wins.
    const byAddress = new Map<string, Record<string, unknown>>();
    for (const item of found) byAddress.set(item.address as string, item);
    return new Map(
      [...byAddress.values()]
        .filter((item) => !isRemoved(item))
        .map((item) => [item.address as string, suppressionOf(item)]),
    );
  }
}

/**
 * Copies the suppressions earlier versions stored under `account#mode` to their shard (a conditional Put: an item
 * already there keeps its reason), writes the layout mark, after which sends stop reading the old keys, and only
 * then deletes the old items: until the mark, a send finds each suppression under its old key or its new one,
 * never neither. The Scan is consistent, so an item written just before it is copied. An old item with events
 * still to relay (`outbox`) is left for the relay, never deleted with them. Idempotent; the local runtime runs it
 * at start, operators with `admin upgrade-suppressions` after deploying. Returns how many items it copied.
 */
export async function upgradeSuppressions(doc: DynamoDBDocumentClient, tableName: string): Promise<number> {
  // Marked: nothing writes the old keys any more, so there is nothing to scan for.
  const mark = await doc.send(
    new GetCommand({ TableName: tableName, Key: SUPPRESSION_LAYOUT_MARK, ConsistentRead: true }),
  );
  if (mark.Item) return 0;
  const copied: { tenant: string; address: string }[] = [];
  let cursor: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new ScanCommand({ TableName: tableName, ExclusiveStartKey: cursor, ConsistentRead: true }),
    );
    for (const item of page.Items ?? []) {
      if (!isLegacyKey(item.tenant) || typeof item.address !== 'string') continue;
      const [accountId = '', mode] = String(item.tenant).split('#');
      const tenant = { accountId, mode: mode as Tenant['mode'] };
      await conditionHeld(
        doc.send(
          new PutCommand({
            TableName: tableName,
            Item: { ...item, tenant: suppressionKey(tenant, item.address) },
            ConditionExpression: 'attribute_not_exists(address)',
          }),
        ),
      );
      copied.push({ tenant: String(item.tenant), address: item.address });
    }
    cursor = page.LastEvaluatedKey;
  } while (cursor);
  await doc.send(new PutCommand({ TableName: tableName, Item: { ...SUPPRESSION_LAYOUT_MARK } }));
  for (const Key of copied) {
    await conditionHeld(
      doc.send(new DeleteCommand({ TableName: tableName, Key, ConditionExpression: 'attribute_not_exists(outbox)' })),
    );
  }
  return copied.length;
}

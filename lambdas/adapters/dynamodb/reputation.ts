// Sending reputation in DynamoDB (the `reputation` table, issue 29). Two kinds of item:
// - counters: pk `c#<account>#<mode>#<shard>`, sk `d#<day>#<domain>` (one sending domain's day), added to with
//   UpdateItem ADD (about 120 bytes: 1 WRU): a send worker's batch of copies sent of one domain and day in one
//   write (app/reputation/sent-tally), each bounce and complaint in one; spread over COUNTER_SHARDS by email or
//   event id. The tenant's own figures are the sum of its domains' (no second write). They expire
//   COUNTER_RETENTION_DAYS after their day. A judgment and the metrics route read a range of days: one Query per
//   shard.
// - standings: pk `s#<account>#<mode>`, sk `account` or `domain:<name>`: warned, paused, lifted, with the
//   account.reputation_warning events in the item's outbox until relayed. No TTL: a pause stays until lifted.
// Releases before this one never read the table (expand/contract: nothing of theirs changes).
import { type DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { PendingEvents } from '../../app/outbox';
import {
  type CountEntry,
  type NotedFigures,
  type ReputationStore,
  type Standing,
  type Subject,
  subjectKey,
  subjectOf,
  type TenantCounts,
} from '../../app/reputation/ports';
import type { Tenant } from '../../app/webhooks/ports';
import {
  addCounts,
  COUNT_FIELDS,
  COUNTER_RETENTION_DAYS,
  type Counts,
  dayStart,
  NO_COUNTS,
} from '../../domain/email/reputation';
import type { SendflowEvent } from '../../domain/events';
import { unlessConditionFails } from './operations';
import { DynamoOutbox, updateExpression } from './outbox';
import { shardOf } from './shards';

/**
 * Partition keys a tenant's counters are spread over, so one tenant's writes (a write per batch of sends, one per
 * bounce or complaint) keep every key far under its 1,000 WCU (docs/benchmarks.md, "Sending reputation counters (issue 29): before and after").
 * A judgment or a metrics read is one Query per shard (0.5 RCU each when small).
 */
export const COUNTER_SHARDS = 16;

const counterPk = (tenant: Tenant, shard: number) => `c#${tenant.accountId}#${tenant.mode}#${shard}`;
const standingPk = (tenant: Tenant) => `s#${tenant.accountId}#${tenant.mode}`;
/** One sending domain's day (`''`: an event with no sending domain, counted for the tenant only). */
const counterSk = (day: string, domain: string) => `d#${day}#${domain}`;

/** The standing's attributes, always through placeholders (DynamoDB reserves many plain words). */
const NAMES = { '#warnedAt': 'warnedAt', '#warning': 'warning', '#pausedAt': 'pausedAt', '#pause': 'pause' };

const count = z.number().int().min(0).catch(0);
const counterItem = z.object({
  sk: z.string(),
  ...Object.fromEntries(COUNT_FIELDS.map((field) => [field, count.optional()])),
});

const figures = z.object({
  sent: z.number(),
  bounced: z.number(),
  complained: z.number(),
  bounceRate: z.number().nullable(),
  complaintRate: z.number().nullable(),
  breaches: z.array(z.enum(['bounce_rate', 'complaint_rate'])),
});
const countsSchema = z.object(Object.fromEntries(COUNT_FIELDS.map((field) => [field, count.default(0)])));
const standingItem = z.object({
  sk: z.string(),
  warnedAt: z.string().optional(),
  warning: figures.optional(),
  pausedAt: z.string().optional(),
  pause: figures.optional(),
  liftedAt: z.string().optional(),
  liftNote: z.string().optional(),
  baseline: z.record(z.string(), countsSchema).optional(),
});

export class DynamoReputationStore implements ReputationStore {
  readonly outbox: DynamoOutbox;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.outbox = new DynamoOutbox(doc, tableName, ['pk', 'sk']);
  }

  async count(tenant: Tenant, entry: CountEntry): Promise<void> {
    const fields = COUNT_FIELDS.filter((field) => (entry.counts[field] ?? 0) > 0);
    if (fields.length === 0) return;
    const expiresAt = Math.floor(dayStart(entry.day) / 1000) + COUNTER_RETENTION_DAYS * 86_400;
    await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: {
          pk: counterPk(tenant, shardOf(entry.spread, COUNTER_SHARDS)),
          sk: counterSk(entry.day, entry.domain ?? ''),
        },
        UpdateExpression: `ADD ${fields.map((_, i) => `#f${i} :v${i}`).join(', ')} SET expiresAt = if_not_exists(expiresAt, :exp)`,
        ExpressionAttributeNames: Object.fromEntries(fields.map((field, i) => [`#f${i}`, field])),
        ExpressionAttributeValues: {
          ...Object.fromEntries(fields.map((field, i) => [`:v${i}`, entry.counts[field]])),
          ':exp': expiresAt,
        },
      }),
    );
  }

  async countsBetween(tenant: Tenant, from: string, to: string, maxItems: number): Promise<TenantCounts> {
    const items: Record<string, unknown>[] = [];
    await Promise.all(
      Array.from({ length: COUNTER_SHARDS }, async (_, shard) => {
        let cursor: Record<string, unknown> | undefined;
        do {
          const page = await this.doc.send(
            new QueryCommand({
              TableName: this.tableName,
              KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high',
              ExpressionAttributeValues: {
                ':pk': counterPk(tenant, shard),
                ':low': `d#${from}#`,
                ':high': `d#${to}#\uffff`,
              },
              ExclusiveStartKey: cursor,
            }),
          );
          items.push(...(page.Items ?? []));
          if (items.length > maxItems) {
            throw new RangeError(`more than ${maxItems} counters from ${from} to ${to}: narrow the range`);
          }
          cursor = page.LastEvaluatedKey;
        } while (cursor);
      }),
    );
    return gather(items);
  }

  async standings(tenant: Tenant): Promise<Standing[]> {
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': standingPk(tenant) },
      }),
    );
    return (Items ?? []).flatMap((item) => {
      const parsed = standingItem.safeParse(item);
      const subject = parsed.success ? subjectOf(parsed.data.sk) : null;
      if (!parsed.success || !subject) return [];
      const { sk: _sk, ...rest } = parsed.data;
      return [{ subject, ...rest } as Standing];
    });
  }

  async note(
    tenant: Tenant,
    subject: Subject,
    change: { at: string; warning?: NotedFigures; pause?: NotedFigures },
    events: readonly SendflowEvent[],
  ): Promise<PendingEvents | null> {
    const set: string[] = [];
    const conditions: string[] = [];
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':at': change.at };
    if (change.warning) {
      set.push('#warnedAt = :at', '#warning = :warning');
      conditions.push('attribute_not_exists(#warnedAt)');
      Object.assign(names, { '#warnedAt': 'warnedAt', '#warning': 'warning' });
      values[':warning'] = { ...change.warning, breaches: [...change.warning.breaches] };
    }
    if (change.pause) {
      set.push('#pausedAt = :at', '#pause = :pause');
      conditions.push('attribute_not_exists(#pausedAt)');
      Object.assign(names, { '#pausedAt': 'pausedAt', '#pause': 'pause' });
      values[':pause'] = { ...change.pause, breaches: [...change.pause.breaches] };
    }
    if (set.length === 0) return null;
    return this.outbox.write(this.key(tenant, subject), [{ set, values, names }], conditions.join(' AND '), events);
  }

  async clearWarning(tenant: Tenant, subject: Subject, warnedAt: string): Promise<void> {
    await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(tenant, subject),
          UpdateExpression: 'REMOVE #warnedAt, #warning',
          ConditionExpression: '#warnedAt = :seen AND attribute_not_exists(#pausedAt)',
          ExpressionAttributeNames: { '#warnedAt': 'warnedAt', '#warning': 'warning', '#pausedAt': 'pausedAt' },
          ExpressionAttributeValues: { ':seen': warnedAt },
        }),
      ),
    );
  }

  async lift(
    tenant: Tenant,
    subject: Subject,
    lift: { at: string; note: string; baseline: Readonly<Record<string, Counts>> },
  ): Promise<Standing | null> {
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(tenant, subject),
          ...updateExpression({
            set: ['#liftedAt = :at', '#liftNote = :note', '#baseline = :baseline'],
            remove: ['#pausedAt', '#pause', '#warnedAt', '#warning'],
            names: { ...NAMES, '#liftedAt': 'liftedAt', '#liftNote': 'liftNote', '#baseline': 'baseline' },
            values: { ':at': lift.at, ':note': lift.note, ':baseline': lift.baseline },
          }),
          ConditionExpression: 'attribute_exists(#pausedAt)',
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (!written?.Attributes) return null;
    const { sk: _sk, ...rest } = standingItem.parse(written.Attributes);
    return { subject, ...rest } as Standing;
  }

  private key(tenant: Tenant, subject: Subject) {
    return { pk: standingPk(tenant), sk: subjectKey(subject) };
  }
}

/** Sums the counter items read (every shard of a day adds up) into each domain's days and the tenant's (all of them). */
function gather(items: readonly Record<string, unknown>[]): TenantCounts {
  const account: Record<string, Counts> = {};
  const domains: Record<string, Record<string, Counts>> = {};
  for (const raw of items) {
    const parsed = counterItem.safeParse(raw);
    if (!parsed.success) continue;
    const [kind, day, ...rest] = parsed.data.sk.split('#');
    if (kind !== 'd' || !day) continue;
    const counts = Object.fromEntries(
      COUNT_FIELDS.map((field) => [field, (parsed.data as Record<string, unknown>)[field] ?? 0]),
    ) as Counts;
    account[day] = addCounts(account[day] ?? NO_COUNTS, counts);
    const domain = rest.join('#');
    if (!domain) continue;
    const daily = domains[domain] ?? {};
    daily[day] = addCounts(daily[day] ?? NO_COUNTS, counts);
    domains[domain] = daily;
  }
  return { account, domains };
}

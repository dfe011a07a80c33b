// Item 3's simulation: the partition keys a sampled run wrote and read (per table and index, with their units),
// scaled to a target rate, to find the busiest key's WCU/s and RCU/s. DynamoDB takes at most 1,000 WCU/s and
// 3,000 RCU/s per partition; the target is half of that.
import { API_REQUEST_SHARDS } from '../../lambdas/adapters/dynamodb/api-requests';
import { DELIVERY_SHARDS } from '../../lambdas/adapters/dynamodb/deliveries';
import { STATUS_SHARDS } from '../../lambdas/adapters/dynamodb/email-history';
import { SCHEDULE_SHARDS } from '../../lambdas/adapters/dynamodb/emails';
import { SUPPRESSION_SHARDS } from '../../lambdas/adapters/dynamodb/suppressions';
import { TENANT_SHARDS } from '../../lambdas/adapters/dynamodb/tenant-index';
import type { FunctionReads, KeyUnits } from './meter';

/** The delivery figures' shards (issue 31); none in a tree from before them (BENCH_BEFORE runs this file there). */
const FIGURE_SHARDS: number = await import('../../lambdas/adapters/dynamodb/delivery-figures').then(
  (m: { FIGURE_SHARDS?: number }) => m.FIGURE_SHARDS ?? 0,
  () => 0,
);

export const PARTITION_LIMITS = { wcu: 1000, rcu: 3000 } as const;

export interface HotKey {
  /** `table` or `table index`. */
  readonly where: string;
  readonly key: string;
  readonly wcu: number;
  readonly rcu: number;
  /** per-item: a key one email or delivery owns (its rate is its own units, assumed within one second). */
  readonly scope: 'shared' | 'per-item';
}

/**
 * Time-window suffixes (rate-limit windows, and their counter item's shard after them) name the same logical
 * key: one window per second, the same load.
 */
export function normalize(key: string): string {
  return key.replace(/#\d{9,}(#\d+)?$/, '#<window>$1');
}

/**
 * Tables an API request touches once whatever it carries (the rate-limit window and the quota counter, the
 * request log, Idempotency-Key records, the authorizer's key and account): their keys scale with the tenant's
 * requests, not its emails, and its plan bounds those (scale: 500 a second; /emails/batch takes 100 emails).
 */
export const PER_REQUEST_TABLES: ReadonlySet<string> = new Set([
  'rateLimits',
  'apiRequests',
  'idempotency',
  'apiKeys',
  'accounts',
]);

/** Reads a function keeps in memory: each of its containers reads an item at most once per `ttlSeconds`. */
export interface CachedReads {
  readonly fn: string;
  readonly table: string;
  /** The most containers of the function that run at once (its event sources' maximum concurrency). */
  readonly containers: number;
  readonly ttlSeconds: number;
}

const matches = (id: string, cached: CachedReads) => {
  const [fn, table] = id.split('|');
  return fn === cached.fn && table === cached.table;
};

/**
 * What cached reads cost a partition at most, whatever the rate: every container reading every item of it the
 * sample read, once per TTL, at the units a read of one took in the sample.
 */
export function cachedReadKeys(reads: ReadonlyMap<string, FunctionReads>, cached: CachedReads): HotKey[] {
  return [...reads]
    .filter(([id]) => matches(id, cached))
    .map(([id, r]) => {
      const [, table = '', index = '', ...rest] = id.split('|');
      const rcu = (r.rcu / r.keyReads) * r.items.size * (cached.containers / cached.ttlSeconds);
      return { where: index ? `${table} ${index}` : table, key: rest.join('|'), wcu: 0, rcu, scope: 'shared' as const };
    });
}

/** The sample's keys without the reads a function caches (cachedReadKeys prices those). */
export function withoutCachedReads(
  keys: ReadonlyMap<string, KeyUnits>,
  reads: ReadonlyMap<string, FunctionReads>,
  cached: CachedReads,
): Map<string, KeyUnits> {
  const out = new Map([...keys].map(([id, units]) => [id, { ...units }]));
  for (const [id, r] of reads) {
    if (!matches(id, cached)) continue;
    const key = out.get(id.split('|').slice(1).join('|'));
    if (key) key.rcu = Math.max(0, key.rcu - r.rcu);
  }
  return out;
}

/** One entry per table or index and key: the loads of several samples or models on one key added up. */
export function combine(keys: readonly HotKey[]): HotKey[] {
  const merged = new Map<string, HotKey>();
  for (const k of keys) {
    const id = `${k.where}|${k.key}`;
    const seen = merged.get(id);
    merged.set(id, seen ? { ...seen, wcu: seen.wcu + k.wcu, rcu: seen.rcu + k.rcu } : k);
  }
  return [...merged.values()];
}

/** A key one email owns (its item, its history): its load is its own, whatever the rate of emails. */
export function isItemKey(key: string): boolean {
  return /^(email|evt|batch)_[0-9a-z]+$/.test(key);
}

/**
 * The keys of one sample at `rate` units of work per second, given `items` units of work in the sample and the
 * share of the rate one tenant carries (1: one tenant sends it all). A key an email owns takes its own units,
 * counted as if all within one second (an upper bound: a send spreads them over its recipients' copies). Every
 * other key (a webhook, a tenant, a shard, a rate window) is shared by the items and scales with the rate: its
 * units per item in the sample, times the items per second the tenant sends. Global shard keys (due#n,
 * scheduled#n) are scaled the same way, so their figure is the load one tenant puts on them as the sample spread it.
 */
export function scaleKeys(
  keys: ReadonlyMap<string, KeyUnits>,
  items: number,
  rate: number,
  share: number,
  /** The tenant's API requests a second and the sample's, for PER_REQUEST_TABLES (absent: as the items). */
  requests?: { readonly rate: number; readonly inSample: number },
): HotKey[] {
  const merged = new Map<string, KeyUnits>();
  for (const [id, units] of spreadHashShards(keys)) {
    const [table = '', index = '', ...rest] = id.split('|');
    const id2 = `${index ? `${table} ${index}` : table}|${normalize(rest.join('|'))}`;
    const k = merged.get(id2) ?? { wcu: 0, rcu: 0 };
    k.wcu += units.wcu;
    k.rcu += units.rcu;
    merged.set(id2, k);
  }
  return [...merged].map(([id, units]) => {
    const [where = '', key = ''] = id.split('|');
    const perItem = isItemKey(key);
    const perRequest = requests && PER_REQUEST_TABLES.has(where.split(' ')[0] as string);
    const factor = perItem ? 1 : perRequest ? requests.rate / requests.inSample : (rate * share) / items;
    return { where, key, wcu: units.wcu * factor, rcu: units.rcu * factor, scope: perItem ? 'per-item' : 'shared' };
  });
}

/**
 * Keys sharded by a uniform hash of unique ids (a delivery's, an email's, a request's, an address): `base#n`, n in
 * [0, count). At thousands a second each shard takes its 1/count of the base's load; a sample of a few dozen
 * items falls unevenly over them, which is sampling noise, not the key choice. (byDueShard is not here: a
 * webhook's retries spread over a few consecutive shards only, so the sample's spread is kept.)
 */
const HASH_SHARDS: readonly { readonly key: RegExp; readonly count: number }[] = [
  { key: /^(deliveries\|\|wh_[0-9a-z]+)#(\d+)$/, count: DELIVERY_SHARDS },
  // The delivery figures' items (issue 31): a webhook's hour, spread by delivery and attempt over its shards.
  { key: /^(deliveries\|\|fig#wh_[0-9a-z]+)#(\d+)$/, count: FIGURE_SHARDS },
  { key: /^(emails\|byScheduleShard\|scheduled)#(\d+)$/, count: SCHEDULE_SHARDS },
  { key: /^(emails\|byTenant\|acct_[0-9a-z]+#(?:test|live))#(\d+)$/, count: TENANT_SHARDS },
  { key: /^(emailEvents\|byStatus\|acct_[0-9a-z]+#(?:test|live)#[a-z_]+)#(\d+)$/, count: STATUS_SHARDS },
  { key: /^(apiRequests\|\|acct_[0-9a-z]+#(?:test|live)(?:#[45]xx)?)#(\d+)$/, count: API_REQUEST_SHARDS },
  { key: /^(suppressions\|\|acct_[0-9a-z]+#(?:test|live))#(\d+)$/, count: SUPPRESSION_SHARDS },
];

/** Each hash-sharded key's base gets its sample total spread evenly over all its shards; other keys unchanged. */
function spreadHashShards(keys: ReadonlyMap<string, KeyUnits>): Map<string, KeyUnits> {
  const out = new Map<string, KeyUnits>();
  const totals = new Map<string, KeyUnits & { count: number }>();
  for (const [id, units] of keys) {
    const rule = HASH_SHARDS.find((r) => r.key.test(id));
    const base = rule && (rule.key.exec(id)?.[1] as string);
    if (!rule || !base) {
      out.set(id, units);
      continue;
    }
    const total = totals.get(base) ?? { wcu: 0, rcu: 0, count: rule.count };
    total.wcu += units.wcu;
    total.rcu += units.rcu;
    totals.set(base, total);
  }
  for (const [base, total] of totals) {
    for (let n = 0; n < total.count; n++) {
      out.set(`${base}#${n}`, { wcu: total.wcu / total.count, rcu: total.rcu / total.count });
    }
  }
  return out;
}

/** The busiest key by WCU/s and by RCU/s of each table or index. */
export function busiest(keys: readonly HotKey[]): { byWcu: HotKey[]; byRcu: HotKey[] } {
  const top = (metric: 'wcu' | 'rcu') => {
    const best = new Map<string, HotKey>();
    for (const k of keys) if (k[metric] > (best.get(k.where)?.[metric] ?? -1)) best.set(k.where, k);
    return [...best.values()].sort((a, b) => b[metric] - a[metric]);
  };
  return { byWcu: top('wcu'), byRcu: top('rcu') };
}

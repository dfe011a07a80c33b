// Item 3's simulation: the partition keys a sampled run wrote and read (per table and index, with their units),
// scaled to a target rate, to find the busiest key's WCU/s and RCU/s. DynamoDB takes at most 1,000 WCU/s and
// 3,000 RCU/s per partition; the target is half of that.
import { DELIVERY_SHARDS } from '../../lambdas/adapters/dynamodb/deliveries';
import type { KeyUnits } from './meter';

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

/** Time-window suffixes (rate-limit windows) name the same logical key: one window per second, the same load. */
export function normalize(key: string): string {
  return key.replace(/#\d{9,}$/, '#<window>');
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
export function scaleKeys(keys: ReadonlyMap<string, KeyUnits>, items: number, rate: number, share: number): HotKey[] {
  const merged = new Map<string, KeyUnits>();
  for (const [id, units] of spreadDeliveryShards(keys)) {
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
    const factor = perItem ? 1 : (rate * share) / items;
    return { where, key, wcu: units.wcu * factor, rcu: units.rcu * factor, scope: perItem ? 'per-item' : 'shared' };
  });
}

/** A deliveries table key of one webhook's shard (`wh_…#n`, adapters/dynamodb/deliveries). */
const DELIVERY_SHARD = /^(deliveries\|\|wh_[0-9a-z]+)#(\d+)$/;

/**
 * A webhook's delivery shards as they are at scale: n is a uniform hash of the delivery id (unique), so at
 * thousands a second each shard takes its 1/DELIVERY_SHARDS of the webhook's load; a sample of a few dozen
 * deliveries falls unevenly over them, which is sampling noise, not the key choice. Each shard gets the
 * webhook's total over DELIVERY_SHARDS; other keys are unchanged.
 */
function spreadDeliveryShards(keys: ReadonlyMap<string, KeyUnits>): Map<string, KeyUnits> {
  const out = new Map<string, KeyUnits>();
  const totals = new Map<string, KeyUnits>();
  for (const [id, units] of keys) {
    const base = DELIVERY_SHARD.exec(id)?.[1];
    if (!base) {
      out.set(id, units);
      continue;
    }
    const total = totals.get(base) ?? { wcu: 0, rcu: 0 };
    total.wcu += units.wcu;
    total.rcu += units.rcu;
    totals.set(base, total);
  }
  for (const [base, total] of totals) {
    for (let n = 0; n < DELIVERY_SHARDS; n++) {
      out.set(`${base}#${n}`, { wcu: total.wcu / DELIVERY_SHARDS, rcu: total.rcu / DELIVERY_SHARDS });
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

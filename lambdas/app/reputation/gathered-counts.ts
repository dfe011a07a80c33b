// The counts of one batch of events, written together: each event's count is held until every event of the
// batch has counted or finished without counting, then one ADD per (tenant, day, sending domain) carries them
// all. A send worker's chunk of ten copies (one email: one domain) costs one write for its ten email.sent instead
// of ten, and a busy tenant's batches of events likewise, which keeps its counter keys cool (bench:cost).
import type { Tenant } from '../webhooks/ports';
import type { CountEntry, ReputationStore } from './ports';

interface Held {
  readonly tenant: Tenant;
  readonly entry: CountEntry;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** One member per event of the batch: `count` resolves once its count is written; `done` when it counts no more. */
export interface CountMember {
  count(tenant: Tenant, entry: CountEntry): Promise<void>;
  done(): void;
}

export class GatheredCounts {
  private readonly held: Held[] = [];
  private waiting: number;
  private flushed = false;

  constructor(
    private readonly store: Pick<ReputationStore, 'count'>,
    members: number,
  ) {
    this.waiting = members;
    if (members === 0) this.flushed = true;
  }

  member(): CountMember {
    let arrived = false;
    const arrive = () => {
      if (arrived) return;
      arrived = true;
      this.waiting -= 1;
      if (this.waiting === 0) void this.flush();
    };
    return {
      count: (tenant, entry) => {
        // Late (after the flush, or a second count of the same member): written on its own.
        if (this.flushed || arrived) {
          arrive();
          return this.store.count(tenant, entry);
        }
        const written = new Promise<void>((resolve, reject) => this.held.push({ tenant, entry, resolve, reject }));
        arrive();
        return written;
      },
      done: arrive,
    };
  }

  private async flush(): Promise<void> {
    this.flushed = true;
    const groups = new Map<string, Held[]>();
    for (const h of this.held.splice(0)) {
      const key = JSON.stringify([h.tenant.accountId, h.tenant.mode, h.entry.day, h.entry.domain]);
      groups.set(key, [...(groups.get(key) ?? []), h]);
    }
    await Promise.all(
      [...groups.values()].map(async (group) => {
        const [first] = group as [Held, ...Held[]];
        const counts: Record<string, number> = {};
        for (const { entry } of group) {
          for (const [field, n] of Object.entries(entry.counts)) counts[field] = (counts[field] ?? 0) + (n ?? 0);
        }
        try {
          await this.store.count(first.tenant, { ...first.entry, counts });
          for (const h of group) h.resolve();
        } catch (error) {
          for (const h of group) h.reject(error);
        }
      }),
    );
  }
}

/** The store with its `count` going through a batch member; every other call goes to the store itself. */
export function countingThrough(store: ReputationStore, member: CountMember): ReputationStore {
  return {
    outbox: store.outbox,
    count: (tenant, entry) => member.count(tenant, entry),
    countsBetween: (tenant, from, to, maxItems) => store.countsBetween(tenant, from, to, maxItems),
    standings: (tenant) => store.standings(tenant),
    note: (tenant, subject, change, events) => store.note(tenant, subject, change, events),
    clearWarning: (tenant, subject, warnedAt) => store.clearWarning(tenant, subject, warnedAt),
    lift: (tenant, subject, lift) => store.lift(tenant, subject, lift),
  };
}

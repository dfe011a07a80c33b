// The failure streaks this process last wrote or saw, kept for a bounded time (KnownStreaks). The worker judges an
// attempt from its cached webhook (read up to SF_WEBHOOK_CACHE_SECONDS before, and once per batch): in a burst of
// failures to one dead endpoint every attempt of that window would see the same stale count and write again, up
// to thousands of writes on one item in a second. With the count it wrote itself in hand, this process stops
// writing once the streak has its minimum, however stale its copy of the webhook.
import type { KnownStreaks } from '../../app/webhooks/endpoint-watch';
import type { FailureStreak } from '../../domain/webhooks/auto-disable';

/** Entries kept before the stale ones are dropped (a container serves a bounded set of webhooks). */
const PRUNE_ABOVE = 1_000;

export class InProcessKnownStreaks implements KnownStreaks {
  private readonly entries = new Map<string, { at: number; streak: FailureStreak }>();

  /** `maxAgeMs`: how long a streak this process noted outranks the webhook item (a minute by default). */
  constructor(private readonly maxAgeMs = 60_000) {}

  get(key: string, nowMs: number): FailureStreak | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (nowMs - entry.at >= this.maxAgeMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.streak;
  }

  set(key: string, streak: FailureStreak, nowMs: number): void {
    if (this.entries.size >= PRUNE_ABOVE) {
      for (const [k, entry] of this.entries) if (nowMs - entry.at >= this.maxAgeMs) this.entries.delete(k);
    }
    this.entries.set(key, { at: nowMs, streak });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}

// The events a batch's filters kept from each webhook, counted in memory and written once per webhook at the end
// of the batch (FilteredCounts.add: one ADD per webhook and hour), so filtering costs no write per event.
import type { Clock } from '../ports';
import type { FilteredCounts } from './ports';

const HOUR_MS = 3_600_000;

export class FilteredTally {
  private readonly counts = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  /** One event kept from `webhookId` by its filter. */
  note(webhookId: string): void {
    this.counts.set(webhookId, (this.counts.get(webhookId) ?? 0) + 1);
  }

  /**
   * Writes what was noted to the hour of now and starts afresh. A figure, not a ledger: an event redelivered after
   * its batch failed is counted again, and a failed write loses its counts.
   */
  async flush(store: FilteredCounts): Promise<void> {
    if (this.counts.size === 0) return;
    const hour = Math.floor(this.clock.now() / HOUR_MS);
    const entries = [...this.counts].map(([webhookId, count]) => ({ webhookId, hour, count }));
    this.counts.clear();
    await store.add(entries);
  }
}

/** The hour (since the epoch) `ms` falls in. */
export const hourOf = (ms: number): number => Math.floor(ms / HOUR_MS);

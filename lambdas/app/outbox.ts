// The transactional outbox, application side. A state change and the events it causes are written by one
// conditional item write (the events into that item's outbox); the use case then relays them (publish, then
// clear exactly those), and the reconciler sweeps every outbox for what a crash or an error left behind.
// Relaying twice is harmless: event ids are fixed when recorded, and deliveries derive from (event, webhook).
import type { SendflowEvent } from '../domain/events';
import type { EventPublisher } from './webhooks/ports';

/** The item that holds recorded events: its key, opaque to use cases. */
export type OutboxRef = Readonly<Record<string, string>>;

/** Events recorded with an item's state change and not yet relayed. */
export interface PendingEvents {
  readonly ref: OutboxRef;
  readonly events: readonly SendflowEvent[];
}

/** A state change stored together with the events it causes. */
export interface Recorded<T> {
  readonly value: T;
  readonly pending: PendingEvents;
}

/** One table's outbox (every repository that records events has one). */
export interface Outbox {
  /** The table, for reports. */
  readonly name: string;
  /** Removes exactly these events from the item's outbox; events recorded meanwhile stay. Idempotent. */
  clear(pending: PendingEvents): Promise<void>;
  /** Items whose oldest unrelayed event was recorded at or before `before` (epoch ms), oldest first. */
  due(before: number, limit: number): Promise<PendingEvents[]>;
}

export interface RelayDeps {
  readonly events: EventPublisher;
}

/**
 * Publishes recorded events, then clears them from their item. Never throws: the state change is stored and
 * its events with it, so a failure here only delays them until the reconciler's sweep. True when relayed now.
 */
export async function relay(deps: RelayDeps, outbox: Outbox, pending: PendingEvents | null): Promise<boolean> {
  if (!pending || pending.events.length === 0) return true;
  try {
    await deps.events.publish(pending.events);
    await outbox.clear(pending);
    return true;
  } catch {
    return false;
  }
}

export interface SweepDeps extends RelayDeps {
  /** Every table's outbox. */
  readonly outboxes: readonly Outbox[];
}

/**
 * The reconciler's sweep: relays what has waited in any outbox since before `before` (a crash between the
 * write and the publish, a publish or clear that failed). One item's failure does not stop the others; they
 * are reported together at the end. Returns how many events were relayed.
 */
export async function sweepOutboxes(deps: SweepDeps, before: number, limit = 500): Promise<number> {
  let relayed = 0;
  const failures: unknown[] = [];
  for (const outbox of deps.outboxes) {
    for (const pending of await outbox.due(before, limit)) {
      try {
        if (pending.events.length) await deps.events.publish(pending.events);
        await outbox.clear(pending);
        relayed += pending.events.length;
      } catch (error) {
        failures.push(error);
      }
    }
  }
  if (failures.length) throw new AggregateError(failures, `${failures.length} outbox item(s) could not be relayed`);
  return relayed;
}

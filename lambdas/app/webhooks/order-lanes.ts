// The port of per-email ordering: one lane per (webhook, email), the unfinished deliveries of that email to that
// webhook with their sequences. Each change is one atomic write that answers with the whole lane, so two
// deliveries entering at once always see each other (the later one is held), and the one that finishes sees
// every one it may wake. A delivery enters before its job is queued (at the fan-out; a copy's email.sent before
// the provider is called), so an earlier event is always in the lane before a later one is looked at.
import type { LaneEntry } from '../../domain/webhooks/ordering';

/** A lane's key: one email's deliveries to one webhook. */
export interface LaneKey {
  readonly webhookId: string;
  readonly emailId: string;
}

export interface OrderLanes {
  /**
   * Puts the delivery in its lane (again: idempotent, the entry as given replaces the one there) and keeps the
   * lane until `expiresAt` (epoch seconds, TTL); returns every entry now in the lane, this one included.
   */
  enter(lane: LaneKey, entry: LaneEntry, expiresAt: number): Promise<LaneEntry[]>;
  /** Every entry of the lane (strongly consistent); empty when there is none. */
  read(lane: LaneKey): Promise<LaneEntry[]>;
  /** Takes the delivery out of its lane (nothing if it is not there); returns the entries left. */
  leave(lane: LaneKey, deliveryId: string): Promise<LaneEntry[]>;
}

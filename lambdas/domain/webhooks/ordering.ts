// Per-email ordering (ordering: "per_email"): pure rules over an email's lane for one webhook, the deliveries of
// that email to that webhook that have not finished yet, each with its event's sequence.

/** `none`: every delivery flows at once (the default); `per_email`: an email's events one after another. */
export const ORDERINGS = ['none', 'per_email'] as const;
export type Ordering = (typeof ORDERINGS)[number];

/** One unfinished delivery in a lane: its id and its event's sequence. */
export interface LaneEntry {
  readonly deliveryId: string;
  readonly sequence: number;
}

/**
 * How long a held delivery waits, past the moment the delivery it waits for can next finish (its next attempt),
 * before the reconciler looks at it again: the backstop for a release lost to a crash. A release normally comes
 * at once, from the delivery that finishes.
 */
export const HOLD_RECHECK_MS = 60_000;
/**
 * The most unfinished events of one email an ordered webhook holds in order. Opens and clicks are made by
 * recipients (a link scanner clicks every link), so an email's lane could otherwise grow without bound while its
 * endpoint is down: each admission reads the lane's open rows, and the lane is one item (400 KB at most). An event
 * past the limit is attempted at once, outside the lane; `sequence` still tells the receiver its order.
 */
export const LANE_LIMIT = 100;

/** The entries of the lane that must finish before `self` is attempted: those of an earlier sequence. */
export function earlierThan(lane: readonly LaneEntry[], self: LaneEntry): LaneEntry[] {
  return lane.filter((entry) => entry.deliveryId !== self.deliveryId && entry.sequence < self.sequence);
}

/**
 * Whom a delivery that has just finished (`done`) wakes: the entries left in the lane with the lowest sequence
 * after its own. Those of a lower sequence than `done`'s are still running and wake theirs when they finish; a
 * woken one that finds an earlier one still open is held again. Equal sequences (one step of several recipients)
 * are woken together: they happened together.
 */
export function toRelease(left: readonly LaneEntry[], done: LaneEntry): LaneEntry[] {
  const later = left.filter((entry) => entry.deliveryId !== done.deliveryId && entry.sequence > done.sequence);
  if (later.length === 0) return [];
  const next = Math.min(...later.map((entry) => entry.sequence));
  return later.filter((entry) => entry.sequence === next);
}

/** When a held delivery is looked at again if no release comes: after its blockers' next attempt, plus the margin. */
export function recheckAt(nowMs: number, blockersNextAttemptAt: readonly (number | null)[]): number {
  const latest = Math.max(nowMs, ...blockersNextAttemptAt.map((at) => at ?? nowMs));
  return latest + HOLD_RECHECK_MS;
}

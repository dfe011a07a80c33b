// Per-email ordering (ordering: "per_email"): pure rules over an email's lane for one webhook, the deliveries of
// that email to that webhook that have not finished yet, each with its event's sequence.

/** `none`: every delivery flows at once (the default); `per_email`: an email's events one after another. */
export const ORDERINGS = ['none', 'per_email'] as const;
export type Ordering = (typeof ORDERINGS)[number];

/** One unfinished delivery in a lane: its id and its event's sequence. */
export interface LaneEntry {
  readonly deliveryId: string;
  readonly sequence: number;
  /**
   * Until when (epoch ms) the delivery's row may still be created, for an entry put in the lane before its row
   * exists: at the fan-out (the row comes with its first attempt) or, for a copy's email.sent, before the provider
   * is called (the event exists only once the provider took the copy). Absent: entered with its row.
   */
  readonly rowBy?: number;
}

/**
 * How long a fanned-out delivery's row may take to appear: its first-attempt job waits in a queue, and no SQS
 * queue keeps a message longer than 14 days (a job that dead-letters gets its row from the DLQ's consumer).
 */
export const QUEUED_ROW_WITHIN_MS = 14 * 86_400_000;

/**
 * Whether an entry still holds its email's later events when its row is missing: only while that row may still
 * come. A row that never came by then (its copy was never taken, its job is gone) is not waited for.
 */
export function rowMayCome(entry: LaneEntry, nowMs: number): boolean {
  return entry.rowBy !== undefined && entry.rowBy > nowMs;
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

/**
 * When a held delivery is looked at again if no release comes: after its blockers' next attempt (null: not known,
 * a blocker whose first attempt is still queued), plus a margin that grows with how long it has been held
 * (`heldForMs`), so a long backlog ahead of it costs a few looks, not one a minute.
 */
export function recheckAt(nowMs: number, blockersNextAttemptAt: readonly (number | null)[], heldForMs = 0): number {
  const latest = Math.max(nowMs, ...blockersNextAttemptAt.map((at) => at ?? nowMs));
  return latest + Math.max(HOLD_RECHECK_MS, heldForMs);
}

// Recovery jobs (POST /v1/webhooks/:id/recoveries): after an outage, one new attempt for every delivery of a
// window, in the background, paced. Pure rules: the window, the pace, the job's progress.
import type { ErrorDetail } from '../errors';
import { invalidRequest, problem } from '../field-problems';
import { idTime } from '../ids';

export const RECOVERY_STATUSES = ['running', 'completed', 'canceled'] as const;
export type RecoveryStatus = (typeof RECOVERY_STATUSES)[number];

/** What one step did: attempts made (by their result) and deliveries left alone. */
export interface RecoveryCounts {
  readonly total: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly skipped: number;
}

export const NO_COUNTS: RecoveryCounts = { total: 0, succeeded: 0, failed: 0, skipped: 0 };

export function addCounts(a: RecoveryCounts, b: RecoveryCounts): RecoveryCounts {
  return {
    total: a.total + b.total,
    succeeded: a.succeeded + b.succeeded,
    failed: a.failed + b.failed,
    skipped: a.skipped + b.skipped,
  };
}

/**
 * The pace: a step takes the next `pageSize` deliveries of the window, attempts them at most `inFlight` at a
 * time, and the next step starts `stepDelaySeconds` after it ends. So a recovering endpoint sees at most 5
 * requests at once and at most 10 a second from one job. `pageSize` is the most: recoveryPageSize makes a step
 * of one round when two rounds of attempt time-outs would not fit in the delivery function's time.
 */
export const RECOVERY_PACE = { pageSize: 10, inFlight: 5, stepDelaySeconds: 1 } as const;

/** Deliveries a step takes: as many rounds of `inFlight` attempts (1 or 2) as fit in `budgetMs` at worst. */
export function recoveryPageSize(attemptTimeoutMs: number, budgetMs: number): number {
  const rounds = Math.floor(budgetMs / Math.max(1, attemptTimeoutMs));
  const most = RECOVERY_PACE.pageSize / RECOVERY_PACE.inFlight;
  return RECOVERY_PACE.inFlight * Math.max(1, Math.min(most, rounds));
}

/**
 * A running job not heard of for this long (no step ended: its steps keep failing, or its last one was lost)
 * no longer keeps another job from starting for its webhook; starting one cancels it.
 */
export const STALE_RECOVERY_MS = 15 * 60_000;

export interface RecoveryWindow {
  readonly since: number;
  readonly until: number;
}

/**
 * The window of a new job (epoch ms): `until` defaults to now; a window that starts in the future or ends
 * before it starts is refused (422), as is an `until` in the future (nothing can have failed there yet). A
 * `since` older than the log's retention starts at the retention's start: nothing older is kept.
 */
export function recoveryWindow(
  input: { since: string; until?: string },
  nowMs: number,
  retentionSeconds: number,
): RecoveryWindow {
  const since = Date.parse(input.since);
  const until = input.until === undefined ? nowMs : Date.parse(input.until);
  const problems: ErrorDetail[] = [];
  if (since > nowMs) problems.push(problem(['since'], 'is in the future: a window cannot start after now.'));
  if (until > nowMs) problems.push(problem(['until'], 'is in the future: nothing can have failed there yet.'));
  if (until < since) problems.push(problem(['until'], 'is before `since`: the window ends before it starts.'));
  if (problems.length) throw invalidRequest(problems);
  const oldest = nowMs - retentionSeconds * 1000;
  return { since: Math.max(since, oldest), until: Math.max(until, oldest) };
}

/**
 * The delivery ids of a window: ids begin with their event's time (domain/ids), so the window is one key range
 * of the webhook's log, from the first id of `since`'s millisecond to the last of `until`'s.
 */
export function deliveryIdRange(window: RecoveryWindow): { readonly from: string; readonly to: string } {
  return { from: `dlv_${idTime(window.since)}`, to: `dlv_${idTime(window.until)}~` };
}

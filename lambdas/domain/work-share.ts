// The work-share rule: one key's (an account's) heavy work takes at most `share` of the time, after a burst. A
// token bucket whose tokens are milliseconds of work: it refills at `share` ms per ms of time up to `burstMs`, each
// piece of work is charged the time it took once it ends (it may go into debt), and the next waits while the bucket
// is empty or in debt. So a caller who asks for little never waits, and one who asks in a loop is slowed to its
// share, however costly each piece is. Pure: the caller keeps the state, measures the work and does the waiting.

export interface ShareRule {
  /** The fraction of the time one key's work may take, in (0, 1]. */
  readonly share: number;
  /** Work (ms) a rested key may do before it waits. */
  readonly burstMs: number;
}

export interface ShareState {
  /** Work (ms) the key may still do when `at`; negative while it is in debt. */
  readonly credit: number;
  /** Epoch ms the credit was counted at. */
  readonly at: number;
}

export function shareRule(share: number, burstMs: number): ShareRule {
  if (!Number.isFinite(share) || share <= 0 || share > 1) throw new RangeError(`A share is in (0, 1], not ${share}`);
  if (!Number.isFinite(burstMs) || burstMs < 0) throw new RangeError(`A burst is at least 0 ms, not ${burstMs}`);
  return { share, burstMs };
}

/** A key with no work done yet: its whole burst. */
export function freshShare(rule: ShareRule, now: number): ShareState {
  return { credit: rule.burstMs, at: now };
}

/** The credit at `now`: refilled at `share` per ms since it was counted, never past the burst. */
export function creditAt(state: ShareState, rule: ShareRule, now: number): number {
  return Math.min(rule.burstMs, state.credit + Math.max(0, now - state.at) * rule.share);
}

/** How long (ms) the key's next work waits at `now`: none unless it is in debt, else until the debt is repaid. */
export function waitBefore(state: ShareState, rule: ShareRule, now: number): number {
  const credit = creditAt(state, rule, now);
  return credit >= 0 ? 0 : Math.ceil(-credit / rule.share);
}

/** The state after work of `workMs` that ended at `now`. */
export function charged(state: ShareState, rule: ShareRule, now: number, workMs: number): ShareState {
  return { credit: creditAt(state, rule, now) - Math.max(0, workMs), at: Math.max(now, state.at) };
}

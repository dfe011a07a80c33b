// The monthly email quota (spec §8, DESIGN §3): per calendar month in UTC; each email of a batch counts.

export interface QuotaWindow {
  /** `YYYY-MM`, part of the counter's key. */
  readonly month: string;
  /** Unix second the month ends (the next month's first second). */
  readonly resetsAt: number;
}

export function quotaWindow(nowMs: number): QuotaWindow {
  const now = new Date(nowMs);
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return { month: now.toISOString().slice(0, 7), resetsAt: next / 1000 };
}

/** Whole seconds until the quota resets, at least 1. */
export function secondsUntilReset(window: QuotaWindow, nowMs: number): number {
  return Math.max(1, Math.ceil(window.resetsAt - nowMs / 1000));
}

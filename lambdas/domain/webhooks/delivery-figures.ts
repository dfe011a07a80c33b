// Delivery figures: what each recorded attempt adds to its webhook's hourly aggregate (counts by outcome,
// failures by error class, a latency histogram), and how the hours of a window are read back (hourly rows,
// totals, p50/p95 estimated from the histogram). Pure: the store (adapters/dynamodb/delivery-figures.ts) keeps
// one small item per webhook, hour and shard, and every chart of the dashboard is drawn from these figures, never
// from a scan of the delivery log.
import type { DeliveryStatus } from './delivery';
import { ERROR_CLASSES, type ErrorClass } from './error-class';

/**
 * What an attempt came to: delivered, failed with a retry scheduled, or failed for good (no retry: the schedule
 * ran out, or a manual attempt or test send failed).
 */
export const FIGURE_OUTCOMES = ['succeeded', 'retrying', 'failed'] as const;
export type FigureOutcome = (typeof FIGURE_OUTCOMES)[number];

/**
 * Upper bounds (ms, included) of the latency buckets; one more bucket holds what took longer. About 1.5x apart, so
 * a percentile read from them is within a bucket's width (interpolated inside it).
 */
export const LATENCY_BOUNDS_MS = [25, 50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10_000] as const;
export const LATENCY_BUCKETS = LATENCY_BOUNDS_MS.length + 1;

/** How long an hour's figures are kept: the 7-day window and a day's margin (DynamoDB's TTL is lazy). */
export const FIGURE_RETENTION_SECONDS = 8 * 24 * 3600;

/** The windows the figures are read over. */
export const FIGURE_WINDOWS = { '24h': 24, '7d': 7 * 24 } as const;
export type FigureWindow = keyof typeof FIGURE_WINDOWS;

const HOUR_MS = 3_600_000;

/** One attempt as the figures count it. */
export interface AttemptFigure {
  readonly outcome: FigureOutcome;
  /** Why it failed; null when it succeeded. */
  readonly errorClass: ErrorClass | null;
  /** The latency bucket (index into LATENCY_BOUNDS_MS, or its length for longer); null when no request was made. */
  readonly bucket: number | null;
}

/** The figure of a recorded attempt: its outcome from the delivery's status after it, its class, its latency. */
export function figureOf(attempt: {
  readonly deliveryStatus: DeliveryStatus;
  readonly errorClass: ErrorClass | null;
  /** Whether a request went out (false for a paused or deleted webhook: no latency to count). */
  readonly requested: boolean;
  readonly durationMs: number;
}): AttemptFigure {
  const outcome: FigureOutcome =
    attempt.deliveryStatus === 'succeeded' ? 'succeeded' : attempt.deliveryStatus === 'pending' ? 'retrying' : 'failed';
  return {
    outcome,
    errorClass: outcome === 'succeeded' ? null : (attempt.errorClass ?? 'network_error'),
    bucket: attempt.requested ? bucketOf(attempt.durationMs) : null,
  };
}

export function bucketOf(durationMs: number): number {
  const i = LATENCY_BOUNDS_MS.findIndex((bound) => durationMs <= bound);
  return i === -1 ? LATENCY_BOUNDS_MS.length : i;
}

/** The hour an epoch-ms time falls in, as stored: `2026-12-07T21` (UTC). */
export function hourOf(ms: number): string {
  return new Date(Math.floor(ms / HOUR_MS) * HOUR_MS).toISOString().slice(0, 13);
}

/** When an hour's figures expire (epoch seconds): FIGURE_RETENTION_SECONDS after the hour ends. */
export function expiryOf(hour: string): number {
  return Math.floor(hourStart(hour) / 1000) + 3600 + FIGURE_RETENTION_SECONDS;
}

export const hourStart = (hour: string): number => Date.parse(`${hour}:00:00.000Z`);

/** The hours of a window ending with the current one, oldest first. */
export function hoursOf(window: FigureWindow, nowMs: number): string[] {
  const hours = FIGURE_WINDOWS[window];
  const current = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
  return Array.from({ length: hours }, (_, i) => hourOf(current - (hours - 1 - i) * HOUR_MS));
}

/** One hour's figures (of one webhook, or added over several). */
export interface HourFigures {
  readonly hour: string;
  readonly succeeded: number;
  readonly retrying: number;
  readonly failed: number;
  /** Failed attempts (retrying or failed) by class; classes without one are absent. */
  readonly errors: Readonly<Partial<Record<ErrorClass, number>>>;
  /** Attempts that made a request, per latency bucket (LATENCY_BUCKETS entries). */
  readonly latency: readonly number[];
}

export const emptyHour = (hour: string): HourFigures => ({
  hour,
  succeeded: 0,
  retrying: 0,
  failed: 0,
  errors: {},
  latency: Array.from({ length: LATENCY_BUCKETS }, () => 0),
});

/** One attempt's figure as an hour's figures (what it adds to its hour). */
export function hourOfAttempt(hour: string, figure: AttemptFigure): HourFigures {
  const one = emptyHour(hour);
  return {
    ...one,
    [figure.outcome]: 1,
    errors: figure.errorClass ? { [figure.errorClass]: 1 } : {},
    latency: one.latency.map((_, i) => (i === figure.bucket ? 1 : 0)),
  };
}

/** Two sets of figures added (the hour is the first's). */
export function addFigures(a: HourFigures, b: HourFigures): HourFigures {
  const errors: Partial<Record<ErrorClass, number>> = { ...a.errors };
  for (const [name, n] of Object.entries(b.errors) as [ErrorClass, number][]) errors[name] = (errors[name] ?? 0) + n;
  return {
    hour: a.hour,
    succeeded: a.succeeded + b.succeeded,
    retrying: a.retrying + b.retrying,
    failed: a.failed + b.failed,
    errors,
    latency: a.latency.map((n, i) => n + (b.latency[i] ?? 0)),
  };
}

/** Every hour of `hours`, in order, with the figures of `rows` added into it (zeros where none were kept). */
export function alignHours(rows: readonly HourFigures[], hours: readonly string[]): HourFigures[] {
  const byHour = new Map(hours.map((hour) => [hour, emptyHour(hour)]));
  for (const row of rows) {
    const seen = byHour.get(row.hour);
    if (seen) byHour.set(row.hour, addFigures(seen, row));
  }
  return hours.map((hour) => byHour.get(hour) as HourFigures);
}

/** The figures of several hours added up (the window's totals). */
export function totalOf(rows: readonly HourFigures[], label = 'total'): HourFigures {
  return rows.reduce(addFigures, emptyHour(label));
}

export const attemptsOf = (f: HourFigures) => f.succeeded + f.retrying + f.failed;

/** Succeeded attempts over all attempts (0..1); null without any. */
export function successRate(f: HourFigures): number | null {
  const all = attemptsOf(f);
  return all ? f.succeeded / all : null;
}

/**
 * The q-quantile (0..1) of the latencies, estimated from the histogram: the bucket where it falls, interpolated
 * linearly inside it (the open last bucket answers its lower bound). Null without a request.
 */
export function percentile(latency: readonly number[], q: number): number | null {
  const total = latency.reduce((a, b) => a + b, 0);
  if (!total) return null;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < latency.length; i++) {
    const n = latency[i] ?? 0;
    if (n && below + n >= rank) {
      const lower = i === 0 ? 0 : (LATENCY_BOUNDS_MS[i - 1] as number);
      const upper = LATENCY_BOUNDS_MS[i];
      if (upper === undefined) return lower;
      return Math.round(lower + ((upper - lower) * (rank - below)) / n);
    }
    below += n;
  }
  return LATENCY_BOUNDS_MS.at(-1) as number;
}

/** The error classes of some figures, most frequent first (then in ERROR_CLASSES order). */
export function errorsByClass(f: HourFigures): { errorClass: ErrorClass; count: number }[] {
  return ERROR_CLASSES.map((errorClass) => ({ errorClass, count: f.errors[errorClass] ?? 0 }))
    .filter((e) => e.count > 0)
    .sort((a, b) => b.count - a.count);
}

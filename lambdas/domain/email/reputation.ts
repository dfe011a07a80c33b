// Sending reputation (issue 29): every tenant of a stage shares one SES account, whose bounce and complaint rates
// SES reviews past 5% / 0.1% and pauses past about 10% / 0.5%. Pure rules: what an event counts, the rolling
// window of UTC days, the rates as SES defines them (hard bounces and complaints over copies sent), the minimum
// volume before judging, and the judgment's warn / pause / clear transitions. docs/sending.md "Sending reputation".
import { bareAddress } from './email';

/**
 * What the daily counters keep (Resend's metric names). `sent` is added by the send worker, a batch's copies of a
 * sending domain in one write (app/reputation/sent-tally); bounces and complaints one event at a time, as they
 * arrive (they are few). `delivered` is not kept: it is `sent` less `bounced` (deliveredOf), since counting each
 * email.delivered would cost a write per copy (docs/benchmarks.md, "Sending reputation counters (issue 29): before and after").
 */
export const COUNT_FIELDS = [
  'sent',
  'bounced',
  'bounced_permanent',
  'bounced_transient',
  'bounced_undetermined',
  'complained',
] as const;
export type CountField = (typeof COUNT_FIELDS)[number];
export type Counts = Readonly<Record<CountField, number>>;

export const NO_COUNTS: Counts = Object.freeze(
  Object.fromEntries(COUNT_FIELDS.map((field) => [field, 0])) as Record<CountField, number>,
);

/** The event types that count as they are processed (sent copies are counted where they are sent). */
export type CountedEventType = 'email.bounced' | 'email.complained';

/**
 * What one event adds, or null when it counts nothing. email.sent and email.delivered count nothing here: copies
 * sent are counted by the send worker, and delivered is derived. A bounce SES refused because the address is on
 * its own account-level suppression list is `bounced` but not `bounced_permanent`: SES leaves it out of the
 * bounce rate.
 */
export function countsOf(event: {
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
}): readonly CountField[] | null {
  switch (event.type) {
    case 'email.complained':
      return ['complained'];
    case 'email.bounced': {
      if (event.data.refused_by_account_suppression_list === true) return ['bounced'];
      const type = event.data.bounce_type;
      if (type === 'Permanent') return ['bounced', 'bounced_permanent'];
      if (type === 'Transient') return ['bounced', 'bounced_transient'];
      return ['bounced', 'bounced_undetermined'];
    }
    default:
      return null;
  }
}

/**
 * Copies delivered, as the metrics show them: sent less every bounce (hard, soft, undetermined, refused by the
 * account's suppression list), never below zero. A copy still in flight (or only delayed) counts as delivered
 * until it bounces; a bounce counts on the day it arrives, so a day's figure can be off by what bounced from the
 * day before.
 */
export function deliveredOf(counts: Pick<Counts, 'sent' | 'bounced'>): number {
  return Math.max(0, counts.sent - counts.bounced);
}

/** Whether what an event counted can raise a rate (a hard bounce or a complaint): only those call for a judgment. */
export function raisesRates(fields: readonly CountField[]): boolean {
  return fields.includes('bounced_permanent') || fields.includes('complained');
}

/** The sending domain of a `from` (bare, lower-cased); null when it has none. */
export function sendingDomain(from: unknown): string | null {
  if (typeof from !== 'string') return null;
  const domain = bareAddress(from).split('@')[1];
  return domain ? domain : null;
}

/** A pair of rates, as fractions (0.04 is 4%). */
export interface RateLimits {
  readonly bounceRate: number;
  readonly complaintRate: number;
}

/** SES reviews an account past these (research/email.md, Turn 4). */
export const SES_REVIEW: RateLimits = { bounceRate: 0.05, complaintRate: 0.001 };
/** SES may pause an account's sending past about these. */
export const SES_PAUSE: RateLimits = { bounceRate: 0.1, complaintRate: 0.005 };

/** How a stage judges its tenants (per-stage configuration: SF_REPUTATION_* locally, `sendflow:reputation` on AWS). */
export interface ReputationPolicy {
  /** UTC days the rates are taken over, today included. */
  readonly windowDays: number;
  /** Copies sent in the window before a tenant (or one of its domains) is judged at all. */
  readonly minimumSent: number;
  readonly warn: RateLimits;
  readonly pause: RateLimits;
  /** Test mode never reaches SES: judged only when this is set (tests, rehearsals); its pause stops test sends. */
  readonly judgeTestMode: boolean;
}

/** The defaults: below SES's own thresholds (a Resend-like host's: 4% / 0.08% and 8% / 0.3% over 7 days, 200 sent). */
export const DEFAULT_REPUTATION_POLICY: ReputationPolicy = Object.freeze({
  windowDays: 7,
  minimumSent: 200,
  warn: Object.freeze({ bounceRate: 0.04, complaintRate: 0.0008 }),
  pause: Object.freeze({ bounceRate: 0.08, complaintRate: 0.003 }),
  judgeTestMode: false,
});

/** The longest window (and so the longest a lift's baseline matters): the counters are kept longer. */
export const MAX_WINDOW_DAYS = 30;
/** How long a day's counters are kept (GET /v1/emails/metrics reads back this far). */
export const COUNTER_RETENTION_DAYS = 92;

/**
 * Every problem of a policy: a warning must come before its pause, and a pause before SES's own (a pause at or past
 * SES's would let the shared account be paused first, which is what this guards against).
 */
export function policyProblems(policy: ReputationPolicy): string[] {
  const problems: string[] = [];
  const pct = (rate: number) => `${+(rate * 100).toFixed(4)}%`;
  if (!Number.isInteger(policy.windowDays) || policy.windowDays < 1 || policy.windowDays > MAX_WINDOW_DAYS)
    problems.push(`windowDays must be a whole number of days from 1 to ${MAX_WINDOW_DAYS}`);
  if (!Number.isInteger(policy.minimumSent) || policy.minimumSent < 1)
    problems.push('minimumSent must be a whole number, at least 1');
  for (const [name, limits] of [
    ['warn', policy.warn],
    ['pause', policy.pause],
  ] as const) {
    for (const rate of ['bounceRate', 'complaintRate'] as const) {
      const value = limits[rate];
      if (!(value > 0 && value < 1)) problems.push(`${name}.${rate} must be a fraction above 0 and below 1`);
    }
  }
  if (policy.warn.bounceRate > policy.pause.bounceRate) problems.push('warn.bounceRate is above pause.bounceRate');
  if (policy.warn.complaintRate > policy.pause.complaintRate)
    problems.push('warn.complaintRate is above pause.complaintRate');
  if (policy.pause.bounceRate >= SES_PAUSE.bounceRate)
    problems.push(`pause.bounceRate must be below SES's own pause (${pct(SES_PAUSE.bounceRate)})`);
  if (policy.pause.complaintRate >= SES_PAUSE.complaintRate)
    problems.push(`pause.complaintRate must be below SES's own pause (${pct(SES_PAUSE.complaintRate)})`);
  return problems;
}

/** The UTC day of an instant, `YYYY-MM-DD`: the counters' bucket. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Epoch ms of the start of a `YYYY-MM-DD` UTC day. */
export function dayStart(day: string): number {
  return Date.parse(`${day}T00:00:00.000Z`);
}

/** The days from `from` to `to` (both `YYYY-MM-DD`, included), oldest first. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = dayStart(from); t <= dayStart(to); t += 86_400_000) days.push(dayOf(t));
  return days;
}

/** The rolling window at `nowMs`: the last `windowDays` UTC days, today included, oldest first. */
export function windowOf(nowMs: number, windowDays: number): string[] {
  return daysBetween(dayOf(nowMs - (windowDays - 1) * 86_400_000), dayOf(nowMs));
}

export function addCounts(a: Counts, b: Partial<Counts>): Counts {
  return Object.fromEntries(COUNT_FIELDS.map((f) => [f, a[f] + (b[f] ?? 0)])) as Counts;
}

/** `a` less `b`, never below zero (a baseline taken from a read that lagged cannot make a count negative). */
export function subtractCounts(a: Counts, b: Partial<Counts>): Counts {
  return Object.fromEntries(COUNT_FIELDS.map((f) => [f, Math.max(0, a[f] - (b[f] ?? 0))])) as Counts;
}

/** Counts per day (`YYYY-MM-DD`). */
export type DailyCounts = Readonly<Record<string, Counts>>;

/**
 * The sum over `days`, less what `baseline` held of each day (the counts at an operator's lift: a lifted pause is
 * judged again on what happened after it, not on the figures that caused it).
 */
export function sumDays(byDay: DailyCounts, days: readonly string[], baseline: DailyCounts = {}): Counts {
  let total = NO_COUNTS;
  for (const day of days) total = addCounts(total, subtractCounts(byDay[day] ?? NO_COUNTS, baseline[day] ?? {}));
  return total;
}

/** A rate as SES computes it, rounded to 4 decimals; null when nothing was sent. */
export function rate(part: number, sent: number): number | null {
  if (sent <= 0) return null;
  return Math.round((part / sent) * 10_000) / 10_000;
}

/** The figures a judgment is made on: SES's bounce rate counts hard bounces only. */
export interface Figures {
  readonly sent: number;
  readonly bounced: number;
  readonly complained: number;
  readonly bounceRate: number | null;
  readonly complaintRate: number | null;
}

export function figuresOf(counts: Counts): Figures {
  return {
    sent: counts.sent,
    bounced: counts.bounced_permanent,
    complained: counts.complained,
    bounceRate: rate(counts.bounced_permanent, counts.sent),
    complaintRate: rate(counts.complained, counts.sent),
  };
}

export type Level = 'ok' | 'warning' | 'paused';
export type Breach = 'bounce_rate' | 'complaint_rate';

export interface Judgment {
  readonly figures: Figures;
  /** Enough volume to judge (at least `minimumSent` sent in the window). */
  readonly judged: boolean;
  /** What the figures call for (always `ok` when not judged). */
  readonly level: Level;
  /** Which rates are past the level's thresholds. */
  readonly breaches: readonly Breach[];
}

/** The figures against the policy: `paused` past a pause threshold, `warning` past a warning one. */
export function judge(counts: Counts, policy: Pick<ReputationPolicy, 'minimumSent' | 'warn' | 'pause'>): Judgment {
  const figures = figuresOf(counts);
  const judged = figures.sent >= policy.minimumSent;
  const past = (limits: RateLimits): Breach[] => [
    ...(figures.bounceRate !== null && exact(counts.bounced_permanent, counts.sent) >= limits.bounceRate
      ? (['bounce_rate'] as const)
      : []),
    ...(figures.complaintRate !== null && exact(counts.complained, counts.sent) >= limits.complaintRate
      ? (['complaint_rate'] as const)
      : []),
  ];
  if (!judged) return { figures, judged, level: 'ok', breaches: [] };
  const pause = past(policy.pause);
  if (pause.length) return { figures, judged, level: 'paused', breaches: pause };
  const warn = past(policy.warn);
  if (warn.length) return { figures, judged, level: 'warning', breaches: warn };
  return { figures, judged, level: 'ok', breaches: [] };
}

/** Unrounded: a threshold is judged on the exact rate, not on its 4-decimal display. */
const exact = (part: number, sent: number) => part / sent;

/** Where a subject (the account, or one of its sending domains) stands: what it was told, whether it is paused. */
export interface SubjectStanding {
  readonly warned: boolean;
  readonly paused: boolean;
}

export type Transition = 'warn' | 'pause' | 'clear';

/**
 * What a judgment changes. A warning is told once per episode: past the warning threshold (or straight past the
 * pause one) when not yet warned; the episode ends (`clear`) when a judged window is back under the warning
 * threshold, so a later rise warns again. A pause is set once and only an operator lifts it: the figures falling
 * never unpause.
 */
export function transitions(standing: SubjectStanding, judgment: Judgment): Transition[] {
  if (!judgment.judged) return [];
  const out: Transition[] = [];
  if (judgment.level !== 'ok' && !standing.warned) out.push('warn');
  if (judgment.level === 'paused' && !standing.paused) out.push('pause');
  if (judgment.level === 'ok' && standing.warned && !standing.paused) out.push('clear');
  return out;
}

/** A rate for people: `8.51%`. */
export function percent(value: number | null): string {
  return value === null ? 'n/a' : `${+(value * 100).toFixed(2)}%`;
}

/** Whether a tenant of this mode is judged (live always; test mode only when the stage says so). */
export function isJudgedMode(mode: 'live' | 'test', policy: Pick<ReputationPolicy, 'judgeTestMode'>): boolean {
  return mode === 'live' || policy.judgeTestMode;
}

// Use case: every hard or soft bounce and complaint adds to its tenant's and its sending domain's counters for the
// day as it arrives (they are few: copies sent are counted by the send worker, app/reputation/sent-tally, and
// deliveries not at all); a hard bounce or a complaint then judges the tenant and that domain over
// the rolling window (domain/email/reputation). Past the warning threshold the subject is warned once
// (account.reputation_warning, level `warning`); past the pause threshold its sending is paused (the same event,
// level `paused`) until an operator lifts it. The standing and its event are one conditional write (the event in
// the item's outbox), so a warning is told at least once and, its id fixed, delivered once per webhook.
import {
  countsOf,
  dayOf,
  isJudgedMode,
  type Judgment,
  judge,
  percent,
  type ReputationPolicy,
  raisesRates,
  sendingDomain,
  sumDays,
  transitions,
  windowOf,
} from '../../domain/email/reputation';
import { newEvent, type SendflowEvent } from '../../domain/events';
import type { PendingEvents } from '../outbox';
import type { Clock, RandomBytes } from '../ports';
import type { Tenant } from '../webhooks/ports';
import { ACCOUNT, type NotedFigures, type ReputationStore, type Standing, type Subject, subjectKey } from './ports';
import type { SingleFlight } from './single-flight';

export interface ReputationDeps {
  readonly store: ReputationStore;
  readonly policy: ReputationPolicy;
  readonly clock: Clock;
  readonly random: RandomBytes;
  /**
   * Whether warnings are told as account.reputation_warning events (a per-stage switch, SF_REPUTATION_EVENTS):
   * releases before this one cannot read the event type, so it is written only once the stage may not roll back
   * past this release (expand/contract). Off: warnings and pauses are noted (shown, enforced), untold.
   */
  readonly announce: boolean;
  /** Collapses concurrent judgments of one subject in this process (none: every bounce judges on its own). */
  readonly judgments?: SingleFlight;
  /**
   * Told of every warning or pause noted (an operator's log line, the account's notice); nothing when absent.
   * Awaited: it must not throw.
   */
  readonly noted?: (
    tenant: Tenant,
    subject: Subject,
    level: 'warning' | 'paused',
    figures: NotedFigures,
  ) => void | Promise<void>;
}

/** Fans an event out where it arises (processEvent's dispatch and listen sessions). */
export type FanOut = (event: SendflowEvent) => Promise<void>;

/**
 * Counts a bounce or complaint the first time it is processed (its history record is new): one write, then a
 * judgment when it can raise a rate. Any other event counts nothing. The day is the event's own (a bounce counts on
 * the day it happened), the shard its id.
 */
export async function trackReputation(deps: ReputationDeps, event: SendflowEvent, fanOut: FanOut): Promise<void> {
  const fields = countsOf(event);
  if (!fields) return;
  const at = Date.parse(event.timestamp);
  const domain = sendingDomain(event.data.from);
  await deps.store.count(event, {
    day: dayOf(Number.isFinite(at) ? at : deps.clock.now()),
    domain,
    counts: Object.fromEntries(fields.map((field) => [field, 1])),
    spread: event.id,
  });
  if (!raisesRates(fields) || !isJudgedMode(event.mode, deps.policy)) return;
  const subjects: Subject[] = domain ? [ACCOUNT, { kind: 'domain', domain }] : [ACCOUNT];
  const judgeNow = () => judgeTenant(deps, event, subjects, fanOut);
  const key = `${event.accountId}#${event.mode}#${domain ?? ''}`;
  await (deps.judgments ? deps.judgments.run(key, judgeNow) : judgeNow());
}

/** What a subject's judgment rests on: its window's counts (less a lift's baseline) and its standing. */
export interface SubjectView {
  readonly subject: Subject;
  readonly judgment: Judgment;
  readonly standing: Standing | undefined;
}

/**
 * The most counter items a judgment reads: a window of every domain's days on every shard. A live tenant's domains
 * are its verified ones (at most 200: 7 days × 16 shards × 200 = 22,400); a test-mode tenant past the bound (any
 * `from` domain goes there) is not judged, and the failure is reported.
 */
export const JUDGMENT_MAX_ITEMS = 40_000;

/** The subjects' judgments now: one range read of the window's counters and one of the tenant's standings. */
export async function viewSubjects(
  deps: Pick<ReputationDeps, 'store' | 'policy' | 'clock'>,
  tenant: Tenant,
  subjects: readonly Subject[],
): Promise<SubjectView[]> {
  const days = windowOf(deps.clock.now(), deps.policy.windowDays);
  // The standings first: when every subject is paused already there is nothing left to judge (a paused list's
  // bounces keep arriving for a while), and the window is not read.
  const standings = await deps.store.standings(tenant);
  const byKey = new Map(standings.map((s) => [subjectKey(s.subject), s]));
  if (subjects.every((subject) => byKey.get(subjectKey(subject))?.pausedAt)) return [];
  const counts = await deps.store.countsBetween(tenant, days[0] as string, days.at(-1) as string, JUDGMENT_MAX_ITEMS);
  return subjects.map((subject) => {
    const standing = byKey.get(subjectKey(subject));
    const daily = subject.kind === 'account' ? counts.account : (counts.domains[subject.domain] ?? {});
    return { subject, standing, judgment: judge(sumDays(daily, days, standing?.baseline), deps.policy) };
  });
}

async function judgeTenant(
  deps: ReputationDeps,
  tenant: Tenant,
  subjects: readonly Subject[],
  fanOut: FanOut,
): Promise<void> {
  // Each subject is judged whatever befalls another's fan-out (its warning then waits in the outbox).
  const failures: unknown[] = [];
  for (const view of await viewSubjects(deps, tenant, subjects)) {
    const { subject, standing, judgment } = view;
    const changes = transitions({ warned: Boolean(standing?.warnedAt), paused: Boolean(standing?.pausedAt) }, judgment);
    if (changes.includes('clear') && standing?.warnedAt) {
      await deps.store.clearWarning(tenant, subject, standing.warnedAt);
      continue;
    }
    const warn = changes.includes('warn');
    const pause = changes.includes('pause');
    if (!warn && !pause) continue;
    const at = new Date(deps.clock.now()).toISOString();
    const noted = notedFigures(judgment);
    // Straight past the pause threshold: one event, level `paused` (it carries the warning's figures too).
    const events = deps.announce ? [warningEvent(deps, tenant, subject, judgment, pause ? 'paused' : 'warning')] : [];
    const pending = await deps.store.note(
      tenant,
      subject,
      { at, ...(warn ? { warning: noted } : {}), ...(pause ? { pause: noted } : {}) },
      events,
    );
    if (pending) await deps.noted?.(tenant, subject, pause ? 'paused' : 'warning', noted);
    if (pending) await tell(deps, pending, fanOut).catch((error: unknown) => failures.push(error));
  }
  if (failures.length) throw new AggregateError(failures, 'a reputation warning was noted but not fanned out yet');
}

/**
 * Fans the noted events out now, then clears them from the outbox. A failure leaves them there: the reconciler's
 * sweep relays them through the events queue (same ids, so each webhook still gets one delivery).
 */
async function tell(deps: ReputationDeps, pending: PendingEvents, fanOut: FanOut): Promise<void> {
  if (pending.events.length === 0) return;
  for (const event of pending.events) await fanOut(event);
  await deps.store.outbox.clear(pending);
}

function notedFigures(judgment: Judgment): NotedFigures {
  const { sent, bounced, complained, bounceRate, complaintRate } = judgment.figures;
  return { sent, bounced, complained, bounceRate, complaintRate, breaches: judgment.breaches };
}

/** account.reputation_warning: what crossed which threshold, and what happens next. */
export function warningEvent(
  deps: Pick<ReputationDeps, 'policy' | 'clock' | 'random'>,
  tenant: Tenant,
  subject: Subject,
  judgment: Judgment,
  level: 'warning' | 'paused',
): SendflowEvent {
  const { policy } = deps;
  const f = judgment.figures;
  return newEvent(
    {
      type: 'account.reputation_warning',
      accountId: tenant.accountId,
      mode: tenant.mode,
      at: deps.clock.now(),
      data: {
        message: warningMessage(policy, subject, judgment, level),
        level,
        scope: subject.kind,
        domain: subject.kind === 'domain' ? subject.domain : null,
        sending_paused: level === 'paused',
        breaches: [...judgment.breaches],
        window_days: policy.windowDays,
        sent: f.sent,
        bounced: f.bounced,
        complained: f.complained,
        bounce_rate: f.bounceRate,
        complaint_rate: f.complaintRate,
        thresholds: {
          warning: { bounce_rate: policy.warn.bounceRate, complaint_rate: policy.warn.complaintRate },
          pause: { bounce_rate: policy.pause.bounceRate, complaint_rate: policy.pause.complaintRate },
        },
      },
    },
    deps.random,
  );
}

function who(subject: Subject): string {
  return subject.kind === 'account' ? 'this account' : `the domain ${subject.domain}`;
}

function warningMessage(policy: ReputationPolicy, subject: Subject, judgment: Judgment, level: string): string {
  const f = judgment.figures;
  const rates = `bounce rate ${percent(f.bounceRate)}, complaint rate ${percent(f.complaintRate)} over the last ${policy.windowDays} days (${f.sent} sent)`;
  if (level === 'paused') {
    return (
      `Live sending from ${who(subject)} is paused: ${rates}, past the pause thresholds ` +
      `(${percent(policy.pause.bounceRate)} bounces, ${percent(policy.pause.complaintRate)} complaints). ` +
      'Clean the list (hard-bounced and complaining addresses are suppressed already) and ask support to lift the pause.'
    );
  }
  return (
    `The sending reputation of ${who(subject)} is at risk: ${rates}. Sending is paused at ` +
    `${percent(policy.pause.bounceRate)} bounces or ${percent(policy.pause.complaintRate)} complaints.`
  );
}

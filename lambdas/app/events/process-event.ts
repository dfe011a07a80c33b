// Use case: what happens to every event, on the events queue or where it arises (the send worker's email.sent).
// It is fanned out to the subscribed webhooks (and, best effort, to listen sessions), a hard bounce or complaint
// puts the recipient on the suppression list, and then it is written into its email's history and status. Each
// step is idempotent, so a redelivered event changes nothing. The first steps run independently (one failing
// never holds back another); the history and status wait for them, so they never tell of an event whose fan-out
// did not happen.
import { createHash } from 'node:crypto';
import { statusFromEvent } from '../../domain/email/status';
import type { SendflowEvent } from '../../domain/events';
import { suppressionEvent } from '../../domain/suppressions';
import type { EmailHistory, Suppression, SuppressionList, SuppressionReason } from '../emails/ports';
import { type RelayDeps, relayToListeners } from '../listen/relay-event';
import { relay } from '../outbox';
import { type ReputationDeps, trackReputation } from '../reputation/track-reputation';
import { noTracing, type TraceSpan, type Tracing } from '../tracing';
import { type DispatchDeps, dispatchEvent } from '../webhooks/dispatch-event';
import { FilteredTally } from '../webhooks/filtered-tally';
import { GatheredDeliveryQueue } from '../webhooks/gathered-delivery-queue';
import type { EventPublisher, FilteredCounts, Tenant, Webhook } from '../webhooks/ports';

export interface ProcessEventDeps extends DispatchDeps {
  /** Each event's span (under the trace it carries), the parent of its deliveries' attempts; off when absent. */
  readonly tracing?: Tracing;
  readonly emailHistory: Pick<EmailHistory, 'record' | 'noteStatus'>;
  readonly suppressions: SuppressionList;
  /** Live listen sessions (`npm run listen`) get the event as a subscribed webhook would; absent: none are read. */
  readonly listenSessions?: RelayDeps['listenSessions'];
  /** Told when putting an event on the listen sessions failed (a log line); the event goes on regardless. */
  readonly listenRelayFailed?: (event: SendflowEvent, error: unknown) => void;
  /** The suppressionEvents stored format: a new suppression records its suppression.added. */
  readonly suppressionEvents?: boolean;
  /** Relays suppression.added at once; absent or failing, the reconciler's outbox sweep does. */
  readonly events?: EventPublisher;
  /**
   * Sending reputation: counts each bounce and complaint once and judges its tenant (app/reputation/track-reputation);
   * absent, nothing is counted. Copies sent are counted by the send worker; deliveries are not counted.
   */
  readonly reputation?: ReputationDeps;
  /** Told when counting or judging an event failed (a log line): the event goes on regardless. */
  readonly reputationFailed?: (event: SendflowEvent, error: unknown) => void;
  /**
   * Where the events webhook filters kept back are counted (filtered_24h), once per batch and webhook; absent,
   * they are not counted.
   */
  readonly filteredCounts?: FilteredCounts;
  /** Told when writing a batch's filtered counts failed (a log line): the events go on regardless. */
  readonly filteredCountFailed?: (error: unknown) => void;
}

/** Why an event suppresses its recipient, if it does: a permanent bounce or a complaint. */
export function suppressionReason(event: Pick<SendflowEvent, 'type' | 'data'>): SuppressionReason | null {
  // A bounce SES refused for its own account-level list is not a recipient verdict: SES keeps refusing it.
  if (
    event.type === 'email.bounced' &&
    event.data.bounce_type === 'Permanent' &&
    event.data.refused_by_account_suppression_list !== true
  ) {
    return 'hard_bounce';
  }
  if (event.type === 'email.complained') return 'complaint';
  return null;
}

/**
 * Runs every step to its end, then fails if any step failed: the queue then redelivers the event and every step
 * runs again, the ones that had succeeded as no-ops (re-queued deliveries keep their ids and find their attempt
 * claimed or made). So a failed step is retried, never dropped. The history and status are written last, once
 * every other step is done: an event the history holds was fanned out (listen sessions aside: best effort), so it
 * may stand as the record of what it tells (the send worker's email.sent is a sent copy's record:
 * app/emails/send-emails).
 */
export async function processEvent(deps: ProcessEventDeps, event: SendflowEvent): Promise<void> {
  const span = eventSpan(deps, event);
  try {
    await processTraced(deps, event, span.trace);
    span.end();
  } catch (error) {
    span.end(error instanceof Error ? error.name : 'Error');
    throw error;
  }
}

/**
 * The event's span: under the trace it carries (the request that caused it), its attributes the event's ids and
 * type, never its data. Its context goes to the deliveries' jobs and rows (dispatchEvent). An event that carries
 * no trace starts none: its deliveries stay untraced (a receiver sees no `traceparent`).
 */
function eventSpan(deps: ProcessEventDeps, event: SendflowEvent): TraceSpan {
  const tracing = deps.tracing ?? noTracing;
  if (event.trace === undefined || !tracing.enabled) return tracing.start('', event.trace, 'internal');
  return tracing.start(`event ${event.type}`, event.trace, 'consumer', {
    'sendflow.event.id': event.id,
    'sendflow.event.type': event.type,
    'sendflow.account.id': event.accountId,
    'sendflow.mode': event.mode,
    ...(event.emailId !== undefined ? { 'sendflow.email.id': event.emailId } : {}),
  });
}

async function processTraced(deps: ProcessEventDeps, event: SendflowEvent, trace: string | undefined): Promise<void> {
  const traced = trace === event.trace ? event : { ...event, trace };
  const steps: Promise<unknown>[] = [dispatchEvent(deps, traced)];
  // Best effort: a developer's listen session never fails (and so never repeats) the event's real work.
  if (deps.listenSessions)
    steps.push(
      relayToListeners({ listenSessions: deps.listenSessions, clock: deps.clock }, event).catch((error: unknown) =>
        deps.listenRelayFailed?.(event, error),
      ),
    );
  const reason = suppressionReason(event);
  if (reason && event.to) {
    const suppression = {
      address: event.to,
      reason,
      createdAt: event.timestamp,
      ...(event.emailId ? { emailId: event.emailId } : {}),
    };
    steps.push(
      deps.suppressionEvents ? suppressWithEvent(deps, event, suppression) : deps.suppressions.add(event, suppression),
    );
  }
  await settled(event, steps);
  const emailId = event.emailId;
  if (emailId === undefined) return;
  // Then the email's own record of it: its history, and the status it gives (noted again on a redelivery: the
  // rank keeps it idempotent), together, so neither tells of an event that was not fanned out.
  const noted = statusFromEvent(event);
  await settled(event, [
    deps.emailHistory
      .record(emailId, {
        id: event.id,
        type: event.type,
        timestamp: event.timestamp,
        ...(event.to ? { to: event.to } : {}),
      })
      .then((recorded) => (recorded ? countOnce(deps, event) : undefined)),
    ...(noted ? [deps.emailHistory.noteStatus(event, emailId, noted)] : []),
  ]);
}

/**
 * Suppresses with its suppression.added in the same write, the event's id derived from the bounce or complaint (a
 * redelivered one records nothing: the address is already suppressed), then relays it if it can.
 */
async function suppressWithEvent(deps: ProcessEventDeps, cause: SendflowEvent, suppression: Suppression) {
  const seed = createHash('sha256').update(`suppression.added\n${cause.id}`).digest();
  const added = suppressionEvent('suppression.added', cause, suppression, Date.parse(cause.timestamp), (n) =>
    seed.subarray(0, n),
  );
  const recorded = await deps.suppressions.record(cause, suppression, [added]);
  if (deps.events) await relay({ events: deps.events }, deps.suppressions.outbox, recorded);
}

/**
 * Counts a bounce or complaint toward its tenant's sending reputation, once: only when its history record is new, so a
 * redelivered event is never counted twice. Best effort: a failure is reported, not thrown (processing the event
 * again would find its record and count nothing), so a lost write can only undercount. A warning or pause it causes
 * is fanned out here, as this event is.
 */
async function countOnce(deps: ProcessEventDeps, event: SendflowEvent): Promise<void> {
  if (!deps.reputation) return;
  try {
    await trackReputation(deps.reputation, event, (told) => processEvent(deps, told));
  } catch (error) {
    deps.reputationFailed?.(event, error);
  }
}

/** Waits for every step; throws the failure, or all of them, if any failed. */
async function settled(event: SendflowEvent, steps: readonly Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(steps)).filter((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed.length === 1) throw failed[0]?.reason;
  if (failed.length > 1)
    throw new AggregateError(
      failed.map((f) => f.reason),
      `${failed.length} steps of event ${event.id} failed`,
    );
}

/**
 * Events processed together, as one batch: a tenant's webhooks listed once, an account's listen sessions read
 * once, and the delivery jobs of every event sent together in sends of 10. Returns the events whose processing
 * failed (each is processed alone: one failure never fails the others); processing them again is harmless.
 */
export async function processEvents(
  deps: ProcessEventDeps,
  events: readonly SendflowEvent[],
): Promise<SendflowEvent[]> {
  const batch = batchScoped(deps);
  const gathered = new GatheredDeliveryQueue(deps.deliveryQueue, events.length);
  const results = await Promise.allSettled(
    events.map(async (event) => {
      const member = gathered.member();
      try {
        await processEvent({ ...batch, deliveryQueue: member.queue }, event);
      } finally {
        member.done();
      }
    }),
  );
  await endBatch(batch);
  return events.filter((_, i) => results[i]?.status === 'rejected');
}

/**
 * What a batch does once all its events are processed: writes the events its webhooks' filters kept back (one
 * counter write per webhook). Best effort, like the reputation counts: a lost write undercounts filtered_24h, it
 * never fails the events.
 */
export async function endBatch(batch: ProcessEventDeps): Promise<void> {
  if (batch.filtered instanceof FilteredTally && batch.filteredCounts)
    await batch.filtered.flush(batch.filteredCounts).catch((error: unknown) => batch.filteredCountFailed?.(error));
}

/** The deps for one batch: reads the batch's events share (webhooks, listen sessions) made once per batch. */
export function batchScoped(deps: ProcessEventDeps): ProcessEventDeps {
  return {
    ...deps,
    webhooks: { list: batchList(deps) },
    ...batchListeners(deps),
    // The batch's filtered events, counted in memory and written by endBatch.
    ...(deps.filteredCounts ? { filtered: new FilteredTally(deps.clock) } : {}),
  };
}

/** One listing per tenant per batch, shared by the batch's events (if it fails, they fail and are retried). */
function batchList(deps: Pick<ProcessEventDeps, 'webhooks'>): (tenant: Tenant) => Promise<Webhook[]> {
  const listed = new Map<string, Promise<Webhook[]>>();
  return (tenant) => {
    const key = `${tenant.accountId}#${tenant.mode}`;
    let webhooks = listed.get(key);
    if (!webhooks) {
      webhooks = deps.webhooks.list(tenant);
      listed.set(key, webhooks);
    }
    return webhooks;
  };
}

/** The account's live listen sessions, read once per batch like its webhooks (absent when none are wired). */
function batchListeners(deps: Pick<ProcessEventDeps, 'listenSessions'>): Pick<ProcessEventDeps, 'listenSessions'> {
  const sessions = deps.listenSessions;
  if (!sessions) return {};
  const listed = new Map<string, ReturnType<typeof sessions.listLive>>();
  return {
    listenSessions: {
      putEvents: (events) => sessions.putEvents(events),
      listLive: (accountId, nowMs) => {
        let live = listed.get(accountId);
        if (!live) {
          live = sessions.listLive(accountId, nowMs);
          listed.set(accountId, live);
        }
        return live;
      },
    },
  };
}

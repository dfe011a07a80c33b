// Use case: the reconciler. Finds pending deliveries whose next attempt is overdue (a lost schedule, a
// crashed worker) and queues that attempt again, and likewise scheduled emails whose send is overdue; relays
// events left in any outbox (a crash or an error between a state change and its publish). Every minute on AWS;
// locally at start-up and every SF_RECONCILE_INTERVAL_SECONDS (the queue journals keep what was queued).
import type { EmailRepository, SendScheduler } from '../emails/ports';
import { type Outbox, sweepOutboxes } from '../outbox';
import type { Clock } from '../ports';
import type { DeliveryRepository, DueDelivery, EventPublisher, RetryScheduler } from './ports';

/** How long one run may keep paging through overdue deliveries (the AWS reconciler's time-out is 60 s). */
const RECONCILE_BUDGET_MS = 40_000;

/** A repository that records events with its state changes. */
interface WithOutbox {
  readonly outbox: Outbox;
}

export interface ReconcileDeps {
  readonly deliveries: DeliveryRepository;
  readonly retries: RetryScheduler;
  readonly emails: EmailRepository;
  readonly sendScheduler: SendScheduler;
  readonly events: EventPublisher;
  readonly domains: WithOutbox;
  readonly contacts: WithOutbox;
  readonly suppressions: WithOutbox;
  /** Received emails (email.received). */
  readonly receivedEmails: WithOutbox;
  /** Reputation standings (account.reputation_warning); absent where none is wired. */
  readonly reputationStore?: WithOutbox;
  readonly clock: Clock;
}

/** Every table that keeps an outbox: the sweep goes through each. */
export const outboxesOf = (
  deps: Pick<ReconcileDeps, 'emails' | 'domains' | 'contacts' | 'suppressions' | 'receivedEmails' | 'reputationStore'>,
): Outbox[] => [
  deps.emails.outbox,
  deps.domains.outbox,
  deps.contacts.outbox,
  deps.suppressions.outbox,
  deps.receivedEmails.outbox,
  ...(deps.reputationStore ? [deps.reputationStore.outbox] : []),
];

/**
 * Queues again what is overdue by more than `graceMs` (how late an attempt may normally be: Scheduler fires
 * within its minute, claims last a while): pending attempts, waiting sends, events left in an outbox.
 */
export async function reconcile(
  deps: ReconcileDeps,
  options: { graceMs: number; limit?: number; budgetMs?: number },
): Promise<number> {
  const now = deps.clock.now();
  const before = now - options.graceMs;
  // Every overdue delivery, page after page, however many (an outage can leave thousands), within the budget.
  const pageSize = options.limit ?? 500;
  const deadline = now + (options.budgetMs ?? RECONCILE_BUDGET_MS);
  let requeued = 0;
  let after: DueDelivery | undefined;
  for (;;) {
    const due = await deps.deliveries.listDue(before, pageSize, after);
    for (const delivery of due) {
      await deps.retries.schedule(
        { deliveryId: delivery.id, webhookId: delivery.webhookId, attempt: delivery.attempts + 1 },
        0,
      );
    }
    requeued += due.length;
    after = due.at(-1);
    if (due.length < pageSize || deps.clock.now() >= deadline) break;
  }
  const scheduled = await deps.emails.listScheduled(before, pageSize);
  for (const email of scheduled) await deps.sendScheduler.schedule(email.id, email.sendAt);
  // Events wait in an outbox only between their write and the publish that follows it: older than the grace,
  // they were left behind.
  const relayed = await sweepOutboxes({ events: deps.events, outboxes: outboxesOf(deps) }, before, options.limit);
  return requeued + scheduled.length + relayed;
}

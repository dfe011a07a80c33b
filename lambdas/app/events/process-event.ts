// Use case: what happens to every event on the events queue. It is written into its email's history, hard
// bounces and complaints put the recipient on the suppression list, and it is fanned out to the subscribed
// webhooks. Each step is idempotent, so a redelivered event changes nothing.
import type { SendflowEvent } from '../../domain/events';
import type { EmailRepository, SuppressionList, SuppressionReason } from '../emails/ports';
import { type DispatchDeps, dispatchEvent } from '../webhooks/dispatch-event';

export interface ProcessEventDeps extends DispatchDeps {
  readonly emails: EmailRepository;
  readonly suppressions: SuppressionList;
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

export async function processEvent(deps: ProcessEventDeps, event: SendflowEvent): Promise<void> {
  const reason = suppressionReason(event);
  if (reason && event.to) {
    await deps.suppressions.add(event, {
      address: event.to,
      reason,
      createdAt: event.timestamp,
      ...(event.emailId ? { emailId: event.emailId } : {}),
    });
  }
  if (event.emailId) {
    await deps.emails.appendEvent(event.emailId, {
      id: event.id,
      type: event.type,
      timestamp: event.timestamp,
      ...(event.to ? { to: event.to } : {}),
    });
  }
  await dispatchEvent(deps, event);
}

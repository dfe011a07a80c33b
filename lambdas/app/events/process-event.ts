// Use case: what happens to every event on the events queue. It is written into its email's history, and
// fanned out to the subscribed webhooks. Each step is idempotent, so a redelivered event changes nothing.
import type { SendflowEvent } from '../../domain/events';
import type { EmailRepository } from '../emails/ports';
import { type DispatchDeps, dispatchEvent } from '../webhooks/dispatch-event';

export interface ProcessEventDeps extends DispatchDeps {
  readonly emails: EmailRepository;
}

export async function processEvent(deps: ProcessEventDeps, event: SendflowEvent): Promise<void> {
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

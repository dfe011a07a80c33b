// The simulator provider: no mail leaves; each recipient's simulator story becomes our events, published
// with their step delays so webhooks see them in order, the way SES's events would arrive. email.sent is not
// among them: the send worker tells it when a copy is taken, whatever the provider.
import { createHash } from 'node:crypto';
import type { CopyOutcome, EmailProvider, OutgoingCopy } from '../../app/emails/ports';
import type { EventPublisher } from '../../app/webhooks/ports';
import type { EmailMessage } from '../../domain/email/email';
import { simulatedStory } from '../../domain/email/simulator';
import { emailEvent, type SendflowEvent } from '../../domain/events';

export class SimulatedEmailProvider implements EmailProvider {
  /** No attachment's bytes are read back for it: the send worker checks they are stored, and hands it none. */
  readonly readsAttachments = false;

  constructor(private readonly deps: { events: EventPublisher; stepSeconds: number }) {}

  /**
   * Every copy is taken (a refusal is part of a story: reject@ publishes email.failed as SES would). Attachments
   * go nowhere: an email whose files are still stored is taken as SES would take it (the send worker checks them).
   */
  async send(
    email: EmailMessage & { readonly scheduledAt?: string },
    copies: readonly OutgoingCopy[],
  ): Promise<CopyOutcome[]> {
    // A copy's story starts when the send worker handed it over (its email.sent's time; else when the email was
    // due): a stored time, so a copy handed over again after a partial publish publishes the same events again,
    // with the same ids and times (the dispatcher keeps the first), never new ones. Each id is made at its
    // event's time, as SES's are, so the history stores it as on AWS (one write, no byTime entry).
    const due = Date.parse(email.scheduledAt ?? email.createdAt);
    const bySteps = new Map<number, SendflowEvent[]>();
    for (const { to: recipient, at: start = due } of copies) {
      for (const step of simulatedStory(recipient)) {
        const at = start + step.step * this.deps.stepSeconds * 1000;
        // Ids derive from the email, the copy and the step.
        const seed = createHash('sha256').update(`simulator\n${email.id}\n${recipient}\n${step.step}\n${step.type}`);
        const digest = seed.digest();
        const event = emailEvent(email, recipient, step.type, step.data, { at }, (n) => digest.subarray(0, n));
        bySteps.set(step.step, [...(bySteps.get(step.step) ?? []), event]);
      }
    }
    for (const [step, events] of [...bySteps].sort(([a], [b]) => a - b)) {
      await this.deps.events.publish(events, step * this.deps.stepSeconds);
    }
    return copies.map(() => ({ status: 'sent' }));
  }
}

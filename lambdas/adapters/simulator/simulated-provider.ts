// The simulator provider: no mail leaves; each recipient's simulator story becomes our events, published
// with their step delays so webhooks see them in order, the way SES's events would arrive.
import { createHash } from 'node:crypto';
import type { CopyOutcome, EmailProvider, OutgoingCopy } from '../../app/emails/ports';
import type { Clock } from '../../app/ports';
import type { EventPublisher } from '../../app/webhooks/ports';
import type { EmailMessage } from '../../domain/email/email';
import { simulatedStory } from '../../domain/email/simulator';
import { emailEvent, type SendflowEvent } from '../../domain/events';

export class SimulatedEmailProvider implements EmailProvider {
  constructor(private readonly deps: { events: EventPublisher; clock: Clock; stepSeconds: number }) {}

  /** Every copy is taken (a refusal is part of a story: reject@ publishes email.failed as SES would). */
  async send(email: EmailMessage, copies: readonly OutgoingCopy[]): Promise<CopyOutcome[]> {
    const now = this.deps.clock.now();
    const bySteps = new Map<number, SendflowEvent[]>();
    for (const { to: recipient } of copies) {
      for (const step of simulatedStory(recipient)) {
        const at = now + step.step * this.deps.stepSeconds * 1000;
        // Ids derive from the email, the copy and the step: a send received again after a partial publish
        // publishes the same events again (the dispatcher keeps the first), never new ones with new ids.
        const seed = createHash('sha256').update(`simulator\n${email.id}\n${recipient}\n${step.step}\n${step.type}`);
        const digest = seed.digest();
        const idAt = Date.parse(email.createdAt) + step.step * this.deps.stepSeconds * 1000;
        const event = emailEvent(email, recipient, step.type, step.data, { at, idAt }, (n) => digest.subarray(0, n));
        bySteps.set(step.step, [...(bySteps.get(step.step) ?? []), event]);
      }
    }
    for (const [step, events] of [...bySteps].sort(([a], [b]) => a - b)) {
      await this.deps.events.publish(events, step * this.deps.stepSeconds);
    }
    return copies.map(() => ({ status: 'sent' }));
  }
}

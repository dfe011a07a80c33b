// The simulator provider: no mail leaves; each recipient's simulator story becomes our events, published
// with their step delays so webhooks see them in order, the way SES's events would arrive.
import type { CopyOutcome, EmailProvider, OutgoingCopy } from '../../app/emails/ports';
import type { Clock, RandomBytes } from '../../app/ports';
import type { EventPublisher } from '../../app/webhooks/ports';
import type { EmailMessage } from '../../domain/email/email';
import { simulatedStory } from '../../domain/email/simulator';
import { emailEvent, type SendflowEvent } from '../../domain/events';

export class SimulatedEmailProvider implements EmailProvider {
  constructor(
    private readonly deps: { events: EventPublisher; clock: Clock; random: RandomBytes; stepSeconds: number },
  ) {}

  /** Every copy is taken (a refusal is part of a story: reject@ publishes email.failed as SES would). */
  async send(email: EmailMessage, copies: readonly OutgoingCopy[]): Promise<CopyOutcome[]> {
    const now = this.deps.clock.now();
    const bySteps = new Map<number, SendflowEvent[]>();
    for (const { to: recipient } of copies) {
      for (const step of simulatedStory(recipient)) {
        const at = now + step.step * this.deps.stepSeconds * 1000;
        const event = emailEvent(email, recipient, step.type, step.data, { at }, this.deps.random);
        bySteps.set(step.step, [...(bySteps.get(step.step) ?? []), event]);
      }
    }
    for (const [step, events] of [...bySteps].sort(([a], [b]) => a - b)) {
      await this.deps.events.publish(events, step * this.deps.stepSeconds);
    }
    return copies.map(() => ({ status: 'sent' }));
  }
}

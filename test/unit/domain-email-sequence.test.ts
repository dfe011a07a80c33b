// Unit tests for an email event's `sequence` (lambdas/domain/email/sequence.ts): derived from the event alone,
// it grows with the event's time, orders a millisecond's events by stage, and is the same for the same event.
import { describe, expect, it } from 'vitest';
import { emailIdTime, eventSequence, SEQUENCE_STAGES } from '../../lambdas/domain/email/sequence';
import { timeOrderedId } from '../../lambdas/domain/ids';

const accepted = Date.parse('2026-11-26T04:00:00.000Z');
const emailId = timeOrderedId('email', accepted, (n) => new Uint8Array(n).fill(7));
const at = (ms: number) => new Date(accepted + ms).toISOString();

describe('eventSequence', () => {
  it('reads the acceptance time back from a time-ordered email id', () => {
    expect(emailIdTime(emailId)).toBe(accepted);
    expect(emailIdTime('em_01')).toBe(0);
  });

  it('is at least 1 and grows with the time of each event of the email: sent < delivered < opened < clicked', () => {
    // Arrange: a story as SES tells it, a few hundred milliseconds apart.
    const story = [
      { type: 'email.sent', timestamp: at(40), emailId },
      { type: 'email.delivered', timestamp: at(900), emailId },
      { type: 'email.opened', timestamp: at(60_000), emailId },
      { type: 'email.clicked', timestamp: at(61_000), emailId },
    ];

    // Act
    const sequences = story.map((event) => eventSequence(event));

    // Assert
    expect(sequences).toEqual([40 * 16 + 3, 900 * 16 + 5, 60_000 * 16 + 9, 61_000 * 16 + 10]);
    expect(Math.min(...(sequences as number[]))).toBeGreaterThanOrEqual(1);
  });

  it('orders events of the same millisecond by stage: scheduled, sent, delivered; bounced before failed', () => {
    const same = (type: string) => eventSequence({ type, timestamp: at(0), emailId }) as number;

    expect(same('email.scheduled')).toBe(1);
    expect(same('email.scheduled')).toBeLessThan(same('email.sent'));
    expect(same('email.sent')).toBeLessThan(same('email.delivered'));
    expect(same('email.bounced')).toBeLessThan(same('email.failed'));
    expect(same('email.delivered')).toBeLessThan(same('email.opened'));
    // Every stage fits in its millisecond: the next millisecond's first stage is past the last of this one.
    expect(same('email.received')).toBeLessThan(
      eventSequence({ type: 'email.scheduled', timestamp: at(1), emailId }) as number,
    );
    expect(SEQUENCE_STAGES).toBe(16);
  });

  it('is the same for the same event (redelivered, retried, replayed): it is computed, never counted', () => {
    const event = { type: 'email.delivered', timestamp: at(1234), emailId };
    expect(eventSequence({ ...event })).toBe(eventSequence(event));
  });

  it('is shared by one step of several recipients (same email, type and millisecond): they happened together', () => {
    expect(eventSequence({ type: 'email.sent', timestamp: at(5), emailId })).toBe(
      eventSequence({ type: 'email.sent', timestamp: at(5), emailId }),
    );
  });

  it('never goes below 1 for an event stamped before its email by a clock a little behind', () => {
    expect(eventSequence({ type: 'email.sent', timestamp: at(-30), emailId })).toBe(3);
  });

  it('uses the epoch as the base for an email id without a time (still one order per email)', () => {
    const ms = Date.parse('2026-01-01T12:00:00.000Z');
    expect(eventSequence({ type: 'email.bounced', timestamp: '2026-01-01T12:00:00.000Z', emailId: 'em_01' })).toBe(
      ms * 16 + 6,
    );
    expect(Number.isSafeInteger(ms * 16 + 16)).toBe(true);
  });

  it('is null for events not about an email, and for an unreadable time', () => {
    expect(eventSequence({ type: 'domain.updated', timestamp: at(0) })).toBeNull();
    expect(eventSequence({ type: 'test', timestamp: at(0) })).toBeNull();
    expect(eventSequence({ type: 'email.sent', timestamp: at(0) })).toBeNull();
    expect(eventSequence({ type: 'email.sent', timestamp: 'yesterday', emailId })).toBeNull();
  });
});

// Unit tests of an email's status (lambdas/domain/email/status.ts): the latest event by time, whatever the
// arrival order; ties go to the later stage; an unsubscribe never changes it; a cancelled email is `canceled`;
// no events yet is `queued`.
import { describe, expect, it } from 'vitest';
import { CANCELED_STATUS, emailStatus, statusFromEvent } from '../../lambdas/domain/email/status';

const at = (seconds: number) => new Date(Date.UTC(2025, 3, 1, 10, 0, seconds)).toISOString();
const ev = (type: string, seconds: number) => ({ type, timestamp: at(seconds) });

describe('emailStatus', () => {
  it('is queued while there are no events', () => {
    expect(emailStatus({ events: [] })).toBe('queued');
  });

  it('is the type of the only event, without the email. prefix', () => {
    expect(emailStatus({ events: [ev('email.scheduled', 0)] })).toBe('scheduled');
    expect(emailStatus({ events: [ev('email.failed', 0)] })).toBe('failed');
  });

  it('follows time, not arrival: delivered stays delivered when sent and delayed arrive after it', () => {
    // Arrange: arrival order delivered, sent, delivery_delayed.
    const events = [ev('email.delivered', 5), ev('email.sent', 1), ev('email.delivery_delayed', 3)];

    // Act / Assert
    expect(emailStatus({ events })).toBe('delivered');
  });

  it('is the latest event by time even when it is a late-arriving bounce or complaint', () => {
    expect(emailStatus({ events: [ev('email.delivered', 2), ev('email.sent', 1), ev('email.complained', 9)] })).toBe(
      'complained',
    );
    expect(emailStatus({ events: [ev('email.bounced', 4), ev('email.sent', 1)] })).toBe('bounced');
  });

  it('compares instants, not strings: an offset timestamp is placed by the time it denotes', () => {
    // Arrange: 11:00+02:00 is 09:00Z, before 10:00Z, though it sorts after it as text.
    const events = [
      { type: 'email.delivered', timestamp: '2025-04-01T10:00:00.000Z' },
      { type: 'email.opened', timestamp: '2025-04-01T11:00:00+02:00' },
    ];

    // Act / Assert
    expect(emailStatus({ events })).toBe('delivered');
  });

  it('breaks a tie of equal timestamps by stage, whatever the arrival order', () => {
    // Act / Assert
    expect(emailStatus({ events: [ev('email.delivered', 1), ev('email.sent', 1)] })).toBe('delivered');
    expect(emailStatus({ events: [ev('email.sent', 1), ev('email.delivered', 1)] })).toBe('delivered');
    expect(emailStatus({ events: [ev('email.clicked', 3), ev('email.opened', 3)] })).toBe('clicked');
    expect(emailStatus({ events: [ev('email.opened', 3), ev('email.delivered', 3), ev('email.sent', 3)] })).toBe(
      'opened',
    );
    expect(emailStatus({ events: [ev('email.delivered', 2), ev('email.delivery_delayed', 2)] })).toBe('delivered');
    expect(emailStatus({ events: [ev('email.sent', 0), ev('email.scheduled', 0)] })).toBe('sent');
  });

  it('ranks an outcome (bounced, complained, failed, suppressed) after the delivery stages in a tie', () => {
    expect(emailStatus({ events: [ev('email.bounced', 2), ev('email.delivered', 2)] })).toBe('bounced');
    expect(emailStatus({ events: [ev('email.clicked', 2), ev('email.complained', 2)] })).toBe('complained');
    expect(emailStatus({ events: [ev('email.failed', 0), ev('email.sent', 0)] })).toBe('failed');
  });

  it('ignores email.unsubscribed, even as the latest event', () => {
    // Act / Assert
    expect(emailStatus({ events: [ev('email.delivered', 1), ev('email.unsubscribed', 60)] })).toBe('delivered');
    expect(emailStatus({ events: [ev('email.opened', 5), ev('email.unsubscribed', 5)] })).toBe('opened');
    expect(emailStatus({ events: [ev('email.unsubscribed', 1)] })).toBe('queued');
  });

  it('is canceled for a cancelled email, whatever its events', () => {
    expect(emailStatus({ events: [ev('email.scheduled', 0)], canceledAt: at(30) })).toBe('canceled');
    expect(emailStatus({ events: [], canceledAt: at(30) })).toBe('canceled');
  });

  it('does not reorder the events it is given', () => {
    // Arrange
    const events = [ev('email.delivered', 5), ev('email.sent', 1)];
    const copy = structuredClone(events);

    // Act
    emailStatus({ events });

    // Assert
    expect(events).toEqual(copy);
  });
});

describe('statusFromEvent', () => {
  const at = (ms: number) => new Date(Date.UTC(2025, 0, 1) + ms).toISOString();
  const events = [
    { type: 'email.sent', timestamp: at(0) },
    { type: 'email.delivered', timestamp: at(5) },
    { type: 'email.opened', timestamp: at(5) },
    { type: 'email.unsubscribed', timestamp: at(9) },
    { type: 'email.bounced', timestamp: at(3) },
  ];

  it('ranks events as emailStatus orders them: the highest rank noted is the status it derives', () => {
    for (let n = 1; n <= events.length; n++) {
      const some = events.slice(0, n);
      const best = some
        .map(statusFromEvent)
        .filter((noted) => noted !== null)
        .reduce((a, b) => (b.rank > a.rank ? b : a));
      expect(best.status).toBe(emailStatus({ events: some }));
    }
  });

  it('gives nothing for an unsubscribe or a non-email event; a cancel outranks every event', () => {
    expect(statusFromEvent({ type: 'email.unsubscribed', timestamp: at(0) })).toBeNull();
    expect(statusFromEvent({ type: 'domain.created', timestamp: at(0) })).toBeNull();
    expect(CANCELED_STATUS.rank).toBeGreaterThan(
      statusFromEvent({ type: 'email.sent', timestamp: at(1e12) })?.rank ?? 0,
    );
  });
});

// Unit tests for the simulator provider (lambdas/adapters/simulator/simulated-provider.ts, DESIGN §6): every
// recipient it is given (to, cc and bcc, less the suppressed ones the use case leaves out) gets its own simulator
// story as our events, published step by step with the step's delay (stepSeconds × step), timed from the copy's
// hand-over, carrying the email's from and subject, with unique, time-ordered event ids. email.sent is not among
// them (the send worker tells it).
import { describe, expect, it } from 'vitest';
import { SimulatedEmailProvider } from '../../lambdas/adapters/simulator/simulated-provider';
import type { OutgoingCopy } from '../../lambdas/app/emails/ports';
import { type EmailMessage, recipients } from '../../lambdas/domain/email/email';
import { idOrdersByTime } from '../../lambdas/domain/email/history';
import type { SendflowEvent } from '../../lambdas/domain/events';
import { RecordingEventPublisher } from '../support/fakes';

const T0 = Date.UTC(2025, 6, 1, 8, 30, 0, 250);

function newEmail(overrides: Partial<EmailMessage> = {}): EmailMessage {
  return {
    id: 'em_01simulated',
    accountId: 'acct_sim',
    mode: 'test',
    from: 'Acme <billing@acme.example>',
    to: ['success@simulator.amazonses.com'],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: 'Your invoice',
    html: '<p>Hi</p>',
    headers: {},
    tags: [],
    createdAt: new Date(T0).toISOString(),
    ...overrides,
  };
}

function setup(stepSeconds = 2) {
  const events = new RecordingEventPublisher();
  const provider = new SimulatedEmailProvider({ events, stepSeconds });
  return { events, provider };
}

/** One outgoing copy per address, as the send use case hands them over. */
const copies = (addresses: readonly string[]): OutgoingCopy[] => addresses.map((to) => ({ to, headers: {} }));

/** The provider's arguments when every recipient of the email (to, cc, bcc) is to be sent to. */
const forAll = (email: EmailMessage): [EmailMessage, OutgoingCopy[]] => [email, copies(recipients(email))];

const summary = (published: RecordingEventPublisher['published']) =>
  published.map(({ events, delaySeconds }) => ({ delaySeconds, events: events.map((e) => `${e.type} ${e.to}`) }));

describe('SimulatedEmailProvider', () => {
  it('publishes success@ as email.delivered one step after the hand-over (no email.sent), with full event fields', async () => {
    // Arrange
    const { events, provider } = setup(2);

    // Act
    await provider.send(...forAll(newEmail()));

    // Assert
    expect(events.published.map((p) => [p.delaySeconds, p.events.length])).toEqual([[2, 1]]);
    const [delivered] = events.published.map((p) => p.events[0]) as [SendflowEvent];
    expect(delivered).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-z]{26}$/),
      type: 'email.delivered',
      accountId: 'acct_sim',
      mode: 'test',
      emailId: 'em_01simulated',
      to: 'success@simulator.amazonses.com',
      timestamp: new Date(T0 + 2_000).toISOString(),
      data: {
        from: 'Acme <billing@acme.example>',
        subject: 'Your invoice',
        smtp_response: '250 2.6.0 Message received',
      },
    });
  });

  it('gives every recipient — to, cc and bcc — its own events, by bare lower-cased address', async () => {
    // Arrange
    const { events, provider } = setup(1);
    const email = newEmail({
      to: ['Ann <Ann@Example.com>', 'bob@example.com'],
      cc: ['carol@example.com'],
      bcc: ['Dave <dave@example.com>'],
    });

    // Act
    await provider.send(...forAll(email));

    // Assert
    expect(summary(events.published)).toEqual([
      {
        delaySeconds: 1,
        events: [
          'email.delivered ann@example.com',
          'email.delivered bob@example.com',
          'email.delivered carol@example.com',
          'email.delivered dave@example.com',
        ],
      },
    ]);
  });

  it('runs each recipient’s own story, publishing step by step with delay stepSeconds × step', async () => {
    // Arrange
    const { events, provider } = setup(3);
    const email = newEmail({
      to: ['bounce+first@simulator.amazonses.com', 'click@simulator.amazonses.com'],
      bcc: ['reject@simulator.amazonses.com'],
    });

    // Act
    await provider.send(...forAll(email));

    // Assert
    expect(summary(events.published)).toEqual([
      {
        delaySeconds: 3,
        events: [
          'email.bounced bounce+first@simulator.amazonses.com',
          'email.delivered click@simulator.amazonses.com',
          'email.failed reject@simulator.amazonses.com',
        ],
      },
      { delaySeconds: 6, events: ['email.opened click@simulator.amazonses.com'] },
      { delaySeconds: 9, events: ['email.clicked click@simulator.amazonses.com'] },
    ]);
    const bounced = events.published[0]?.events[0];
    expect(bounced?.data).toEqual({
      from: 'Acme <billing@acme.example>',
      subject: 'Your invoice',
      bounce_type: 'Permanent',
      bounce_sub_type: 'General',
      refused_by_account_suppression_list: false,
      diagnostic_code: 'smtp; 550 5.1.1 user unknown',
    });
  });

  it('supports fractional step delays, and times each event at its start + step × stepSeconds', async () => {
    // Arrange
    const { events, provider } = setup(0.25);

    // Act
    await provider.send(...forAll(newEmail({ to: ['click@simulator.amazonses.com'] })));

    // Assert
    expect(events.published.map((p) => p.delaySeconds)).toEqual([0.25, 0.5, 0.75]);
    expect(events.published.map((p) => p.events[0]?.timestamp)).toEqual(
      [250, 500, 750].map((ms) => new Date(T0 + ms).toISOString()),
    );
  });

  it('times each copy’s story from its hand-over (`at`, its email.sent’s time), else from when the email was due', async () => {
    // Arrange: a copy handed over 90 s after its email's creation; one with no time; a scheduled email's.
    const { events, provider } = setup(1);
    const scheduledAt = new Date(T0 + 2 * 86_400_000).toISOString();

    // Act
    await provider.send(newEmail(), [{ to: 'success@simulator.amazonses.com', headers: {}, at: T0 + 90_000 }]);
    await provider.send(...forAll(newEmail()));
    await provider.send({ ...newEmail({ id: 'em_02scheduled' }), scheduledAt }, [
      { to: 'success@simulator.amazonses.com', headers: {} },
    ]);

    // Assert: stored times, so a copy handed over again stamps its events alike (and gives them the same ids).
    expect(events.published.map((p) => p.events[0]?.timestamp)).toEqual([
      new Date(T0 + 91_000).toISOString(),
      new Date(T0 + 1_000).toISOString(),
      new Date(T0 + 2 * 86_400_000 + 1_000).toISOString(),
    ]);
  });

  it('gives unique event ids, each made at its event’s time as SES’s are (the history stores them without byTime)', async () => {
    // Arrange
    const { events, provider } = setup(1);
    const email = newEmail({
      to: Array.from({ length: 20 }, (_, i) => `click+${i}@simulator.amazonses.com`),
      cc: ['complaint@simulator.amazonses.com'],
    });

    // Act
    await provider.send(...forAll(email));

    // Assert
    const all = events.published.flatMap((p) => p.events);
    expect(all).toHaveLength(20 * 3 + 2);
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
    const byId = [...all].sort((a, b) => (a.id < b.id ? -1 : 1));
    const timestamps = byId.map((e) => e.timestamp);
    expect(timestamps).toEqual([...timestamps].sort());
    for (const event of all) expect(idOrdersByTime(event)).toBe(true);
  });

  it('publishes every event to the account and mode of the email', async () => {
    // Arrange
    const { events, provider } = setup(1);

    // Act
    await provider.send(
      ...forAll(newEmail({ accountId: 'acct_live', mode: 'live', to: ['a@example.com', 'b@example.com'] })),
    );

    // Assert
    const all = events.published.flatMap((p) => p.events);
    expect(all.every((e) => e.accountId === 'acct_live' && e.mode === 'live' && e.emailId === 'em_01simulated')).toBe(
      true,
    );
  });
  it('simulates only the recipients it is given (a suppressed cc gets no events)', async () => {
    // Arrange
    const { events, provider } = setup(1);
    const email = newEmail({ to: ['ann@example.com'], cc: ['suppressed@example.com'], bcc: ['bob@example.com'] });

    // Act
    await provider.send(email, copies(['ann@example.com', 'bob@example.com']));

    // Assert
    const to = events.published.flatMap((p) => p.events.map((e) => e.to));
    expect(new Set(to)).toEqual(new Set(['ann@example.com', 'bob@example.com']));
  });

  it('publishes nothing for no recipients', async () => {
    // Arrange
    const { events, provider } = setup(1);

    // Act
    await provider.send(newEmail(), copies([]));

    // Assert
    expect(events.published).toEqual([]);
  });

  it('publishes the same event ids when a copy is sent again (a send received again after a partial publish)', async () => {
    // Arrange
    const { events, provider } = setup(2);
    const email = newEmail({ to: ['success@simulator.amazonses.com', 'click@simulator.amazonses.com'] });

    // Act
    await provider.send(...forAll(email));
    const first = events.published.flatMap((p) => p.events.map((e) => e.id));
    await provider.send(...forAll(email));
    const again = events.published.flatMap((p) => p.events.map((e) => e.id)).slice(first.length);

    // Assert: the same ids, all distinct, ordered by step like the events themselves.
    expect(again).toEqual(first);
    expect(new Set(first).size).toBe(first.length);
  });
});

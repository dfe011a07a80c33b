// email.sent is the send worker's own event (lambdas/app/emails/send-emails.ts): made when the provider took a
// copy, stamped at the copy's claim, and processed where it arises (SendEmailDeps.processEvents: history, webhook
// fan-out) before the recipient is recorded sent, so it takes no trip through the events queue. One the processing
// could not finish goes with the recipient's record into the email's outbox, and from there to the events queue;
// without processEvents every one does. A copy a dead local runtime had claimed is sent again with the same
// email.sent (id and time), so its story repeats nothing.
import { describe, expect, it } from 'vitest';
import { type SendEmailDeps, sendEmails, sendQueuedEmail } from '../../lambdas/app/emails/send-emails';
import type { Principal } from '../../lambdas/app/ports';
import type { SendflowEvent } from '../../lambdas/domain/events';
import {
  FakeClock,
  fixedLinks,
  InMemoryDomainRepository,
  InMemoryEmailRepository,
  InMemoryQuotaCounter,
  InMemorySuppressionList,
  RecordingEmailProvider,
  RecordingEventPublisher,
  RecordingSendScheduler,
  seededRandom,
} from '../support/fakes';

const T0 = Date.UTC(2025, 5, 10, 9, 0, 0);
const CALLER: Principal = {
  accountId: 'acct_sent',
  keyId: 'key_s',
  mode: 'test',
  scopes: ['email:send'],
  plan: 'free',
};

function setup(processEvents?: SendEmailDeps['processEvents']) {
  const clock = new FakeClock(T0);
  const emails = new InMemoryEmailRepository();
  const provider = new RecordingEmailProvider();
  const events = new RecordingEventPublisher();
  const deps: SendEmailDeps = {
    emails,
    domains: new InMemoryDomainRepository(),
    providerFor: () => provider,
    quotas: new InMemoryQuotaCounter(),
    suppressions: new InMemorySuppressionList(),
    events,
    sendScheduler: new RecordingSendScheduler(),
    links: fixedLinks(),
    clock,
    random: seededRandom('sent-event'),
    sendClaimMs: 120_000,
    ...(processEvents ? { processEvents } : {}),
  };
  const accept = async (to: string[]) => {
    const [id] = await sendEmails(deps, CALLER, [
      { from: 'a@acme.example', to, cc: [], bcc: [], replyTo: [], subject: 'S', text: 'x', headers: {}, tags: [] },
    ]);
    return id as string;
  };
  const published = () => events.published.flatMap((p) => p.events);
  return { clock, emails, provider, deps, accept, published };
}

describe('email.sent, made by the send worker', () => {
  it('is processed where it arises, once per copy taken, stamped at the claim: nothing goes to the events queue', async () => {
    // Arrange
    const processed: SendflowEvent[] = [];
    const s = setup(async (events) => {
      processed.push(...events);
      return [];
    });
    const id = await s.accept(['ada@example.com', 'bob@example.com']);
    s.clock.advance(1_500);

    // Act
    expect(await sendQueuedEmail(s.deps, id)).toBe('sent');

    // Assert
    expect(processed.map((e) => [e.type, e.emailId, e.to, e.timestamp, e.accountId, e.mode])).toEqual([
      ['email.sent', id, 'ada@example.com', new Date(T0 + 1_500).toISOString(), CALLER.accountId, 'test'],
      ['email.sent', id, 'bob@example.com', new Date(T0 + 1_500).toISOString(), CALLER.accountId, 'test'],
    ]);
    expect(processed[0]?.data).toEqual({ from: 'a@acme.example', subject: 'S' });
    expect(s.published()).toEqual([]);
    expect(await s.emails.outbox.due(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
    expect((await s.emails.get(id))?.recipientStates).toEqual({
      '0': { state: 'sent', tries: 1 },
      '1': { state: 'sent', tries: 1 },
    });
    // The provider is told when each copy was handed over: the simulator's story counts from it.
    expect(s.provider.sent[0]?.copies.map((c) => c.at)).toEqual([T0 + 1_500, T0 + 1_500]);
  });

  it('one whose processing failed goes through the outbox to the events queue; the others do not', async () => {
    // Arrange
    const s = setup(async (events) => events.filter((e) => e.to === 'bob@example.com'));
    const id = await s.accept(['ada@example.com', 'bob@example.com']);

    // Act
    await sendQueuedEmail(s.deps, id);

    // Assert
    expect(s.published().map((e) => [e.type, e.to])).toEqual([['email.sent', 'bob@example.com']]);
    expect(await s.emails.outbox.due(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
  });

  it('processing that throws sends every one through the outbox; the recipients are still recorded sent', async () => {
    // Arrange
    const s = setup(async () => {
      throw new Error('webhooks table throttled');
    });
    const id = await s.accept(['ada@example.com']);

    // Act
    expect(await sendQueuedEmail(s.deps, id)).toBe('sent');

    // Assert
    expect(s.published().map((e) => e.type)).toEqual(['email.sent']);
    expect((await s.emails.get(id))?.recipientStates?.['0']?.state).toBe('sent');
  });

  it('without processEvents, every email.sent goes through the outbox to the events queue', async () => {
    // Arrange
    const s = setup();
    const id = await s.accept(['ada@example.com']);

    // Act
    await sendQueuedEmail(s.deps, id);

    // Assert
    expect(s.published().map((e) => [e.type, e.to])).toEqual([['email.sent', 'ada@example.com']]);
  });

  it('a copy a dead local runtime had claimed goes out again with the same email.sent (id and time)', async () => {
    // Arrange: the runtime of epoch 1 dies during the provider call.
    const processed: SendflowEvent[] = [];
    const s = setup(async (events) => {
      processed.push(...events);
      return [];
    });
    const id = await s.accept(['ada@example.com']);
    s.provider.during = () => new Promise<void>(() => {});
    void sendQueuedEmail({ ...s.deps, claimEpoch: 1 }, id);
    await new Promise((resolve) => setImmediate(resolve));
    s.clock.advance(5_000);

    // Act: the next runtime receives the message again.
    s.provider.during = () => {};
    expect(await sendQueuedEmail({ ...s.deps, claimEpoch: 2 }, id, { redelivered: true })).toBe('sent');

    // Assert
    expect(s.provider.sent.map((send) => send.copies.map((c) => c.at))).toEqual([[T0], [T0]]);
    expect(processed.map((e) => [e.id, e.timestamp])).toEqual([
      [expect.stringMatching(/^evt_/), new Date(T0).toISOString()],
    ]);
    // Were it processed twice (the first runtime died after processing it), the ids would be one.
    const again = await sendQueuedEmail({ ...s.deps, claimEpoch: 3 }, id, { redelivered: true });
    expect(again).toBe('skipped');
  });
});

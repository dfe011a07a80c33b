// The send worker's per-recipient claims (lambdas/app/emails/send-emails.ts sendQueuedEmail) on in-memory fakes
// with a fake clock: a redelivered or duplicated sends message never sends a recipient twice; a worker stopped
// mid-batch (its time-out, a kill) leaves each recipient either sent by it, or sent by the next receive, or
// (its claim lapsed with the outcome unknown) email.failed; throttling goes back to pending and is retried on
// the next receive, then fails after the last try; email.failed and email.suppressed travel through the
// email's outbox. In every case each recipient ends with exactly one of sent, failed, suppressed.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  OUTCOME_UNKNOWN,
  type SendEmailDeps,
  SendIncompleteError,
  sendEmails,
  sendQueuedEmail,
} from '../../lambdas/app/emails/send-emails';
import type { Principal } from '../../lambdas/app/ports';
import type { EventPublisher } from '../../lambdas/app/webhooks/ports';
import { reconcile } from '../../lambdas/app/webhooks/reconcile';
import type { SendflowEvent } from '../../lambdas/domain/events';
import {
  FakeClock,
  fixedLinks,
  InMemoryContactRepository,
  InMemoryDeliveryRepository,
  InMemoryDomainRepository,
  InMemoryEmailRepository,
  InMemoryQuotaCounter,
  InMemorySuppressionList,
  RecordingEmailProvider,
  RecordingRetryScheduler,
  RecordingSendScheduler,
  seededRandom,
} from '../support/fakes';
import { InMemoryReceivedEmailRepository } from '../support/inbound-fakes';

const T0 = Date.UTC(2025, 5, 10, 9, 0, 0);
const CLAIM_MS = 120_000;
const MAX_TRIES = 3;
const CALLER: Principal = {
  accountId: 'acct_claims',
  keyId: 'key_1',
  mode: 'test',
  scopes: ['email:send'],
  plan: 'free',
};
const FIFTY = Array.from({ length: 50 }, (_, i) => `r${i}@example.com`);

class FlakyPublisher implements EventPublisher {
  readonly published: SendflowEvent[] = [];
  failures = 0;
  async publish(events: readonly SendflowEvent[]): Promise<void> {
    if (this.failures-- > 0) throw new Error('events queue unavailable (injected)');
    this.published.push(...structuredClone([...events]));
  }
}

function setup() {
  const clock = new FakeClock(T0);
  const provider = new RecordingEmailProvider();
  const events = new FlakyPublisher();
  const deps: SendEmailDeps & Parameters<typeof reconcile>[0] = {
    emails: new InMemoryEmailRepository(),
    domains: new InMemoryDomainRepository(),
    contacts: new InMemoryContactRepository(),
    deliveries: new InMemoryDeliveryRepository(),
    retries: new RecordingRetryScheduler(),
    providerFor: () => provider,
    quotas: new InMemoryQuotaCounter(),
    suppressions: new InMemorySuppressionList(),
    receivedEmails: new InMemoryReceivedEmailRepository(),
    events,
    sendScheduler: new RecordingSendScheduler(),
    links: fixedLinks(),
    clock,
    random: seededRandom('claims'),
    sendClaimMs: CLAIM_MS,
    maxSendTries: MAX_TRIES,
  };
  const accept = async (to = FIFTY) => {
    const [id] = await sendEmails(deps, CALLER, [
      { from: 'a@acme.example', to, cc: [], bcc: [], replyTo: [], subject: 'S', text: 'x', headers: {}, tags: [] },
    ]);
    return id as string;
  };
  /** Each recipient's final outcome as the world sees it: a provider copy, or its email.failed / suppressed. */
  const outcomes = () => {
    const byRecipient = new Map<string, string[]>();
    const add = (to: string, what: string) => byRecipient.set(to, [...(byRecipient.get(to) ?? []), what]);
    for (const to of provider.recipients()) add(to, 'sent');
    for (const event of events.published) {
      if (event.type === 'email.failed' || event.type === 'email.suppressed') add(event.to as string, event.type);
    }
    return byRecipient;
  };
  return { clock, provider, events, deps, accept, outcomes };
}

/** Runs the worker as SQS would: a SendIncompleteError means the message comes back later. */
async function receive(deps: SendEmailDeps, id: string, options: { deadline?: number } = {}) {
  try {
    return await sendQueuedEmail(deps, id, options);
  } catch (error) {
    if (error instanceof SendIncompleteError) return 'again';
    throw error;
  }
}

describe('per-recipient claims', () => {
  let s: ReturnType<typeof setup>;
  beforeEach(() => {
    s = setup();
  });

  it('a redelivered message, and two workers at once, send each of 50 recipients exactly once', async () => {
    // Arrange
    const id = await s.accept();

    // Act
    const results = await Promise.all([receive(s.deps, id), receive(s.deps, id)]);
    const redelivered = await receive(s.deps, id);

    // Assert
    expect(results).toContain('sent');
    expect(redelivered).toBe('skipped');
    expect(s.provider.recipients().sort()).toEqual([...FIFTY].sort());
    expect([...s.outcomes().values()].every((o) => o.length === 1 && o[0] === 'sent')).toBe(true);
    expect(await s.deps.emails.listScheduled(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
  });

  it('a time-out mid-batch: no claim after the deadline; the next receive sends the rest, none twice', async () => {
    // Arrange: the clock passes the deadline during the second chunk's provider call.
    const id = await s.accept();
    const deadline = T0 + 1_000;
    let calls = 0;
    s.provider.during = () => {
      calls += 1;
      if (calls === 2) s.clock.set(deadline);
    };

    // Act
    const first = await receive(s.deps, id, { deadline });
    const sentFirst = s.provider.recipients().length;
    const second = await receive(s.deps, id, { deadline: deadline + 60_000 });

    // Assert
    expect([first, second]).toEqual(['again', 'sent']);
    expect(sentFirst).toBe(20);
    expect(s.provider.recipients().sort()).toEqual([...FIFTY].sort());
    expect([...s.outcomes().values()].every((o) => o.length === 1)).toBe(true);
  });

  it('a worker killed between the provider call and its records: its claims lapse into email.failed, the rest are sent', async () => {
    // Arrange: the second chunk's call never returns (the process is gone).
    const id = await s.accept();
    let calls = 0;
    s.provider.during = () => {
      calls += 1;
      if (calls === 2) return new Promise<void>(() => {});
    };
    void receive(s.deps, id);
    await new Promise((resolve) => setImmediate(resolve));
    const killedChunk = s.provider.sent[1]?.copies.map((c) => c.to) ?? [];

    // Act: a redelivery before the claims lapse leaves them alone; after, they fail as unknown.
    s.provider.during = () => {};
    const early = await receive(s.deps, id);
    s.clock.advance(CLAIM_MS + 1);
    const late = await receive(s.deps, id);

    // Assert
    expect(killedChunk).toHaveLength(10);
    expect([early, late]).toEqual(['skipped', 'sent']);
    const outcomes = s.outcomes();
    for (const to of FIFTY) {
      expect(outcomes.get(to), to).toEqual(killedChunk.includes(to) ? ['sent', 'email.failed'] : ['sent']);
    }
    const failed = s.events.published.filter((e) => e.type === 'email.failed');
    expect(failed.map((e) => e.data.reason)).toEqual(killedChunk.map(() => OUTCOME_UNKNOWN));
    expect(s.provider.recipients()).toHaveLength(50);
  });

  it('a restarted local runtime sends again what the dead one had claimed (an earlier epoch), each copy once more', async () => {
    // Arrange: the runtime of epoch 1 dies during the second chunk's provider call.
    const id = await s.accept();
    let calls = 0;
    s.provider.during = () => {
      calls += 1;
      if (calls === 2) return new Promise<void>(() => {});
    };
    void receive({ ...s.deps, claimEpoch: 1 }, id);
    await new Promise((resolve) => setImmediate(resolve));
    const killedChunk = s.provider.sent[1]?.copies.map((c) => c.to) ?? [];

    // Act: the next runtime (epoch 2) receives the message again, long before the claims would lapse.
    s.provider.during = () => {};
    const again = await receive({ ...s.deps, claimEpoch: 2 }, id);

    // Assert: the orphaned chunk is handed over again (the simulator's derived ids make that harmless); no failure.
    expect(again).toBe('sent');
    const outcomes = s.outcomes();
    for (const to of FIFTY)
      expect(outcomes.get(to), to).toEqual(killedChunk.includes(to) ? ['sent', 'sent'] : ['sent']);
    expect(s.events.published.filter((e) => e.type === 'email.failed')).toEqual([]);
  });

  it('throttling goes back to pending and is retried on the next receive; after the last try, email.failed', async () => {
    // Arrange: SES throttles r0 always, r1 once.
    const id = await s.accept(['r0@example.com', 'r1@example.com', 'r2@example.com']);
    let r1 = 0;
    s.provider.outcome = (to) =>
      to === 'r0@example.com' || (to === 'r1@example.com' && r1++ === 0)
        ? { status: 'retry', reason: 'TooManyRequestsException: Maximum sending rate exceeded.' }
        : { status: 'sent' };

    // Act
    const receives = [];
    for (let i = 0; i < MAX_TRIES + 1; i++) receives.push(await receive(s.deps, id));

    // Assert
    expect(receives).toEqual(['again', 'again', 'sent', 'skipped']);
    expect(s.provider.recipients().filter((to) => to === 'r0@example.com')).toHaveLength(MAX_TRIES);
    const failed = s.events.published.filter((e) => e.type === 'email.failed');
    expect(failed.map((e) => [e.to, e.data.reason])).toEqual([
      ['r0@example.com', 'TooManyRequestsException: Maximum sending rate exceeded.'],
    ]);
    expect((await s.deps.emails.get(id))?.recipientStates).toEqual({
      '0': { state: 'failed', tries: 3, reason: 'TooManyRequestsException: Maximum sending rate exceeded.' },
      '1': { state: 'sent', tries: 2 },
      '2': { state: 'sent', tries: 1 },
    });
  });

  it('a send left for later is out of the reconciler’s sight until the queue’s backoff has passed', async () => {
    // Arrange: SES throttles the only recipient.
    const id = await s.accept(['r0@example.com']);
    s.provider.outcome = () => ({ status: 'retry', reason: 'TooManyRequestsException' });
    const retryMs = 6 * 60_000;

    // Act
    expect(await receive({ ...s.deps, sendRetryMs: retryMs }, id)).toBe('again');
    const now = s.clock.now();

    // Assert: the reconciler (which lists what is due before now - grace) does not re-queue it early.
    expect(await s.deps.emails.listScheduled(now + retryMs - 1, 10)).toEqual([]);
    expect(await s.deps.emails.listScheduled(now + retryMs, 10)).toEqual([{ id, sendAt: now + retryMs }]);
  });

  it('email.failed and email.suppressed wait in the email’s outbox when the publish fails, and the sweep relays them once', async () => {
    // Arrange
    await s.deps.suppressions.add(CALLER, { address: 'r1@example.com', reason: 'complaint', createdAt: 'x' });
    const id = await s.accept(['r0@example.com', 'r1@example.com']);
    s.provider.outcome = () => ({ status: 'refused', reason: 'MessageRejected: no' });
    s.events.failures = 2;

    // Act
    const result = await receive(s.deps, id);
    const before = [...s.events.published];
    s.clock.advance(60_000);
    await reconcile(s.deps, { graceMs: 30_000 });
    await reconcile(s.deps, { graceMs: 30_000 });

    // Assert
    expect(result).toBe('sent');
    expect(before).toEqual([]);
    expect(s.events.published.map((e) => [e.type, e.to]).sort()).toEqual([
      ['email.failed', 'r0@example.com'],
      ['email.suppressed', 'r1@example.com'],
    ]);
    expect(await s.deps.emails.outbox.due(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
  });

  it('email.scheduled is recorded with the email and relayed by the sweep when its publish fails', async () => {
    // Arrange
    s.events.failures = 1;
    const at = new Date(T0 + 3_600_000).toISOString();

    // Act
    const [id] = await sendEmails(s.deps, CALLER, [
      {
        from: 'a@acme.example',
        to: ['x@example.com'],
        cc: [],
        bcc: [],
        replyTo: [],
        subject: 'S',
        text: 'x',
        headers: {},
        tags: [],
        scheduledAt: at,
      },
    ]);
    s.clock.advance(60_000);
    await reconcile(s.deps, { graceMs: 30_000 });

    // Assert
    expect(s.events.published.map((e) => [e.type, e.emailId])).toEqual([['email.scheduled', id]]);
  });
});

// email.sent is the send worker's own event (lambdas/app/emails/send-emails.ts): made when the provider took a
// copy, stamped at the copy's claim, and processed where it arises (SendEmailDeps.processEvents: history, webhook
// fan-out), so it takes no trip through the events queue. One the processing could not finish goes with the
// recipient's record into the email's outbox, and from there to the events queue; without processEvents every one
// does. Once processed, the email's history is the copy's record: its claim is not written again, and a claim
// whose email.sent the history holds counts as sent (never failed for a lapse, never sent again). A copy a dead
// local runtime had claimed, and whose email.sent nothing recorded, is sent again with the same email.sent.
import { describe, expect, it } from 'vitest';
import { domainId } from '../../lambdas/app/domains/domains';
import { OUTCOME_UNKNOWN, type SendEmailDeps, sendEmails, sendQueuedEmail } from '../../lambdas/app/emails/send-emails';
import { processEvents } from '../../lambdas/app/events/process-event';
import type { Principal } from '../../lambdas/app/ports';
import type { SendflowEvent } from '../../lambdas/domain/events';
import {
  FakeClock,
  fixedLinks,
  InMemoryDomainRepository,
  InMemoryEmailHistory,
  InMemoryEmailRepository,
  InMemoryQuotaCounter,
  InMemorySuppressionList,
  InMemoryWebhookRepository,
  RecordingDeliveryQueue,
  RecordingEmailProvider,
  RecordingEventPublisher,
  RecordingSendScheduler,
  RecordingTelemetry,
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
  /** A live-mode email from acme.example, verified for the purpose. */
  const acceptLive = async (to: string[]) => {
    const tenant = { accountId: CALLER.accountId, mode: 'live' as const };
    const at = new Date(T0 - 86_400_000).toISOString();
    const name = 'acme.example';
    const domain = { ...tenant, id: domainId(tenant, name), name, status: 'verified' as const, records: [] };
    await deps.domains.create({ ...domain, createdAt: at, updatedAt: at }, []);
    const [id] = await sendEmails(deps, { ...CALLER, mode: 'live' }, [
      { from: 'a@acme.example', to, cc: [], bcc: [], replyTo: [], subject: 'S', text: 'x', headers: {}, tags: [] },
    ]);
    return id as string;
  };
  const published = () => events.published.flatMap((p) => p.events);
  return { clock, emails, provider, deps, accept, acceptLive, published };
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

/** As the runtimes wire it: the history is written by processEvents, and read back by the send worker. */
function wired() {
  const history = new InMemoryEmailHistory();
  const clock = new FakeClock(T0);
  const process = (events: readonly SendflowEvent[]) =>
    processEvents(
      {
        webhooks: new InMemoryWebhookRepository(),
        deliveryQueue: new RecordingDeliveryQueue(),
        clock,
        emailHistory: history,
        suppressions: new InMemorySuppressionList(),
      },
      events,
    );
  const s = setup(process);
  const deps: SendEmailDeps = { ...s.deps, clock: s.clock, emailHistory: history };
  const writes: string[] = [];
  const setRecipient = s.emails.setRecipient.bind(s.emails);
  s.emails.setRecipient = (id, i, expect, to, events) => {
    writes.push(`${i}:${expect.state}->${to.state}`);
    return setRecipient(id, i, expect, to, events);
  };
  return { ...s, deps, history, writes };
}

describe('the history is the record of a copy whose email.sent was processed', () => {
  it('a sent copy costs one write of its item (the claim), not two', async () => {
    // Arrange
    const s = wired();
    const id = await s.accept(['ada@example.com', 'bob@example.com']);

    // Act
    expect(await sendQueuedEmail(s.deps, id)).toBe('sent');

    // Assert
    expect(s.writes).toEqual(['0:pending->claimed', '1:pending->claimed']);
    const sent = (await s.history.latest(id, 10)).events.filter((e) => e.type === 'email.sent');
    expect(sent.map((e) => e.to).sort()).toEqual(['ada@example.com', 'bob@example.com']);
  });

  it('a message received again finds the copies sent (the history), sends nothing and leaves the email alone', async () => {
    // Arrange
    const s = wired();
    const id = await s.accept(['ada@example.com']);
    await sendQueuedEmail(s.deps, id);
    let deferred = 0;
    s.emails.deferSend = async () => {
      deferred += 1;
    };

    // Act
    const again = await sendQueuedEmail(s.deps, id);

    // Assert
    expect(again).toBe('skipped');
    expect(s.provider.sent).toHaveLength(1);
    expect(deferred).toBe(0);
    expect(s.writes).toEqual(['0:pending->claimed']);
  });

  it('a lapsed claim whose email.sent the history holds is sent, not failed send_outcome_unknown', async () => {
    // Arrange
    const s = wired();
    const id = await s.accept(['ada@example.com']);
    await sendQueuedEmail(s.deps, id);
    s.clock.advance(10 * 60_000);

    // Act
    await sendQueuedEmail(s.deps, id, { redelivered: true });

    // Assert
    expect(s.published().filter((e) => e.type === 'email.failed')).toEqual([]);
    expect(s.provider.sent).toHaveLength(1);
  });

  it('a lapsed claim with no email.sent in the history (its worker died mid-send) is failed send_outcome_unknown', async () => {
    // Arrange: the worker dies during the provider call.
    const s = wired();
    const id = await s.accept(['ada@example.com']);
    s.provider.during = () => new Promise<void>(() => {});
    void sendQueuedEmail(s.deps, id);
    await new Promise((resolve) => setImmediate(resolve));
    s.provider.during = () => {};
    s.clock.advance(10 * 60_000);

    // Act
    await sendQueuedEmail(s.deps, id, { redelivered: true });

    // Assert
    expect(
      s
        .published()
        .filter((e) => e.type === 'email.failed')
        .map((e) => e.data.reason),
    ).toEqual([OUTCOME_UNKNOWN]);
    expect(s.provider.sent).toHaveLength(1);
  });

  it('a recipient listed twice: each copy has its own email.sent, and one copy’s record never stands for the other', async () => {
    // Arrange: 11 recipients, the 11th the 1st again; the worker dies during the 2nd chunk's provider call.
    const s = wired();
    const to = [...Array.from({ length: 10 }, (_, i) => `r${i}@example.com`), 'R0 <r0@example.com>'];
    const id = await s.accept(to);
    let calls = 0;
    s.provider.during = () => {
      calls += 1;
      if (calls === 2) return new Promise<void>(() => {});
    };
    void sendQueuedEmail(s.deps, id);
    await new Promise((resolve) => setTimeout(resolve, 20));
    s.provider.during = () => {};
    s.clock.advance(10 * 60_000);

    // Act
    await sendQueuedEmail(s.deps, id, { redelivered: true });

    // Assert: the 11th copy's outcome is unknown (never taken for sent through the 1st's event).
    const failed = s.published().filter((e) => e.type === 'email.failed');
    expect(failed.map((e) => [e.to, e.data.reason])).toEqual([['r0@example.com', OUTCOME_UNKNOWN]]);
    const sent = (await s.history.latest(id, 100)).events.filter((e) => e.type === 'email.sent');
    expect(sent).toHaveLength(10);
  });

  it('a dead local runtime’s claim whose email.sent the history holds is not sent again', async () => {
    // Arrange
    const s = wired();
    const id = await s.accept(['ada@example.com']);
    await sendQueuedEmail({ ...s.deps, claimEpoch: 1 }, id);

    // Act: the next runtime receives the message again.
    const again = await sendQueuedEmail({ ...s.deps, claimEpoch: 2 }, id, { redelivered: true });

    // Assert
    expect(again).toBe('skipped');
    expect(s.provider.sent).toHaveLength(1);
  });
});

describe('a copy whose email.sent was not fanned out is never taken for sent', () => {
  it('fan-out and the outbox record both failing: the history holds nothing, so a lapse fails the copy (outcome unknown)', async () => {
    // Arrange: the fan-out's queue refuses, and so does the write that would put email.sent in the outbox.
    const history = new InMemoryEmailHistory();
    const clock = new FakeClock(T0);
    const webhooks = new InMemoryWebhookRepository();
    const s = setup((events) =>
      processEvents(
        {
          webhooks,
          deliveryQueue: {
            send: async () => {
              throw new Error('SQS unavailable (injected)');
            },
          },
          clock,
          emailHistory: history,
          suppressions: new InMemorySuppressionList(),
        },
        events,
      ),
    );
    const deps: SendEmailDeps = { ...s.deps, emailHistory: history };
    const id = await s.accept(['ada@example.com']);
    await webhooks.create({
      accountId: CALLER.accountId,
      mode: 'test',
      id: 'wh_sent',
      url: 'https://hooks.example.com/sent',
      events: ['email.sent'],
      format: 'standard',
      secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
      active: true,
      createdAt: new Date(T0).toISOString(),
      updatedAt: new Date(T0).toISOString(),
    });
    const setRecipient = s.emails.setRecipient.bind(s.emails);
    s.emails.setRecipient = async (emailId, i, expect, to, events) => {
      if (to.state === 'sent') throw new Error('DynamoDB unavailable (injected)');
      return setRecipient(emailId, i, expect, to, events);
    };
    await expect(sendQueuedEmail(deps, id)).rejects.toThrow('DynamoDB unavailable');

    // Act: the message comes back once the claim lapsed.
    s.emails.setRecipient = setRecipient;
    s.clock.advance(10 * 60_000);
    await sendQueuedEmail(deps, id, { redelivered: true });

    // Assert
    expect((await history.latest(id, 10)).events.filter((e) => e.type === 'email.sent')).toEqual([]);
    expect(
      s
        .published()
        .filter((e) => e.type === 'email.failed')
        .map((e) => e.data.reason),
    ).toEqual([OUTCOME_UNKNOWN]);
  });
});

describe('paced copies', () => {
  it('each copy’s email.sent is processed as soon as it is taken, not after the last copy of its chunk', async () => {
    // Arrange: a live email to 10, each copy's turn 2 ms after the one before (a paced invocation).
    const processed: SendflowEvent[] = [];
    const s = setup(async (events) => {
      processed.push(...events);
      return [];
    });
    const seen: number[] = [];
    s.provider.during = () => {
      seen.push(processed.length);
    };
    const livePacer = {
      take: async () => {
        await new Promise((resolve) => setTimeout(resolve, 2));
        return true;
      },
    };
    const id = await s.acceptLive(Array.from({ length: 10 }, (_, i) => `r${i}@example.com`));

    // Act
    expect(await sendQueuedEmail({ ...s.deps, livePacer }, id)).toBe('sent');

    // Assert: by the last copies' hand-over, the first copies' email.sent were processed; each exactly once.
    expect(seen).toHaveLength(10);
    expect(seen.at(-1)).toBeGreaterThan(0);
    expect(new Set(processed.map((e) => e.to)).size).toBe(10);
    expect(processed).toHaveLength(10);
  });
});

describe('send lag', () => {
  it('a first receive reports how long after it was due the worker started the email; a retry does not', async () => {
    // Arrange
    const telemetry = new RecordingTelemetry();
    const s = setup();
    const deps: SendEmailDeps = { ...s.deps, telemetry };
    const id = await s.accept(['ada@example.com']);
    s.clock.advance(90_000);

    // Act
    await sendQueuedEmail(deps, id);
    await sendQueuedEmail(deps, id, { redelivered: true });

    // Assert
    expect(telemetry.sendLags).toEqual([90_000]);
  });
});

describe('a paced chunk cut short', () => {
  it('a pacer that fails mid-chunk: the copies already taken stay sent (told once), the rest go back to pending', async () => {
    // Arrange: a live email to 3; the pacer gives a turn, then fails.
    const processed: SendflowEvent[] = [];
    const s = setup(async (events) => {
      processed.push(...events);
      return [];
    });
    const history = new InMemoryEmailHistory();
    let takes = 0;
    const livePacer = {
      take: async () => {
        takes += 1;
        if (takes > 1) throw new Error('pace store unavailable (injected)');
        return true;
      },
    };
    const deps: SendEmailDeps = { ...s.deps, livePacer, emailHistory: history };
    const id = await s.acceptLive(['r0@example.com', 'r1@example.com', 'r2@example.com']);

    // Act: this receive, then the next once the pacer works again.
    await expect(sendQueuedEmail(deps, id)).rejects.toThrow();
    takes = -100;
    await sendQueuedEmail(deps, id, { redelivered: true });

    // Assert: every copy handed over once, each told once.
    expect(s.provider.recipients().sort()).toEqual(['r0@example.com', 'r1@example.com', 'r2@example.com']);
    expect(processed.map((e) => e.to).sort()).toEqual(['r0@example.com', 'r1@example.com', 'r2@example.com']);
  });
});

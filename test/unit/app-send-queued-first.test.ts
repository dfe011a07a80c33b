// Unit tests of a single email sent now (lambdas/app/emails/send-emails.ts): its send is queued before the email is
// stored, and the email is stored out of the schedule index (no entry written, none removed at the finish). What
// the index did for it the queue and the send worker now do: a failed queuing stores it in the index instead; a
// failed store leaves a message that finds no email, received again within the request's time, then dropped; a
// message that comes before the store waits a moment for it; a send left for later (retryable outcomes, another
// worker's claims, the queue's last receive) puts the email in the index, so the reconciler queues it again.
import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { EmailRecord } from '../../lambdas/app/emails/ports';
import {
  type EmailDraft,
  EmailNotStoredError,
  type SendEmailDeps,
  SendIncompleteError,
  STORE_GRACE_MS,
  sendEmails,
  sendQueuedEmail,
} from '../../lambdas/app/emails/send-emails';
import type { Principal } from '../../lambdas/app/ports';
import { quotaWindow } from '../../lambdas/domain/email/quota';
import { createSendWorkerHandler, encodeSend } from '../../lambdas/handlers/queue/send-worker';
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
const CALLER: Principal = { accountId: 'acct_q', keyId: 'key_q', mode: 'test', scopes: ['email:send'], plan: 'free' };
const EVERYTHING = Number.MAX_SAFE_INTEGER;

function setup() {
  const clock = new FakeClock(T0);
  const emails = new InMemoryEmailRepository();
  const provider = new RecordingEmailProvider();
  const sendScheduler = new RecordingSendScheduler();
  const quotas = new InMemoryQuotaCounter();
  const finished: string[] = [];
  const finishSending = emails.finishSending.bind(emails);
  emails.finishSending = async (id) => {
    finished.push(id);
    return finishSending(id);
  };
  const sleeps: number[] = [];
  const deps: SendEmailDeps = {
    emails,
    domains: new InMemoryDomainRepository(),
    providerFor: () => provider,
    quotas,
    suppressions: new InMemorySuppressionList(),
    events: new RecordingEventPublisher(),
    sendScheduler,
    links: fixedLinks('secret', 'https://api.sendflow.test/v1'),
    clock,
    random: seededRandom('queued-first'),
    sendRetryMs: 360_000,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock.advance(ms);
    },
  };
  return { clock, emails, provider, sendScheduler, quotas, deps, finished, sleeps };
}

/** A stored email of the draft (as sendEmails makes it), under the given id. */
const draftRecord = (id: string): EmailRecord => ({
  ...(({ attachments: _attachments, scheduledAt: _at, ...fields }) => fields)(draft()),
  id,
  accountId: CALLER.accountId,
  mode: CALLER.mode,
  createdAt: new Date(T0).toISOString(),
  suppressed: [],
  unsubscribeUrls: {},
});

const draft = (overrides: Partial<EmailDraft> = {}): EmailDraft => ({
  from: 'billing@acme.example',
  to: ['ada@example.com'],
  cc: [],
  bcc: [],
  replyTo: [],
  subject: 'Invoice 42',
  text: 'Hello',
  headers: {},
  tags: [],
  ...overrides,
});

const testCaller = CALLER;

describe('a single email sent now: queued first, stored out of the schedule index', () => {
  it('is queued before it is stored, never enters the index, and is sent without a finishing write', async () => {
    // Arrange: what the sends queue sees when the message goes out.
    const s = setup();
    let storedWhenQueued: unknown = 'not queued';
    const schedule = s.sendScheduler.schedule.bind(s.sendScheduler);
    s.sendScheduler.schedule = async (emailId, atMs) => {
      storedWhenQueued = await s.emails.get(emailId);
      return schedule(emailId, atMs);
    };

    // Act
    const [id] = await sendEmails(s.deps, testCaller, [draft()]);
    const waiting = await s.emails.listScheduled(EVERYTHING, 10);
    const result = await sendQueuedEmail(s.deps, id as string);
    const again = await sendQueuedEmail(s.deps, id as string);

    // Assert
    expect(storedWhenQueued).toBeNull();
    expect(s.sendScheduler.scheduled).toEqual([{ emailId: id, atMs: T0 }]);
    expect(waiting).toEqual([]);
    expect([result, again]).toEqual(['sent', 'skipped']);
    expect(s.provider.recipients()).toEqual(['ada@example.com']);
    expect(s.finished).toEqual([]);
  });

  it('a batch and a scheduled email are stored in the index first, then queued (their sends wait for a decision or a time)', async () => {
    // Arrange
    const s = setup();

    // Act
    const batch = await sendEmails(s.deps, testCaller, [draft(), draft()], { batch: true });
    const [later] = await sendEmails(s.deps, testCaller, [
      draft({ scheduledAt: new Date(T0 + 3_600_000).toISOString() }),
    ]);

    // Assert
    const waiting = (await s.emails.listScheduled(EVERYTHING, 10)).map((e) => e.id);
    expect(waiting.sort()).toEqual([...batch, later].sort());
  });

  it('when queuing fails, it is stored in the index (the reconciler queues it) and the request succeeds', async () => {
    // Arrange
    const s = setup();
    s.sendScheduler.schedule = async () => {
      throw new Error('SQS unavailable (injected)');
    };

    // Act
    const [id] = await sendEmails(s.deps, testCaller, [draft()]);

    // Assert
    expect(await s.emails.listScheduled(EVERYTHING, 10)).toEqual([{ id, sendAt: T0 }]);
  });

  it('when storing fails after queuing, the request fails with its quota given back; the message is received again within the request’s time, then dropped', async () => {
    // Arrange
    const t = setup();
    t.emails.failOnWrite = 1;
    const window = quotaWindow(T0);

    // Act / Assert
    await expect(sendEmails(t.deps, testCaller, [draft()])).rejects.toThrow('injected');
    const [{ emailId } = { emailId: '' }] = t.sendScheduler.scheduled;
    expect(await t.quotas.used(testCaller.accountId, window)).toBe(0);
    await expect(sendQueuedEmail(t.deps, emailId)).rejects.toBeInstanceOf(EmailNotStoredError);
    expect(t.sleeps).toEqual([20, 80, 300, 600, 1000]);
    t.clock.advance(STORE_GRACE_MS);
    // Received again past its request's time (a first receive would wait for it once more: clocks may differ).
    await expect(sendQueuedEmail(t.deps, emailId)).rejects.toBeInstanceOf(EmailNotStoredError);
    expect(await sendQueuedEmail(t.deps, emailId, { redelivered: true })).toBe('skipped');
    expect(t.provider.sent).toEqual([]);
    expect(await t.emails.get(emailId)).toBeNull();
    // A store of it still under way (its request frozen mid-write) now fails: no email that nothing sends.
    const late = draftRecord(emailId);
    t.emails.failOnWrite = null;
    await expect(t.emails.createMany([late], [], { queued: true })).rejects.toThrow('abandoned');
    expect(await t.emails.get(emailId)).toBeNull();
  });

  it('a message that comes before its email is stored waits a moment for it, then sends it', async () => {
    // Arrange: the worker runs as soon as the message is queued, before the request stores the email.
    const s = setup();
    let worker: Promise<'sent' | 'skipped'> | undefined;
    const schedule = s.sendScheduler.schedule.bind(s.sendScheduler);
    s.sendScheduler.schedule = async (emailId, atMs) => {
      await schedule(emailId, atMs);
      worker = sendQueuedEmail(s.deps, emailId);
    };
    let release: () => void = () => {};
    const stored = new Promise<void>((resolve) => {
      release = resolve;
    });
    s.deps = { ...s.deps, sleep: () => stored };

    // Act
    await sendEmails(s.deps, testCaller, [draft()]);
    release();

    // Assert
    expect(await worker).toBe('sent');
    expect(s.provider.recipients()).toEqual(['ada@example.com']);
  });
});

describe('a queued email whose send is left for later enters the schedule index', () => {
  it('retryable outcomes: deferred in the index (the reconciler queues it again at the retry time)', async () => {
    // Arrange
    const s = setup();
    s.provider.outcome = () => ({ status: 'retry', reason: 'throttled' });
    const [id] = await sendEmails(s.deps, testCaller, [draft()]);

    // Act
    const sent = sendQueuedEmail(s.deps, id as string);

    // Assert
    await expect(sent).rejects.toBeInstanceOf(SendIncompleteError);
    expect(await s.emails.listScheduled(EVERYTHING, 10)).toEqual([{ id, sendAt: T0 + 360_000 }]);
  });

  it('another worker’s live claim: skipped, and in the index until that claim can lapse', async () => {
    // Arrange: a worker holds the recipient (claimed, not yet recorded) when the message is received again.
    const s = setup();
    const [id] = await sendEmails(s.deps, testCaller, [draft()]);
    await s.emails.startSending(id as string, new Date(T0).toISOString(), { scheduled: false });
    await s.emails.setRecipient(
      id as string,
      0,
      { state: 'pending' },
      { state: 'claimed', tries: 1, until: T0 + 900_000, epoch: 0 },
      [],
    );

    // Act
    const result = await sendQueuedEmail(s.deps, id as string);

    // Assert
    expect(result).toBe('skipped');
    expect(s.provider.sent).toEqual([]);
    expect(await s.emails.listScheduled(EVERYTHING, 10)).toEqual([{ id, sendAt: T0 + 15 * 60_000 }]);
  });

  it('a message received again puts its email in the index first, even when its handling then fails', async () => {
    // Arrange: the suppression list cannot be read (an outage of ours), every time.
    const s = setup();
    const [id] = await sendEmails(s.deps, testCaller, [draft()]);
    s.deps = {
      ...s.deps,
      suppressions: {
        ...s.deps.suppressions,
        find: async () => {
          throw new Error('DynamoDB unavailable (injected)');
        },
      },
    };

    // Act
    await expect(sendQueuedEmail(s.deps, id as string)).rejects.toThrow('injected');
    const before = await s.emails.listScheduled(EVERYTHING, 10);
    await expect(sendQueuedEmail(s.deps, id as string, { redelivered: true })).rejects.toThrow('injected');

    // Assert
    expect(before).toEqual([]);
    expect(await s.emails.listScheduled(EVERYTHING, 10)).toEqual([{ id, sendAt: T0 + 360_000 }]);
  });

  it('a scheduled email received again before its time stays at its time in the index', async () => {
    // Arrange
    const s = setup();
    const at = T0 + 3_600_000;
    const [id] = await sendEmails(s.deps, testCaller, [draft({ scheduledAt: new Date(at).toISOString() })]);

    // Act
    await sendQueuedEmail(s.deps, id as string, { redelivered: true });

    // Assert
    expect(await s.emails.listScheduled(EVERYTHING, 10)).toEqual([{ id, sendAt: at }]);
    expect(s.provider.sent).toEqual([]);
  });
});

/** A sends message as SQS hands it to the send worker: message `m-<n>`, received `receiveCount` times. */
const sqsRecord = (emailId: string, n: number, receiveCount = 1) =>
  ({
    messageId: `m-${n}`,
    receiptHandle: 'r',
    body: encodeSend(emailId, CALLER.accountId),
    attributes: { ApproximateReceiveCount: String(receiveCount) },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:sends',
    awsRegion: 'us-east-1',
  }) as unknown as SQSRecord;

describe('the sends queue handler', () => {
  const record = (emailId: string, receiveCount: number) => sqsRecord(emailId, receiveCount, receiveCount);

  it('passes a receive after the first (ApproximateReceiveCount above 1): the failing email is put in the index', async () => {
    // Arrange
    const s = setup();
    const [id] = await sendEmails(s.deps, testCaller, [draft()]);
    const failing: SendEmailDeps = {
      ...s.deps,
      suppressions: {
        ...s.deps.suppressions,
        find: async () => {
          throw new Error('DynamoDB unavailable (injected)');
        },
      },
    };
    const handler = createSendWorkerHandler(failing);

    // Act
    const early = await handler({ Records: [record(id as string, 1)] });
    const indexedEarly = await s.emails.listScheduled(EVERYTHING, 10);
    const last = await handler({ Records: [record(id as string, 2)] });

    // Assert
    expect(early.batchItemFailures).toHaveLength(1);
    expect(last.batchItemFailures).toHaveLength(1);
    expect(indexedEarly).toEqual([]);
    expect(await s.emails.listScheduled(EVERYTHING, 10)).toEqual([{ id, sendAt: T0 + 360_000 }]);
  });
});

describe('the send worker’s batch', () => {
  const record = (emailId: string, n: number) => sqsRecord(emailId, n);

  it('sends every email of the batch in turn while its time lasts', async () => {
    // Arrange
    const s = setup();
    const ids = await sendEmails(s.deps, testCaller, [draft(), draft(), draft()]);
    const handler = createSendWorkerHandler(s.deps);

    // Act
    const result = await handler(
      { Records: ids.map((id, n) => record(id as string, n)) },
      { getRemainingTimeInMillis: () => 55_000 },
    );

    // Assert
    expect(result.batchItemFailures).toEqual([]);
    expect(s.provider.sent.map((send) => send.email.id)).toEqual(ids);
  });

  it('hands the emails it has no time left to start back to the queue as new messages, at once, not failed', async () => {
    // Arrange: the first email's send takes the invocation past its deadline (20 s left: 10 s of sending).
    const s = setup();
    const ids = await sendEmails(s.deps, testCaller, [draft(), draft(), draft()]);
    s.provider.during = () => {
      s.clock.advance(11_000);
    };
    const handler = createSendWorkerHandler(s.deps);

    // Act
    const result = await handler(
      { Records: ids.map((id, n) => record(id as string, n)) },
      { getRemainingTimeInMillis: () => 20_000 },
    );

    // Assert: deleted (no batch item failure, so no 6-minute visibility wait, no receive counted), queued again.
    expect(result.batchItemFailures).toEqual([]);
    expect(s.provider.sent.map((send) => send.email.id)).toEqual([ids[0]]);
    expect(s.sendScheduler.scheduled.slice(-2)).toEqual([
      { emailId: ids[1], atMs: T0 + 11_000 },
      { emailId: ids[2], atMs: T0 + 11_000 },
    ]);
  });

  it('paced, starts an email after the first only with the time a whole email may take left (else hands it back)', async () => {
    // Arrange: 55 s left (a 40 s window: 15 s kept back); a paced email may take 33 s; each takes 5 s.
    const s = setup();
    const ids = await sendEmails(s.deps, testCaller, [draft(), draft(), draft()]);
    s.provider.during = () => {
      s.clock.advance(5_000);
    };
    const handler = createSendWorkerHandler({ ...s.deps, pacedEmailMs: 33_000 });

    // Act
    const result = await handler(
      { Records: ids.map((id, n) => record(id as string, n)) },
      { getRemainingTimeInMillis: () => 55_000 },
    );

    // Assert: the second starts at 5 s (33 s fit before 40 s), the third at 10 s does not.
    expect(result.batchItemFailures).toEqual([]);
    expect(s.provider.sent.map((send) => send.email.id)).toEqual([ids[0], ids[1]]);
    expect(s.sendScheduler.scheduled.slice(-1)).toEqual([{ emailId: ids[2], atMs: T0 + 10_000 }]);
  });

  it('fails an email it cannot hand back (the queue refused), so SQS receives it again', async () => {
    // Arrange
    const s = setup();
    const ids = await sendEmails(s.deps, testCaller, [draft(), draft()]);
    s.provider.during = () => {
      s.clock.advance(11_000);
    };
    s.sendScheduler.schedule = async () => {
      throw new Error('SQS unavailable (injected)');
    };
    const handler = createSendWorkerHandler(s.deps);

    // Act
    const result = await handler(
      { Records: ids.map((id, n) => record(id as string, n)) },
      { getRemainingTimeInMillis: () => 20_000 },
    );

    // Assert
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'm-1' }]);
  });
});

// Unit tests of the copies sent, counted toward sending reputation where they are sent (SES's denominator):
// SentTally (lambdas/app/reputation/sent-tally.ts) holds a batch's copies and writes one ADD per tenant, UTC day and
// sending domain, sooner when held past its limit, reporting (never throwing) a write that fails; the send worker
// (lambdas/handlers/queue/send-worker.ts) counts every copy the provider took, one write for its batch of five
// one-recipient emails, and nothing for a copy refused, retried or suppressed.
import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { domainId } from '../../lambdas/app/domains/domains';
import { type EmailDraft, type SendEmailDeps, sendEmails } from '../../lambdas/app/emails/send-emails';
import type { Principal } from '../../lambdas/app/ports';
import type { CountEntry } from '../../lambdas/app/reputation/ports';
import { SENT_TALLY_MAX_HOLD_MS, SentTally } from '../../lambdas/app/reputation/sent-tally';
import type { Tenant } from '../../lambdas/app/webhooks/ports';
import { DEFAULT_REPUTATION_POLICY, NO_COUNTS } from '../../lambdas/domain/email/reputation';
import { createSendWorkerHandler, encodeSend } from '../../lambdas/handlers/queue/send-worker';
import {
  FakeClock,
  fixedLinks,
  InMemoryDomainRepository,
  InMemoryEmailRepository,
  InMemoryQuotaCounter,
  InMemoryReputationStore,
  InMemorySuppressionList,
  RecordingEmailProvider,
  RecordingEventPublisher,
  RecordingSendScheduler,
  seededRandom,
} from '../support/fakes';

const T0 = Date.UTC(2026, 2, 2, 23, 59, 59, 500);
const A: Tenant = { accountId: 'acct_a', mode: 'live' };
const B: Tenant = { accountId: 'acct_b', mode: 'live' };

/** A store that records each count it is asked for. */
function recordingStore() {
  const store = new InMemoryReputationStore();
  const writes: { tenant: Tenant; entry: CountEntry }[] = [];
  const count = store.count.bind(store);
  store.count = async (tenant, entry) => {
    writes.push({ tenant, entry });
    return count(tenant, entry);
  };
  return { store, writes };
}

describe('SentTally', () => {
  it('writes one ADD per tenant, UTC day and sending domain when flushed, whatever the number of emails', async () => {
    // Arrange
    const { store, writes } = recordingStore();
    const clock = new FakeClock(T0);
    const tally = new SentTally(store, clock, { maxHoldMs: 60_000 });

    // Act: five emails of A from one domain, one of A from another, one of B; then past midnight, one more of A.
    for (let i = 0; i < 5; i++) tally.add(A, { domain: 'news.example', copies: 1, emailId: `email_${i}` });
    tally.add(A, { domain: 'shop.example', copies: 10, emailId: 'email_5' });
    tally.add(B, { domain: 'news.example', copies: 2, emailId: 'email_6' });
    clock.advance(1_000);
    tally.add(A, { domain: 'news.example', copies: 3, emailId: 'email_7' });
    tally.add(A, { domain: 'news.example', copies: 0, emailId: 'email_8' });
    expect(writes).toEqual([]);
    await tally.flush();

    // Assert
    expect(writes.map((w) => [w.tenant.accountId, w.entry.day, w.entry.domain, w.entry.counts])).toEqual([
      ['acct_a', '2026-03-02', 'news.example', { sent: 5 }],
      ['acct_a', '2026-03-02', 'shop.example', { sent: 10 }],
      ['acct_b', '2026-03-02', 'news.example', { sent: 2 }],
      ['acct_a', '2026-03-03', 'news.example', { sent: 3 }],
    ]);
    const read = await store.countsBetween(A, '2026-03-02', '2026-03-03', 100);
    expect(read.account).toEqual({
      '2026-03-02': { ...NO_COUNTS, sent: 15 },
      '2026-03-03': { ...NO_COUNTS, sent: 3 },
    });
    await tally.flush();
    expect(writes).toHaveLength(4);
  });

  it('writes what it holds once the oldest copy has waited its limit, before the batch is over', async () => {
    const { store, writes } = recordingStore();
    const clock = new FakeClock(T0 - 60_000);
    const tally = new SentTally(store, clock);

    tally.add(A, { domain: 'news.example', copies: 10, emailId: 'email_1' });
    clock.advance(SENT_TALLY_MAX_HOLD_MS - 1);
    tally.add(A, { domain: 'news.example', copies: 10, emailId: 'email_2' });
    const beforeLimit = writes.length;
    clock.advance(1);
    tally.add(A, { domain: 'news.example', copies: 10, emailId: 'email_3' });
    const atLimit = writes.map((w) => w.entry.counts);
    tally.add(A, { domain: 'news.example', copies: 4, emailId: 'email_4' });
    await tally.flush();

    expect(beforeLimit).toBe(0);
    expect(atLimit).toEqual([{ sent: 30 }]);
    expect(writes.map((w) => w.entry.counts)).toEqual([{ sent: 30 }, { sent: 4 }]);
  });

  it('reports a write that fails with the copies it lost, and throws nothing', async () => {
    const { store } = recordingStore();
    store.failCounts = 1;
    const lost: { accountId: string; copies: number }[] = [];
    const tally = new SentTally(store, new FakeClock(T0), {
      failed: (_error, { tenant, copies }) => lost.push({ accountId: tenant.accountId, copies }),
    });

    tally.add(A, { domain: 'news.example', copies: 7, emailId: 'email_1' });
    await expect(tally.flush()).resolves.toBeUndefined();

    expect(lost).toEqual([{ accountId: 'acct_a', copies: 7 }]);
  });
});

describe('the send worker counts the copies it sends', () => {
  const CALLER: Principal = { ...A, keyId: 'key_a', scopes: ['email:send'], plan: 'scale' };
  const draft = (to: string[]): EmailDraft => ({
    from: 'News <news@News.Example>',
    to,
    cc: [],
    bcc: [],
    replyTo: [],
    subject: 'Hi',
    text: 'Hi',
    headers: {},
    tags: [],
  });
  const record = (emailId: string, n: number) =>
    ({
      messageId: `m-${n}`,
      receiptHandle: 'r',
      body: encodeSend(emailId, CALLER.accountId),
      attributes: { ApproximateReceiveCount: '1' },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:sends',
      awsRegion: 'us-east-1',
    }) as unknown as SQSRecord;

  async function setup() {
    const clock = new FakeClock(Date.UTC(2026, 2, 2, 9));
    const { store, writes } = recordingStore();
    const provider = new RecordingEmailProvider();
    const suppressions = new InMemorySuppressionList();
    const domains = new InMemoryDomainRepository();
    const at = new Date(clock.now()).toISOString();
    await domains.create(
      {
        ...A,
        id: domainId(A, 'news.example'),
        name: 'news.example',
        status: 'verified',
        records: [],
        createdAt: at,
        updatedAt: at,
      },
      [],
    );
    const deps: SendEmailDeps = {
      emails: new InMemoryEmailRepository(),
      domains,
      providerFor: () => provider,
      quotas: new InMemoryQuotaCounter(),
      suppressions,
      events: new RecordingEventPublisher(),
      sendScheduler: new RecordingSendScheduler(),
      links: fixedLinks(),
      clock,
      random: seededRandom('sent-tally'),
      reputation: { store, policy: DEFAULT_REPUTATION_POLICY },
    };
    const handler = createSendWorkerHandler({ ...deps, sentTally: () => new SentTally(store, clock) });
    return { deps, handler, provider, suppressions, store, writes };
  }

  it('one write for a batch of five one-recipient emails of one domain', async () => {
    // Arrange
    const s = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(...(await sendEmails(s.deps, CALLER, [draft([`r${i}@example.com`])])));

    // Act
    const result = await s.handler({ Records: ids.map(record) });

    // Assert
    expect(result.batchItemFailures).toEqual([]);
    expect(s.provider.recipients()).toHaveLength(5);
    expect(s.writes.map((w) => [w.tenant, w.entry.domain, w.entry.counts])).toEqual([
      [{ accountId: 'acct_a', mode: 'live' }, 'news.example', { sent: 5 }],
    ]);
  });

  it('counts every copy of batches run at once in one process (the local runtime runs a queue’s batches so)', async () => {
    // Arrange: a batch of five emails and one of one, each send a moment long: the second is over while the first
    // goes on.
    const s = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(...(await sendEmails(s.deps, CALLER, [draft([`r${i}@example.com`])])));
    s.provider.during = () => new Promise((resolve) => setTimeout(resolve, 5));

    // Act
    const results = await Promise.all([
      s.handler({ Records: ids.slice(0, 5).map(record) }),
      s.handler({ Records: ids.slice(5).map((id, n) => record(id, n + 5)) }),
    ]);

    // Assert: each batch answered for its own records, and all six copies are counted.
    expect(results.map((r) => r.batchItemFailures)).toEqual([[], []]);
    expect(s.provider.recipients()).toHaveLength(6);
    const read = await s.store.countsBetween(A, '2026-03-02', '2026-03-02', 100);
    expect(read.account['2026-03-02']?.sent).toBe(6);
  });

  it('counts only the copies the provider took: not a refused one, a retried one or a suppressed one', async () => {
    // Arrange: 4 recipients: one refused, one retryable, one suppressed, one taken.
    const s = await setup();
    s.provider.outcome = (to) =>
      to.startsWith('refused')
        ? { status: 'refused', reason: 'Bad content' }
        : to.startsWith('later')
          ? { status: 'retry', reason: 'Throttling' }
          : { status: 'sent' };
    const [id] = await sendEmails(s.deps, CALLER, [
      draft(['refused@example.com', 'later@example.com', 'gone@example.com', 'taken@example.com']),
    ]);
    await s.suppressions.add(A, { address: 'gone@example.com', reason: 'hard_bounce', createdAt: 'x' });

    // Act
    await s.handler({ Records: [record(id as string, 0)] });

    // Assert
    expect(s.writes.map((w) => w.entry.counts)).toEqual([{ sent: 1 }]);
  });
});

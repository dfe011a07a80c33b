// Batches are all or nothing (lambdas/app/emails/send-emails.ts), on in-memory fakes: a DynamoDB write that
// fails part-way through a batch (the 26th of 30), or a failed commit, leaves nothing sendable (the send worker
// and the reconciler skip and cancel the stored emails), nothing queued, no event, and the quota given back;
// the same batch sent again is stored, sent and counted once. A batch whose request died before deciding is
// aborted by the worker once the request is surely gone.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  BATCH_DECISION_MS,
  type SendEmailDeps,
  sendEmails,
  sendQueuedEmail,
} from '../../lambdas/app/emails/send-emails';
import type { Principal } from '../../lambdas/app/ports';
import { quotaWindow } from '../../lambdas/domain/email/quota';
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
  accountId: 'acct_batch',
  keyId: 'key_1',
  mode: 'live',
  scopes: ['email:send'],
  plan: 'free',
};

function setup() {
  const clock = new FakeClock(T0);
  const emails = new InMemoryEmailRepository();
  const provider = new RecordingEmailProvider();
  const events = new RecordingEventPublisher();
  const quotas = new InMemoryQuotaCounter();
  const sendScheduler = new RecordingSendScheduler();
  const domains = new InMemoryDomainRepository();
  const deps: SendEmailDeps = {
    emails,
    domains,
    providerFor: () => provider,
    quotas,
    suppressions: new InMemorySuppressionList(),
    events,
    sendScheduler,
    links: fixedLinks(),
    clock,
    random: seededRandom('batch'),
  };
  const used = () => quotas.counts.get(`${CALLER.accountId}#${quotaWindow(T0).month}`) ?? 0;
  return { clock, emails, provider, events, sendScheduler, deps, used, domains };
}

const drafts = (n: number, scheduledAt?: string) =>
  Array.from({ length: n }, (_, i) => ({
    from: 'a@acme.example',
    to: [`r${i}@example.com`],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: `S${i}`,
    text: 'x',
    headers: {},
    tags: [],
    ...(scheduledAt ? { scheduledAt } : {}),
  }));

/** Every stored email, through the send worker, as the reconciler would queue them. */
async function sendEverythingStored(s: ReturnType<typeof setup>) {
  for (const id of s.emails.items.keys()) await sendQueuedEmail(s.deps, id);
}

describe('batches are all or nothing', () => {
  let s: ReturnType<typeof setup>;
  beforeEach(async () => {
    s = setup();
    const at = new Date(T0 - 86_400_000).toISOString();
    await s.domains.create(
      { ...CALLER, id: 'dom_x', name: 'acme.example', status: 'verified', records: [], createdAt: at, updatedAt: at },
      [],
    );
    s.domains.get = async () => ({
      ...CALLER,
      id: 'dom_x',
      name: 'acme.example',
      status: 'verified',
      records: [],
      createdAt: at,
      updatedAt: at,
    });
  });

  it('a write failing at the 26th of 30 emails: the request fails, nothing is sent or queued, the quota is back', async () => {
    // Arrange
    s.emails.failOnWrite = 26;

    // Act
    const failed = await sendEmails(s.deps, CALLER, drafts(30, new Date(T0 + 60_000).toISOString()), {
      batch: true,
    }).catch((error: unknown) => error);
    s.clock.advance(BATCH_DECISION_MS + 120_000);
    await sendEverythingStored(s);

    // Assert
    expect(failed).toBeInstanceOf(Error);
    expect(s.emails.items.size).toBe(25);
    expect(s.sendScheduler.scheduled).toEqual([]);
    expect(s.provider.sent).toEqual([]);
    expect(s.events.published).toEqual([]);
    expect(s.emails.outbox.waiting()).toEqual([]);
    expect(s.used()).toBe(0);
    expect(await s.emails.listScheduled(Number.MAX_SAFE_INTEGER, 100)).toEqual([]);
  });

  it('the same batch again is stored, sent and counted once', async () => {
    // Arrange
    s.emails.failOnWrite = 26;
    await sendEmails(s.deps, CALLER, drafts(30), { batch: true }).catch(() => undefined);
    s.emails.failOnWrite = null;

    // Act
    const ids = await sendEmails(s.deps, CALLER, drafts(30), { batch: true });
    await sendEverythingStored(s);

    // Assert
    expect(ids).toHaveLength(30);
    expect(s.provider.sent.map((x) => x.email.id).sort()).toEqual([...ids].sort());
    expect(s.used()).toBe(30);
  });

  it('a commit that fails aborts the batch: nothing sendable, quota back', async () => {
    // Arrange
    const decide = s.emails.decideBatch.bind(s.emails);
    s.emails.decideBatch = async (batchId, state, events) => {
      if (state === 'committed') throw new Error('ProvisionedThroughputExceeded (injected)');
      return decide(batchId, state, events);
    };

    // Act
    const failed = await sendEmails(s.deps, CALLER, drafts(3), { batch: true }).catch((error: unknown) => error);
    await sendEverythingStored(s);

    // Assert
    expect(failed).toBeInstanceOf(Error);
    expect(s.emails.items.size).toBe(3);
    expect(s.provider.sent).toEqual([]);
    expect(s.used()).toBe(0);
  });

  it('a batch whose request died before deciding waits, then is aborted by the worker and never sent', async () => {
    // Arrange: the emails are stored; the request never decides (killed).
    const decide = s.emails.decideBatch.bind(s.emails);
    s.emails.decideBatch = async () => new Promise(() => {});
    void sendEmails(s.deps, CALLER, drafts(2), { batch: true });
    await new Promise((resolve) => setImmediate(resolve));
    s.emails.decideBatch = decide;

    // Act
    await sendEverythingStored(s);
    const early = s.provider.sent.length;
    s.clock.advance(BATCH_DECISION_MS + 1);
    await sendEverythingStored(s);

    // Assert
    expect(early).toBe(0);
    expect(s.provider.sent).toEqual([]);
    expect([...s.emails.batches.values()]).toEqual(['aborted']);
    expect([...s.emails.items.values()].every((email) => email.canceledAt)).toBe(true);
  });

  it('a single email is one write: a failure stores nothing and gives the quota back', async () => {
    // Arrange
    s.emails.failOnWrite = 1;

    // Act
    const failed = await sendEmails(s.deps, CALLER, drafts(1)).catch((error: unknown) => error);

    // Assert
    expect(failed).toBeInstanceOf(Error);
    expect(s.emails.items.size).toBe(0);
    expect(s.used()).toBe(0);
  });
});

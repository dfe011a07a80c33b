// Rescheduling races (PATCH /v1/emails/:id), in the use cases: a send worker that reads a stale replica of the
// email must not consume the firing of a send moved earlier, and concurrent PATCHes that write the table and arm
// the Scheduler in opposite orders must leave the send armed at the table's time.
import { describe, expect, it } from 'vitest';
import type { EmailRecord, SendScheduler } from '../../lambdas/app/emails/ports';
import { rescheduleEmail, type SendEmailDeps, sendEmails, sendQueuedEmail } from '../../lambdas/app/emails/send-emails';
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
const tenant = { accountId: 'acct', mode: 'test' } as const;

function setup(sendScheduler: SendScheduler = new RecordingSendScheduler()) {
  const clock = new FakeClock(T0);
  const emails = new InMemoryEmailRepository();
  const providers = { live: new RecordingEmailProvider(), test: new RecordingEmailProvider() };
  const deps: SendEmailDeps = {
    emails,
    domains: new InMemoryDomainRepository(),
    providerFor: (m) => providers[m],
    quotas: new InMemoryQuotaCounter(),
    suppressions: new InMemorySuppressionList(),
    events: new RecordingEventPublisher(),
    sendScheduler,
    links: fixedLinks('s', 'https://x.test/v1'),
    clock,
    random: seededRandom('r'),
  };
  const schedule = async (at: number) => {
    const [id] = await sendEmails(deps, { ...tenant, keyId: 'k', scopes: ['email:send'], plan: 'free' }, [
      {
        from: 'a@acme.example',
        to: ['ada@example.com'],
        cc: [],
        bcc: [],
        replyTo: [],
        subject: 's',
        text: 't',
        headers: {},
        tags: [],
        scheduledAt: new Date(at).toISOString(),
      },
    ]);
    return id as string;
  };
  return { clock, emails, providers, deps, schedule };
}

describe('the send worker reading a stale replica', () => {
  it('sends an email moved earlier at its new firing, though the worker read the old time', async () => {
    // Arrange: eventually consistent reads (the worker's metadata GetItem) still return the item before the PATCH.
    const s = setup();
    const id = await s.schedule(T0 + 86_400_000);
    const stale = (await s.emails.get(id, { metadataOnly: true })) as EmailRecord;
    const real = s.emails.get.bind(s.emails);
    s.emails.get = async (emailId, options) =>
      options?.metadataOnly && !options.consistent ? structuredClone(stale) : real(emailId, options);
    const soon = T0 + 2_000;
    await rescheduleEmail(s.deps, tenant, id, new Date(soon).toISOString());

    // Act: the new firing arrives.
    s.clock.set(soon);
    const result = await sendQueuedEmail(s.deps, id);

    // Assert: sent now, not consumed and left to the reconciler minutes later.
    expect(result).toBe('sent');
    expect(s.providers.test.recipients()).toEqual(['ada@example.com']);
  });

  it('still skips the old firing of an email moved later (the conditional start decides, not the read)', async () => {
    const s = setup();
    const id = await s.schedule(T0 + 60_000);
    await rescheduleEmail(s.deps, tenant, id, new Date(T0 + 3_600_000).toISOString());
    s.clock.set(T0 + 60_000);
    expect(await sendQueuedEmail(s.deps, id)).toBe('skipped');
    expect(s.providers.test.sent).toHaveLength(0);
    expect((await s.emails.get(id))?.sentAt).toBeUndefined();
  });
});

describe('concurrent PATCHes', () => {
  it('arm the send at the time the table holds, whatever order their Scheduler calls land in', async () => {
    // Arrange: PATCH 1 (to A) writes the table first, then PATCH 2 (to B) writes it and arms B; PATCH 1's
    // Scheduler call lands last. The Scheduler keeps the last time armed.
    let armed: number | undefined;
    let releaseFirst: () => void = () => {};
    const firstHeld = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    let calls = 0;
    const scheduler: SendScheduler = {
      schedule: async (_id, at) => {
        armed = at;
      },
      reschedule: async (_id, at) => {
        calls += 1;
        if (calls === 1) await firstHeld; // PATCH 1's call is slow
        armed = at;
      },
      cancel: async () => {},
    };
    const s = setup(scheduler);
    const id = await s.schedule(T0 + 3_600_000);
    const A = T0 + 7_200_000;
    const B = T0 + 10_800_000;

    // Act
    const first = rescheduleEmail(s.deps, tenant, id, new Date(A).toISOString());
    await new Promise((resolve) => setTimeout(resolve, 0));
    await rescheduleEmail(s.deps, tenant, id, new Date(B).toISOString());
    releaseFirst();
    await first;

    // Assert: the table says B, and so does the Scheduler.
    expect((await s.emails.get(id))?.scheduledAt).toBe(new Date(B).toISOString());
    expect(armed).toBe(B);
  });
});

// Unit tests of the sending use cases (lambdas/app/emails/send-emails.ts) on in-memory fakes with a fake clock:
// the monthly quota (live mode only, each email counted, 429 monthly_quota_exceeded with retry_after), the
// live-mode verified-domain check (per-index paths in a batch), the suppression list (all suppressed →
// email.suppressed per recipient and no send; partly → the rest), scheduled sends and their cancellation, and
// one copy per recipient with its own List-Unsubscribe header whose token verifies.
import { beforeEach, describe, expect, it } from 'vitest';
import { domainId } from '../../lambdas/app/domains/domains';
import type { Domain } from '../../lambdas/app/domains/ports';
import type { SuppressionReason } from '../../lambdas/app/emails/ports';
import {
  cancelEmail,
  type EmailDraft,
  getEmail,
  rescheduleEmail,
  type SendEmailDeps,
  sendEmails,
  sendQueuedEmail,
} from '../../lambdas/app/emails/send-emails';
import type { Principal } from '../../lambdas/app/ports';
import type { Tenant } from '../../lambdas/app/webhooks/ports';
import { emailStatus } from '../../lambdas/domain/email/status';
import {
  ConflictError,
  NotFoundError,
  RateLimitedError,
  ServiceUnavailableError,
  ValidationError,
} from '../../lambdas/domain/errors';
import type { SendflowEvent } from '../../lambdas/domain/events';
import type { PlanName } from '../../lambdas/domain/plans';
import { verifyToken } from '../../lambdas/domain/tokens';
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
  unreadableLinks,
} from '../support/fakes';

const T0 = Date.UTC(2025, 5, 10, 9, 0, 0);
const JUNE = '2025-06';
const SECRET = 'unsubscribe-link-secret';
const BASE = 'https://api.sendflow.test/v1';
const ACCOUNT = 'acct_sender';
const FREE_LIMIT = 3_000;

function setup() {
  const clock = new FakeClock(T0);
  const emails = new InMemoryEmailRepository();
  const domains = new InMemoryDomainRepository();
  const providers = { live: new RecordingEmailProvider(), test: new RecordingEmailProvider() };
  const quotas = new InMemoryQuotaCounter();
  const suppressions = new InMemorySuppressionList();
  const events = new RecordingEventPublisher();
  const sendScheduler = new RecordingSendScheduler();
  const deps: SendEmailDeps = {
    emails,
    domains,
    providerFor: (mode) => providers[mode],
    quotas,
    suppressions,
    events,
    sendScheduler,
    links: fixedLinks(SECRET, BASE),
    clock,
    random: seededRandom('send-emails'),
    // As the runtimes wire it: each copy's email.sent is processed where it arises, not queued.
    processEvents: async (events) => {
      processed.push(...events);
      return [];
    },
  };
  const processed: SendflowEvent[] = [];
  const published = () => events.published.flatMap((p) => p.events);
  return { clock, emails, domains, providers, quotas, suppressions, events, sendScheduler, deps, published, processed };
}

/**
 * POST /v1/emails as the runtime runs it: sendEmails accepts and queues; then the send worker takes every email
 * due now (scheduled ones wait for their time, as on the sends queue).
 */
async function accept(
  s: ReturnType<typeof setup>,
  ...args: [Parameters<typeof sendEmails>[1], Parameters<typeof sendEmails>[2], Parameters<typeof sendEmails>[3]?]
): Promise<string[]> {
  const ids = await sendEmails(s.deps, ...args);
  for (const { emailId, atMs } of s.sendScheduler.scheduled) {
    if (atMs <= s.clock.now()) await sendQueuedEmail(s.deps, emailId);
  }
  return ids;
}

function caller(mode: Tenant['mode'], plan: PlanName = 'free', accountId = ACCOUNT): Principal {
  return { accountId, keyId: 'key_01', mode, scopes: ['email:send'], plan };
}

function draft(overrides: Partial<EmailDraft> = {}): EmailDraft {
  return {
    from: 'Acme Billing <billing@acme.example>',
    to: ['ada@example.com'],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: 'Invoice 42',
    text: 'Hello',
    headers: {},
    tags: [],
    ...overrides,
  };
}

function domain(tenant: Tenant, name: string, status: Domain['status']): Domain {
  const at = new Date(T0 - 86_400_000).toISOString();
  return { ...tenant, id: domainId(tenant, name), name, status, records: [], createdAt: at, updatedAt: at };
}

const live: Tenant = { accountId: ACCOUNT, mode: 'live' };
const test: Tenant = { accountId: ACCOUNT, mode: 'test' };

async function suppress(s: ReturnType<typeof setup>, tenant: Tenant, address: string, reason: SuppressionReason) {
  await s.suppressions.add(tenant, { address, reason, createdAt: new Date(T0 - 1000).toISOString() });
}

describe('sendEmails: one copy per recipient', () => {
  let s: ReturnType<typeof setup>;
  beforeEach(() => {
    s = setup();
  });

  it('stores, counts, schedules and sends nothing when the signing secret cannot be read (503)', async () => {
    // Arrange
    const deps = { ...s.deps, links: unreadableLinks(BASE) };
    await s.domains.create(domain(live, 'acme.example', 'verified'), []);

    // Act
    const accepted = sendEmails(deps, caller('live'), [draft(), draft({ to: ['bob@example.com'] })], { batch: true });

    // Assert
    await expect(accepted).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(s.emails.items.size).toBe(0);
    expect(s.emails.batches.size).toBe(0);
    expect([...s.quotas.counts.values()].reduce((a, b) => a + b, 0)).toBe(0);
    expect(s.sendScheduler.scheduled).toEqual([]);
    expect(s.providers.live.sent).toEqual([]);
    expect(s.published()).toEqual([]);
  });

  it('hands the email to the mode’s provider with one copy per to, cc and bcc recipient, stores it, and returns its id', async () => {
    // Arrange
    const email = draft({ to: ['Ada <Ada@Example.com>'], cc: ['bob@example.com'], bcc: ['audit@acme.example'] });

    // Act
    const [id] = await accept(s, caller('test'), [email]);

    // Assert
    expect(s.providers.live.sent).toEqual([]);
    expect(s.providers.test.sent).toHaveLength(1);
    const sent = s.providers.test.sent[0];
    expect(sent?.email).toMatchObject({
      ...email,
      id,
      accountId: ACCOUNT,
      mode: 'test',
      createdAt: new Date(T0).toISOString(),
    });
    expect(sent?.copies.map((c) => c.to)).toEqual(['Ada <Ada@Example.com>', 'bob@example.com', 'audit@acme.example']);
    const stored = await s.emails.get(id as string);
    expect(stored).toMatchObject({ id, suppressed: [] });
    expect(stored).not.toHaveProperty('events');
    expect(Object.keys(stored?.unsubscribeUrls ?? {})).toEqual(sent?.copies.map((c) => c.to));
    expect(s.published()).toEqual([]);
    expect(s.processed.map((e) => [e.type, e.to])).toEqual([
      ['email.sent', 'ada@example.com'],
      ['email.sent', 'bob@example.com'],
      ['email.sent', 'audit@acme.example'],
    ]);
  });

  it('gives each copy its own List-Unsubscribe header, whose token names that recipient only', async () => {
    // Arrange
    const email = draft({ to: ['Ada <Ada@Example.com>', 'bob@example.com'], bcc: ['carol@example.com'] });

    // Act
    const [id] = await accept(s, caller('test'), [email]);

    // Assert
    const copies = s.providers.test.sent[0]?.copies ?? [];
    const bare = ['ada@example.com', 'bob@example.com', 'carol@example.com'];
    expect(copies).toHaveLength(3);
    copies.forEach((copy, i) => {
      expect(copy.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
      const match = /^<https:\/\/api\.sendflow\.test\/v1\/unsubscribe\/([A-Za-z0-9_.-]+)>$/.exec(
        copy.headers['List-Unsubscribe'] ?? '',
      );
      expect(match, copy.to).not.toBeNull();
      expect(verifyToken('unsubscribe', match?.[1] ?? '', SECRET)).toEqual({
        a: ACCOUNT,
        m: 'test',
        e: id,
        r: bare[i],
      });
    });
    expect(new Set(copies.map((c) => c.headers['List-Unsubscribe'])).size).toBe(3);
  });

  it('keeps the caller’s own headers off the copies’ unsubscribe headers (they travel on the email)', async () => {
    // Act
    await accept(s, caller('test'), [draft({ headers: { 'X-Entity-Ref-ID': 'inv-42' } })]);

    // Assert
    const sent = s.providers.test.sent[0];
    expect(sent?.email.headers).toEqual({ 'X-Entity-Ref-ID': 'inv-42' });
    expect(Object.keys(sent?.copies[0]?.headers ?? {}).sort()).toEqual(['List-Unsubscribe', 'List-Unsubscribe-Post']);
  });

  it('sends each email of a batch separately, in order, with distinct ids', async () => {
    // Act
    const ids = await accept(
      s,
      caller('test'),
      [draft({ to: ['a@example.com'] }), draft({ to: ['b@example.com'] }), draft({ to: ['c@example.com'] })],
      { batch: true },
    );

    // Assert
    expect(new Set(ids).size).toBe(3);
    expect(s.providers.test.sent.map((x) => [x.email.id, x.copies[0]?.to])).toEqual([
      [ids[0], 'a@example.com'],
      [ids[1], 'b@example.com'],
      [ids[2], 'c@example.com'],
    ]);
  });
});

describe('sendEmails: monthly quota', () => {
  let s: ReturnType<typeof setup>;
  beforeEach(async () => {
    s = setup();
    await s.domains.create(domain(live, 'acme.example', 'verified'), []);
  });

  it('counts each live email of a batch against the month', async () => {
    // Act
    await accept(s, caller('live'), [draft()]);
    await accept(s, caller('live'), [draft(), draft(), draft()], { batch: true });

    // Assert
    expect(s.quotas.counts.get(`${ACCOUNT}#${JUNE}`)).toBe(4);
    expect(s.providers.live.sent).toHaveLength(4);
  });

  it('counts scheduled and fully suppressed live emails too (counted on acceptance)', async () => {
    // Arrange
    await suppress(s, live, 'gone@example.com', 'hard_bounce');

    // Act
    await accept(
      s,
      caller('live'),
      [draft({ scheduledAt: new Date(T0 + 3_600_000).toISOString() }), draft({ to: ['gone@example.com'] })],
      { batch: true },
    );

    // Assert
    expect(s.quotas.counts.get(`${ACCOUNT}#${JUNE}`)).toBe(2);
  });

  it('does not count test-mode email against the live quota, even when it is used up', async () => {
    // Arrange
    s.quotas.counts.set(`${ACCOUNT}#${JUNE}`, FREE_LIMIT);

    // Act
    const ids = await accept(s, caller('test'), [draft(), draft()], { batch: true });

    // Assert: the live month is untouched; the recipients count in test mode's own day (docs/sending.md, "Limits").
    expect(ids).toHaveLength(2);
    expect(s.quotas.counts.get(`${ACCOUNT}#${JUNE}`)).toBe(FREE_LIMIT);
    expect([...s.quotas.counts.keys()].filter((k) => k.startsWith(`${ACCOUNT}#test#`))).toHaveLength(1);
  });

  it('past the plan’s limit: 429 monthly_quota_exceeded with retry_after to the month’s end; nothing stored or sent', async () => {
    // Arrange: 2,999 of 3,000 used; a batch of 2 would pass it.
    s.quotas.counts.set(`${ACCOUNT}#${JUNE}`, FREE_LIMIT - 1);

    // Act
    const act = accept(s, caller('live'), [draft(), draft()], { batch: true });

    // Assert
    const error = await act.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).toMatchObject({
      status: 429,
      code: 'monthly_quota_exceeded',
      retryAfterSeconds: (Date.UTC(2025, 6, 1) - T0) / 1000,
    });
    expect(s.quotas.counts.get(`${ACCOUNT}#${JUNE}`)).toBe(FREE_LIMIT - 1);
    expect(s.emails.items.size).toBe(0);
    expect(s.providers.live.sent).toEqual([]);
    expect(s.published()).toEqual([]);
  });

  it('accepts the email that reaches the limit exactly, and refuses the next', async () => {
    // Arrange
    s.quotas.counts.set(`${ACCOUNT}#${JUNE}`, FREE_LIMIT - 1);

    // Act
    const last = await accept(s, caller('live'), [draft()]);
    const next = accept(s, caller('live'), [draft()]);

    // Assert
    expect(last).toHaveLength(1);
    await expect(next).rejects.toMatchObject({ code: 'monthly_quota_exceeded' });
    expect(s.quotas.counts.get(`${ACCOUNT}#${JUNE}`)).toBe(FREE_LIMIT);
  });

  it('uses the caller’s plan limit (starter: 10,000)', async () => {
    // Arrange
    s.quotas.counts.set(`${ACCOUNT}#${JUNE}`, FREE_LIMIT);

    // Act
    const ids = await accept(s, caller('live', 'starter'), [draft()]);

    // Assert
    expect(ids).toHaveLength(1);
    s.quotas.counts.set(`${ACCOUNT}#${JUNE}`, 10_000);
    await expect(accept(s, caller('live', 'starter'), [draft()])).rejects.toBeInstanceOf(RateLimitedError);
  });

  it('starts again on the first of the next month; retry_after is 1 in the month’s last second', async () => {
    // Arrange
    s.quotas.counts.set(`${ACCOUNT}#${JUNE}`, FREE_LIMIT);
    s.clock.set(Date.UTC(2025, 6, 1) - 1);

    // Act
    const lastSecond = await accept(s, caller('live'), [draft()]).catch((e: RateLimitedError) => e);
    s.clock.set(Date.UTC(2025, 6, 1));
    const nextMonth = await accept(s, caller('live'), [draft()]);

    // Assert
    expect(lastSecond).toMatchObject({ code: 'monthly_quota_exceeded', retryAfterSeconds: 1 });
    expect(nextMonth).toHaveLength(1);
    expect(s.quotas.counts.get(`${ACCOUNT}#2025-07`)).toBe(1);
  });
});

describe('sendEmails: a key restricted to one domain', () => {
  it('sends from that domain, and refuses any other with 403 before anything is stored or counted', async () => {
    const s = setup();
    const restricted = { ...caller('test'), sendingDomain: 'acme.example' };
    expect(await accept(s, restricted, [draft()])).toHaveLength(1);
    const other = sendEmails(s.deps, restricted, [draft(), draft({ from: 'x@other.example' })], { batch: true });
    await expect(other).rejects.toMatchObject({ status: 403, code: 'insufficient_scope' });
    await expect(other).rejects.toThrow(/only from the domain acme\.example; email 1 is from other\.example/);
    // Only the first, allowed send is stored.
    expect(s.sendScheduler.scheduled).toHaveLength(1);
  });
});

describe('sendEmails: live mode sends only from verified domains', () => {
  let s: ReturnType<typeof setup>;
  beforeEach(() => {
    s = setup();
  });

  it('refuses an unverified from-domain with 422 on "from"; nothing is counted, stored or sent', async () => {
    // Arrange
    await s.domains.create(domain(live, 'acme.example', 'pending'), []);

    // Act
    const error = await accept(s, caller('live'), [draft()]).catch((e: unknown) => e);

    // Assert
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({
      status: 422,
      message: expect.stringMatching(/^`from` is not at a verified sending domain of this account: acme\.example\. /),
      details: [{ path: 'from', message: expect.stringMatching(/^`from` is not at a verified sending domain/) }],
    });
    expect(s.quotas.counts.size).toBe(0);
    expect(s.emails.items.size).toBe(0);
    expect(s.providers.live.sent).toEqual([]);
  });

  it('refuses an email larger than 256 KB as stored (unsubscribe links counted) before anything is counted', async () => {
    // Arrange: 250 KB of html fits alone; with 50 recipients' unsubscribe links the stored email does not.
    await s.domains.create(domain(live, 'acme.example', 'verified'), []);
    const to = Array.from({ length: 50 }, (_, i) => `recipient-${i}@example.com`);
    const big = draft({ html: 'h'.repeat(250 * 1024), to });

    // Act
    const error = await accept(s, caller('live'), [draft(), big], { batch: true }).catch((e: unknown) => e);

    // Assert
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).details).toEqual([
      { path: '1', message: expect.stringMatching(/^`\[1\]`: The email as stored .* is 26\d KB; at most 256 KB\.$/) },
    ]);
    expect(s.quotas.counts.size).toBe(0);
    expect(s.emails.items.size).toBe(0);
    expect(s.sendScheduler.scheduled).toEqual([]);
    // The same html to one recipient fits.
    await expect(accept(s, caller('live'), [draft({ html: 'h'.repeat(250 * 1024) })])).resolves.toHaveLength(1);
  });

  it('reports every bad email of a batch by index ("1.from", "2.from"), and refuses the whole batch', async () => {
    // Arrange
    await s.domains.create(domain(live, 'acme.example', 'verified'), []);
    await s.domains.create(domain(live, 'pending.example', 'pending'), []);

    // Act
    const error = await accept(
      s,
      caller('live'),
      [draft(), draft({ from: 'x@pending.example' }), draft({ from: 'y@unknown.example' }), draft()],
      { batch: true },
    ).catch((e: unknown) => e);

    // Assert
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).details?.map((d) => d.path)).toEqual(['1.from', '2.from']);
    expect(s.emails.items.size).toBe(0);
    expect(s.providers.live.sent).toEqual([]);
  });

  it('accepts a verified domain whatever the case and display name of the from address', async () => {
    // Arrange
    await s.domains.create(domain(live, 'acme.example', 'verified'), []);

    // Act
    const ids = await accept(s, caller('live'), [draft({ from: '"Acme, Inc." <Billing@ACME.Example>' })]);

    // Assert
    expect(ids).toHaveLength(1);
    expect(s.providers.live.sent).toHaveLength(1);
  });

  it('does not accept a domain verified in test mode or by another account, nor a subdomain of a verified one', async () => {
    // Arrange
    await s.domains.create(domain(test, 'acme.example', 'verified'), []);
    await s.domains.create(domain({ accountId: 'acct_other', mode: 'live' }, 'acme.example', 'verified'), []);
    await s.domains.create(domain(live, 'parent.example', 'verified'), []);

    // Act
    const otherTenants = accept(s, caller('live'), [draft()]);
    const subdomain = accept(s, caller('live'), [draft({ from: 'a@mail.parent.example' })]);

    // Assert
    await expect(otherTenants).rejects.toBeInstanceOf(ValidationError);
    await expect(subdomain).rejects.toBeInstanceOf(ValidationError);
  });

  it('does not check the from-domain in test mode', async () => {
    // Act
    const ids = await accept(s, caller('test'), [draft({ from: 'anyone@unverified.example' })]);

    // Assert
    expect(ids).toHaveLength(1);
    expect(s.providers.test.sent).toHaveLength(1);
  });
});

describe('sendEmails: suppression list', () => {
  let s: ReturnType<typeof setup>;
  beforeEach(() => {
    s = setup();
  });

  it('all recipients suppressed: email.suppressed per recipient with its reason, and no provider call', async () => {
    // Arrange
    await suppress(s, test, 'ada@example.com', 'hard_bounce');
    await suppress(s, test, 'bob@example.com', 'complaint');
    await suppress(s, test, 'carol@example.com', 'unsubscribe');
    const email = draft({ to: ['Ada <ADA@example.com>'], cc: ['bob@example.com'], bcc: ['carol@example.com'] });

    // Act
    const [id] = await accept(s, caller('test'), [email]);

    // Assert
    expect(s.providers.test.sent).toEqual([]);
    const events = s.published();
    expect(events.map((e) => [e.type, e.to, e.data.reason])).toEqual([
      ['email.suppressed', 'ada@example.com', 'hard_bounce'],
      ['email.suppressed', 'bob@example.com', 'complaint'],
      ['email.suppressed', 'carol@example.com', 'unsubscribe'],
    ]);
    for (const event of events) {
      expect(event).toMatchObject({
        accountId: ACCOUNT,
        mode: 'test',
        emailId: id,
        timestamp: new Date(T0).toISOString(),
        data: { from: email.from, subject: email.subject },
      });
    }
    expect(new Set(events.map((e) => e.id)).size).toBe(3);
    expect((await s.emails.get(id as string))?.suppressed).toEqual([
      'Ada <ADA@example.com>',
      'bob@example.com',
      'carol@example.com',
    ]);
  });

  it('partly suppressed: the provider gets only the rest; the skipped ones are listed, each with email.suppressed', async () => {
    // Arrange
    await suppress(s, test, 'bob@example.com', 'complaint');

    // Act
    const [id] = await accept(s, caller('test'), [
      draft({ to: ['ada@example.com', 'Bob <BOB@example.com>'], cc: ['carol@example.com'] }),
    ]);

    // Assert
    expect(s.providers.test.sent[0]?.copies.map((c) => c.to)).toEqual(['ada@example.com', 'carol@example.com']);
    expect((await s.emails.get(id as string))?.suppressed).toEqual(['Bob <BOB@example.com>']);
    expect(s.published().map((e) => [e.type, e.to, e.data.reason])).toEqual([
      ['email.suppressed', 'bob@example.com', 'complaint'],
    ]);
  });

  it('uses only the caller’s account and mode list: an address suppressed in live is sent to in test', async () => {
    // Arrange
    await suppress(s, live, 'ada@example.com', 'hard_bounce');
    await suppress(s, { accountId: 'acct_other', mode: 'test' }, 'ada@example.com', 'hard_bounce');

    // Act
    await accept(s, caller('test'), [draft()]);

    // Assert
    expect(s.providers.test.sent[0]?.copies.map((c) => c.to)).toEqual(['ada@example.com']);
  });

  it('in a batch, suppresses per email: one email all suppressed, the other sent', async () => {
    // Arrange
    await suppress(s, test, 'gone@example.com', 'hard_bounce');

    // Act
    const [suppressedId, sentId] = await accept(
      s,
      caller('test'),
      [draft({ to: ['gone@example.com'] }), draft({ to: ['ada@example.com'] })],
      { batch: true },
    );

    // Assert
    expect(s.providers.test.sent.map((x) => x.email.id)).toEqual([sentId]);
    expect(s.published().map((e) => [e.type, e.emailId])).toEqual([['email.suppressed', suppressedId]]);
  });
});

describe('a provider outage', () => {
  let s: ReturnType<typeof setup>;
  const AT = new Date(T0 + 3_600_000).toISOString();
  beforeEach(() => {
    s = setup();
    // The last try: an outage is retried on later receives first (see app-send-claims.test.ts).
    s.deps = { ...s.deps, maxSendTries: 1 };
    s.providers.test.send = async () => {
      throw new TypeError('connect ECONNREFUSED 10.0.0.1:443 arn:aws:ses:eu-west-1:123456789012:identity/x');
    };
  });

  it('on the last try, leaves each recipient with email.failed naming only the error type (suppressed ones: email.suppressed)', async () => {
    // Arrange
    await suppress(s, test, 'gone@example.com', 'hard_bounce');
    const email = draft({ to: ['Ada <ada@example.com>', 'gone@example.com'], cc: ['bob@example.com'] });

    // Act
    const ids = await accept(s, caller('test'), [email]);

    // Assert
    expect(ids).toHaveLength(1);
    const events = s.published();
    expect(events.map((e) => [e.type, e.to, e.emailId])).toEqual([
      ['email.suppressed', 'gone@example.com', ids[0]],
      ['email.failed', 'ada@example.com', ids[0]],
      ['email.failed', 'bob@example.com', ids[0]],
    ]);
    for (const event of events.filter((e) => e.type === 'email.failed')) {
      expect(event.data).toEqual({ from: email.from, subject: email.subject, reason: 'provider_error: TypeError' });
    }
  });

  it('fails a scheduled email’s recipients the same way when it comes due, and does not send it again', async () => {
    // Arrange
    const [id] = await accept(s, caller('test'), [draft({ to: ['ada@example.com'], scheduledAt: AT })]);
    s.events.published.length = 0;
    s.clock.set(T0 + 3_600_000);

    // Act
    const first = await sendQueuedEmail(s.deps, id as string);
    const again = await sendQueuedEmail(s.deps, id as string);

    // Assert
    expect([first, again]).toEqual(['sent', 'skipped']);
    expect(s.published().map((e) => [e.type, e.to, e.data.reason])).toEqual([
      ['email.failed', 'ada@example.com', 'provider_error: TypeError'],
    ]);
  });
});

describe('scheduled sends', () => {
  let s: ReturnType<typeof setup>;
  const AT = new Date(T0 + 2 * 3_600_000).toISOString();
  beforeEach(() => {
    s = setup();
  });

  it('on acceptance: email.scheduled per recipient, a schedule at the time, and no provider call', async () => {
    // Arrange
    const email = draft({ to: ['Ada <ada@example.com>'], cc: ['bob@example.com'], scheduledAt: AT });

    // Act
    const [id] = await accept(s, caller('test'), [email]);

    // Assert
    expect(s.providers.test.sent).toEqual([]);
    expect(s.sendScheduler.scheduled).toEqual([{ emailId: id, atMs: T0 + 2 * 3_600_000 }]);
    const events = s.published();
    expect(events.map((e) => [e.type, e.to])).toEqual([
      ['email.scheduled', 'ada@example.com'],
      ['email.scheduled', 'bob@example.com'],
    ]);
    for (const event of events) {
      expect(event.data).toEqual({ from: email.from, subject: email.subject, scheduled_at: AT });
      expect(event).toMatchObject({
        emailId: id,
        accountId: ACCOUNT,
        mode: 'test',
        timestamp: new Date(T0).toISOString(),
      });
    }
    const stored = await s.emails.get(id as string);
    expect(stored).toMatchObject({ scheduledAt: AT, suppressed: [] });
    expect(stored).not.toHaveProperty('sentAt');
  });

  it('sendQueuedEmail at the time hands it to the provider once, with the unsubscribe headers; a repeat is skipped', async () => {
    // Arrange
    const [id] = await accept(s, caller('test'), [draft({ to: ['ada@example.com'], scheduledAt: AT })]);
    s.clock.set(T0 + 2 * 3_600_000);

    // Act
    const first = await sendQueuedEmail(s.deps, id as string);
    const second = await sendQueuedEmail(s.deps, id as string);

    // Assert
    expect([first, second]).toEqual(['sent', 'skipped']);
    expect(s.providers.test.sent).toHaveLength(1);
    const copy = s.providers.test.sent[0]?.copies[0];
    expect(copy?.to).toBe('ada@example.com');
    expect(copy?.headers['List-Unsubscribe']).toBe(
      `<${(await s.emails.get(id as string))?.unsubscribeUrls['ada@example.com']}>`,
    );
    expect((await s.emails.get(id as string))?.sentAt).toBe(new Date(T0 + 2 * 3_600_000).toISOString());
  });

  it('checks suppression when it is sent: a recipient suppressed meanwhile is skipped', async () => {
    // Arrange
    const [id] = await accept(s, caller('test'), [
      draft({ to: ['ada@example.com', 'bob@example.com'], scheduledAt: AT }),
    ]);
    await suppress(s, test, 'bob@example.com', 'unsubscribe');
    s.events.published.length = 0;
    s.clock.set(Date.parse(AT));

    // Act
    await sendQueuedEmail(s.deps, id as string);

    // Assert
    expect(s.providers.test.sent[0]?.copies.map((c) => c.to)).toEqual(['ada@example.com']);
    expect(s.published().map((e) => [e.type, e.to])).toEqual([['email.suppressed', 'bob@example.com']]);
  });

  it('checks suppression when it is sent: all suppressed meanwhile → email.suppressed, no provider call', async () => {
    // Arrange
    const [id] = await accept(s, caller('test'), [draft({ to: ['ada@example.com'], scheduledAt: AT })]);
    await suppress(s, test, 'ada@example.com', 'complaint');
    s.events.published.length = 0;
    s.clock.set(Date.parse(AT));

    // Act
    const result = await sendQueuedEmail(s.deps, id as string);

    // Assert
    expect(result).toBe('sent');
    expect(s.providers.test.sent).toEqual([]);
    expect(s.published().map((e) => [e.type, e.to, e.emailId, e.data.reason])).toEqual([
      ['email.suppressed', 'ada@example.com', id, 'complaint'],
    ]);
  });

  it('sendQueuedEmail skips a cancelled email, one that was never scheduled, and an unknown id', async () => {
    // Arrange
    const [scheduledId] = await accept(s, caller('test'), [draft({ scheduledAt: AT })]);
    await cancelEmail(s.deps, test, scheduledId as string);
    const [nowId] = await accept(s, caller('test'), [draft()]);
    s.providers.test.sent.length = 0;

    // Act
    const results = [
      await sendQueuedEmail(s.deps, scheduledId as string),
      await sendQueuedEmail(s.deps, nowId as string),
      await sendQueuedEmail(s.deps, 'email_unknown'),
    ];

    // Assert
    expect(results).toEqual(['skipped', 'skipped', 'skipped']);
    expect(s.providers.test.sent).toEqual([]);
  });

  it('cancelEmail: the email comes back canceled, its schedule is cancelled, and it is never sent', async () => {
    // Arrange
    const [id] = await accept(s, caller('test'), [draft({ scheduledAt: AT })]);
    s.clock.advance(60_000);

    // Act
    const canceled = await cancelEmail(s.deps, test, id as string);

    // Assert
    expect(canceled).toMatchObject({ id, canceledAt: new Date(T0 + 60_000).toISOString() });
    expect(emailStatus({ ...canceled, events: [] })).toBe('canceled');
    expect(s.sendScheduler.canceled).toEqual([id]);
    expect(emailStatus({ ...(await getEmail(s.deps, test, id as string)), events: [] })).toBe('canceled');
    expect(await sendQueuedEmail(s.deps, id as string)).toBe('skipped');
  });

  it.each([
    ['an email that was not scheduled', 'now'],
    ['a scheduled email already sent', 'sent'],
    ['an email already cancelled', 'canceled'],
  ])('cancelEmail of %s is 409 not_cancelable, and cancels no schedule', async (_name, state) => {
    // Arrange
    const [id] = await accept(s, caller('test'), [draft(state === 'now' ? {} : { scheduledAt: AT })]);
    if (state === 'sent') {
      s.clock.set(Date.parse(AT));
      await sendQueuedEmail(s.deps, id as string);
    }
    if (state === 'canceled') await cancelEmail(s.deps, test, id as string);
    const cancelsBefore = s.sendScheduler.canceled.length;

    // Act
    const error = await cancelEmail(s.deps, test, id as string).catch((e: unknown) => e);

    // Assert
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ status: 409, code: 'not_cancelable' });
    expect(s.sendScheduler.canceled).toHaveLength(cancelsBefore);
  });

  it('cancelEmail of another account’s or the other mode’s email is 404, and it stays scheduled', async () => {
    // Arrange
    const [id] = await accept(s, caller('test'), [draft({ scheduledAt: AT })]);

    // Act
    const otherAccount = cancelEmail(s.deps, { accountId: 'acct_other', mode: 'test' }, id as string);
    const otherMode = cancelEmail(s.deps, live, id as string);

    // Assert
    await expect(otherAccount).rejects.toBeInstanceOf(NotFoundError);
    await expect(otherMode).rejects.toBeInstanceOf(NotFoundError);
    expect(s.sendScheduler.canceled).toEqual([]);
    s.clock.set(Date.parse(AT));
    expect(await sendQueuedEmail(s.deps, id as string)).toBe('sent');
  });

  it('sendQueuedEmail does not send a scheduled email before its time (a firing of a time since moved)', async () => {
    const [id] = await accept(s, caller('test'), [draft({ scheduledAt: AT })]);
    s.clock.set(Date.parse(AT) - 1_001);
    expect(await sendQueuedEmail(s.deps, id as string)).toBe('skipped');
    // Within the second: clocks of two machines may differ that much.
    s.clock.set(Date.parse(AT) - 1_000);
    expect(await sendQueuedEmail(s.deps, id as string)).toBe('sent');
  });

  it('cancelEmail of an unknown id is 404', async () => {
    await expect(cancelEmail(s.deps, test, 'email_unknown')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('rescheduleEmail moves the send: re-armed at the new time, the old firing skipped, sent at the new time', async () => {
    // Arrange
    const [id] = await accept(s, caller('test'), [draft({ scheduledAt: AT })]);
    const later = new Date(Date.parse(AT) + 3_600_000).toISOString();
    const eventsBefore = s.published().length;

    // Act
    await rescheduleEmail(s.deps, test, id as string, later);

    // Assert
    expect((await getEmail(s.deps, test, id as string)).scheduledAt).toBe(later);
    expect(s.sendScheduler.rescheduled).toEqual([{ emailId: id, atMs: Date.parse(later) }]);
    // No second email.scheduled: the first told it; GET shows the new time.
    expect(s.published()).toHaveLength(eventsBefore);
    s.clock.set(Date.parse(AT));
    expect(await sendQueuedEmail(s.deps, id as string)).toBe('skipped');
    expect(s.providers.test.sent).toEqual([]);
    s.clock.set(Date.parse(later));
    expect(await sendQueuedEmail(s.deps, id as string)).toBe('sent');
    expect(s.providers.test.sent).toHaveLength(1);
  });

  it('rescheduleEmail earlier: sent at the new time; the old firing then finds it sent', async () => {
    const [id] = await accept(s, caller('test'), [draft({ scheduledAt: AT })]);
    const sooner = new Date(T0 + 60_000).toISOString();
    await rescheduleEmail(s.deps, test, id as string, sooner);
    s.clock.set(Date.parse(sooner));
    expect(await sendQueuedEmail(s.deps, id as string)).toBe('sent');
    s.clock.set(Date.parse(AT));
    await sendQueuedEmail(s.deps, id as string);
    expect(s.providers.test.sent).toHaveLength(1);
  });

  it.each([
    ['an email that was not scheduled', 'now'],
    ['a scheduled email already sent', 'sent'],
    ['an email already cancelled', 'canceled'],
  ])('rescheduleEmail of %s is 409 not_reschedulable, and arms nothing', async (_name, state) => {
    const [id] = await accept(s, caller('test'), [draft(state === 'now' ? {} : { scheduledAt: AT })]);
    if (state === 'sent') {
      s.clock.set(Date.parse(AT));
      await sendQueuedEmail(s.deps, id as string);
    }
    if (state === 'canceled') await cancelEmail(s.deps, test, id as string);
    const error = await rescheduleEmail(s.deps, test, id as string, new Date(T0 + 86_400_000).toISOString()).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ status: 409, code: 'not_reschedulable' });
    expect(s.sendScheduler.rescheduled).toEqual([]);
  });

  it('rescheduleEmail of another tenant’s email is 404; past what is kept of the email 422', async () => {
    const [id] = await accept(s, caller('test'), [draft({ scheduledAt: AT })]);
    const to = new Date(T0 + 86_400_000).toISOString();
    await expect(rescheduleEmail(s.deps, live, id as string, to)).rejects.toBeInstanceOf(NotFoundError);
    const tooLate = new Date(Date.parse(AT) + 30 * 86_400_000).toISOString();
    await expect(rescheduleEmail(s.deps, test, id as string, tooLate)).rejects.toMatchObject({
      status: 422,
      details: [{ path: 'scheduled_at', message: expect.stringMatching(/kept until/) }],
    });
    expect(s.sendScheduler.rescheduled).toEqual([]);
  });
});

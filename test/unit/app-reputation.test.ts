// Unit tests of the sending-reputation use cases on in-memory fakes: processEvent counts each bounce and complaint
// once (a redelivery counts nothing; email.sent and email.delivered write nothing: copies sent are the send worker's
// to count, sent-tally.test.ts) for the tenant and its sending domain; a hard bounce or complaint judges them: one
// account.reputation_warning (`warning`) per episode, then `paused`, fanned out to the subscribed webhooks and
// cleared from the outbox (left there for the reconciler when the fan-out fails); untold with the switch off;
// test mode judged only when the stage says; a failure to count is reported, never fails the event. The gate
// refuses a paused tenant's (or paused domain's) sends with 403 sending_paused, the send worker fails what was
// queued before the pause, other tenants send; a lift judges only what follows it.
import { describe, expect, it } from 'vitest';
import { domainId } from '../../lambdas/app/domains/domains';
import { SENDING_PAUSED, type SendEmailDeps, sendEmails, sendQueuedEmail } from '../../lambdas/app/emails/send-emails';
import { type ProcessEventDeps, processEvent, processEvents } from '../../lambdas/app/events/process-event';
import type { Principal } from '../../lambdas/app/ports';
import { liftPause } from '../../lambdas/app/reputation/lift-pause';
import { readReputation } from '../../lambdas/app/reputation/metrics';
import { ACCOUNT } from '../../lambdas/app/reputation/ports';
import { SentTally } from '../../lambdas/app/reputation/sent-tally';
import type { ReputationDeps } from '../../lambdas/app/reputation/track-reputation';
import type { Tenant, Webhook } from '../../lambdas/app/webhooks/ports';
import { DEFAULT_REPUTATION_POLICY, NO_COUNTS, type ReputationPolicy } from '../../lambdas/domain/email/reputation';
import { SendingPausedError } from '../../lambdas/domain/errors';
import type { SendflowEvent } from '../../lambdas/domain/events';
import {
  FakeClock,
  fixedLinks,
  InMemoryDomainRepository,
  InMemoryEmailHistory,
  InMemoryEmailRepository,
  InMemoryQuotaCounter,
  InMemoryReputationStore,
  InMemorySuppressionList,
  InMemoryWebhookRepository,
  RecordingDeliveryQueue,
  RecordingEmailProvider,
  RecordingEventPublisher,
  RecordingSendScheduler,
  seededRandom,
} from '../support/fakes';

const T0 = Date.UTC(2026, 2, 2, 9, 0, 0);
const LIVE: Tenant = { accountId: 'acct_rep', mode: 'live' };
const FROM = 'News <news@bulk.example>';
/** A small minimum so a test reaches it with a few dozen events. */
const POLICY: ReputationPolicy = { ...DEFAULT_REPUTATION_POLICY, minimumSent: 20 };

let serial = 0;
function event(type: SendflowEvent['type'], data: Record<string, unknown> = {}, tenant: Tenant = LIVE): SendflowEvent {
  serial += 1;
  return {
    id: `evt_${String(serial).padStart(6, '0')}`,
    type,
    ...tenant,
    timestamp: new Date(T0).toISOString(),
    emailId: `email_${String(serial).padStart(6, '0')}`,
    to: `r${serial}@example.com`,
    data: { from: FROM, subject: 'Hi', ...data },
  };
}
const hardBounce = (tenant: Tenant = LIVE) =>
  event('email.bounced', { bounce_type: 'Permanent', bounce_sub_type: 'General' }, tenant);

const hook = (tenant: Tenant = LIVE): Webhook => ({
  ...tenant,
  id: `wh_rep_${tenant.mode}`,
  url: 'https://hooks.example.com/reputation',
  events: ['account.reputation_warning'],
  format: 'standard',
  secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
  active: true,
  createdAt: new Date(T0 - 86_400_000).toISOString(),
  updatedAt: new Date(T0 - 86_400_000).toISOString(),
});

function setup(options: { policy?: ReputationPolicy; announce?: boolean } = {}) {
  const clock = new FakeClock(T0 + 60_000);
  const store = new InMemoryReputationStore();
  const webhooks = new InMemoryWebhookRepository();
  const deliveryQueue = new RecordingDeliveryQueue();
  const failures: { event: SendflowEvent; error: unknown }[] = [];
  const reputation: ReputationDeps = {
    store,
    policy: options.policy ?? POLICY,
    clock,
    random: seededRandom('reputation'),
    announce: options.announce ?? true,
  };
  const deps: ProcessEventDeps = {
    webhooks,
    deliveryQueue,
    clock,
    emailHistory: new InMemoryEmailHistory(),
    suppressions: new InMemorySuppressionList(),
    reputation,
    reputationFailed: (e, error) => failures.push({ event: e, error }),
  };
  /** The account.reputation_warning payloads queued for delivery, in order. */
  const told = () =>
    deliveryQueue.sent
      .flatMap((s) => s.jobs)
      .map((job) => JSON.parse(String(job.seed?.payload)) as { type: string; data: Record<string, unknown> })
      .filter((payload) => payload.type === 'account.reputation_warning')
      .map((p) => `${p.data.scope}${p.data.domain ? ` ${p.data.domain}` : ''} ${p.data.level}`);
  /** `n` copies sent from FROM's domain, counted as the send worker counts them (its batch's tally). */
  const send = async (n: number, tenant: Tenant = LIVE) => {
    const tally = new SentTally(store, clock);
    serial += 1;
    tally.add(tenant, { domain: 'bulk.example', copies: n, emailId: `email_sent_${serial}` });
    await tally.flush();
  };
  return { clock, store, webhooks, deliveryQueue, deps, reputation, failures, told, send };
}

describe('counting', () => {
  it('counts each bounce and complaint once; email.sent, email.delivered and a redelivery write nothing', async () => {
    // Arrange
    const { store, deps } = setup();
    const writes: unknown[] = [];
    const count = store.count.bind(store);
    store.count = async (tenant, entry) => {
      writes.push(entry.counts);
      return count(tenant, entry);
    };
    const soft = event('email.bounced', { bounce_type: 'Transient', bounce_sub_type: 'MailboxFull' });
    const complaint = event('email.complained');

    // Act
    for (const e of [event('email.sent'), event('email.delivered'), soft, soft, complaint, event('email.opened')]) {
      await processEvent(deps, e);
    }

    // Assert: one write per bounce or complaint, none for the rest (copies sent are the send worker's to count).
    expect(writes).toEqual([{ bounced: 1, bounced_transient: 1 }, { complained: 1 }]);
    const read = await store.countsBetween(LIVE, '2026-03-02', '2026-03-02', 100);
    const expected = { ...NO_COUNTS, bounced: 1, bounced_transient: 1, complained: 1 };
    expect(read.account).toEqual({ '2026-03-02': expected });
    expect(read.domains).toEqual({ 'bulk.example': { '2026-03-02': expected } });
  });

  it('a batch of deliveries costs no reputation write (processEvents)', async () => {
    // Arrange
    const { store, deps } = setup();
    let writes = 0;
    const count = store.count.bind(store);
    store.count = async (tenant, entry) => {
      writes += 1;
      return count(tenant, entry);
    };

    // Act
    const failed = await processEvents(
      deps,
      Array.from({ length: 10 }, () => event('email.delivered')),
    );

    // Assert
    expect(failed).toEqual([]);
    expect(writes).toBe(0);
  });

  it('reports a failure to count and goes on: the event is processed, only its count is lost', async () => {
    const { store, deps, failures } = setup();
    store.failCounts = 1;
    const bounce = hardBounce();

    await expect(processEvent(deps, bounce)).resolves.toBeUndefined();

    expect(failures.map((f) => f.event.id)).toEqual([bounce.id]);
    expect((await store.countsBetween(LIVE, '2026-03-02', '2026-03-02', 100)).account).toEqual({});
  });
});

describe('judging', () => {
  it('warns once per subject past the warning, then pauses past the pause, told to the subscribed webhooks', async () => {
    // Arrange: 24 copies sent, a webhook for the event.
    const { webhooks, store, deps, told, send } = setup();
    await webhooks.create(hook());
    await send(24);

    // Act: 1 hard bounce of 25 sent is 4%: a warning; a second (8%) pauses.
    await processEvent(deps, hardBounce());
    const afterFirst = told();
    await processEvent(deps, hardBounce());

    // Assert
    expect(afterFirst.sort()).toEqual(['account warning', 'domain bulk.example warning']);
    expect(told().slice(2).sort()).toEqual(['account paused', 'domain bulk.example paused']);
    const standings = await store.standings(LIVE);
    expect(standings.map((s) => Boolean(s.pausedAt && s.warnedAt))).toEqual([true, true]);
    // Fanned out, then cleared: nothing waits for the reconciler.
    expect(store.outbox.waiting()).toEqual([]);
    // More bounces tell nothing more.
    await processEvent(deps, hardBounce());
    expect(told()).toHaveLength(4);
  });

  it('says which rate and what next in the event (a complaint past 0.3%)', async () => {
    const { webhooks, deps, deliveryQueue, send } = setup();
    await webhooks.create(hook());
    await send(100);

    await processEvent(deps, event('email.complained'));

    const payload = JSON.parse(String(deliveryQueue.sent.at(-1)?.jobs[0]?.seed?.payload)) as Record<string, unknown>;
    expect(payload).toMatchObject({
      type: 'account.reputation_warning',
      data: {
        level: 'paused',
        sending_paused: true,
        breaches: ['complaint_rate'],
        window_days: 7,
        sent: 100,
        complained: 1,
        complaint_rate: 0.01,
        bounce_rate: 0,
        thresholds: { warning: { bounce_rate: 0.04, complaint_rate: 0.0008 }, pause: { bounce_rate: 0.08 } },
      },
    });
    expect(String((payload.data as Record<string, unknown>).message)).toMatch(/complaint rate 1%.*ask support/);
  });

  it('keeps a warning it could not fan out in the outbox, for the reconciler, and reports the failure', async () => {
    // Arrange: the deliveries queue refuses every job (only the warning has a subscribed webhook).
    const { deps, store, webhooks, failures, send } = setup();
    await webhooks.create(hook());
    await send(20);
    const refusing: ProcessEventDeps = {
      ...deps,
      deliveryQueue: { send: () => Promise.reject(new Error('deliveries queue down')) },
    };

    // Act
    const bounce = hardBounce();
    await processEvent(refusing, bounce);

    // Assert
    expect(store.outbox.waiting().map((e) => `${e.type} ${e.data.level} ${e.data.scope}`)).toEqual([
      'account.reputation_warning warning account',
      'account.reputation_warning warning domain',
    ]);
    expect(failures.map((f) => f.event.id)).toEqual([bounce.id]);
  });

  it('ends a warning episode once the rates are back under it, and warns again on the next rise', async () => {
    // Arrange: warned at 1 hard bounce of 25 (4%).
    const { deps, store, told, webhooks, send } = setup();
    await webhooks.create(hook());
    await send(24);
    await processEvent(deps, hardBounce());
    expect(told().sort()).toEqual(['account warning', 'domain bulk.example warning']);

    // Act: 175 more sent, then a bounce judged at 2 of 201 (1%): the episode ends; then up to 9 of 201 (4.5%).
    await send(175);
    await processEvent(deps, hardBounce());
    const cleared = await store.standings(LIVE);
    for (let i = 0; i < 7; i++) await processEvent(deps, hardBounce());

    // Assert
    expect(cleared.map((s) => s.warnedAt)).toEqual([undefined, undefined]);
    expect(told().slice(2).sort()).toEqual(['account warning', 'domain bulk.example warning']);
    expect((await store.standings(LIVE)).some((s) => s.pausedAt)).toBe(false);
  });

  it('notes warnings and pauses but tells nothing with the switch off (expand/contract)', async () => {
    const { deps, store, told, webhooks, send } = setup({ announce: false });
    await webhooks.create(hook());
    await send(20);

    await processEvent(deps, hardBounce());
    await processEvent(deps, hardBounce());

    expect(told()).toEqual([]);
    expect((await store.standings(LIVE)).every((s) => s.pausedAt)).toBe(true);
    expect(store.outbox.waiting()).toEqual([]);
  });

  it('counts test mode but judges it only when the stage says so', async () => {
    const test: Tenant = { ...LIVE, mode: 'test' };
    const off = setup();
    const on = setup({ policy: { ...POLICY, judgeTestMode: true } });
    for (const { deps, send } of [off, on]) {
      await send(20, test);
      await processEvent(deps, hardBounce(test));
      await processEvent(deps, hardBounce(test));
    }

    expect(
      (await off.store.countsBetween(test, '2026-03-02', '2026-03-02', 100)).account['2026-03-02']?.bounced_permanent,
    ).toBe(2);
    expect(await off.store.standings(test)).toEqual([]);
    expect((await on.store.standings(test)).map((s) => Boolean(s.pausedAt))).toEqual([true, true]);
  });
});

describe('the gate and the lift', () => {
  const CALLER: Principal = { ...LIVE, keyId: 'key_rep', scopes: ['email:send'], plan: 'scale' };

  function sending(store: InMemoryReputationStore, clock: FakeClock) {
    const domains = new InMemoryDomainRepository();
    const provider = new RecordingEmailProvider();
    const sendScheduler = new RecordingSendScheduler();
    const emails = new InMemoryEmailRepository();
    const deps: SendEmailDeps = {
      emails,
      domains,
      providerFor: () => provider,
      quotas: new InMemoryQuotaCounter(),
      suppressions: new InMemorySuppressionList(),
      events: new RecordingEventPublisher(),
      sendScheduler,
      links: fixedLinks(),
      clock,
      random: seededRandom('gate'),
      reputation: { store, policy: POLICY },
    };
    return { deps, domains, provider, sendScheduler, emails };
  }

  /** A verified live sending domain of the tenant, as the domain use cases leave it. */
  async function verified(domains: InMemoryDomainRepository, tenant: Tenant, name: string) {
    const at = new Date(T0).toISOString();
    const id = domainId(tenant, name);
    await domains.create({ ...tenant, id, name, status: 'verified', records: [], createdAt: at, updatedAt: at }, []);
  }

  const draft = (from: string) => ({
    from,
    to: ['ada@example.com'],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: 'Hi',
    text: 'Hi',
    headers: {},
    tags: [],
  });

  it('refuses a paused tenant’s send (single and batch) with 403 sending_paused naming the rate and the way out; others send', async () => {
    // Arrange: the account paused for its bounce rate; a bystander.
    const { store, clock } = setup();
    await store.note(
      LIVE,
      ACCOUNT,
      { at: '2026-03-02T09:00:00.000Z', pause: PAUSE_FIGURES, warning: PAUSE_FIGURES },
      [],
    );
    const { deps, domains } = sending(store, clock);
    await verified(domains, LIVE, 'bulk.example');
    const other: Principal = { ...CALLER, accountId: 'acct_other' };
    await verified(domains, other, 'fine.example');

    // Act
    const single = sendEmails(deps, CALLER, [draft(FROM)]);
    const batch = sendEmails(deps, CALLER, [draft(FROM), draft(FROM)], { batch: true });

    // Assert
    await expect(single).rejects.toBeInstanceOf(SendingPausedError);
    await expect(single).rejects.toMatchObject({ status: 403, code: 'sending_paused' });
    await expect(single).rejects.toThrow(
      /Live sending from this account is paused since 2026-03-02T09:00:00.000Z: its bounce rate was 9% \(pause threshold 8%\) over the last 7 days \(300 sent\).*contact support/,
    );
    await expect(batch).rejects.toBeInstanceOf(SendingPausedError);
    await expect(sendEmails(deps, other, [draft('hi@fine.example')])).resolves.toHaveLength(1);
  });

  it('a paused domain stops only its own sends', async () => {
    const { store, clock } = setup();
    await store.note(
      LIVE,
      { kind: 'domain', domain: 'bulk.example' },
      { at: '2026-03-02T09:00:00.000Z', pause: PAUSE_FIGURES },
      [],
    );
    const { deps, domains } = sending(store, clock);
    await verified(domains, LIVE, 'bulk.example');
    await verified(domains, LIVE, 'receipts.example');

    await expect(sendEmails(deps, CALLER, [draft(FROM)])).rejects.toThrow(/from the domain bulk\.example is paused/);
    await expect(sendEmails(deps, CALLER, [draft('billing@receipts.example')])).resolves.toHaveLength(1);
  });

  it('the send worker fails the copies of an email accepted before its tenant was paused: email.failed sending_paused', async () => {
    // Arrange: accepted, then paused before the worker runs.
    const { store, clock } = setup();
    const { deps, domains, provider, sendScheduler, emails } = sending(store, clock);
    await verified(domains, LIVE, 'bulk.example');
    const [id] = await sendEmails(deps, CALLER, [draft(FROM)]);
    await store.note(LIVE, ACCOUNT, { at: '2026-03-02T09:00:00.000Z', pause: PAUSE_FIGURES }, []);

    // Act
    for (const job of sendScheduler.scheduled) await sendQueuedEmail(deps, job.emailId);

    // Assert
    expect(provider.sent).toEqual([]);
    const states = await emails.recipientStates(String(id));
    expect(Object.values(states ?? {})).toEqual([{ state: 'failed', tries: 0, reason: SENDING_PAUSED }]);
  });

  it('a lift keeps the window’s counts as its baseline: the same bounces do not pause again, fresh ones do', async () => {
    // Arrange: paused at 2 bounces of 25.
    const { deps, store, clock, send } = setup();
    await send(23);
    await processEvent(deps, hardBounce());
    await processEvent(deps, hardBounce());
    expect((await store.standings(LIVE)).every((s) => s.pausedAt)).toBe(true);

    // Act: lifted; then one more bounce (judged on what follows the lift: too little volume).
    const lifted = await liftPause({ store, clock }, LIVE, { note: 'ticket 42' });
    await processEvent(deps, hardBounce());
    const afterOne = await store.standings(LIVE);
    // A fresh 20 sent with 2 hard bounces: 10%, paused again.
    await send(20);
    await processEvent(deps, hardBounce());

    // Assert
    expect(lifted.map((s) => s.subject.kind).sort()).toEqual(['account', 'domain']);
    expect(afterOne.some((s) => s.pausedAt)).toBe(false);
    expect((await store.standings(LIVE)).every((s) => s.pausedAt)).toBe(true);
    const judged = await readReputation({ store, policy: POLICY, clock }, LIVE);
    expect(judged.status).toBe('paused');
    expect(judged.account.judgment.figures).toMatchObject({ sent: 20, bounced: 2 });
    await expect(liftPause({ store, clock }, { ...LIVE, accountId: 'acct_none' }, { note: 'x' })).rejects.toThrow(
      /Nothing is paused/,
    );
  });
});

const PAUSE_FIGURES = {
  sent: 300,
  bounced: 27,
  complained: 0,
  bounceRate: 0.09,
  complaintRate: 0,
  breaches: ['bounce_rate'] as const,
};

// Unit tests of what the use cases report to the Telemetry port (lambdas/app/telemetry.ts): one report per
// attempt (automatic success with its event-to-first-attempt lag, failure with the retry scheduled, a paused
// webhook's end, a manual retry, a test send, none for a duplicate job), emails accepted, and recipients sent
// or failed counted once where their outcome is stored.
import { describe, expect, it } from 'vitest';
import { type EmailDraft, type SendEmailDeps, sendEmails, sendQueuedEmail } from '../../lambdas/app/emails/send-emails';
import type { Principal } from '../../lambdas/app/ports';
import { type AttemptDeps, attemptDelivery, retryDelivery, testWebhook } from '../../lambdas/app/webhooks/attempts';
import { dispatchEvent } from '../../lambdas/app/webhooks/dispatch-event';
import type { DeliveryJob, Tenant, Webhook } from '../../lambdas/app/webhooks/ports';
import type { SendflowEvent } from '../../lambdas/domain/events';
import {
  FakeClock,
  fixedLinks,
  InMemoryDeliveryRepository,
  InMemoryDomainRepository,
  InMemoryEmailRepository,
  InMemoryQuotaCounter,
  InMemorySuppressionList,
  InMemoryWebhookRepository,
  RecordingDeliveryQueue,
  RecordingEmailProvider,
  RecordingEventPublisher,
  RecordingRetryScheduler,
  RecordingSendScheduler,
  RecordingTelemetry,
  ScriptedSender,
  seededRandom,
} from '../support/fakes';

const T0 = Date.UTC(2025, 5, 1, 9, 0, 0);
const TENANT: Tenant = { accountId: 'acct_main', mode: 'test' };

const webhook: Webhook = {
  ...TENANT,
  id: 'wh_main',
  url: 'https://hooks.example.com/sendflow',
  events: ['email.delivered'],
  format: 'standard',
  secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
  active: true,
  createdAt: new Date(T0 - 86_400_000).toISOString(),
  updatedAt: new Date(T0 - 86_400_000).toISOString(),
};

const event: SendflowEvent = {
  id: 'evt_01jx2a3b4c5d6e7f8g9h0jkmnp',
  type: 'email.delivered',
  ...TENANT,
  // Happened 2.5 s before the dispatcher ran (SES → EventBridge → queues).
  timestamp: new Date(T0 - 2_500).toISOString(),
  data: {},
};

async function setup() {
  const clock = new FakeClock(T0);
  const webhooks = new InMemoryWebhookRepository();
  await webhooks.create(webhook);
  const deliveries = new InMemoryDeliveryRepository();
  const sender = new ScriptedSender(clock);
  const telemetry = new RecordingTelemetry();
  const deps: AttemptDeps = {
    webhooks,
    deliveries,
    sender,
    retries: new RecordingRetryScheduler(),
    clock,
    random: seededRandom(),
    // Two automatic attempts at most.
    policy: { delaysSeconds: [1] },
    claimMs: 60_000,
    retentionSeconds: 86_400,
    telemetry,
  };
  // The job exactly as the dispatcher queues it.
  const queue = new RecordingDeliveryQueue();
  await dispatchEvent({ webhooks, deliveryQueue: queue, clock }, event);
  const job = queue.sent[0]?.jobs[0] as DeliveryJob;
  return { clock, webhooks, sender, telemetry, deps, job };
}

describe('attempts report to telemetry', () => {
  it('reports a first automatic attempt that succeeded, with the lag from the event to the attempt', async () => {
    // Arrange
    const { clock, sender, telemetry, deps, job } = await setup();
    clock.advance(400); // the job waited on the queue
    sender.answers({ statusCode: 204, durationMs: 31 });

    // Act
    await attemptDelivery(deps, job);

    // Assert
    expect(telemetry.attempts).toEqual([
      {
        deliveryId: job.deliveryId,
        webhookId: 'wh_main',
        accountId: 'acct_main',
        mode: 'test',
        eventType: 'email.delivered',
        attempt: 1,
        kind: 'automatic',
        requested: true,
        statusCode: 204,
        durationMs: 31,
        error: null,
        errorClass: null,
        deliveryStatus: 'succeeded',
        recorded: true,
        firstAttemptLagMs: 2_900,
      },
    ]);
  });

  it('reports a failed attempt with its error and the retry it scheduled, and no lag after the first', async () => {
    // Arrange
    const { clock, sender, telemetry, deps, job } = await setup();
    sender.answers({ statusCode: 503, error: 'HTTP 503', durationMs: 80 });
    await attemptDelivery(deps, job);
    clock.advance(1_000);

    // Act
    await attemptDelivery(deps, { deliveryId: job.deliveryId, webhookId: job.webhookId, attempt: 2 });

    // Assert
    expect(telemetry.attempts.map((a) => [a.attempt, a.statusCode, a.error, a.deliveryStatus])).toEqual([
      [1, 503, 'HTTP 503', 'pending'],
      [2, 503, 'HTTP 503', 'failed'],
    ]);
    expect(telemetry.attempts[0]?.firstAttemptLagMs).toBe(2_500);
    expect(telemetry.attempts[1]).not.toHaveProperty('firstAttemptLagMs');
  });

  it('reports nothing for a duplicate job (the attempt was already claimed)', async () => {
    // Arrange
    const { telemetry, deps, job } = await setup();
    await attemptDelivery(deps, job);

    // Act
    const result = await attemptDelivery(deps, job);

    // Assert
    expect(result).toBe('skipped');
    expect(telemetry.attempts).toHaveLength(1);
  });

  it('reports a paused webhook as an attempt without request, failed with "webhook paused"', async () => {
    // Arrange
    const { webhooks, sender, telemetry, deps, job } = await setup();
    await webhooks.update(TENANT, webhook.id, { active: false }, new Date(T0).toISOString());

    // Act
    await attemptDelivery(deps, job);

    // Assert
    expect(sender.requests).toHaveLength(0);
    expect(telemetry.attempts).toEqual([
      expect.objectContaining({
        requested: false,
        statusCode: null,
        error: 'webhook paused',
        errorClass: 'webhook_paused',
        deliveryStatus: 'failed',
      }),
    ]);
  });

  it('reports a manual retry and a test send by their kind, without lag', async () => {
    // Arrange
    const { clock, sender, telemetry, deps, job } = await setup();
    sender.answers({ statusCode: 500, error: 'HTTP 500' });
    await attemptDelivery(deps, job);
    clock.advance(1_000);
    await attemptDelivery(deps, { deliveryId: job.deliveryId, webhookId: job.webhookId, attempt: 2 });
    clock.advance(60_000);
    sender.answers({ statusCode: 200 });

    // Act
    await retryDelivery(deps, TENANT, webhook.id, job.deliveryId, clock.now());
    await testWebhook(deps, TENANT, webhook.id);

    // Assert
    const [, , manual, test] = telemetry.attempts;
    expect(manual).toMatchObject({ kind: 'manual', attempt: 3, statusCode: 200, deliveryStatus: 'succeeded' });
    expect(test).toMatchObject({ kind: 'test', attempt: 1, eventType: 'test', deliveryStatus: 'succeeded' });
    expect(manual).not.toHaveProperty('firstAttemptLagMs');
    expect(test).not.toHaveProperty('firstAttemptLagMs');
  });
});

describe('emails report to telemetry', () => {
  const caller: Principal = { accountId: 'acct_main', keyId: 'key_1', mode: 'test', scopes: [], plan: 'scale' };

  function emailSetup() {
    const telemetry = new RecordingTelemetry();
    const provider = new RecordingEmailProvider();
    const sendScheduler = new RecordingSendScheduler();
    const deps: SendEmailDeps = {
      emails: new InMemoryEmailRepository(),
      domains: new InMemoryDomainRepository(),
      providerFor: () => provider,
      quotas: new InMemoryQuotaCounter(),
      suppressions: new InMemorySuppressionList(),
      events: new RecordingEventPublisher(),
      sendScheduler,
      links: fixedLinks(),
      clock: new FakeClock(T0),
      random: seededRandom('telemetry'),
      telemetry,
    };
    return { telemetry, provider, sendScheduler, deps };
  }
  const draft = (to: string[]): EmailDraft => ({
    from: 'a@acme.example',
    to,
    cc: [],
    bcc: [],
    replyTo: [],
    subject: 'Hi',
    html: '<p>Hi</p>',
    headers: {},
    tags: [],
  });

  it('counts every email of a batch as accepted once stored', async () => {
    // Arrange
    const { telemetry, deps } = emailSetup();

    // Act
    await sendEmails(deps, caller, [draft(['x@example.com']), draft(['y@example.com'])], { batch: true });

    // Assert
    expect(telemetry.emailTotal('accepted')).toBe(2);
  });

  it('counts each recipient sent or failed once, even when the send message is received twice', async () => {
    // Arrange
    const { telemetry, provider, sendScheduler, deps } = emailSetup();
    provider.outcome = (to) =>
      to.startsWith('bad') ? { status: 'refused', reason: 'MessageRejected' } : { status: 'sent' };
    await sendEmails(deps, caller, [draft(['ok1@example.com', 'bad@example.com', 'ok2@example.com'])]);
    const emailId = sendScheduler.scheduled[0]?.emailId as string;

    // Act
    await sendQueuedEmail(deps, emailId);
    await sendQueuedEmail(deps, emailId);

    // Assert
    expect(telemetry.emailTotal('sent')).toBe(2);
    expect(telemetry.emailTotal('failed')).toBe(1);
  });
});

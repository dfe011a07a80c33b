// The delivery pipeline end to end over real HTTP: email → simulated events → dispatcher → delivery worker
// → a real receiver that verifies signatures independently. Retries use SF_RETRY_DELAYS of 0.2 s.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../lambdas/domain/api-keys';
import { type Receiver, startReceiver, verifyServiceSignature, verifyStandardWebhook } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let receiver: Receiver;

beforeAll(async () => {
  rt = await startTestRuntime();
});
afterAll(() => rt.stop());
afterEach(async () => {
  await receiver?.close();
});

interface Hook {
  id: string;
  signing_secret: string;
}

async function setup(events: string[], path = '/hook', extra: Record<string, unknown> = {}) {
  receiver = await startReceiver();
  const { key } = await rt.newKey();
  const res = await rt.call('/webhooks', {
    method: 'POST',
    key,
    body: JSON.stringify({ url: `${receiver.url}${path}`, events, ...extra }),
  });
  expect(res.status).toBe(201);
  return { key, hook: (await res.json()) as Hook };
}

const sendEmail = (key: string, to: string | string[]) =>
  rt.call('/emails', {
    method: 'POST',
    key,
    body: JSON.stringify({ from: 'Acme <hello@acme.test>', to, subject: 'Welcome', html: '<p>Hi</p>' }),
  });

async function deliveries(key: string, hookId: string, query = '') {
  const res = await rt.call(`/webhooks/${hookId}/deliveries${query}`, { key });
  expect(res.status).toBe(200);
  return (await res.json()) as { object: string; has_more: boolean; data: Record<string, unknown>[] };
}

/** Polls the log until `predicate` holds (the worker records just after the receiver answers). */
async function until<T>(read: () => Promise<T>, predicate: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (predicate(value)) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('test send', () => {
  it('makes one synchronous signed attempt and records it as a `test` delivery', async () => {
    const { key, hook } = await setup(['email.sent']);
    const res = await rt.call(`/webhooks/${hook.id}/test`, { method: 'POST', key });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown> & { delivery: Record<string, unknown> };
    expect(body).toMatchObject({ success: true, status: 200, message: expect.stringContaining('200') });
    expect(Object.keys(body.delivery).sort()).toEqual([
      'attempts',
      'duration_ms',
      'event',
      'id',
      'status',
      'status_code',
    ]);
    expect(body.delivery).toMatchObject({ event: 'test', status: 'succeeded', attempts: 1, status_code: 200 });

    const [request] = receiver.received;
    expect(receiver.received).toHaveLength(1);
    expect(verifyServiceSignature(hook.signing_secret, request as never)).toBe(true);
    expect(verifyStandardWebhook(hook.signing_secret, request as never)).toBe(true);
    expect(JSON.parse(request?.body ?? '')).toMatchObject({ type: 'test' });
  });

  it('reports a failing endpoint and never retries a test send', async () => {
    const { key, hook } = await setup(['email.sent']);
    receiver.answer({ kind: 'status', status: 503, body: 'down' });
    const body = (await (await rt.call(`/webhooks/${hook.id}/test`, { method: 'POST', key })).json()) as Record<
      string,
      unknown
    > & {
      delivery: Record<string, unknown>;
    };
    expect(body).toMatchObject({
      success: false,
      status: 503,
      delivery: { status: 'failed', attempts: 1, status_code: 503 },
    });
    await new Promise((r) => setTimeout(r, 600));
    expect(receiver.received).toHaveLength(1);
  });

  it('shows a test send in the delivery log as one attempt out of one (max_attempts: 1)', async () => {
    const { key, hook } = await setup(['email.sent']);
    receiver.answer({ kind: 'status', status: 500 });
    const sent = (await (await rt.call(`/webhooks/${hook.id}/test`, { method: 'POST', key })).json()) as {
      delivery: { id: string };
    };
    const [listed] = (await deliveries(key, hook.id)).data as Record<string, unknown>[];
    expect(listed).toMatchObject({ id: sent.delivery.id, event: 'test', attempts: 1, max_attempts: 1 });
    const one = await rt.call(`/webhooks/${hook.id}/deliveries/${sent.delivery.id}`, { key });
    expect(await one.json()).toMatchObject({ status: 'failed', attempts: 1, max_attempts: 1, next_attempt_at: null });
  });
});

describe('email → events → webhook', () => {
  it('delivers every subscribed event, signed, with the stored payload equal to the body byte for byte', async () => {
    const { key, hook } = await setup(['sent', 'delivered']);
    const sent = (await (await sendEmail(key, 'success@simulator.amazonses.com')).json()) as { id: string };
    const requests = await receiver.waitFor(2);
    const bodies = requests.map((r) => JSON.parse(r.body) as Record<string, unknown>);
    expect(bodies.map((b) => b.type).sort()).toEqual(['email.delivered', 'email.sent']);
    const delivered = bodies.find((b) => b.type === 'email.delivered') as Record<string, unknown>;
    // The spec's fields, and Resend's `created_at` (issue 30: the same as `timestamp`).
    expect(Object.keys(delivered)).toEqual([
      'id',
      'type',
      'email_id',
      'to',
      'timestamp',
      'created_at',
      'sequence',
      'data',
    ]);
    expect(delivered.created_at).toBe(delivered.timestamp);
    // The email's events carry a sequence that grows in the order they happened: sent, then delivered.
    const sentBody = bodies.find((b) => b.type === 'email.sent') as Record<string, unknown>;
    expect(Number.isSafeInteger(sentBody.sequence) && (sentBody.sequence as number) >= 1).toBe(true);
    expect(delivered.sequence as number).toBeGreaterThan(sentBody.sequence as number);
    expect(delivered).toMatchObject({
      email_id: sent.id,
      to: 'success@simulator.amazonses.com',
      data: { smtp_response: expect.stringMatching(/^250 /) },
    });
    for (const request of requests) {
      expect(verifyServiceSignature(hook.signing_secret, request)).toBe(true);
      expect(verifyStandardWebhook(hook.signing_secret, request)).toBe(true);
      expect(request.headers['webhook-id']).toBe((JSON.parse(request.body) as { id: string }).id);
      expect(Number(request.headers['x-service-timestamp'])).toBeCloseTo(Date.now() / 1000, -1);
      expect(request.headers['content-type']).toBe('application/json');
    }

    const log = await until(
      () => deliveries(key, hook.id),
      (l) => l.data.filter((d) => d.status === 'succeeded').length === 2,
    );
    for (const item of log.data) {
      const single = (await (await rt.call(`/webhooks/${hook.id}/deliveries/${item.id}`, { key })).json()) as Record<
        string,
        unknown
      >;
      const match = requests.find((r) => (JSON.parse(r.body) as { type: string }).type === single.event);
      expect(single.payload).toBe(match?.body);
    }
  });

  it('sends bounce details and does not deliver events the webhook did not subscribe to', async () => {
    const { key } = await setup(['bounced']);
    await sendEmail(key, 'bounce@simulator.amazonses.com');
    const [request] = await receiver.waitFor(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(1);
    expect(JSON.parse(request?.body ?? '')).toMatchObject({
      type: 'email.bounced',
      data: { bounce_type: 'Permanent', bounce_sub_type: 'General', refused_by_account_suppression_list: false },
    });
  });

  it('a paused webhook gets nothing; resumed, it gets new events', async () => {
    const { key, hook } = await setup(['email.sent']);
    await rt.call(`/webhooks/${hook.id}`, { method: 'PUT', key, body: '{"active": false}' });
    await sendEmail(key, 'success@simulator.amazonses.com');
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received).toHaveLength(0);
    expect((await deliveries(key, hook.id)).data).toHaveLength(0);
    expect((await rt.call(`/webhooks/${hook.id}/test`, { method: 'POST', key })).status).toBe(409);
    await rt.call(`/webhooks/${hook.id}`, { method: 'PUT', key, body: '{"active": true}' });
    await sendEmail(key, 'success@simulator.amazonses.com');
    await receiver.waitFor(1);
  });

  it('delivers to Discord and Slack formats unsigned, as colour-coded chat messages', async () => {
    const { key } = await setup(['bounced'], '/api/webhooks/1/x', { format: 'discord' });
    await sendEmail(key, 'bounce@simulator.amazonses.com');
    const [request] = await receiver.waitFor(1);
    expect(request?.headers['x-service-signature']).toBeUndefined();
    expect(request?.headers['webhook-signature']).toBeUndefined();
    const message = JSON.parse(request?.body ?? '') as {
      embeds: { color: number; fields: { name: string; value: string }[] }[];
    };
    expect(message.embeds[0]?.color).toBe(0xe74c3c);
    const text = JSON.stringify(message.embeds[0]?.fields);
    for (const part of ['bounce@simulator.amazonses.com', 'Acme <hello@acme.test>', 'Permanent'])
      expect(text).toContain(part);
  });
});

describe('retries and the attempt log', () => {
  it('a flaky endpoint succeeds on attempt 3, with the attempt log of all three', async () => {
    const { key, hook } = await setup(['email.sent']);
    receiver.answer((n) => (n < 3 ? { kind: 'status', status: 500, body: 'boom' } : { kind: 'status', status: 204 }));
    await sendEmail(key, 'success@simulator.amazonses.com');
    const requests = await receiver.waitFor(3);
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const request of requests) expect(verifyServiceSignature(hook.signing_secret, request)).toBe(true);

    const log = await until(
      () => deliveries(key, hook.id),
      (l) => l.data[0]?.status === 'succeeded',
    );
    const delivery = log.data[0] as Record<string, unknown> & { attempt_log: Record<string, unknown>[] };
    expect(delivery).toMatchObject({
      attempts: 3,
      max_attempts: 5,
      status_code: 204,
      error: null,
      next_attempt_at: null,
    });
    expect(delivery.delivered_at).toEqual(expect.any(String));
    expect(delivery.attempt_log.map((a) => a.status_code)).toEqual([500, 500, 204]);
    expect(delivery.attempt_log.map((a) => a.error)).toEqual(['HTTP 500', 'HTTP 500', '']);
    for (const attempt of delivery.attempt_log) expect(attempt.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('an always-failing endpoint ends `failed` after 5 attempts; a manual retry then succeeds with attempts = 6', async () => {
    const { key, hook } = await setup(['email.sent']);
    receiver.answer({ kind: 'status', status: 500, body: 'x'.repeat(2000) });
    await sendEmail(key, 'success@simulator.amazonses.com');
    await receiver.waitFor(5);
    const log = await until(
      () => deliveries(key, hook.id),
      (l) => l.data[0]?.status === 'failed',
    );
    const failed = log.data[0] as Record<string, unknown>;
    expect(failed).toMatchObject({ attempts: 5, status_code: 500, next_attempt_at: null, delivered_at: null });
    expect(failed.response).toBe('x'.repeat(500));
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received).toHaveLength(5);

    receiver.answer({ kind: 'status', status: 200, body: 'ok' });
    const retry = await rt.call(`/webhooks/${hook.id}/deliveries/${failed.id}/retry`, { method: 'POST', key });
    expect(retry.status).toBe(200);
    const body = (await retry.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      success: true,
      delivery: { id: failed.id, status: 'succeeded', attempts: 6, status_code: 200 },
    });
    expect(Object.keys(body.delivery as object).sort()).toEqual(['attempts', 'id', 'status', 'status_code']);
    expect(receiver.received[5]?.body).toBe(receiver.received[0]?.body);
    expect(verifyServiceSignature(hook.signing_secret, receiver.received[5] as never)).toBe(true);
  });

  it('409 while a retry is scheduled', async () => {
    await rt.stop();
    rt = await startTestRuntime({ SF_RETRY_DELAYS: '30,30,30,30' });
    const { key, hook } = await setup(['email.sent']);
    receiver.answer({ kind: 'status', status: 500 });
    await sendEmail(key, 'success@simulator.amazonses.com');
    await receiver.waitFor(1);
    const log = await until(
      () => deliveries(key, hook.id),
      (l) => (l.data[0]?.attempts as number) === 1,
    );
    const pending = log.data[0] as Record<string, unknown>;
    expect(pending).toMatchObject({ status: 'pending', attempts: 1 });
    expect(Date.parse(pending.next_attempt_at as string) - Date.now()).toBeGreaterThan(25_000);
    const res = await rt.call(`/webhooks/${hook.id}/deliveries/${pending.id}/retry`, { method: 'POST', key });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ status: 409, code: 'retry_conflict' });
    expect(receiver.received).toHaveLength(1);
    await rt.stop();
    rt = await startTestRuntime();
  });

  it('does not follow redirects: a 3xx is a failed attempt and the target is never called', async () => {
    const { key, hook } = await setup(['email.sent']);
    receiver.answer((n) =>
      n === 1
        ? { kind: 'redirect', status: 302, location: `${receiver.url}/elsewhere` }
        : { kind: 'status', status: 200 },
    );
    const res = await rt.call(`/webhooks/${hook.id}/test`, { method: 'POST', key });
    const body = (await res.json()) as { success: boolean; status: number; delivery: { status: string } };
    expect(body).toMatchObject({ success: false, status: 302, delivery: { status: 'failed' } });
    expect(receiver.received.map((r) => r.path)).toEqual(['/hook']);
    const [delivery] = (await deliveries(key, hook.id)).data;
    expect(delivery?.error).toMatch(/redirect not followed \(HTTP 302/);
  });
});

describe('the delivery log', () => {
  it('pages newest first with `after` and filters by status', async () => {
    const { key, hook } = await setup(['email.sent']);
    receiver.answer((n) => (n % 2 === 0 ? { kind: 'status', status: 200 } : { kind: 'status', status: 400 }));
    for (let i = 0; i < 5; i++) await rt.call(`/webhooks/${hook.id}/test`, { method: 'POST', key });

    const all = await deliveries(key, hook.id);
    expect(all).toMatchObject({ object: 'list', has_more: false });
    expect(all.data).toHaveLength(5);
    const ids = all.data.map((d) => d.id as string);
    expect([...ids].sort().reverse()).toEqual(ids);

    const first = await deliveries(key, hook.id, '?limit=2');
    expect(first.has_more).toBe(true);
    expect(first.data.map((d) => d.id)).toEqual(ids.slice(0, 2));
    const second = await deliveries(key, hook.id, `?limit=2&after=${ids[1]}`);
    expect(second.data.map((d) => d.id)).toEqual(ids.slice(2, 4));
    const last = await deliveries(key, hook.id, `?limit=2&after=${ids[3]}`);
    expect(last).toMatchObject({ has_more: false });
    expect(last.data.map((d) => d.id)).toEqual(ids.slice(4));

    const failed = await deliveries(key, hook.id, '?status=failed');
    expect(failed.data.map((d) => d.status)).toEqual(['failed', 'failed', 'failed']);
    const ok = await deliveries(key, hook.id, '?status=succeeded&limit=1');
    expect(ok).toMatchObject({ has_more: true });
    const okNext = await deliveries(key, hook.id, `?status=succeeded&limit=1&after=${ok.data[0]?.id}`);
    expect(okNext).toMatchObject({ has_more: false, data: [{ status: 'succeeded' }] });
  });

  it('validates the query with 422 and 404s unknown delivery ids', async () => {
    const { key, hook } = await setup(['email.sent']);
    for (const query of ['?limit=0', '?limit=101', '?limit=abc', '?status=done', '?after=nope', '?colour=red']) {
      const res = await rt.call(`/webhooks/${hook.id}/deliveries${query}`, { key });
      expect(res.status, query).toBe(422);
    }
    expect((await rt.call(`/webhooks/${hook.id}/deliveries/dlv_${'0'.repeat(36)}`, { key })).status).toBe(404);
    expect(
      (await rt.call(`/webhooks/${hook.id}/deliveries/dlv_${'0'.repeat(36)}/retry`, { method: 'POST', key })).status,
    ).toBe(404);
  });

  it('shows a delivery with every spec field, and its payload only on the single view', async () => {
    const { key, hook } = await setup(['email.sent']);
    await rt.call(`/webhooks/${hook.id}/test`, { method: 'POST', key });
    const [item] = (await deliveries(key, hook.id)).data;
    const fields = [
      'attempt_log',
      'attempts',
      'created_at',
      'delivered_at',
      'duration_ms',
      'error',
      'event',
      'id',
      'max_attempts',
      'next_attempt_at',
      'object',
      'response',
      'status',
      'status_code',
      'webhook_id',
    ];
    expect(Object.keys(item ?? {}).sort()).toEqual(fields);
    const single = (await (await rt.call(`/webhooks/${hook.id}/deliveries/${item?.id}`, { key })).json()) as Record<
      string,
      unknown
    >;
    expect(Object.keys(single).sort()).toEqual([...fields, 'payload'].sort());
    expect(single).toMatchObject({ object: 'webhook_delivery', webhook_id: hook.id, response: 'ok' });
  });
});

describe('never doubled', () => {
  it('a redelivered event maps onto the same delivery: no second POST, counted once', async () => {
    const { key, hook } = await setup(['email.sent']);
    const { accountId } = (await rt.repos.apiKeys.findByHash(hashApiKey(key))) as { accountId: string };
    const event = {
      id: 'evt_01m80y0000000000000000000a',
      type: 'email.sent' as const,
      accountId,
      mode: 'test' as const,
      timestamp: new Date().toISOString(),
      data: {},
    };
    for (let i = 0; i < 3; i++) {
      await rt.services.events.publish([event]);
      await rt.settle();
    }
    expect(receiver.received.filter((r) => r.headers['webhook-id'] === event.id)).toHaveLength(1);
    const log = await deliveries(key, hook.id);
    expect(log.data).toHaveLength(1);
    expect(log.data[0]).toMatchObject({ attempts: 1, status: 'succeeded' });
  });

  it('the same job three times in one batch, handled in parallel, makes one POST', async () => {
    const { key, hook } = await setup(['email.sent']);
    receiver.answer({ kind: 'slow', delayMs: 300, status: 200 });
    const { accountId } = (await rt.repos.apiKeys.findByHash(hashApiKey(key))) as { accountId: string };
    const job = {
      deliveryId: `dlv_${'1'.repeat(36)}`,
      webhookId: hook.id,
      attempt: 1,
      seed: {
        accountId,
        mode: 'test' as const,
        eventId: 'evt_x',
        event: 'email.sent',
        format: 'standard' as const,
        payload: '{"a":1}',
        createdAt: Date.now(),
      },
    };
    await rt.services.deliveryQueue.send([job, job, job]);
    await rt.queues.deliveries.idle();
    expect(receiver.received).toHaveLength(1);
    expect((await deliveries(key, hook.id)).data[0]).toMatchObject({ attempts: 1, status: 'succeeded' });
    // A stale retry job for an attempt already made is dropped too.
    await rt.services.deliveryQueue.send([{ deliveryId: job.deliveryId, webhookId: hook.id, attempt: 1 }]);
    await rt.queues.deliveries.idle();
    expect(receiver.received).toHaveLength(1);
  });
});

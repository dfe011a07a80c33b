// Rules around sending: Idempotency-Key (24 h), the monthly quota, and the suppression list.
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quotaWindow } from '../../lambdas/domain/email/quota';
import { localDynamoClient } from '../../lambdas/runtime/local/dynamo';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let doc: DynamoDBDocumentClient;
let receiver: Receiver;
beforeAll(async () => {
  rt = await startTestRuntime();
  doc = DynamoDBDocumentClient.from(localDynamoClient(rt.dynamoEndpoint));
  receiver = await startReceiver();
});
afterAll(async () => {
  doc.destroy();
  await receiver.close();
  await rt.stop();
});

const email = (to: unknown, extra: Record<string, unknown> = {}) => ({
  from: 'a@acme.test',
  to,
  subject: 'Hi',
  text: 'x',
  ...extra,
});
const send = (key: string, body: unknown, idempotencyKey?: string, path = '/emails') =>
  rt.call(path, {
    method: 'POST',
    key,
    body: JSON.stringify(body),
    headers: idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {},
  });
const settle = async () => {
  await rt.settle();
};

describe('Idempotency-Key', () => {
  it('same key and body: the same response, and only one email', async () => {
    const { key } = await rt.newKey();
    const first = await send(key, email('b@example.com'), 'order-1001');
    const second = await send(key, email('b@example.com'), 'order-1001');
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    const a = (await first.json()) as { id: string };
    expect(await second.json()).toEqual(a);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    // Key order in the body does not matter.
    const reordered = await send(
      key,
      { text: 'x', subject: 'Hi', to: 'b@example.com', from: 'a@acme.test' },
      'order-1001',
    );
    expect(await reordered.json()).toEqual(a);
  });

  it('same key, other body: 409, and nothing is sent', async () => {
    const { key } = await rt.newKey();
    await rt.call('/webhooks', {
      method: 'POST',
      key,
      body: JSON.stringify({ url: `${receiver.url}/idem`, events: ['email.sent'] }),
    });
    await send(key, email('b@example.com'), 'k-2');
    const res = await send(key, email('c@example.com'), 'k-2');
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ code: 'idempotency_key_reused', status: 409 });
    const onBatch = await send(key, [email('b@example.com')], 'k-2', '/emails/batch');
    expect(onBatch.status).toBe(409);
    await settle();
    // Only the first request sent anything: one email.sent, to b@.
    expect(
      receiver.received.filter((r) => r.path === '/idem').map((r) => (JSON.parse(r.body) as { to: string }).to),
    ).toEqual(['b@example.com']);
  });

  it('a request still in flight with the key: 409', async () => {
    const { key, accountId } = await rt.newKey();
    // The record a request in flight holds (claimed, not completed, lock not lapsed).
    const { requestFingerprint } = await import('../../lambdas/app/idempotency');
    await doc.send(
      new PutCommand({
        TableName: 'sendflow-idempotency',
        Item: {
          key: `${accountId}#test#busy`,
          fingerprint: requestFingerprint('sendEmail', email('b@example.com')),
          state: 'in_progress',
          lockedUntil: Date.now() + 60_000,
          expiresAt: Math.floor(Date.now() / 1000) + 86_400,
        },
      }),
    );
    const res = await send(key, email('b@example.com'), 'busy');
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ code: 'idempotency_in_progress' });
  });

  it('a refused request frees its key; keys are per account; the record lasts 24 h', async () => {
    const { key, accountId } = await rt.newKey();
    expect((await send(key, email('not-an-address'), 'k-3')).status).toBe(422);
    expect((await send(key, email('b@example.com'), 'k-3')).status).toBe(200);
    const other = await rt.newKey();
    expect((await send(other.key, email('z@example.com'), 'k-3')).status).toBe(200);
    const { Item } = await doc.send(
      new GetCommand({ TableName: 'sendflow-idempotency', Key: { key: `${accountId}#test#k-3` } }),
    );
    expect((Item?.expiresAt as number) - Date.now() / 1000).toBeGreaterThan(86_400 - 60);
    expect((await send(key, email('b@example.com'), 'x'.repeat(256))).status).toBe(422);
  });
});

describe('monthly quota', () => {
  it('counts each live email of a batch and refuses past the plan quota with 429 monthly_quota_exceeded', async () => {
    const { key, accountId } = await rt.newKey({ plan: 'free', mode: 'live' });
    const domain = (await (
      await rt.call('/domains', { method: 'POST', key, body: '{"name":"acme.test"}' })
    ).json()) as { id: string };
    expect(
      (await (await rt.call(`/domains/${domain.id}/verify`, { method: 'POST', key })).json()) as object,
    ).toMatchObject({ status: 'verified' });
    const window = quotaWindow(Date.now());
    await doc.send(
      new PutCommand({
        TableName: 'sendflow-rateLimits',
        Item: { key: `quota#${accountId}#${window.month}`, n: 2_990 },
      }),
    );
    const over = await send(
      key,
      Array.from({ length: 11 }, () => email('b@example.com')),
      undefined,
      '/emails/batch',
    );
    expect(over.status).toBe(429);
    const body = (await over.json()) as { retry_after: number; code: string };
    expect(body.code).toBe('monthly_quota_exceeded');
    const untilMonthEnd = Math.ceil(window.resetsAt - Date.now() / 1000);
    expect(body.retry_after).toBeGreaterThanOrEqual(untilMonthEnd);
    expect(body.retry_after).toBeLessThanOrEqual(untilMonthEnd + 1);
    expect(Number(over.headers.get('retry-after'))).toBe(body.retry_after);
    expect(
      (
        await send(
          key,
          Array.from({ length: 10 }, () => email('b@example.com')),
          undefined,
          '/emails/batch',
        )
      ).status,
    ).toBe(200);
    expect((await send(key, email('b@example.com'))).status).toBe(429);
    const { Item } = await doc.send(
      new GetCommand({ TableName: 'sendflow-rateLimits', Key: { key: `quota#${accountId}#${window.month}` } }),
    );
    expect(Item?.n).toBe(3_000);
  });

  it('does not count test-mode email', async () => {
    const { key, accountId } = await rt.newKey({ plan: 'free', mode: 'test' });
    expect((await send(key, email('b@example.com'))).status).toBe(200);
    const { Item } = await doc.send(
      new GetCommand({
        TableName: 'sendflow-rateLimits',
        Key: { key: `quota#${accountId}#${quotaWindow(Date.now()).month}` },
      }),
    );
    expect(Item).toBeUndefined();
  });
});

describe('suppression list', () => {
  it('a hard bounce suppresses the address: the next send to it alone is email.suppressed and sends nothing', async () => {
    const { key } = await rt.newKey();
    await rt.call('/webhooks', {
      method: 'POST',
      key,
      body: JSON.stringify({ url: `${receiver.url}/s1`, events: ['email.sent', 'email.suppressed', 'email.bounced'] }),
    });
    await send(key, email('bounce+x1@simulator.amazonses.com'));
    await settle();
    const before = receiver.received.filter((r) => r.path === '/s1').length;
    const again = (await (await send(key, email('Bounce+X1@simulator.amazonses.com'))).json()) as { id: string };
    await settle();
    const events = receiver.received
      .filter((r) => r.path === '/s1')
      .slice(before)
      .map((r) => JSON.parse(r.body) as Record<string, unknown>);
    expect(events).toEqual([
      expect.objectContaining({
        type: 'email.suppressed',
        email_id: again.id,
        to: 'bounce+x1@simulator.amazonses.com',
        data: expect.objectContaining({ reason: 'hard_bounce' }),
      }),
    ]);
    const shown = (await (await rt.call(`/emails/${again.id}`, { key })).json()) as {
      status: string;
      suppressed: string[];
    };
    expect(shown).toMatchObject({ status: 'suppressed', suppressed: ['Bounce+X1@simulator.amazonses.com'] });
  });

  it('a complaint suppresses too; a partly suppressed send goes to the rest only (the skipped: email.suppressed)', async () => {
    const { key } = await rt.newKey();
    await rt.call('/webhooks', {
      method: 'POST',
      key,
      body: JSON.stringify({ url: `${receiver.url}/s2`, events: ['email.sent', 'email.suppressed'] }),
    });
    await send(key, email('complaint@simulator.amazonses.com'));
    await settle();
    const before = receiver.received.filter((r) => r.path === '/s2').length;
    const mixed = (await (
      await send(key, email(['complaint@simulator.amazonses.com', 'fresh@example.com']))
    ).json()) as { id: string };
    await settle();
    const events = receiver.received
      .filter((r) => r.path === '/s2')
      .slice(before)
      .map((r) => JSON.parse(r.body) as { type: string; to: string });
    expect(events.map((e) => `${e.type} ${e.to}`).sort()).toEqual([
      'email.sent fresh@example.com',
      'email.suppressed complaint@simulator.amazonses.com',
    ]);
    const shown = (await (await rt.call(`/emails/${mixed.id}`, { key })).json()) as { suppressed: string[] };
    expect(shown.suppressed).toEqual(['complaint@simulator.amazonses.com']);
  });

  it('is per account and mode', async () => {
    const a = await rt.newKey({ mode: 'test' });
    await send(a.key, email('bounce+y@simulator.amazonses.com'));
    await settle();
    const b = await rt.newKey();
    await rt.call('/webhooks', {
      method: 'POST',
      key: b.key,
      body: JSON.stringify({ url: `${receiver.url}/s3`, events: ['email.sent'] }),
    });
    await send(b.key, email('bounce+y@simulator.amazonses.com'));
    await settle();
    expect(receiver.received.filter((r) => r.path === '/s3')).toHaveLength(1);
    const address = ['bounce+y@simulator.amazonses.com'];
    expect((await rt.services.suppressions.find({ accountId: a.accountId, mode: 'test' }, address)).size).toBe(1);
    expect((await rt.services.suppressions.find({ accountId: a.accountId, mode: 'live' }, address)).size).toBe(0);
  });

  it('bounces SES refused for its own account-level list, and transient outcomes, do not suppress', async () => {
    const { key, accountId } = await rt.newKey();
    const addresses = [
      'accountsuppressed@simulator.amazonses.com',
      'delay@simulator.amazonses.com',
      'ooto@simulator.amazonses.com',
    ];
    await send(key, email(addresses));
    await settle();
    expect([...(await rt.services.suppressions.find({ accountId, mode: 'test' }, addresses)).keys()]).toEqual([]);
  });
});

describe('scheduled sends', () => {
  it('email.scheduled now, the send at scheduled_at; GET shows it scheduled, then sent', async () => {
    const { key } = await rt.newKey();
    await rt.call('/webhooks', {
      method: 'POST',
      key,
      body: JSON.stringify({ url: `${receiver.url}/sch`, events: ['email.scheduled', 'email.sent'] }),
    });
    const at = new Date(Date.now() + 1500);
    const res = await send(key, email('b@example.com', { scheduled_at: at.toISOString() }));
    expect(res.status).toBe(200);
    const { id } = (await res.json()) as { id: string };
    await rt.settle();
    const mine = () =>
      receiver.received
        .filter((r) => r.path === '/sch')
        .map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> });
    await rt.queues.deliveries.idle();
    expect(mine().map((e) => e.type)).toEqual(['email.scheduled']);
    expect(mine()[0]?.data.scheduled_at).toBe(at.toISOString());
    expect(await (await rt.call(`/emails/${id}`, { key })).json()).toMatchObject({
      status: 'scheduled',
      scheduled_at: at.toISOString(),
    });

    const started = Date.now();
    while (!mine().some((e) => e.type === 'email.sent') && Date.now() - started < 5000)
      await new Promise((r) => setTimeout(r, 20));
    const sentAt = receiver.received.find((r) => r.path === '/sch' && r.body.includes('email.sent'))?.at ?? 0;
    expect(sentAt).toBeGreaterThanOrEqual(at.getTime() - 20);
    await rt.settle();
    expect(((await (await rt.call(`/emails/${id}`, { key })).json()) as { status: string }).status).toBe('delivered');
    // Sent: too late to cancel.
    const late = await rt.call(`/emails/${id}/cancel`, { method: 'POST', key });
    expect(late.status).toBe(409);
  });

  it('cancel before it fires: nothing is sent, the email shows canceled; a second cancel is 409', async () => {
    const { key } = await rt.newKey();
    await rt.call('/webhooks', {
      method: 'POST',
      key,
      body: JSON.stringify({ url: `${receiver.url}/cancel`, events: ['email.sent'] }),
    });
    const { id } = (await (
      await send(key, email('b@example.com', { scheduled_at: new Date(Date.now() + 800).toISOString() }))
    ).json()) as { id: string };
    const res = await rt.call(`/emails/${id}/cancel`, { method: 'POST', key });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id, status: 'canceled' });
    expect((await rt.call(`/emails/${id}/cancel`, { method: 'POST', key })).status).toBe(409);
    await new Promise((r) => setTimeout(r, 1200));
    await rt.settle();
    expect(receiver.received.filter((r) => r.path === '/cancel')).toHaveLength(0);
    const other = await rt.newKey();
    expect((await rt.call(`/emails/${id}/cancel`, { method: 'POST', key: other.key })).status).toBe(404);
    const immediate = (await (await send(key, email('b@example.com'))).json()) as { id: string };
    expect((await rt.call(`/emails/${immediate.id}/cancel`, { method: 'POST', key })).status).toBe(409);
  });

  it('refuses scheduled_at in the past, too far ahead or malformed with 422 (per index in a batch)', async () => {
    const { key } = await rt.newKey();
    for (const at of [
      new Date(Date.now() - 1000).toISOString(),
      new Date(Date.now() + 31 * 86_400_000).toISOString(),
      'tomorrow',
    ]) {
      const res = await send(key, email('b@example.com', { scheduled_at: at }));
      expect(res.status, at).toBe(422);
      expect(((await res.json()) as { details: { path: string }[] }).details[0]?.path).toBe('scheduled_at');
    }
    const batch = await send(
      key,
      [email('b@example.com'), email('b@example.com', { scheduled_at: '2001-01-01T00:00:00Z' })],
      undefined,
      '/emails/batch',
    );
    expect(((await batch.json()) as { details: { path: string }[] }).details[0]?.path).toBe('1.scheduled_at');
  });
});

describe('a provider outage', () => {
  it('leaves each recipient of an accepted email with email.failed after the last try, not silence', async () => {
    const failing = await startTestRuntime();
    try {
      // The last try at once (earlier tries go back to pending for the next receive: app-send-claims.test.ts).
      failing.services.maxSendTries = 1;
      failing.services.providerFor('test').send = async () => {
        throw new Error('provider down');
      };
      const { key } = await failing.newKey();
      await failing.call('/webhooks', {
        method: 'POST',
        key,
        body: JSON.stringify({ url: `${receiver.url}/outage`, events: ['email.failed'] }),
      });
      const res = await send2(failing, key, email(['x@example.com', 'y@example.com']));
      expect(res.status).toBe(200);
      const { id } = (await res.json()) as { id: string };
      await failing.settle();
      const failed = receiver.received
        .filter((r) => r.path === '/outage')
        .map((r) => JSON.parse(r.body) as { to: string; email_id: string });
      expect(failed.map((e) => e.to).sort()).toEqual(['x@example.com', 'y@example.com']);
      expect(failed.every((e) => e.email_id === id)).toBe(true);
      expect(((await (await failing.call(`/emails/${id}`, { key })).json()) as { status: string }).status).toBe(
        'failed',
      );
    } finally {
      await failing.stop();
    }
  });
});

function send2(runtime: TestRuntime, key: string, body: unknown) {
  return runtime.call('/emails', { method: 'POST', key, body: JSON.stringify(body) });
}

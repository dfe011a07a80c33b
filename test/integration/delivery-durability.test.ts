// Nothing is lost: a pending retry survives a restart of the local runtime (the reconciler re-arms it from
// the table), a crashed first attempt is made once when its queue hands its job out again, a dead-lettered
// job ends its delivery failed (visible, retryable), a retry that comes due while the
// webhook is paused ends `failed`, and final deliveries expire after the retention period.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { shardKeyOf } from '../../lambdas/adapters/dynamodb/deliveries';
import { REARM_DELAY_MS } from '../../lambdas/app/webhooks/dead-letters';
import { reconcile } from '../../lambdas/app/webhooks/reconcile';
import { hashApiKey } from '../../lambdas/domain/api-keys';
import { encodeJob } from '../../lambdas/handlers/queue/messages';
import { localDynamoClient } from '../../lambdas/runtime/local/dynamo';
import { type Receiver, startReceiver, verifyServiceSignature } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let receiver: Receiver | undefined;
let runtimes: TestRuntime[] = [];
afterEach(async () => {
  for (const rt of runtimes) await rt.stop().catch(() => {});
  runtimes = [];
  await receiver?.close();
  receiver = undefined;
});

async function start(env: Record<string, string> = {}) {
  const rt = await startTestRuntime(env);
  runtimes.push(rt);
  return rt;
}

async function hookFor(rt: TestRuntime, key?: string) {
  receiver ??= await startReceiver();
  const k = key ?? (await rt.newKey()).key;
  const res = await rt.call('/webhooks', {
    method: 'POST',
    key: k,
    body: JSON.stringify({ url: `${receiver.url}/h`, events: ['email.sent'] }),
  });
  return { key: k, hook: (await res.json()) as { id: string; signing_secret: string } };
}

const email = (rt: TestRuntime, key: string) =>
  rt.call('/emails', {
    method: 'POST',
    key,
    body: JSON.stringify({ from: 'a@acme.test', to: 'b@example.com', subject: 's', text: 't' }),
  });

async function firstDelivery(rt: TestRuntime, key: string, hookId: string) {
  const body = (await (await rt.call(`/webhooks/${hookId}/deliveries`, { key })).json()) as {
    data: Record<string, unknown>[];
  };
  return body.data[0];
}

async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('restart', () => {
  it('a pending retry survives a restart of the local runtime and is attempted on time', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sendflow-restart-'));
    try {
      const env = { SF_DATA_DIR: dir, SF_RETRY_DELAYS: '1.5,1.5,1.5,1.5' };
      const first = await start(env);
      const { key, hook } = await hookFor(first);
      receiver?.answer((n) => (n === 1 ? { kind: 'status', status: 503 } : { kind: 'status', status: 200 }));
      await email(first, key);
      await receiver?.waitFor(1);
      const pending = await eventually(
        () => firstDelivery(first, key, hook.id),
        (d) => d?.attempts === 1,
      );
      expect(pending?.status).toBe('pending');
      await first.stop();
      runtimes = [];

      const second = await start(env);
      const requests = await (receiver as Receiver).waitFor(2);
      expect(requests[1]?.body).toBe(requests[0]?.body);
      expect(verifyServiceSignature(hook.signing_secret, requests[1] as never)).toBe(true);
      const done = await eventually(
        () => firstDelivery(second, key, hook.id),
        (d) => d?.status === 'succeeded',
      );
      expect(done).toMatchObject({ id: pending?.id, attempts: 2 });
      expect((requests[1]?.at ?? 0) - Date.parse(pending?.next_attempt_at as string)).toBeGreaterThan(-50);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a scheduled email survives a restart and is sent at its time', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sendflow-scheduled-'));
    try {
      const env = { SF_DATA_DIR: dir };
      const first = await start(env);
      const { key } = await hookFor(first);
      const at = new Date(Date.now() + 1500).toISOString();
      const res = await first.call('/emails', {
        method: 'POST',
        key,
        body: JSON.stringify({ from: 'a@acme.test', to: 'b@example.com', subject: 's', text: 't', scheduled_at: at }),
      });
      const { id } = (await res.json()) as { id: string };
      await first.stop();
      runtimes = [];

      const second = await start(env);
      const [request] = await (receiver as Receiver).waitFor(1, 5000);
      expect(JSON.parse(request?.body ?? '')).toMatchObject({ type: 'email.sent', email_id: id });
      expect(request?.at ?? 0).toBeGreaterThanOrEqual(Date.parse(at) - 20);
      await second.settle();
      expect(((await (await second.call(`/emails/${id}`, { key })).json()) as { status: string }).status).not.toBe(
        'scheduled',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /** The row a worker that died mid-attempt leaves: claimed for attempt 1, never recorded, claim lapsed. */
  async function strandedFirstAttempt(rt: TestRuntime, key: string, hookId: string, id: string) {
    const { accountId } = (await rt.repos.apiKeys.findByHash(hashApiKey(key))) as { accountId: string };
    const now = Date.now();
    const seed = {
      accountId,
      mode: 'test' as const,
      eventId: `evt_${id}`,
      event: 'email.sent',
      format: 'standard' as const,
      payload: `{"crash":"${id}"}`,
      createdAt: now - 120_000,
    };
    await rt.services.deliveries.createClaimed({
      id,
      webhookId: hookId,
      ...seed,
      status: 'pending',
      attempts: 0,
      maxAttempts: 5,
      attemptLog: [],
      response: '',
      nextAttemptAt: now - 120_000,
      deliveredAt: null,
      claim: { attempt: 1, until: now - 60_000 },
    });
    return encodeJob({ deliveryId: id, webhookId: hookId, attempt: 1, seed });
  }

  it('a first attempt whose worker died is made once when its queue hands the job out again (not the reconciler)', async () => {
    const rt = await start();
    const { key, hook } = await hookFor(rt);
    const job = await strandedFirstAttempt(rt, key, hook.id, `dlv_${'2'.repeat(36)}`);

    // The reconciler leaves first attempts to their queue (they are in no due index).
    expect(await reconcile(rt.services, { graceMs: 30_000 })).toBe(0);
    // The journal hands the job out again (after its visibility timeout, or at the next start): twice here.
    rt.queues.deliveries.send([job, job]);
    await rt.settle();

    const requests = await (receiver as Receiver).waitFor(1);
    expect(requests.map((r) => r.body)).toEqual([`{"crash":"dlv_${'2'.repeat(36)}"}`]);
    const done = await eventually(
      () => firstDelivery(rt, key, hook.id),
      (d) => d?.status === 'succeeded',
    );
    expect(done?.attempts).toBe(1);
  });

  it('a dead-lettered job re-arms its delivery as a due retry, which the reconciler delivers once', async () => {
    const rt = await start();
    const { key, hook } = await hookFor(rt);
    const id = `dlv_${'3'.repeat(36)}`;
    const job = await strandedFirstAttempt(rt, key, hook.id, id);

    // What the deliveries queue does with a job past maxReceiveCount: it goes to the lanes' DLQ.
    rt.queues.deliveriesDlq.send([job]);
    await rt.queues.deliveriesDlq.idle();

    const rearmed = await eventually(
      () => firstDelivery(rt, key, hook.id),
      (d) => d?.status === 'pending' && d.next_attempt_at !== null,
    );
    expect(rearmed).toMatchObject({ id, status: 'pending', attempts: 0 });
    expect((receiver as Receiver).received).toEqual([]);
    // The reconciler re-queues it once due (its pass, run now as if the re-arm delay had passed).
    expect(await reconcile(rt.services, { graceMs: -REARM_DELAY_MS })).toBe(1);
    const done = await eventually(
      () => firstDelivery(rt, key, hook.id),
      (d) => d?.status === 'succeeded',
    );
    expect(done).toMatchObject({ id, attempts: 1 });
    expect((receiver as Receiver).received).toHaveLength(1);
  });
});

describe('paused while a retry is due', () => {
  it('ends the delivery failed with error "webhook paused", without a request; after resume a manual retry works', async () => {
    const rt = await start({ SF_RETRY_DELAYS: '0.5,0.5,0.5,0.5' });
    const { key, hook } = await hookFor(rt);
    receiver?.answer((n) => (n === 1 ? { kind: 'status', status: 500 } : { kind: 'status', status: 200 }));
    await email(rt, key);
    await receiver?.waitFor(1);
    await rt.call(`/webhooks/${hook.id}`, { method: 'PUT', key, body: '{"active": false}' });
    const failed = await eventually(
      () => firstDelivery(rt, key, hook.id),
      (d) => d?.status === 'failed',
    );
    expect(failed).toMatchObject({ attempts: 2, error: 'webhook paused', status_code: null });
    expect(receiver?.received).toHaveLength(1);
    expect((await rt.call(`/webhooks/${hook.id}/deliveries/${failed?.id}/retry`, { method: 'POST', key })).status).toBe(
      409,
    );

    await rt.call(`/webhooks/${hook.id}`, { method: 'PUT', key, body: '{"active": true}' });
    const retried = await rt.call(`/webhooks/${hook.id}/deliveries/${failed?.id}/retry`, { method: 'POST', key });
    expect(await retried.json()).toMatchObject({ success: true, delivery: { status: 'succeeded', attempts: 3 } });
  });
});

describe('retention', () => {
  it('stores a final delivery with a TTL 30 days out, and never returns one whose TTL has passed', async () => {
    const rt = await start();
    const { key, hook } = await hookFor(rt);
    receiver?.answer({ kind: 'status', status: 500 });
    const test = (await (await rt.call(`/webhooks/${hook.id}/test`, { method: 'POST', key })).json()) as {
      delivery: { id: string };
    };
    const doc = DynamoDBDocumentClient.from(localDynamoClient(rt.dynamoEndpoint));
    try {
      // The row's partition key: its webhook and its shard (adapters/dynamodb/deliveries).
      const key_ = { webhookId: shardKeyOf(hook.id, test.delivery.id), id: test.delivery.id };
      const { Item } = await doc.send(new GetCommand({ TableName: 'sendflow-deliveries', Key: key_ }));
      expect((Item?.expiresAt as number) - Math.floor(Date.now() / 1000)).toBeGreaterThan(30 * 86400 - 60);
      expect((Item?.expiresAt as number) - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(30 * 86400);

      // DynamoDB deletes expired items lazily; reads must filter them out meanwhile.
      await doc.send(
        new UpdateCommand({
          TableName: 'sendflow-deliveries',
          Key: key_,
          UpdateExpression: 'SET expiresAt = :p',
          ExpressionAttributeValues: { ':p': 1000 },
        }),
      );
      expect((await rt.call(`/webhooks/${hook.id}/deliveries/${test.delivery.id}`, { key })).status).toBe(404);
      const list = (await (await rt.call(`/webhooks/${hook.id}/deliveries`, { key })).json()) as { data: unknown[] };
      expect(list.data).toHaveLength(0);
      const filtered = (await (await rt.call(`/webhooks/${hook.id}/deliveries?status=failed`, { key })).json()) as {
        data: unknown[];
      };
      expect(filtered.data).toHaveLength(0);
    } finally {
      doc.destroy();
    }
  });
});

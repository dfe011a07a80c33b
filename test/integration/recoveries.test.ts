// Recovery jobs over real HTTP (issue 10): an endpoint goes down until its deliveries fail, comes back, and a
// job recovers every one of them with exactly one new POST each, in the background, paced; the window and the
// status filter choose what is replayed; cancel stops it; a job survives kill -9 of `npm start` and finishes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECOVERY_PACE } from '../../lambdas/domain/webhooks/recovery';
import { type Spawned, spawnScript } from '../support/process';
import { type Receiver, startReceiver, verifyServiceSignature } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

interface Job {
  object: string;
  id: string;
  status: string;
  since: string;
  until: string;
  total: number;
  attempted: number;
  succeeded: number;
  failed: number;
  skipped: number;
  created_at: string;
  code?: string;
}

let rt: TestRuntime;
let receiver: Receiver;
beforeAll(async () => {
  rt = await startTestRuntime();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await rt.stop();
});

const json = (body: unknown) => ({ method: 'POST', body: JSON.stringify(body) });
const posts = (path: string, from = 0) => receiver.received.slice(from).filter((r) => r.path === path);

/** A webhook whose endpoint is down (503) for `count` emails' email.sent: every delivery ends failed. */
async function failedDeliveries(count: number, path: string) {
  const { key, accountId } = await rt.newKey();
  receiver.answer((n) => (receiver.received[n - 1]?.path === path ? { kind: 'status', status: 503 } : okAnswer));
  const hook = await rt.call('/webhooks', { key, ...json({ url: `${receiver.url}${path}`, events: ['email.sent'] }) });
  const { id, signing_secret: secret } = (await hook.json()) as { id: string; signing_secret: string };
  for (let i = 0; i < count; i++) {
    const sent = await rt.call('/emails', {
      key,
      ...json({ from: 'ops@acme.test', to: `user${i}@example.com`, subject: 'Hi', text: 'Hi' }),
    });
    expect(sent.status).toBe(200);
  }
  await rt.settle();
  const failed = await rt.call(`/webhooks/${id}/deliveries?status=failed&limit=100`, { key });
  const ids = ((await failed.json()) as { data: { id: string }[] }).data.map((d) => d.id);
  expect(ids).toHaveLength(count);
  return { key, accountId, hookId: id, secret, ids };
}

const okAnswer = { kind: 'status', status: 200, body: 'ok' } as const;

async function untilEnded(key: string, hookId: string, jobId: string, timeoutMs = 30_000): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = (await (await rt.call(`/webhooks/${hookId}/recoveries/${jobId}`, { key })).json()) as Job;
    if (job.status !== 'running') return job;
    if (Date.now() > deadline) throw new Error(`recovery still running: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

describe('POST /v1/webhooks/:id/recoveries', () => {
  it('an endpoint down, then back: every failed delivery is recovered with exactly one new, signed POST', async () => {
    // Arrange: 25 deliveries, each failed after its 5 attempts.
    const path = '/recover-all';
    const { key, hookId, secret, ids } = await failedDeliveries(25, path);
    const before = receiver.received.length;
    receiver.answer(okAnswer);

    // Act
    const started = await rt.call(`/webhooks/${hookId}/recoveries`, {
      key,
      ...json({ since: minutesAgo(5), status: 'failed' }),
    });
    const accepted = (await started.json()) as Job;
    const job = await untilEnded(key, hookId, accepted.id);

    // Assert: 202 at once, running; then completed with every delivery attempted once and succeeded.
    expect(started.status).toBe(202);
    expect(accepted).toMatchObject({ object: 'webhook_recovery', status: 'running', total: 0, attempted: 0 });
    expect(accepted.id).toMatch(/^rec_[0-9a-z]{26}$/);
    expect(job).toMatchObject({ status: 'completed', total: 25, attempted: 25, succeeded: 25, failed: 0, skipped: 0 });
    const replayed = posts(path, before);
    expect(replayed).toHaveLength(25);
    expect(new Set(replayed.map((r) => r.headers['webhook-id'])).size).toBe(25);
    for (const request of replayed) expect(verifyServiceSignature(secret, request)).toBe(true);
    for (const id of ids) {
      const delivery = (await (await rt.call(`/webhooks/${hookId}/deliveries/${id}`, { key })).json()) as {
        status: string;
        attempts: number;
      };
      expect(delivery).toMatchObject({ status: 'succeeded', attempts: 6 });
    }
    // Paced: at most RECOVERY_PACE.pageSize new POSTs in any one second.
    const times = replayed.map((r) => r.at);
    for (const at of times) {
      expect(times.filter((t) => t >= at && t < at + 1000).length).toBeLessThanOrEqual(RECOVERY_PACE.pageSize);
    }
  });

  it('a second job over the same window finds nothing failed any more: total 0, no POST', async () => {
    const path = '/recover-twice';
    const { key, hookId } = await failedDeliveries(3, path);
    receiver.answer(okAnswer);
    const first = (await (
      await rt.call(`/webhooks/${hookId}/recoveries`, { key, ...json({ since: minutesAgo(5), status: 'failed' }) })
    ).json()) as Job;
    await untilEnded(key, hookId, first.id);
    const before = receiver.received.length;

    const second = (await (
      await rt.call(`/webhooks/${hookId}/recoveries`, { key, ...json({ since: minutesAgo(5), status: 'failed' }) })
    ).json()) as Job;

    expect(await untilEnded(key, hookId, second.id)).toMatchObject({ status: 'completed', total: 0, attempted: 0 });
    expect(posts(path, before)).toHaveLength(0);
  });

  it('without a status every delivery of the window is attempted again; `until` bounds the window', async () => {
    const path = '/recover-window';
    const { key, hookId } = await failedDeliveries(2, path);
    receiver.answer(okAnswer);
    // Two more deliveries that succeed, after the window's end.
    await new Promise((r) => setTimeout(r, 20));
    const until = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    for (let i = 0; i < 2; i++)
      expect((await rt.call(`/webhooks/${hookId}/test`, { method: 'POST', key })).status).toBe(200);
    const all = await rt.call(`/webhooks/${hookId}/deliveries`, { key });
    expect(((await all.json()) as { data: unknown[] }).data).toHaveLength(4);
    const before = receiver.received.length;

    const windowed = (await (
      await rt.call(`/webhooks/${hookId}/recoveries`, { key, ...json({ since: minutesAgo(5), until }) })
    ).json()) as Job;
    const job = await untilEnded(key, hookId, windowed.id);

    expect(job).toMatchObject({ status: 'completed', total: 2, succeeded: 2, until });
    expect(posts(path, before)).toHaveLength(2);
    // And the whole log: the two it recovered (succeeded now) and the two test sends, again.
    const whole = (await (
      await rt.call(`/webhooks/${hookId}/recoveries`, { key, ...json({ since: minutesAgo(5) }) })
    ).json()) as Job;
    expect(await untilEnded(key, hookId, whole.id)).toMatchObject({ total: 4, succeeded: 4, skipped: 0 });
    expect(posts(path, before)).toHaveLength(6);
  });

  it('cancel stops a job before its next step; canceling again is a no-op; a completed job cannot be canceled', async () => {
    const path = '/recover-cancel';
    const { key, hookId } = await failedDeliveries(35, path);
    receiver.answer(okAnswer);
    const before = receiver.received.length;
    const started = (await (
      await rt.call(`/webhooks/${hookId}/recoveries`, { key, ...json({ since: minutesAgo(5) }) })
    ).json()) as Job;

    const canceled = await rt.call(`/webhooks/${hookId}/recoveries/${started.id}/cancel`, { method: 'POST', key });
    const again = await rt.call(`/webhooks/${hookId}/recoveries/${started.id}/cancel`, { method: 'POST', key });
    await new Promise((r) => setTimeout(r, 2 * RECOVERY_PACE.stepDelaySeconds * 1000 + 500));

    expect(canceled.status).toBe(200);
    expect(((await canceled.json()) as Job).status).toBe('canceled');
    expect(again.status).toBe(200);
    // At most the step already under way when it was canceled.
    expect(posts(path, before).length).toBeLessThanOrEqual(RECOVERY_PACE.pageSize);
    const job = (await (await rt.call(`/webhooks/${hookId}/recoveries/${started.id}`, { key })).json()) as Job;
    expect(job.status).toBe('canceled');

    const small = await failedDeliveries(1, '/recover-done');
    receiver.answer(okAnswer);
    const done = (await (
      await rt.call(`/webhooks/${small.hookId}/recoveries`, { key: small.key, ...json({ since: minutesAgo(5) }) })
    ).json()) as Job;
    await untilEnded(small.key, small.hookId, done.id);
    const late = await rt.call(`/webhooks/${small.hookId}/recoveries/${done.id}/cancel`, {
      method: 'POST',
      key: small.key,
    });
    expect(late.status).toBe(409);
    expect(((await late.json()) as Job).code).toBe('recovery_completed');
  });

  it('one job at a time per webhook (409 recovery_running); the list shows them newest first', async () => {
    const path = '/recover-one-at-a-time';
    const { key, hookId } = await failedDeliveries(15, path);
    receiver.answer({ kind: 'slow', delayMs: 200, status: 200 });
    const first = (await (
      await rt.call(`/webhooks/${hookId}/recoveries`, { key, ...json({ since: minutesAgo(5) }) })
    ).json()) as Job;

    const second = await rt.call(`/webhooks/${hookId}/recoveries`, { key, ...json({ since: minutesAgo(5) }) });
    const secondBody = (await second.json()) as Job & { error: string };
    await untilEnded(key, hookId, first.id);
    const third = (await (
      await rt.call(`/webhooks/${hookId}/recoveries`, { key, ...json({ since: minutesAgo(5), status: 'failed' }) })
    ).json()) as Job;
    await untilEnded(key, hookId, third.id);
    const list = (await (await rt.call(`/webhooks/${hookId}/recoveries`, { key })).json()) as { data: Job[] };

    expect(second.status).toBe(409);
    expect(secondBody.code).toBe('recovery_running');
    expect(secondBody.error).toContain(first.id);
    expect(list.data.map((job) => job.id)).toEqual([third.id, first.id]);
    expect(list.data.map((job) => job.status)).toEqual(['completed', 'completed']);
  });

  it('a window from before the log was kept starts at its retention; a `rec_` id is no delivery (404)', async () => {
    const path = '/recover-ancient';
    const { key, hookId } = await failedDeliveries(2, path);
    receiver.answer(okAnswer);

    const started = await rt.call(`/webhooks/${hookId}/recoveries`, {
      key,
      ...json({ since: '0001-01-01T00:00:00Z', status: 'failed' }),
    });
    const accepted = (await started.json()) as Job;
    const job = await untilEnded(key, hookId, accepted.id);
    const asDelivery = await rt.call(`/webhooks/${hookId}/deliveries/${accepted.id}`, { key });
    const retried = await rt.call(`/webhooks/${hookId}/deliveries/${accepted.id}/retry`, { method: 'POST', key });

    expect(started.status).toBe(202);
    expect(Date.parse(accepted.since)).toBeGreaterThan(Date.now() - 31 * 86_400_000);
    expect(job).toMatchObject({ status: 'completed', total: 2, succeeded: 2 });
    expect([asDelivery.status, retried.status]).toEqual([404, 404]);
  });

  it('refuses windows in the future or reversed, unknown fields and statuses (422), and changes nothing', async () => {
    const { key } = await rt.newKey();
    const hook = await rt.call('/webhooks', { key, ...json({ url: `${receiver.url}/v`, events: ['email.sent'] }) });
    const { id } = (await hook.json()) as { id: string };
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const bodies = [
      { since: future },
      { since: minutesAgo(5), until: future },
      { since: minutesAgo(1), until: minutesAgo(5) },
      { since: 'yesterday' },
      {},
      { since: minutesAgo(5), status: 'succeeded' },
      { since: minutesAgo(5), extra: true },
    ];
    for (const body of bodies) {
      const res = await rt.call(`/webhooks/${id}/recoveries`, { key, ...json(body) });
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
      const error = (await res.json()) as { code: string };
      expect(error.code).toBe('validation_error');
    }
  });

  it("is scoped to the caller's own webhooks and jobs; a paused webhook is refused (409)", async () => {
    const owner = await failedDeliveries(1, '/recover-tenant');
    receiver.answer(okAnswer);
    const job = (await (
      await rt.call(`/webhooks/${owner.hookId}/recoveries`, { key: owner.key, ...json({ since: minutesAgo(5) }) })
    ).json()) as Job;
    const stranger = await rt.newKey();
    const readOnly = await rt.newKey({ scopes: ['webhook:read'] });

    const theirs = await rt.call(`/webhooks/${owner.hookId}/recoveries/${job.id}`, { key: stranger.key });
    const start = await rt.call(`/webhooks/${owner.hookId}/recoveries`, {
      key: stranger.key,
      ...json({ since: minutesAgo(5) }),
    });
    const cancel = await rt.call(`/webhooks/${owner.hookId}/recoveries/${job.id}/cancel`, {
      method: 'POST',
      key: stranger.key,
    });
    const noScope = await rt.call(`/webhooks/${owner.hookId}/recoveries`, {
      key: readOnly.key,
      ...json({ since: minutesAgo(5) }),
    });
    const unknown = await rt.call(`/webhooks/${owner.hookId}/recoveries/rec_nothere`, { key: owner.key });

    expect([theirs.status, start.status, cancel.status, unknown.status]).toEqual([404, 404, 404, 404]);
    expect(noScope.status).toBe(403);
    await rt.call(`/webhooks/${owner.hookId}`, { key: owner.key, method: 'PUT', body: '{"active": false}' });
    const paused = await rt.call(`/webhooks/${owner.hookId}/recoveries`, {
      key: owner.key,
      ...json({ since: minutesAgo(5) }),
    });
    expect(paused.status).toBe(409);
    expect(((await paused.json()) as Job).code).toBe('webhook_paused');
  });
});

describe('a recovery job under `npm start`', () => {
  let dir = '';
  const children: Spawned[] = [];
  let crashReceiver: Receiver;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sendflow-recovery-'));
    crashReceiver = await startReceiver();
  });
  afterAll(async () => {
    for (const child of children) if (child.child.exitCode === null) child.child.kill('SIGKILL');
    await crashReceiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const env = () => ({
    PORT: '0',
    SF_DATA_DIR: join(dir, 'data'),
    SF_LOCAL_STATE_FILE: join(dir, 'state.json'),
    SF_SIMULATOR_STEP_SECONDS: '0',
    SF_RETRY_DELAYS: '0.1,0.1,0.1,0.1',
    SF_IP_RATE_LIMIT: '1000',
  });
  async function start() {
    const runtime = spawnScript('bin/local.ts', [], env());
    children.push(runtime);
    const url = (await runtime.waitFor(/listening on (http:\/\/\S+)/, 30_000))[1] as string;
    return { runtime, url };
  }

  it('survives kill -9 mid-job: after a restart it finishes, and every delivery got its new POST', async () => {
    const COUNT = 30;
    const first = await start();
    const key = (await first.runtime.waitFor(/^\s+(sf_test_\w+)$/m))[1] as string;
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const call = (url: string, path: string, body?: unknown) =>
      fetch(`${url}${path}`, { headers, ...(body ? { method: 'POST', body: JSON.stringify(body) } : {}) });
    crashReceiver.answer({ kind: 'status', status: 503 });
    const hook = await call(first.url, '/webhooks', { url: `${crashReceiver.url}/h`, events: ['email.sent'] });
    const { id: hookId } = (await hook.json()) as { id: string };
    for (let i = 0; i < COUNT; i += 10) {
      const batch = Array.from({ length: 10 }, (_, j) => ({
        from: 'a@acme.test',
        to: `u${i + j}@example.com`,
        subject: 's',
        text: 't',
      }));
      let res = await call(first.url, '/emails/batch', batch);
      // The default account's free plan: 10 requests a second.
      while (res.status === 429) {
        await new Promise((r) => setTimeout(r, 1_000));
        res = await call(first.url, '/emails/batch', batch);
      }
      expect(res.status).toBe(200);
    }
    await crashReceiver.waitFor(COUNT * 5, 30_000);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const failed = (await (
        await call(first.url, `/webhooks/${hookId}/deliveries?status=failed&limit=100`)
      ).json()) as {
        data: unknown[];
      };
      if (failed.data.length === COUNT) break;
      if (Date.now() > deadline) throw new Error(`${failed.data.length} of ${COUNT} deliveries failed`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const before = crashReceiver.received.length;
    crashReceiver.answer({ kind: 'slow', delayMs: 150, status: 200 });

    const started = (await (
      await call(first.url, `/webhooks/${hookId}/recoveries`, { since: minutesAgo(10), status: 'failed' })
    ).json()) as Job;
    await crashReceiver.waitFor(before + 12, 30_000);
    first.runtime.child.kill('SIGKILL');
    await new Promise((resolve) => first.runtime.child.once('exit', resolve));
    const second = await start();

    const finalDeadline = Date.now() + 60_000;
    let job: Job;
    for (;;) {
      job = (await (await call(second.url, `/webhooks/${hookId}/recoveries/${started.id}`)).json()) as Job;
      if (job.status !== 'running') break;
      if (Date.now() > finalDeadline) throw new Error(`recovery still running: ${JSON.stringify(job)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const replayed = crashReceiver.received.slice(before);
    expect(new Set(replayed.map((r) => r.headers['webhook-id'])).size).toBe(COUNT);
    // Repeats only for attempts in flight at the kill (at most one step's worth at once).
    expect(replayed.length).toBeLessThanOrEqual(COUNT + RECOVERY_PACE.inFlight);
    expect(job.status).toBe('completed');
    expect(job.total).toBe(COUNT);
    expect(job.succeeded + job.skipped).toBe(COUNT);
    const failed = (await (
      await call(second.url, `/webhooks/${hookId}/deliveries?status=failed&limit=100`)
    ).json()) as {
      data: unknown[];
    };
    expect(failed.data).toHaveLength(0);
  }, 120_000);
});

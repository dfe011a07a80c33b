// Per-endpoint rate limit over real HTTP (issue 18 item 3): rate_limit_per_second on create and update (422 for
// anything but an integer 1–1,000 or null), shown on the webhook; and 100 events to a webhook paced at 5 a
// second never put more than 5 requests in any second at a real receiver, all delivered, while another
// webhook of the same account gets the same 100 events at full speed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mostInAnyWindow } from '../../lambdas/domain/webhooks/pace';
import { startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;

beforeAll(async () => {
  rt = await startTestRuntime();
});
afterAll(() => rt.stop());

const hook = 'https://hooks.example.com/sendflow';

async function create(key: string, body: Record<string, unknown>) {
  return rt.call('/webhooks', {
    method: 'POST',
    key,
    body: JSON.stringify({ url: hook, events: ['email.sent'], ...body }),
  });
}

describe('rate_limit_per_second on the webhook', () => {
  it('is stored on create, shown by get, changed and cleared (null) by update; null when never set', async () => {
    const { key } = await rt.newKey();
    const created = await create(key, { rate_limit_per_second: 5 });
    expect(created.status).toBe(201);
    const body = (await created.json()) as { id: string; rate_limit_per_second: number | null };
    expect(body.rate_limit_per_second).toBe(5);

    const got = (await (await rt.call(`/webhooks/${body.id}`, { key })).json()) as Record<string, unknown>;
    expect(got.rate_limit_per_second).toBe(5);

    const changed = await rt.call(`/webhooks/${body.id}`, {
      method: 'PUT',
      key,
      body: JSON.stringify({ rate_limit_per_second: 1000 }),
    });
    expect(changed.status).toBe(200);
    expect(((await changed.json()) as Record<string, unknown>).rate_limit_per_second).toBe(1000);

    const cleared = await rt.call(`/webhooks/${body.id}`, {
      method: 'PUT',
      key,
      body: JSON.stringify({ rate_limit_per_second: null }),
    });
    expect(((await cleared.json()) as Record<string, unknown>).rate_limit_per_second).toBeNull();
    const after = (await (await rt.call(`/webhooks/${body.id}`, { key })).json()) as Record<string, unknown>;
    expect(after.rate_limit_per_second).toBeNull();

    const plain = (await (await create(key, {})).json()) as Record<string, unknown>;
    expect(plain.rate_limit_per_second).toBeNull();
  });

  it.each([0, 1001, 2.5, '5', true, -1])(
    'answers 422 in the error shape for %j, on create and update',
    async (value) => {
      const { key } = await rt.newKey();
      const refused = await create(key, { rate_limit_per_second: value });
      expect(refused.status).toBe(422);
      const error = (await refused.json()) as { code: string; details: { path: string }[] };
      expect(error.code).toBe('validation_error');
      expect(error.details.map((detail) => detail.path)).toEqual(['rate_limit_per_second']);

      const { id } = (await (await create(key, {})).json()) as { id: string };
      const update = await rt.call(`/webhooks/${id}`, {
        method: 'PUT',
        key,
        body: JSON.stringify({ rate_limit_per_second: value }),
      });
      expect(update.status).toBe(422);
      expect(((await update.json()) as { details: { path: string }[] }).details[0]?.path).toBe('rate_limit_per_second');
    },
  );
});

/** One account with a webhook per limit (undefined: unpaced), each on its own receiver. */
async function webhooksOf(limits: readonly (number | undefined)[]) {
  const { key } = await rt.newKey();
  const receivers = [];
  for (const limit of limits) {
    const receiver = await startReceiver();
    const res = await rt.call('/webhooks', {
      method: 'POST',
      key,
      body: JSON.stringify({
        url: `${receiver.url}/hook`,
        events: ['email.sent'],
        ...(limit ? { rate_limit_per_second: limit } : {}),
      }),
    });
    expect(res.status).toBe(201);
    receivers.push(receiver);
  }
  return { key, receivers };
}

/** 100 emails in one batch: 100 email.sent events. */
async function send100(key: string): Promise<number> {
  const batch = Array.from({ length: 100 }, (_, n) => ({
    from: 'Acme <hello@acme.test>',
    to: `user${n}@example.com`,
    subject: `Welcome ${n}`,
    html: '<p>Hi</p>',
  }));
  const started = Date.now();
  const sent = await rt.call('/emails/batch', { method: 'POST', key, body: JSON.stringify(batch) });
  expect(sent.status).toBe(200);
  return started;
}

describe('pacing', () => {
  it('paces 100 events at 5 a second (never 6 in any second), all delivered; another webhook gets them at full speed', async () => {
    // Arrange: full speed on this machine now: 100 events to two unpaced webhooks of one account.
    const baseline = await webhooksOf([undefined, undefined]);
    const baselineStart = await send100(baseline.key);
    await Promise.all(baseline.receivers.map((receiver) => receiver.waitFor(100, 30_000)));
    const fullSpeedMs = Date.now() - baselineStart;
    for (const receiver of baseline.receivers) await receiver.close();
    // One account, two webhooks: one paced at 5 a second, one unpaced.
    const {
      key,
      receivers: [paced, free],
    } = await webhooksOf([5, undefined]);
    if (!paced || !free) throw new Error('two receivers');

    // Act
    const started = await send100(key);
    await free.waitFor(100, 30_000);
    const freeDoneMs = Date.now() - started;
    await paced.waitFor(100, 40_000);
    await new Promise((r) => setTimeout(r, 500));

    // Assert: every event once at each receiver; the paced one never more than 5 in any second.
    const ids = (r: typeof paced) => new Set(r.received.map((request) => String(request.headers['webhook-id'])));
    expect(ids(paced).size).toBe(100);
    expect(paced.received).toHaveLength(100);
    expect(ids(free).size).toBe(100);
    expect(mostInAnyWindow(paced.received.map((request) => request.at))).toBeLessThanOrEqual(5);
    // 100 at 5 a second take about 20 s (21 s at 1.05 s per 5).
    const times = paced.received.map((request) => request.at);
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(19_000);
    // The unpaced webhook keeps full speed: done about as soon as without a paced neighbour (a loaded machine's
    // noise allowed), while the paced one has had about a fifth of its events by then.
    expect(freeDoneMs).toBeLessThan(fullSpeedMs * 1.5 + 1_000);
    expect(paced.received.filter((request) => request.at - started <= freeDoneMs).length).toBeLessThan(50);
    await paced.close();
    await free.close();
  }, 90_000);
});

// One tenant's endpoint that hangs cannot delay another's deliveries (DESIGN §4, isolation): its jobs past
// its share of the shared lane move to the slow lane, so a healthy tenant's delivery goes out while every one
// of the hanging endpoint's attempts is still waiting for its time-out. Ordering, not timing, is asserted.
import { afterEach, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime | undefined;
const receivers: Receiver[] = [];
afterEach(async () => {
  await rt?.stop();
  rt = undefined;
  for (const receiver of receivers.splice(0)) await receiver.close();
});

async function tenantWithHook(runtime: TestRuntime, receiver: Receiver) {
  const { key } = await runtime.newKey();
  const res = await runtime.call('/webhooks', {
    method: 'POST',
    key,
    body: JSON.stringify({ url: `${receiver.url}/h`, events: ['email.sent'] }),
  });
  expect(res.status).toBe(201);
  return { key, hook: (await res.json()) as { id: string } };
}

const batch = (n: number) =>
  JSON.stringify(
    Array.from({ length: n }, (_, i) => ({ from: 'a@acme.test', to: `u${i}@example.com`, subject: 's', text: 't' })),
  );

describe('tenant isolation', () => {
  it("a healthy tenant's delivery goes out while 200 of another tenant's attempts hang", async () => {
    // Arrange: tenant A's endpoint never answers; its attempts time out only after 8 s.
    rt = await startTestRuntime({ SF_ATTEMPT_TIMEOUT_MS: '8000' });
    const hanging = await startReceiver();
    const healthy = await startReceiver();
    receivers.push(hanging, healthy);
    hanging.answer({ kind: 'hang' });
    const a = await tenantWithHook(rt, hanging);
    const b = await tenantWithHook(rt, healthy);
    for (let i = 0; i < 2; i += 1) {
      const res = await rt.call('/emails/batch', { method: 'POST', key: a.key, body: batch(100) });
      expect(res.status).toBe(200);
    }
    await hanging.waitFor(4, 10_000);

    // Act
    const res = await rt.call('/emails', { method: 'POST', key: b.key, body: batch(1).slice(1, -1) });
    expect(res.status).toBe(200);
    await healthy.waitFor(1, 10_000);

    // Assert: no attempt of A has ended yet (each waits 8 s), and A holds only its share plus the slow lane.
    const failedA = (await (
      await rt.call(`/webhooks/${a.hook.id}/deliveries?status=failed`, { key: a.key })
    ).json()) as { data: unknown[] };
    const pendingA = (await (
      await rt.call(`/webhooks/${a.hook.id}/deliveries?status=pending&limit=100`, { key: a.key })
    ).json()) as { data: { attempts: number }[] };
    expect(failedA.data).toEqual([]);
    expect(pendingA.data.every((d) => d.attempts === 0)).toBe(true);
    expect(hanging.received.length).toBeLessThanOrEqual(4 + 2 * 10);
  }, 30_000);
});

// One tenant's endpoint that hangs cannot delay another's deliveries (DESIGN §4, isolation): its jobs past
// its share of the shared lane move to the slow lane, so a healthy tenant's delivery goes out while every one
// of the hanging endpoint's attempts is still waiting for its time-out. Ordering, not timing, is asserted.
import { afterEach, describe, expect, it } from 'vitest';
import { LANE_POLICY } from '../../lambdas/domain/webhooks/endpoint-health';
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
    // Arrange: tenant A's endpoint never answers; its attempts time out only after 20 s.
    rt = await startTestRuntime({ SF_ATTEMPT_TIMEOUT_MS: '20000' });
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
    // A's emails sent and fanned out: what remains is its 200 deliveries, hanging or queued.
    await rt.queues.sends.settled();
    await rt.queues.events.idle();

    // Act
    const res = await rt.call('/emails', { method: 'POST', key: b.key, body: batch(1).slice(1, -1) });
    expect(res.status).toBe(200);
    await healthy.waitFor(1, 10_000);

    // Assert: B's delivery went out before the first of A's attempts could time out, while A held only its
    // share of the shared lane plus the slow lane.
    const firstHang = hanging.received[0]?.at ?? 0;
    expect(healthy.received[0]?.at).toBeLessThan(firstHang + 20_000);
    expect(hanging.received.length).toBeLessThanOrEqual((LANE_POLICY.perEndpoint ?? 0) + 2 * 10);
  }, 60_000);
});

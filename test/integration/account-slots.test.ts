// The local gateway serves at most LOCAL_ACCOUNT_CONCURRENCY requests of one account at once (KeyedSlots): one
// tenant's burst waits its turn while another tenant's requests go straight through.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_ACCOUNT_CONCURRENCY } from '../../lambdas/runtime/local/runtime';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime();
});
afterAll(() => rt.stop());

describe('per-account share of the local runtime', () => {
  it("holds one account's burst to its share in flight, and answers every request of it", async () => {
    // Arrange: a slow route stand-in (signature checks over a large body) from A, many at once.
    const a = await rt.newKey();
    const hook = await rt.call('/webhooks', {
      method: 'POST',
      key: a.key,
      body: JSON.stringify({ url: 'https://example.com/h', events: ['email.sent'] }),
    });
    const { id } = (await hook.json()) as { id: string };
    const body = JSON.stringify({ body: 'x'.repeat(200_000), headers: { 'webhook-signature': 'v1,AAAA' } });
    let peak = 0;
    const watch = setInterval(() => {
      peak = Math.max(peak, rt.accountSlots.inFlight(a.accountId));
    }, 1);

    // Act
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        rt.call(`/webhooks/${id}/signature-check`, { method: 'POST', key: a.key, body }).then((r) => r.status),
      ),
    );
    clearInterval(watch);

    // Assert
    expect(answers.every((status) => status === 200)).toBe(true);
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(LOCAL_ACCOUNT_CONCURRENCY);
  });
});

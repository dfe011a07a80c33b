// The spec's 10-second answer time-out, for real (its own file, so it runs beside the other suites).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let receiver: Receiver;
beforeAll(async () => {
  rt = await startTestRuntime({ SF_ATTEMPT_TIMEOUT_MS: '10000' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await rt.stop();
});

it('an endpoint that never answers fails the attempt at 10 s, recorded with its duration and error', async () => {
  const { key } = await rt.newKey();
  const hook = (await (
    await rt.call('/webhooks', {
      method: 'POST',
      key,
      body: JSON.stringify({ url: `${receiver.url}/hang`, events: ['email.sent'] }),
    })
  ).json()) as { id: string };
  receiver.answer({ kind: 'hang' });
  const started = Date.now();
  const res = await rt.call(`/webhooks/${hook.id}/test`, { method: 'POST', key });
  const elapsed = Date.now() - started;
  const body = (await res.json()) as {
    success: boolean;
    status: number;
    message: string;
    delivery: Record<string, unknown>;
  };
  expect(elapsed).toBeGreaterThanOrEqual(10_000);
  expect(elapsed).toBeLessThan(12_000);
  expect(body).toMatchObject({ success: false, status: 0, delivery: { status: 'failed', status_code: null } });
  expect(body.delivery.duration_ms as number).toBeGreaterThanOrEqual(10_000);
  expect(body.message).toMatch(/timed out after 10000 ms/);
  const log = (await (await rt.call(`/webhooks/${hook.id}/deliveries`, { key })).json()) as {
    data: Record<string, unknown>[];
  };
  expect(log.data[0]).toMatchObject({ error: 'timed out after 10000 ms', status_code: null });
  const attempts = (log.data[0] as { attempt_log: Record<string, unknown>[] }).attempt_log;
  expect(attempts[0]).toMatchObject({
    status_code: 0,
    error: 'timed out after 10000 ms',
  });
}, 20_000);

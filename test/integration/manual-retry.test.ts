// Manual retry is single-flight over real HTTP: of 20 simultaneous POST …/retry of one delivery, exactly one
// makes an attempt (one request reaches the endpoint, one 200) and the 19 others get 409 retry_conflict, even
// against an endpoint that answers at once (so the first retry has finished before the last requests read the
// row). A retry asked after the previous one has ended is a new retry. "Simultaneous" is exact here: the 20
// connections are open first, then every request is written at once, so all arrive before any is answered.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETRY_SETTLE_MS } from '../../lambdas/app/webhooks/attempts';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';
import { simultaneousPosts } from '../support/simultaneous';

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

const TRIALS = 5;
const SIMULTANEOUS = 20;

/** A webhook and one succeeded delivery of it (a test send), ready to be retried. */
async function succeededDelivery() {
  const { key } = await rt.newKey();
  const hook = await rt.call('/webhooks', {
    method: 'POST',
    key,
    body: JSON.stringify({ url: `${receiver.url}/retry`, events: ['email.sent'] }),
  });
  const { id: hookId } = (await hook.json()) as { id: string };
  const sent = await rt.call(`/webhooks/${hookId}/test`, { method: 'POST', key });
  const { delivery } = (await sent.json()) as { delivery: { id: string; status: string } };
  expect(delivery.status).toBe('succeeded');
  return { key, path: `/webhooks/${hookId}/deliveries/${delivery.id}/retry` };
}

describe('POST /v1/webhooks/:id/deliveries/:did/retry', () => {
  it(`of ${SIMULTANEOUS} simultaneous retries, exactly one attempts (one POST, one 200), the others get 409 (${TRIALS} trials)`, async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      // Arrange
      const { key, path } = await succeededDelivery();
      const before = receiver.received.length;

      // Act
      const answers = await simultaneousPosts(rt.url, path, key, SIMULTANEOUS);

      // Assert
      const statuses = answers.map((a) => a.status).sort();
      expect({ trial, statuses }).toEqual({ trial, statuses: [200, ...Array(SIMULTANEOUS - 1).fill(409)] });
      for (const answer of answers.filter((a) => a.status === 409)) expect(answer.body.code).toBe('retry_conflict');
      expect({ trial, posts: receiver.received.length - before }).toEqual({ trial, posts: 1 });
    }
  }, 60_000);

  it('a retry asked after the previous retry has ended is a new retry', async () => {
    // Arrange
    const { key, path } = await succeededDelivery();
    const before = receiver.received.length;

    // Act
    const first = await rt.call(path, { method: 'POST', key });
    // Within RETRY_SETTLE_MS of a retry, another is the same click.
    await new Promise((r) => setTimeout(r, RETRY_SETTLE_MS + 5));
    const second = await rt.call(path, { method: 'POST', key });

    // Assert
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(((await second.json()) as { delivery: { attempts: number } }).delivery.attempts).toBe(3);
    expect(receiver.received.length - before).toBe(2);
  });
});

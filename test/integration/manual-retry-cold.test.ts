// Manual retry stays single-flight on a runtime that has just started, and for requests that arrive while the
// first retry's attempt is in flight but are handled only after it ended (their key lookup slow, as under
// load): a request counts from its arrival at the gateway (requestContext.requestTimeEpoch), and an attempt
// in flight at that moment or claimed after it means 409, however late the request is handled.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KeyLookupHold } from '../support/key-lookup-hold';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';
import { simultaneousPosts } from '../support/simultaneous';

let rt: TestRuntime;
let receiver: Receiver;
// While held, the authorizer's read of a key is answered, then held until released.
const lookups = new KeyLookupHold();

beforeAll(async () => {
  receiver = await startReceiver();
  rt = await startTestRuntime({}, { instrument: lookups.instrument });
});
afterAll(async () => {
  await rt.stop();
  await receiver.close();
});

/** A webhook whose one delivery (a test send) failed: the endpoint answered 500. */
async function failedDelivery() {
  const { key } = await rt.newKey();
  receiver.answer({ kind: 'status', status: 500 });
  const hook = await rt.call('/webhooks', {
    method: 'POST',
    key,
    body: JSON.stringify({ url: `${receiver.url}/retry`, events: ['email.sent'] }),
  });
  const { id } = (await hook.json()) as { id: string };
  const sent = await rt.call(`/webhooks/${id}/test`, { method: 'POST', key });
  const { delivery } = (await sent.json()) as { delivery: { id: string; status: string } };
  expect(delivery.status).toBe('failed');
  return { key, path: `/webhooks/${id}/deliveries/${delivery.id}/retry` };
}

it('on a fresh runtime, 20 simultaneous retries of a failed delivery make one POST, every trial from the first', async () => {
  for (let trial = 0; trial < 5; trial++) {
    // Arrange
    const { key, path } = await failedDelivery();
    const before = receiver.received.length;

    // Act
    const answers = await simultaneousPosts(rt.url, path, key, 20);

    // Assert
    const statuses = answers.map((a) => a.status).sort();
    expect({ trial, statuses }).toEqual({ trial, statuses: [200, ...Array(19).fill(409)] });
    expect({ trial, posts: receiver.received.length - before }).toEqual({ trial, posts: 1 });
  }
}, 60_000);

it('retries that arrive while the first is in flight, handled after it ended, are refused: one POST', async () => {
  // Arrange: the first retry's attempt in flight (the endpoint takes 1.5 s).
  const { key, path } = await failedDelivery();
  const before = receiver.received.length;
  receiver.answer({ kind: 'slow', delayMs: 1_500, status: 500 });
  const first = rt.call(path, { method: 'POST', key });
  await receiver.waitFor(before + 1, 5_000);

  // Act: 19 more arrive now, but their key lookups are held until the first has answered.
  lookups.hold();
  const rest = simultaneousPosts(rt.url, path, key, 19);
  await expect.poll(() => lookups.held, { timeout: 5_000 }).toBe(19);
  lookups.stopHolding();
  expect((await first).status).toBe(200);
  lookups.release();
  const answers = await rest;

  // Assert
  expect(answers.map((a) => a.status)).toEqual(Array(19).fill(409));
  for (const answer of answers) expect(answer.body.code).toBe('retry_conflict');
  expect(receiver.received.length - before).toBe(1);
}, 30_000);

// ordering: "per_email" over real HTTP (docs/webhooks.md, "Ordering"): the option on create, read and update
// (422 otherwise), and a receiver that fails one email's first event for 3 s: that email's later events wait for
// it, while another email's events arrive meanwhile. The same run without the option shows they would not wait.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Received, type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let receiver: Receiver | undefined;

beforeAll(async () => {
  // The simulator spaces an email's events a second apart, as SES's arrive; failed attempts retry each second.
  rt = await startTestRuntime({ SF_SIMULATOR_STEP_SECONDS: '1', SF_RETRY_DELAYS: '1,1,1,1,1,1' });
});
afterAll(() => rt.stop());
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

const hookUrl = 'https://hooks.example.com/sendflow';

async function createHook(key: string, body: Record<string, unknown>) {
  return rt.call('/webhooks', { method: 'POST', key, body: JSON.stringify(body) });
}

describe('the ordering option', () => {
  it('is "none" unless asked; "per_email" is kept on create, shown on read and changed by update', async () => {
    const { key } = await rt.newKey();
    const plain = (await (await createHook(key, { url: hookUrl, events: ['email.sent'] })).json()) as {
      id: string;
      ordering: string;
    };
    expect(plain.ordering).toBe('none');
    const created = await createHook(key, { url: hookUrl, events: ['email.sent'], ordering: 'per_email' });
    expect(created.status).toBe(201);
    const ordered = (await created.json()) as { id: string; ordering: string };
    expect(ordered.ordering).toBe('per_email');
    expect(((await (await rt.call(`/webhooks/${ordered.id}`, { key })).json()) as { ordering: string }).ordering).toBe(
      'per_email',
    );

    const updated = await rt.call(`/webhooks/${plain.id}`, { method: 'PUT', key, body: '{"ordering":"per_email"}' });
    expect(updated.status).toBe(200);
    expect(((await updated.json()) as { ordering: string }).ordering).toBe('per_email');
    await rt.call(`/webhooks/${ordered.id}`, { method: 'PUT', key, body: '{"ordering":"none"}' });
    expect(((await (await rt.call(`/webhooks/${ordered.id}`, { key })).json()) as { ordering: string }).ordering).toBe(
      'none',
    );
  });

  it('refuses any other value with 422 validation_error on create and on update, changing nothing', async () => {
    const { key } = await rt.newKey();
    const refused = await createHook(key, { url: hookUrl, events: ['email.sent'], ordering: 'fifo' });
    expect(refused.status).toBe(422);
    expect(await refused.json()).toMatchObject({ code: 'validation_error', details: [{ path: 'ordering' }] });
    expect(((await (await rt.call('/webhooks', { key })).json()) as { data: unknown[] }).data).toHaveLength(0);

    const { id } = (await (await createHook(key, { url: hookUrl, events: ['email.sent'] })).json()) as { id: string };
    for (const body of ['{"ordering":"per_recipient"}', '{"ordering":null}', '{"ordering":1}']) {
      const res = await rt.call(`/webhooks/${id}`, { method: 'PUT', key, body });
      expect(res.status).toBe(422);
    }
    expect(((await (await rt.call(`/webhooks/${id}`, { key })).json()) as { ordering: string }).ordering).toBe('none');
  });
});

interface Payload {
  id: string;
  type: string;
  email_id: string;
  sequence: number;
}

const payloadOf = (request: Received) => JSON.parse(request.body) as Payload;

/**
 * Sends email A (click@: sent, delivered, opened, clicked, a second apart) to a receiver that fails A's
 * email.sent for its first 3 s, then email B (success@: sent, delivered) once A's first attempt has failed, and
 * waits for every event to be delivered.
 */
async function failFirstEventFor3s(ordering: 'none' | 'per_email') {
  const rx = await startReceiver();
  receiver = rx;
  const { key } = await rt.newKey();
  const events = ['email.sent', 'email.delivered', 'email.opened', 'email.clicked'];
  const hook = await createHook(key, { url: `${rx.url}/hooks`, events, ordering });
  expect(hook.status).toBe(201);
  let firstFailureAt: number | null = null;
  let emailA: string | null = null;
  rx.answer((n) => {
    const request = rx.received[n - 1] as Received;
    const payload = payloadOf(request);
    if (payload.email_id === emailA && payload.type === 'email.sent') {
      firstFailureAt ??= request.at;
      if (request.at - firstFailureAt < 3_000) return { kind: 'status', status: 503 };
    }
    return { kind: 'status', status: 200 };
  });
  const send = async (to: string) => {
    const res = await rt.call('/emails', {
      method: 'POST',
      key,
      body: JSON.stringify({ from: 'Acme <hello@acme.test>', to, subject: 'Hi', html: '<p>Hi</p>' }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { id: string }).id;
  };
  emailA = await send('click@simulator.amazonses.com');
  // B starts once A's email.sent has failed once: all of B's story happens while A's first event is failing.
  const started = Date.now();
  while (firstFailureAt === null && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 20));
  const emailB = await send('success@simulator.amazonses.com');
  // A: 4 events (and the failed attempts of its first); B: 2 events.
  const deadline = Date.now() + 25_000;
  // A request answered 503: A's email.sent within 3 s of its first attempt.
  const isFailed = (r: Received) =>
    payloadOf(r).email_id === emailA &&
    payloadOf(r).type === 'email.sent' &&
    firstFailureAt !== null &&
    r.at - firstFailureAt < 3_000;
  const delivered = () => new Set(rx.received.filter((r) => !isFailed(r)).map((r) => payloadOf(r).id)).size;
  while (delivered() < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const ofA = rx.received.filter((r) => payloadOf(r).email_id === emailA);
  const ofB = rx.received.filter((r) => payloadOf(r).email_id === emailB);
  const sentOkAt = ofA.find((r) => payloadOf(r).type === 'email.sent' && !isFailed(r))?.at ?? Number.NaN;
  return { ofA, ofB, sentOkAt, firstFailureAt: firstFailureAt as number | null };
}

describe('ordering: "per_email" with a receiver that fails an email\'s first event for 3 s', () => {
  it("holds that email's later events until its first is delivered, in sequence order, while another email's events arrive", async () => {
    // Act
    const { ofA, ofB, sentOkAt, firstFailureAt } = await failFirstEventFor3s('per_email');

    // Assert: A's first event failed, then succeeded 3 s later.
    expect(firstFailureAt).not.toBeNull();
    expect(sentOkAt - (firstFailureAt as number)).toBeGreaterThanOrEqual(3_000);
    // None of A's later events was attempted before its first succeeded; then each came once, in sequence order.
    const later = ofA.filter((r) => payloadOf(r).type !== 'email.sent');
    expect(later.map((r) => payloadOf(r).type)).toEqual(['email.delivered', 'email.opened', 'email.clicked']);
    for (const request of later) expect(request.at).toBeGreaterThanOrEqual(sentOkAt);
    const sequences = later.map((r) => payloadOf(r).sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(Math.min(...sequences)).toBeGreaterThan(payloadOf(ofA[0] as Received).sequence);
    // B's events flowed meanwhile: both arrived while A's first event was still failing.
    expect(ofB.map((r) => payloadOf(r).type)).toEqual(['email.sent', 'email.delivered']);
    for (const request of ofB) expect(request.at).toBeLessThan(sentOkAt);
  }, 40_000);

  it("without the option, the same email's later events arrive while its first is still failing (the control)", async () => {
    const { ofA, sentOkAt } = await failFirstEventFor3s('none');

    const early = ofA.filter((r) => payloadOf(r).type !== 'email.sent' && r.at < sentOkAt);
    expect(early.length).toBeGreaterThan(0);
  }, 40_000);
});

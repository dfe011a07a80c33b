// POST /v1/webhooks/:id/signature-check over real HTTP: the headers and body a real receiver got from a test
// send are valid; the same request re-serialised, signed for another webhook, or stripped of a header gets the
// diagnosis a person needs; other accounts get 404, keys without webhook:read 403, bad bodies 400/422.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver, stringHeaders } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

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

/** A webhook of a new account, and the headers and raw body its endpoint received from a test send. */
async function receivedTestSend(key: string) {
  const hook = await rt.call('/webhooks', {
    method: 'POST',
    key,
    body: JSON.stringify({ url: `${receiver.url}/sig`, events: ['email.sent'] }),
  });
  const { id } = (await hook.json()) as { id: string };
  const before = receiver.received.length;
  await rt.call(`/webhooks/${id}/test`, { method: 'POST', key });
  const [got] = (await receiver.waitFor(before + 1)).slice(before);
  if (!got) throw new Error('no request received');
  const headers = stringHeaders(got.headers);
  return { id, headers, body: got.body };
}

async function check(key: string, id: string, payload: unknown) {
  const res = await rt.call(`/webhooks/${id}/signature-check`, { method: 'POST', key, body: JSON.stringify(payload) });
  return { status: res.status, body: (await res.json()) as { valid?: boolean; diagnosis?: string; code?: string } };
}

describe('POST /v1/webhooks/:id/signature-check', () => {
  it('finds the request the endpoint received valid', async () => {
    const { key } = await rt.newKey();
    const { id, headers, body } = await receivedTestSend(key);

    const result = await check(key, id, { headers, body });

    expect(result).toEqual({ status: 200, body: { valid: true, diagnosis: expect.stringMatching(/^valid/) } });
  });

  it('diagnoses a re-serialised body, a missing header and another webhook’s secret', async () => {
    const { key } = await rt.newKey();
    const first = await receivedTestSend(key);
    const second = await receivedTestSend(key);
    const pretty = JSON.stringify(JSON.parse(first.body), null, 2);
    const { 'webhook-signature': _s, 'x-service-signature': _x, ...unsigned } = first.headers;

    const reserialised = await check(key, first.id, { headers: first.headers, body: pretty });
    const missing = await check(key, first.id, { headers: unsigned, body: first.body });
    const otherSecret = await check(key, first.id, { headers: second.headers, body: second.body });

    expect(reserialised.body).toEqual({
      valid: false,
      diagnosis: expect.stringMatching(/^body changed: .*re-serialised/),
    });
    expect(missing.body).toEqual({
      valid: false,
      diagnosis: expect.stringMatching(/^header missing: webhook-signature/),
    });
    expect(otherSecret.body).toEqual({ valid: false, diagnosis: expect.stringMatching(/^wrong secret/) });
  });

  it("answers 404 for another account's webhook, 403 without webhook:read, 400 for a malformed request", async () => {
    const { key } = await rt.newKey();
    const { id, headers, body } = await receivedTestSend(key);
    const other = await rt.newKey();
    const sendOnly = await rt.newKey({ scopes: ['email:send'] });

    expect((await check(other.key, id, { headers, body })).status).toBe(404);
    expect((await check(sendOnly.key, id, { headers, body })).status).toBe(403);
    const bad = await check(key, id, { headers: 'x', body: 1 });
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.status).toBeLessThan(500);
  });

  it('refuses more than 10 listed signatures with a 422 that says so', async () => {
    const { key } = await rt.newKey();
    const { id, headers, body } = await receivedTestSend(key);
    const extra = Array.from({ length: 10 }, (_, i) => `v1,${Buffer.alloc(32, i).toString('base64')}`);
    const name = Object.keys(headers).find((header) => header.toLowerCase() === 'webhook-signature') ?? '';

    const tooMany = await check(key, id, {
      headers: { ...headers, [name]: [...extra, headers[name]].join(' ') },
      body,
    });
    const ten = await check(key, id, {
      headers: { ...headers, [name]: [...extra.slice(1), headers[name]].join(' ') },
      body,
    });

    expect(tooMany.status).toBe(422);
    expect(tooMany.body).toMatchObject({
      code: 'validation_error',
      details: [{ path: 'headers', message: expect.stringMatching(/at most 10 signatures/) }],
    });
    expect(ten).toEqual({ status: 200, body: { valid: true, diagnosis: expect.stringMatching(/^valid/) } });
  });
});

// Secret rotation over real HTTP, checked by the `standardwebhooks` library as receivers use it: during the grace
// period a delivery verifies with the old and the new secret; with grace 0 only the new one; GET never shows a
// secret; a retry of an old delivery is signed with the secrets live at retry time.
import { createHmac } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
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

async function newWebhook(key: string): Promise<{ id: string; secret: string }> {
  const res = await rt.call('/webhooks', {
    method: 'POST',
    key,
    body: JSON.stringify({ url: `${receiver.url}/rotation`, events: ['email.sent'] }),
  });
  const body = (await res.json()) as { id: string; signing_secret: string };
  return { id: body.id, secret: body.signing_secret };
}

async function rotate(key: string, id: string, body?: unknown) {
  const res = await rt.call(`/webhooks/${id}/rotate-secret`, {
    method: 'POST',
    key,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The headers and raw body the endpoint received for one test send. */
async function testSend(key: string, id: string) {
  const before = receiver.received.length;
  const res = await rt.call(`/webhooks/${id}/test`, { method: 'POST', key });
  const { delivery } = (await res.json()) as { delivery: { id: string } };
  const [got] = (await receiver.waitFor(before + 1)).slice(before);
  if (!got) throw new Error('nothing received');
  const headers = stringHeaders(got.headers);
  return { deliveryId: delivery.id, headers, body: got.body };
}

const verifies = (secret: string, got: { headers: Record<string, string>; body: string }) => {
  try {
    new StandardWebhook(secret).verify(got.body, got.headers);
    return true;
  } catch {
    return false;
  }
};

describe('POST /v1/webhooks/:id/rotate-secret', () => {
  it('during the grace period every delivery verifies with the old and with the new secret', async () => {
    // Arrange
    const { key } = await rt.newKey();
    const hook = await newWebhook(key);

    // Act
    const rotated = await rotate(key, hook.id, { grace_period_seconds: 3600 });
    const got = await testSend(key, hook.id);

    // Assert
    const newSecret = rotated.body.signing_secret as string;
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({
      id: hook.id,
      signing_secret: expect.stringMatching(/^whsec_/),
      previous_secret_expires_at: expect.any(String),
    });
    expect(newSecret).not.toBe(hook.secret);
    const expiresIn = Date.parse(rotated.body.previous_secret_expires_at as string) - Date.now();
    expect(expiresIn).toBeGreaterThan(3500_000);
    expect(expiresIn).toBeLessThanOrEqual(3600_000);
    expect(got.headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(verifies(hook.secret, got)).toBe(true);
    expect(verifies(newSecret, got)).toBe(true);
    // X-Service-Signature keeps the previous secret until the grace period ends.
    expect(got.headers['x-service-signature']).toBe(createHmac('sha256', hook.secret).update(got.body).digest('hex'));
  });

  it('with grace 0 the old secret stops at once; a retry of an older delivery is signed with the new one', async () => {
    // Arrange: a delivery made before the rotation.
    const { key } = await rt.newKey();
    const hook = await newWebhook(key);
    const before = await testSend(key, hook.id);

    // Act
    const rotated = await rotate(key, hook.id, { grace_period_seconds: 0 });
    const newSecret = rotated.body.signing_secret as string;
    const count = receiver.received.length;
    await rt.call(`/webhooks/${hook.id}/deliveries/${before.deliveryId}/retry`, { method: 'POST', key });
    const [retried] = (await receiver.waitFor(count + 1)).slice(count);
    if (!retried) throw new Error('retry not received');
    const retriedHeaders = stringHeaders(retried.headers);

    // Assert
    expect(rotated.body.previous_secret_expires_at).toBeNull();
    expect(verifies(hook.secret, before)).toBe(true);
    const after = { headers: retriedHeaders, body: retried.body };
    expect(verifies(newSecret, after)).toBe(true);
    expect(verifies(hook.secret, after)).toBe(false);
    expect(retriedHeaders['x-service-signature']).toBe(
      createHmac('sha256', newSecret).update(retried.body).digest('hex'),
    );
  });

  it('defaults to a day of grace, never shows a secret on GET, and refuses bad grace periods', async () => {
    const { key } = await rt.newKey();
    const hook = await newWebhook(key);

    const rotated = await rotate(key, hook.id);
    const got = await rt.call(`/webhooks/${hook.id}`, { key });
    const text = await got.text();

    const expiresIn = Date.parse(rotated.body.previous_secret_expires_at as string) - Date.now();
    expect(expiresIn).toBeGreaterThan(86_300_000);
    expect(text).not.toContain('whsec_');
    for (const grace of [-1, 604_801, 1.5, '60']) {
      const bad = await rotate(key, hook.id, { grace_period_seconds: grace });
      expect(bad.status, String(grace)).toBe(422);
    }
    const other = await rt.newKey();
    expect((await rotate(other.key, hook.id)).status).toBe(404);
  });
});

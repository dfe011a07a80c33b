// Secret rotation over real HTTP, checked by the `standardwebhooks` library as receivers use it: during the grace
// period a delivery verifies with the old and the new secret; with grace 0 only the new one; GET never shows a
// secret; a retry of an old delivery is signed with the secrets live at retry time. Rotations are conditional
// writes: simultaneous ones over real HTTP each answer a secret that signs (or 409), every secret still in its
// grace period signs, and a revoke-now rotation (grace 0) leaves no earlier secret signing, raced or not.
import { createHmac } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver, stringHeaders } from '../support/receiver';
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

/**
 * The secrets among `candidates` whose Standard Webhooks signature the delivery carries, recomputed here from the
 * raw body (HMAC-SHA256 of id.timestamp.body keyed with the base64-decoded secret), not by Sendflow's code.
 */
function signers(candidates: readonly string[], got: { headers: Record<string, string>; body: string }): string[] {
  const signed = `${got.headers['webhook-id']}.${got.headers['webhook-timestamp']}.${got.body}`;
  const carried = new Set((got.headers['webhook-signature'] ?? '').split(' '));
  return candidates.filter((secret) => {
    const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
    return carried.has(`v1,${createHmac('sha256', key).update(signed).digest('base64')}`);
  });
}

const rotateAtOnce = (key: string, id: string, graces: readonly number[]) =>
  simultaneousPosts(rt.url, `/webhooks/${id}/rotate-secret`, key, graces.length, (i) =>
    JSON.stringify({ grace_period_seconds: graces[i] }),
  );

describe('rotations are conditional writes on the secret set', () => {
  it('ten simultaneous rotations: every secret answered with 200 signs the next delivery; the others are 409', async () => {
    // Arrange
    const { key } = await rt.newKey();
    const hook = await newWebhook(key);

    // Act
    const answers = await rotateAtOnce(key, hook.id, Array(10).fill(3600));
    const got = await testSend(key, hook.id);

    // Assert
    const answered = answers.filter((a) => a.status === 200).map((a) => a.body.signing_secret as string);
    expect(answers.map((a) => (a.status === 200 ? 200 : `${a.status} ${a.body.code}`))).toEqual(
      answers.map((a) => (a.status === 200 ? 200 : '409 rotation_conflict')),
    );
    expect(answered.length).toBeGreaterThan(0);
    expect(new Set(answered).size).toBe(answered.length);
    // Every answered secret signs, and the first one too (all within their hour of grace); nothing else does.
    expect(signers([hook.secret, ...answered], got).sort()).toEqual([hook.secret, ...answered].sort());
    expect(got.headers['webhook-signature']?.split(' ')).toHaveLength(answered.length + 1);
  });

  it('rotations one after another: every secret in its grace period signs; grace 0 then revokes them all', async () => {
    // Arrange
    const { key } = await rt.newKey();
    const hook = await newWebhook(key);
    const earlier = [hook.secret];
    for (let i = 0; i < 3; i += 1) {
      earlier.push((await rotate(key, hook.id, { grace_period_seconds: 3600 })).body.signing_secret as string);
    }

    // Act
    const during = await testSend(key, hook.id);
    const revoked = await rotate(key, hook.id, { grace_period_seconds: 0 });
    const after = await testSend(key, hook.id);

    // Assert
    const last = revoked.body.signing_secret as string;
    expect(signers(earlier, during)).toEqual(earlier);
    expect(revoked.status).toBe(200);
    expect(signers([...earlier, last], after)).toEqual([last]);
    expect(after.headers['x-service-signature']).toBe(createHmac('sha256', last).update(after.body).digest('hex'));
  });

  it('a revoke-now rotation raced by one-day rotations: the leaked secret never signs again (5 tries)', async () => {
    const { key } = await rt.newKey();
    for (let attempt = 0; attempt < 5; attempt += 1) {
      // Arrange: the secret that leaked, and a revoke-now among four one-day rotations, all at once.
      const hook = await newWebhook(key);

      // Act
      const answers = await rotateAtOnce(key, hook.id, [86_400, 86_400, 0, 86_400, 86_400]);
      const got = await testSend(key, hook.id);

      // Assert
      const revokeNow = answers[2];
      const answered = answers.filter((a) => a.status === 200).map((a) => a.body.signing_secret as string);
      expect(revokeNow?.status, `try ${attempt}`).toBe(200);
      expect(signers([hook.secret], got), `try ${attempt}: the leaked secret`).toEqual([]);
      expect(signers(answered, got), `try ${attempt}`).toContain(revokeNow?.body.signing_secret);
      for (const a of answers) expect([200, 409]).toContain(a.status);
    }
  });
});

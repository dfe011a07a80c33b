// GET /v1/usage over real HTTP: the plan, its rate limit, live emails counted this month (each email of a batch),
// test-mode recipients counted today, and bytes of attachments and received mail stored today, against the plan's
// limits; a full-access key only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountKey } from '../../lambdas/app/accounts';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;

beforeAll(async () => {
  rt = await startTestRuntime();
});

afterAll(async () => {
  await rt?.stop();
});

const post = (key: string, path: string, body: unknown) =>
  rt.call(path, { key, method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
const email = (to: string[]) => ({ from: 'Acme <hello@acme.test>', to, subject: 'Hi', html: '<p>Hi</p>' });

describe('GET /v1/usage', () => {
  it('reports the live emails of this month and the test recipients of today against the plan', async () => {
    // Arrange
    const live = await rt.newKey({ plan: 'starter', mode: 'live' });
    const testKey = (await createAccountKey(rt.admin, { accountId: live.accountId, mode: 'test' })).secret;
    // Live mail needs a verified sending domain (verified at once locally).
    const domain = (await (await post(live.key, '/domains', { name: 'acme.test' })).json()) as { id: string };
    expect((await rt.call(`/domains/${domain.id}/verify`, { method: 'POST', key: live.key })).status).toBe(200);
    expect((await post(live.key, '/emails', email(['success@simulator.amazonses.com']))).status).toBe(200);
    expect(
      (await post(live.key, '/emails/batch', [email(['a@simulator.amazonses.com']), email(['b@example.com'])])).status,
    ).toBe(200);
    expect((await post(testKey, '/emails', email(['a@example.com', 'b@example.com', 'c@example.com']))).status).toBe(
      200,
    );

    // Act
    const res = await rt.call('/usage', { key: live.key });

    // Assert
    expect(res.status).toBe(200);
    const now = new Date();
    expect(await res.json()).toEqual({
      object: 'usage',
      plan: 'starter',
      rate_limit: { requests_per_second: 50 },
      live_emails_this_month: {
        period: now.toISOString().slice(0, 7),
        used: 3,
        limit: 10_000,
        resets_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
      },
      test_recipients_today: expect.objectContaining({
        period: now.toISOString().slice(0, 10),
        used: 3,
        limit: 10_000,
      }),
      // Bytes stored today (issue 28): none of these emails had attachments, and nothing was received.
      attachment_bytes_today: expect.objectContaining({
        period: now.toISOString().slice(0, 10),
        used: 0,
        limit: 2 * 1024 ** 3,
      }),
      inbound_bytes_today: expect.objectContaining({
        period: now.toISOString().slice(0, 10),
        used: 0,
        limit: 1024 ** 3,
      }),
    });
  });

  it('needs a full-access key', async () => {
    const { key } = await rt.newKey({ scopes: ['email:send'] });
    expect((await rt.call('/usage', { key })).status).toBe(403);
    expect((await rt.call('/usage')).status).toBe(401);
  });
});

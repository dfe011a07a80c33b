// Per-account limits that bound what one account can make Sendflow do (docs/sending.md, "Limits"): webhooks per account
// and mode, domains per account and mode by plan, and test-mode recipients per day by plan. Over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLANS, WEBHOOKS_PER_MODE } from '../../lambdas/domain/plans';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime();
});
afterAll(() => rt.stop());

const post = (key: string, path: string, body: unknown) =>
  rt.call(path, { method: 'POST', key, body: JSON.stringify(body) });
const webhook = (key: string, n: number) =>
  post(key, '/webhooks', { url: `http://127.0.0.1:9/hook-${n}`, events: ['email.sent'] });
const listed = async (key: string, path: string) =>
  ((await (await rt.call(path, { key })).json()) as { data: { id: string }[] }).data;

describe(`webhooks: ${WEBHOOKS_PER_MODE} per account and mode`, () => {
  it('the next one is 422 limit_exceeded; the other mode and a deletion make room', async () => {
    const { key, accountId } = await rt.newKey();
    for (let n = 0; n < WEBHOOKS_PER_MODE; n++) expect((await webhook(key, n)).status).toBe(201);
    const refused = await webhook(key, 99);
    expect(refused.status).toBe(422);
    expect(await refused.json()).toMatchObject({ status: 422, code: 'limit_exceeded' });
    expect(await listed(key, '/webhooks')).toHaveLength(WEBHOOKS_PER_MODE);

    const { createAccountKey } = await import('../../lambdas/app/accounts');
    const live = await createAccountKey(rt.admin, { accountId, mode: 'live' });
    expect((await webhook(live.secret, 0)).status).toBe(201);

    const [first] = await listed(key, '/webhooks');
    expect((await rt.call(`/webhooks/${first?.id}`, { method: 'DELETE', key })).status).toBe(200);
    expect((await webhook(key, 100)).status).toBe(201);
  });

  it('holds under concurrent creation: 25 at once leave exactly the limit', async () => {
    const { key } = await rt.newKey();
    const answers = await Promise.all(Array.from({ length: 25 }, (_, n) => webhook(key, n)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(WEBHOOKS_PER_MODE);
    expect(statuses.filter((s) => s === 422)).toHaveLength(25 - WEBHOOKS_PER_MODE);
    expect(await listed(key, '/webhooks')).toHaveLength(WEBHOOKS_PER_MODE);
  });
});

describe('domains: per account and mode, by plan', () => {
  it(`free: ${PLANS.free.domainsPerMode}, then 422 limit_exceeded`, async () => {
    const { key } = await rt.newKey({ plan: 'free' });
    for (let n = 0; n < PLANS.free.domainsPerMode; n++)
      expect((await post(key, '/domains', { name: `d${n}.limits.example` })).status).toBe(201);
    const refused = await post(key, '/domains', { name: 'one-more.limits.example' });
    expect(refused.status).toBe(422);
    expect(await refused.json()).toMatchObject({ status: 422, code: 'limit_exceeded' });
    expect(await listed(key, '/domains')).toHaveLength(PLANS.free.domainsPerMode);
  });
});

describe('test mode is metered: recipients per day, by plan', () => {
  const later = new Date(Date.now() + 86_400_000).toISOString(); // scheduled: counted, nothing sent in the test
  const email = (recipients: number) => ({
    from: 'a@acme.test',
    to: Array.from({ length: Math.min(recipients, 50) }, (_, i) => `r${i}@example.com`),
    subject: 'Hi',
    text: 'x',
    scheduled_at: later,
  });

  it(`free: ${PLANS.free.testRecipientsPerDay} recipients a day, then 429 test_quota_exceeded with retry_after`, async () => {
    const { key } = await rt.newKey({ plan: 'free', mode: 'test' });
    const perBatch = 20; // 20 emails × 50 recipients = 1,000 per request
    const batches = PLANS.free.testRecipientsPerDay / (perBatch * 50);
    for (let b = 0; b < batches; b++) {
      const res = await post(
        key,
        '/emails/batch',
        Array.from({ length: perBatch }, () => email(50)),
      );
      expect(res.status).toBe(200);
    }
    const refused = await post(key, '/emails', email(1));
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { code: string; retry_after: number };
    expect(body.code).toBe('test_quota_exceeded');
    expect(body.retry_after).toBeGreaterThan(0);
    expect(body.retry_after).toBeLessThanOrEqual(86_400);
    expect(refused.headers.get('retry-after')).toBe(String(body.retry_after));
  });

  it('a batch that would pass the day is refused whole, and counts nothing', async () => {
    const { key } = await rt.newKey({ plan: 'free', mode: 'test' });
    const tooMany = Math.ceil((PLANS.free.testRecipientsPerDay + 1) / 50);
    const refused = await post(
      key,
      '/emails/batch',
      Array.from({ length: tooMany }, () => email(50)),
    );
    expect(refused.status).toBe(429);
    expect((await post(key, '/emails', email(50))).status).toBe(200);
  });
});

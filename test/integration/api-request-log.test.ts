// GET /v1/logs over real HTTP: the account's recent API requests in the key's mode (method, path, status, key
// id, time), newest first, recorded once answered (errors included), never the key itself, the query string or
// a body; another account's or mode's never; the dashboard's own calls never; full access only. And the stored
// item: one small row per request with its TTL.
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

interface LogEntry {
  object: string;
  method: string;
  path: string;
  status: number;
  api_key_id: string;
  request_id: string;
  created_at: string;
}

const logs = async (key: string) => {
  const res = await rt.call('/logs', { key });
  return { status: res.status, body: (await res.json()) as { object: string; data: LogEntry[] } };
};

describe('GET /v1/logs', () => {
  it('lists the requests just made, newest first, with method, path, status and key, and nothing secret', async () => {
    // Arrange
    const { accountId, key, keyId } = await rt.newKey();
    const other = await rt.newKey();
    const live = (await createAccountKey(rt.admin, { accountId, mode: 'live' })).secret;
    const made = await rt.call('/webhooks', {
      key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: 'https://example.com/hook', events: ['email.sent'], description: 'secret-body' }),
    });
    const missing = await rt.call('/emails/em_missing?foo=bar', { key });
    await rt.call('/usage', { key: live });
    await rt.call('/usage', { key: other.key });
    await rt.call('/usage', { key: 'sf_test_not_a_key' });

    // Act
    const { status, body } = await logs(key);

    // Assert
    expect(made.status).toBe(201);
    expect(missing.status).toBe(404);
    expect(status).toBe(200);
    expect(body.object).toBe('list');
    expect(body.data.map((e) => [e.method, e.path, e.status])).toEqual([
      ['GET', '/emails/em_missing', 404],
      ['POST', '/webhooks', 201],
    ]);
    expect(body.data[0]).toMatchObject({
      object: 'api_request',
      api_key_id: keyId,
      request_id: missing.headers.get('x-request-id'),
    });
    expect(Date.parse(body.data[0]?.created_at ?? '')).toBeGreaterThan(Date.now() - 60_000);
    const text = JSON.stringify(body);
    expect(text).not.toContain(key);
    expect(text).not.toContain('secret-body');
    expect(text).not.toContain('foo=bar');
    // The live key's request is in live mode's log; this very GET /v1/logs is logged after it answered.
    expect((await logs(live)).body.data.map((e) => e.path)).toEqual(['/usage']);
    expect((await logs(key)).body.data[0]?.path).toBe('/logs');
  });

  it('is for full-access keys only', async () => {
    const { key } = await rt.newKey({ scopes: ['email:read'] });
    expect((await logs(key)).status).toBe(403);
  });

  it('stores one small item per request, expiring after 24 hours', async () => {
    const { accountId, key } = await rt.newKey();
    await rt.call('/usage', { key });

    const [entry] = await rt.repos.apiRequests.recent(accountId, 'test', 100, Date.now());

    expect(entry?.expiresAt).toBeGreaterThan(Math.floor(Date.now() / 1000) + 86_400 - 120);
    expect(entry?.expiresAt).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 86_400);
    expect(Buffer.byteLength(JSON.stringify({ tenant: `${accountId}#test`, ...entry }))).toBeLessThan(400);
  });
});

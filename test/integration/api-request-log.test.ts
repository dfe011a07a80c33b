// GET /v1/logs over real HTTP: the account's recent API requests in the key's mode (method, path, status, key
// id, time), newest first, recorded once answered (errors included), never the key itself; another account's or
// mode's never; the dashboard's own calls never; full access only. Filters by status (class or code), method,
// route and key, in the API and on the dashboard's page, with pagination that keeps them; one request's detail
// (query, bodies with secrets removed, a 4xx's error and field problems). And the stored item: one row of at
// most 1 KB per successful request, with its TTL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountKey } from '../../lambdas/app/accounts';
import { createSignInLink } from '../../lambdas/app/dashboard/sign-in';
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
  id: string;
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

  it('stores one item of at most 1 KB (1 WRU) per successful request, bodies included, expiring after 24 hours', async () => {
    const { accountId, key } = await rt.newKey();
    await rt.call('/usage', { key });
    const long = { url: 'https://example.com/hook', events: ['email.sent'], description: 'd'.repeat(480) };
    const made = await rt.call('/webhooks', { key, ...json(long) });
    expect(made.status).toBe(201);

    const rows = await rt.repos.apiRequests.recent(accountId, 'test', 100, Date.now());
    const entries = await Promise.all(
      rows.map(async (row) => (await rt.repos.apiRequests.get(accountId, 'test', row.id, Date.now())) ?? row),
    );

    expect(entries.map((e) => e.path)).toEqual(['/webhooks', '/usage']);
    for (const entry of entries) {
      expect(entry.expiresAt).toBeGreaterThan(Math.floor(Date.now() / 1000) + 86_400 - 120);
      expect(entry.expiresAt).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 86_400);
      expect(itemBytes({ tenant: `${accountId}#test#0`, ...entry })).toBeLessThanOrEqual(1_024);
      expect(entry.responseBody).toBeDefined();
    }
    expect(entries[0]?.requestBody).toContain('"events":["email.sent"]');
  });
});

/** DynamoDB's size of an item: its attribute names and values (numbers counted at their 21-byte most). */
function itemBytes(item: Record<string, unknown>): number {
  return Object.entries(item).reduce(
    (sum, [name, value]) =>
      sum + Buffer.byteLength(name) + (typeof value === 'number' ? 21 : Buffer.byteLength(String(value))),
    0,
  );
}

const json = (body: unknown, method = 'POST') => ({
  method,
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});

interface Page {
  object: string;
  has_more: boolean;
  next_after: string | null;
  data: LogEntry[];
}

const search = async (key: string, query: Record<string, string>) => {
  const res = await rt.call(`/logs?${new URLSearchParams(query)}`, { key });
  return { status: res.status, body: (await res.json()) as Page };
};

const rowsOf = (page: Page) => page.data.map((e) => `${e.method} ${e.path} ${e.status} ${e.api_key_id}`);

/** A signed-in dashboard session's cookie for the account (test mode). */
async function dashboardCookie(accountId: string): Promise<string> {
  const { url } = await createSignInLink(rt.services, { accountId, mode: 'test', baseUrl: rt.url });
  const token = new URL(url).searchParams.get('token') ?? '';
  const res = await fetch(`${rt.url}/dashboard/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
  });
  return (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
}

/** A dashboard page's HTML (`path` below /v1/dashboard, or a full /v1/dashboard link from a page). */
async function dashboard(cookie: string, path: string): Promise<string> {
  const url = path.startsWith('/v1/') ? `${new URL(rt.url).origin}${path}` : `${rt.url}/dashboard${path}`;
  const res = await fetch(url, { headers: { cookie } });
  expect(res.status).toBe(200);
  return res.text();
}

const unescapeHtml = (text: string) =>
  text
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');

/** The body rows of the page's request table, each as its cells' text joined by spaces. */
function tableRows(page: string): string[] {
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(page)?.[1] ?? '';
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...(row[1] ?? '').matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)]
      .map((cell) => unescapeHtml((cell[1] ?? '').replace(/<[^>]+>/g, '').trim()))
      .join(' '),
  );
}

/** The href of the link named `name`, unescaped. */
const linkNamed = (page: string, name: string) =>
  unescapeHtml(new RegExp(`<a href="([^"]+)">${name}</a>`).exec(page)?.[1] ?? '');

describe('filters', () => {
  it('by status (class or code), method, route and key, in the API and on the dashboard', async () => {
    // Arrange: two keys of one account, a known mix of requests
    const { accountId, key: a, keyId: aId } = await rt.newKey();
    const b = await createAccountKey(rt.admin, { accountId, mode: 'test', name: 'second' });
    const bId = b.key.id;
    expect((await rt.call('/usage', { key: a })).status).toBe(200);
    expect((await rt.call('/emails/em_nope', { key: a })).status).toBe(404);
    expect((await rt.call('/webhooks', { key: a, ...json({ url: 'nope', events: [] }) })).status).toBe(422);
    const hook = await rt.call('/webhooks', {
      key: a,
      ...json({ url: 'https://example.com/h', events: ['email.sent'] }),
    });
    expect(hook.status).toBe(201);
    expect((await rt.call('/webhooks/wh_missing', { key: a })).status).toBe(404);
    expect((await rt.call('/usage', { key: b.secret })).status).toBe(200);
    expect((await rt.call('/emails/em_other', { key: b.secret })).status).toBe(404);

    // Act
    const [errors, only422, posts, emailRoute, byB, twoXx] = await Promise.all([
      search(a, { status: '4xx' }),
      search(a, { status: '422' }),
      search(a, { method: 'POST' }),
      search(a, { route: '/emails/{id}' }),
      search(a, { api_key_id: bId }),
      search(a, { status: '2xx', api_key_id: bId }),
    ]);

    // Assert: exactly the matching rows, newest first (the filters' own GET /v1/logs are 200s with key a)
    expect(rowsOf(errors.body)).toEqual([
      `GET /emails/em_other 404 ${bId}`,
      `GET /webhooks/wh_missing 404 ${aId}`,
      `POST /webhooks 422 ${aId}`,
      `GET /emails/em_nope 404 ${aId}`,
    ]);
    expect(rowsOf(only422.body)).toEqual([`POST /webhooks 422 ${aId}`]);
    expect(rowsOf(posts.body)).toEqual([`POST /webhooks 201 ${aId}`, `POST /webhooks 422 ${aId}`]);
    expect(rowsOf(emailRoute.body)).toEqual([`GET /emails/em_other 404 ${bId}`, `GET /emails/em_nope 404 ${aId}`]);
    expect(rowsOf(byB.body)).toEqual([`GET /emails/em_other 404 ${bId}`, `GET /usage 200 ${bId}`]);
    expect(rowsOf(twoXx.body)).toEqual([`GET /usage 200 ${bId}`]);
    expect(errors.body).toMatchObject({ has_more: false, next_after: null });

    // The dashboard's page: the same rows for the same filters, from a form of selects
    const cookie = await dashboardCookie(accountId);
    const page = await dashboard(cookie, `/api-requests?status=4xx&key=${aId}`);
    expect(page).toContain('<select id="log-status" name="status">');
    expect(tableRows(page)).toEqual([
      expect.stringMatching(/GET \/webhooks\/wh_missing 404 /),
      expect.stringMatching(/POST \/webhooks 422 /),
      expect.stringMatching(/GET \/emails\/em_nope 404 /),
    ]);
    const routePage = await dashboard(cookie, `/api-requests?route=${encodeURIComponent('/emails/{id}')}&method=GET`);
    expect(tableRows(routePage)).toEqual([
      expect.stringMatching(/GET \/emails\/em_other 404 second/),
      expect.stringMatching(/GET \/emails\/em_nope 404 /),
    ]);
    // A filter the API does not know is a 422 saying which, never a 5xx
    expect((await search(a, { status: 'teapot' })).status).toBe(422);
    expect((await search(a, { route: '/not/a/route' })).status).toBe(422);
  });

  it('pages through matching requests only, the next page keeping the filters', async () => {
    // Arrange: 27 404s and 27 200s of one key, interleaved, and another key's 404
    const { accountId, key, keyId } = await rt.newKey();
    const other = await createAccountKey(rt.admin, { accountId, mode: 'test' });
    for (let i = 0; i < 27; i++) {
      expect((await rt.call(`/emails/em_gone${i}`, { key })).status).toBe(404);
      expect((await rt.call('/usage', { key })).status).toBe(200);
    }
    expect((await rt.call('/emails/em_theirs', { key: other.secret })).status).toBe(404);
    const cookie = await dashboardCookie(accountId);

    // Act
    const first = await dashboard(cookie, `/api-requests?status=404&key=${keyId}`);
    const older = linkNamed(first, 'Older requests');
    const second = await dashboard(cookie, older);
    const api1 = await search(key, { status: '404', api_key_id: keyId, limit: '20' });
    const api2 = await search(key, {
      status: '404',
      api_key_id: keyId,
      limit: '20',
      after: api1.body.next_after ?? '',
    });

    // Assert
    const gone = Array.from({ length: 27 }, (_, i) => `/emails/em_gone${26 - i}`);
    const paths = (rows: string[]) => rows.map((row) => /\/emails\/\S+/.exec(row)?.[0]);
    expect(paths(tableRows(first))).toEqual(gone.slice(0, 25));
    expect(new URL(older, rt.url).searchParams.get('status')).toBe('404');
    expect(new URL(older, rt.url).searchParams.get('key')).toBe(keyId);
    expect(paths(tableRows(second))).toEqual(gone.slice(25));
    expect(linkNamed(second, 'Older requests')).toBe('');
    expect(api1.body.data.map((e) => e.path)).toEqual(gone.slice(0, 20));
    expect(api1.body.has_more).toBe(true);
    expect(api2.body.data.map((e) => e.path)).toEqual(gone.slice(20));
    expect(api2.body).toMatchObject({ has_more: false, next_after: null });
  });
});

describe("a request's detail", () => {
  it("shows a 422's error message and field problems, and the bodies of others without their secrets", async () => {
    // Arrange: a rejected webhook, then a webhook and an API key made (their answers carry secrets)
    const { accountId, key } = await rt.newKey();
    const rejected = await rt.call('/webhooks?verbose=1', {
      key,
      ...json({ url: 'https://example.com/h', events: ['email.sent'], rate_limit_per_second: 0 }),
    });
    const rejection = (await rejected.json()) as { error: string; details: { path: string; message: string }[] };
    const hook = (await (
      await rt.call('/webhooks', { key, ...json({ url: 'https://example.com/h', events: ['email.sent'] }) })
    ).json()) as { id: string; signing_secret: string };
    const made = (await (
      await rt.call('/api-keys', { key, ...json({ name: 'ci', permission: 'full_access', password: 'hunter2' }) })
    ).json()) as { key?: string; token?: string };
    const created = await rt.call('/api-keys', { key, ...json({ name: 'ci', permission: 'full_access' }) });
    const secret = ((await created.json()) as { key: string }).key;
    expect(rejected.status).toBe(422);
    expect(rejection.details.length).toBeGreaterThan(0);
    expect(hook.signing_secret).toMatch(/^whsec_/);
    expect(secret).toMatch(/^sf_test_/);
    const posts = (await search(key, { method: 'POST' })).body.data;
    const [keyRow, refusedKeyRow, hookRow, rejectedRow] = posts;
    expect(posts.map((e) => `${e.path} ${e.status}`)).toEqual([
      '/api-keys 201',
      `/api-keys ${made.key ? 201 : 422}`,
      '/webhooks 201',
      '/webhooks 422',
    ]);
    const cookie = await dashboardCookie(accountId);

    // Act
    const rejectedPage = await dashboard(cookie, `/api-requests/${rejectedRow?.id}`);
    const hookPage = await dashboard(cookie, `/api-requests/${hookRow?.id}`);
    const keyPage = await dashboard(cookie, `/api-requests/${keyRow?.id}`);
    const refusedPage = await dashboard(cookie, `/api-requests/${refusedKeyRow?.id}`);
    const apiDetails = await Promise.all(
      posts.map(async (e) => (await rt.call(`/logs/${e.id}`, { key })).json() as Promise<Record<string, unknown>>),
    );

    // Assert: the 422's message and each field problem, its request body and query
    const text = unescapeHtml(rejectedPage);
    expect(text).toContain(rejection.error);
    for (const problem of rejection.details) {
      expect(text).toContain(problem.path);
      expect(text).toContain(problem.message);
    }
    expect(text).toContain('verbose=1');
    expect(text).toContain('"rate_limit_per_second": 0');
    expect(text).toContain('422');
    expect(apiDetails[3]).toMatchObject({
      status: 422,
      query: 'verbose=1',
      route: '/webhooks',
      request_body: { url: 'https://example.com/h', rate_limit_per_second: 0 },
      response_body: { error: rejection.error, details: rejection.details },
    });
    // No secret anywhere: not the signing secret, not the new key, not the caller's key, not a password
    for (const shown of [hookPage, keyPage, refusedPage, JSON.stringify(apiDetails)]) {
      expect(shown).not.toContain(hook.signing_secret);
      expect(shown).not.toContain(secret);
      expect(shown).not.toContain(key);
      expect(shown).not.toContain('hunter2');
      if (made.key) expect(shown).not.toContain(made.key);
    }
    expect(unescapeHtml(hookPage)).toContain('"signing_secret": "[redacted]"');
    expect(unescapeHtml(keyPage)).toContain('"key": "[redacted]"');
    expect(apiDetails[2]).toMatchObject({ response_body: { id: hook.id, signing_secret: '[redacted]' } });
  });
});

// Rate limits over real HTTP (spec §8): a free account's 11th request in one second is refused with 429,
// headers and body as specified, and the next window admits it again; unauthenticated callers per IP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountKey } from '../../lambdas/app/accounts';
import { atWindowStart, startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;

beforeAll(async () => {
  rt = await startTestRuntime({ SF_IP_RATE_LIMIT: '3' });
});
afterAll(() => rt.stop());

describe('per-account window', () => {
  it('admits 10 requests of a free account per second, refuses the 11th, admits again next second', async () => {
    const { key } = await rt.newKey({ plan: 'free' });
    await atWindowStart(800);
    const responses = await Promise.all(Array.from({ length: 11 }, () => rt.call('/api-keys', { key })));
    const windowEnd = Math.floor(Date.now() / 1000) + 1;

    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(10).fill(200), 429]);
    for (const res of responses) {
      expect(res.headers.get('x-ratelimit-limit')).toBe('10');
      expect(Number(res.headers.get('x-ratelimit-reset'))).toBe(windowEnd);
    }
    const remaining = responses.map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b);
    expect(remaining).toEqual([0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);

    const refused = responses.find((r) => r.status === 429) as Response;
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toEqual({
      error: expect.stringMatching(/Rate limit of 10 requests per second/),
      status: 429,
      code: 'rate_limited',
      name: 'rate_limit_exceeded',
      message: expect.stringMatching(/Rate limit of 10 requests per second/),
      statusCode: 429,
      retry_after: 1,
    });

    await new Promise((r) => setTimeout(r, windowEnd * 1000 - Date.now() + 20));
    const next = await rt.call('/api-keys', { key });
    expect(next.status).toBe(200);
    expect(next.headers.get('x-ratelimit-remaining')).toBe('9');
    expect(Number(next.headers.get('x-ratelimit-reset'))).toBe(windowEnd + 1);
  });

  it('counts both modes of one account in one window, and other accounts apart', async () => {
    const a = await rt.newKey({ plan: 'free', mode: 'test' });
    const live = await createAccountKey(rt.admin, { accountId: a.accountId, mode: 'live' });
    const other = await rt.newKey({ plan: 'free' });
    await atWindowStart(800);
    const first = await rt.call('/api-keys', { key: a.key });
    const second = await rt.call('/api-keys', { key: live.secret });
    const elsewhere = await rt.call('/api-keys', { key: other.key });
    expect(first.headers.get('x-ratelimit-remaining')).toBe('9');
    expect(second.headers.get('x-ratelimit-remaining')).toBe('8');
    expect(elsewhere.headers.get('x-ratelimit-remaining')).toBe('9');
  });

  it('reports the plan limit of the account', async () => {
    const { key } = await rt.newKey({ plan: 'growth' });
    const res = await rt.call('/api-keys', { key });
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
  });
});

describe('per-IP window for requests without a valid key', () => {
  it('refuses the 4th unauthenticated request in a second with 429', async () => {
    await atWindowStart(800);
    const responses = await Promise.all(Array.from({ length: 4 }, () => rt.call('/api-keys')));
    expect(responses.map((r) => r.status).sort()).toEqual([401, 401, 401, 429]);
    const refused = responses.find((r) => r.status === 429) as Response;
    expect(refused.headers.get('x-ratelimit-limit')).toBe('3');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('retry-after')).toBe('1');
  });
});

describe('public link routes', () => {
  it('count in their own, ten times wider per-IP window (mailbox providers post many unsubscribes)', async () => {
    await atWindowStart(800);
    const link = `${rt.url}/unsubscribe/not.a-valid-token-but-a-public-route-xxxxxxxxxxxxxxxxxxxxxxxxxxxx`;
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => fetch(link, { method: 'POST', body: 'List-Unsubscribe=One-Click' })),
    );
    // SF_IP_RATE_LIMIT is 3 here: anonymous API calls would be refused from the 4th; public links are not.
    expect(responses.map((r) => r.status)).toEqual([404, 404, 404, 404, 404]);
    expect(responses[0]?.headers.get('x-ratelimit-limit')).toBe('30');
  });
});

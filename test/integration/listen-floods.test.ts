// Listen long-polls count toward their account (issue 28, item 3), over real HTTP on the local runtime: an
// account's open polls are capped by its plan (429 listen_polls_exceeded, naming the limit), and a waiting poll
// reads the store only when an event comes for its session (the fan-out wakes it), not once a second; counted on
// the runtime's own DynamoDB client.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CallCounts, countCalls } from '../../lambdas/adapters/dynamodb/call-counter';
import { LISTEN_POLL_RETRY_SECONDS } from '../../lambdas/domain/listen';
import { PLANS } from '../../lambdas/domain/plans';
import { LOCAL_ACCOUNT_CONCURRENCY } from '../../lambdas/runtime/local/runtime';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let counts: CallCounts | undefined;
beforeAll(async () => {
  rt = await startTestRuntime(
    {},
    {
      instrument: (client) => {
        counts = countCalls(client);
      },
    },
  );
});
afterAll(() => rt.stop());
beforeEach(() => counts?.reset());

const open = async (key: string): Promise<string> => {
  const res = await rt.call('/listen-sessions', { method: 'POST', key, body: '{}' });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { id: string }).id;
};
const poll = (key: string, id: string, wait: number) => rt.call(`/listen-sessions/${id}/events?wait=${wait}`, { key });
/** Queries of the listen sessions table since the last reset: a poll's reads of its events. */
const sessionReads = () =>
  Object.entries(counts?.snapshot({ byTable: true }) ?? {})
    .filter(([key]) => key.startsWith('Query ') && key.includes('listenSessions'))
    .reduce((sum, [, n]) => sum + n, 0);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('listen polls count toward their account (issue 28)', () => {
  it("refuses a poll past the plan's open polls with 429 listen_polls_exceeded naming the limit; the open ones answer", async () => {
    // Arrange: a free-plan account with as many polls waiting as its plan allows.
    const { key } = await rt.newKey({ plan: 'free' });
    const limit = PLANS.free.listenPolls;
    const session = await open(key);
    const waiting = Array.from({ length: limit }, () => poll(key, session, 3));
    await sleep(300);

    // Act
    const refused = await poll(key, session, 3);

    // Assert: the one error shape, with the limit and the plan named, Retry-After and the rate-limit headers.
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe(String(LISTEN_POLL_RETRY_SECONDS));
    expect(refused.headers.get('x-ratelimit-limit')).toBe(String(PLANS.free.requestsPerSecond));
    const body = (await refused.json()) as { error: string; code: string; status: number; retry_after: number };
    expect(body).toMatchObject({
      status: 429,
      code: 'listen_polls_exceeded',
      retry_after: LISTEN_POLL_RETRY_SECONDS,
    });
    expect(body.error).toContain(`at most ${limit} open listen polls`);
    expect(body.error).toContain('plan free');
    expect((await Promise.all(waiting)).map((r) => r.status)).toEqual(Array(limit).fill(200));
    // Once they answered, the account polls again.
    expect((await poll(key, session, 0)).status).toBe(200);
  }, 20_000);

  it('refuses polls past the cap from memory: the key looked up once, no API log write, each counted in the rate window; a revoked key is 401 at once', async () => {
    // Arrange: a starter-plan account (3 open polls, 50 requests a second) with its polls all open.
    const { key, keyId } = await rt.newKey({ plan: 'starter' });
    const limit = PLANS.starter.listenPolls;
    const session = await open(key);
    const waiting = Array.from({ length: limit }, () => poll(key, session, 4));
    await sleep(300);
    counts?.reset();

    // Act 1: ten polls past the cap, one after another.
    const refused: Response[] = [];
    for (let i = 0; i < 10; i++) refused.push(await poll(key, session, 4));

    // Assert 1: each the one error shape with Retry-After and the rate-limit headers (counted: Remaining falls);
    // the key and its account read once (the first refusal), nothing written but the rate window's counter.
    for (const res of refused) {
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe(String(LISTEN_POLL_RETRY_SECONDS));
      expect(res.headers.get('x-ratelimit-limit')).toBe(String(PLANS.starter.requestsPerSecond));
      expect(res.headers.get('x-request-id')).toBeTruthy();
      expect(((await res.json()) as { code: string }).code).toBe('listen_polls_exceeded');
    }
    const remaining = refused.map((res) => Number(res.headers.get('x-ratelimit-remaining')));
    expect(remaining.some((n, i) => i > 0 && n < (remaining[i - 1] as number))).toBe(true);
    const calls = counts?.snapshot({ byTable: true }) ?? {};
    const on = (table: string) =>
      Object.entries(calls)
        .filter(([name]) => name.includes(table))
        .reduce((sum, [, n]) => sum + n, 0);
    expect(on('apiKeys'), JSON.stringify(calls)).toBeLessThanOrEqual(1);
    expect(on('accounts'), JSON.stringify(calls)).toBeLessThanOrEqual(1);
    expect(on('apiRequests'), JSON.stringify(calls)).toBe(0);

    // Act 2: the key is revoked (by another key of the account); its next poll.
    const other = await rt.call('/api-keys', {
      method: 'POST',
      key,
      body: JSON.stringify({ name: 'other', permission: 'full_access' }),
    });
    expect(other.status).toBe(201);
    const { token } = (await other.json()) as { token: string };
    expect((await rt.call(`/api-keys/${keyId}`, { method: 'DELETE', key: token })).status).toBe(200);
    const afterRevoke = await poll(key, session, 0);

    // Assert 2: refused as a revoked key, not remembered as a full account's.
    expect(afterRevoke.status).toBe(401);
    expect((await Promise.all(waiting)).map((r) => r.status)).toEqual(Array(limit).fill(200));
  }, 20_000);

  it("runs a burst of polls through the account's slots (its concurrency limit), and waiting ones hold none", async () => {
    // Arrange: one account, 5 sessions.
    const { key, accountId } = await rt.newKey();
    const sessions: string[] = [];
    for (let i = 0; i < 5; i++) sessions.push(await open(key));
    let peak = 0;
    const watch = setInterval(() => {
      peak = Math.max(peak, rt.accountSlots.inFlight(accountId));
    }, 1);

    // Act: 40 polls at once (5 may stay open, the others are refused).
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => poll(key, sessions[i % 5] as string, 2).then((r) => r.status)),
    );
    clearInterval(watch);

    // Assert: they took the account's slots, never more than its limit; refused ones answered 429.
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(LOCAL_ACCOUNT_CONCURRENCY);
    expect(answers.filter((s) => s === 200)).toHaveLength(5);
    expect(answers.filter((s) => s === 429)).toHaveLength(35);
    expect(rt.accountSlots.inFlight(accountId)).toBe(0);
  }, 20_000);

  it('waiting polls make no store reads while nothing arrives, and an event wakes them within about a second', async () => {
    // Arrange: five sessions of one account, each with a poll waiting.
    const { key } = await rt.newKey();
    const sessions: string[] = [];
    for (let i = 0; i < 5; i++) sessions.push(await open(key));
    const polls = sessions.map((id) => poll(key, id, 15));
    await sleep(500);
    counts?.reset();

    // Act 1: nothing arrives for 3 s.
    await sleep(3_000);

    // Assert 1: no read of the sessions' events (once a second each, they were 15).
    expect(sessionReads()).toBe(0);

    // Act 2: an email; its events are put on every session.
    const sent = Date.now();
    const res = await rt.call('/emails', {
      method: 'POST',
      key,
      body: JSON.stringify({ from: 'a@acme.test', to: 'ada@example.com', subject: 'Hi', text: 'Hi' }),
    });
    expect(res.status).toBe(200);
    const answers = await Promise.all(polls);

    // Assert 2: every poll answered with the email's first event, soon after it settled (a second), not at 15 s.
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const pages = (await Promise.all(answers.map((r) => r.json()))) as { data: { type: string }[] }[];
    for (const page of pages) expect(page.data.length).toBeGreaterThan(0);
    expect(Date.now() - sent).toBeLessThan(5_000);
  }, 30_000);
});

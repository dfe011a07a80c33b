// Anonymous traffic on the local runtime over real HTTP (issue 9, item 8): unknown, malformed and missing keys
// on protected routes (the gateway runs the authorizer, which denies), on the fallback (405) and on unknown
// paths (404) cost no DynamoDB write, counted on the runtime's own DynamoDB client; the per-IP window for
// requests without a valid key (DESIGN §3) still refuses past its limit with 429. A valid key still counts in
// its account's DynamoDB window.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CallCounts, countCalls } from '../../lambdas/adapters/dynamodb/call-counter';
import { noUsagePlans } from '../../lambdas/adapters/local/usage-plans';
import { createAccount, createAccountKey } from '../../lambdas/app/accounts';
import { generateApiKey } from '../../lambdas/domain/api-keys';
import { loadConfig, localTableDefaults } from '../../lambdas/runtime/config';
import { type LocalRuntime, startLocalRuntime } from '../../lambdas/runtime/local/runtime';
import { atWindowStart, TEST_ENV } from '../support/runtime';

const WRITES = ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems'];
const writesOf = (counts: CallCounts) =>
  Object.entries(counts.snapshot({ byTable: true })).filter(([key]) => WRITES.includes(key.split(' ')[0] ?? ''));

const CALLERS = [
  ['an unknown sf_test_ key', `Bearer ${generateApiKey('test', randomBytes)}`],
  ['an unknown sf_live_ key', `Bearer ${generateApiKey('live', randomBytes)}`],
  ['a malformed key', 'Bearer sf_test_short'],
  ['no key', undefined],
] as const;

const REQUESTS = [
  ['a protected route', 'GET', '/api-keys', 401],
  ['a protected route with a body', 'POST', '/emails', 401],
  ['an undeclared method (405)', 'PUT', '/webhooks', 405],
  ['an unknown path (404)', 'GET', '/nope/nothing', 404],
] as const;

const IP_LIMIT = 20;
let rt: LocalRuntime;
let counts: CallCounts | undefined;

beforeAll(async () => {
  // The matrix below stays under the per-IP limit; the 429 test goes one past it in a window of its own.
  const config = loadConfig({ ...TEST_ENV, SF_IP_RATE_LIMIT: String(IP_LIMIT) }, localTableDefaults());
  rt = await startLocalRuntime(config, {
    instrument: (client) => {
      counts = countCalls(client);
    },
  });
});

afterAll(async () => {
  await rt.stop();
});

beforeEach(() => {
  counts?.reset();
});

describe('anonymous traffic on the local runtime: no DynamoDB write', () => {
  const cases = REQUESTS.flatMap(([route, method, path, status]) =>
    CALLERS.map(([caller, authorization]) => [route, caller, method, path, status, authorization] as const),
  );

  it.each(cases)('%s with %s: the right status and rate-limit headers, no write', async (...args) => {
    // Arrange
    const [, , method, path, status, authorization] = args;

    // Act
    const res = await fetch(`${rt.url}${path}`, {
      method,
      headers: authorization ? { Authorization: authorization } : {},
      ...(method === 'POST' ? { body: '{"from":"a@example.com"}' } : {}),
    });

    // Assert
    expect(res.status).toBe(status);
    expect(await res.json()).toMatchObject({ status });
    expect(res.headers.get('x-ratelimit-limit')).toBe(String(IP_LIMIT));
    expect(writesOf(counts as CallCounts)).toEqual([]);
  });

  it('still limits anonymous callers per IP: past the limit in a second it is 429, and nothing is written', async () => {
    // Arrange: a window of our own (the matrix above used earlier ones).
    await new Promise((r) => setTimeout(r, 1005 - (Date.now() % 1000)));
    await atWindowStart(800);

    // Act
    const responses = await Promise.all(
      Array.from({ length: IP_LIMIT + 1 }, () =>
        fetch(`${rt.url}/api-keys`, { headers: { Authorization: CALLERS[0][1] } }),
      ),
    );

    // Assert
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array.from({ length: IP_LIMIT }, () => 401), 429]);
    const refused = responses.find((r) => r.status === 429) as Response;
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(writesOf(counts as CallCounts)).toEqual([]);
  });

  it('a valid key still counts in its account’s DynamoDB window (one UpdateItem on the rate-limit table), and its request is logged', async () => {
    // Arrange
    const admin = {
      ...rt.services,
      usagePlans: noUsagePlans,
      authorizerCache: rt.services.authorizerCache,
    };
    const account = await createAccount(admin, 'scale');
    const { secret } = await createAccountKey(admin, { accountId: account.id, mode: 'test' });
    counts?.reset();

    // Act
    const res = await fetch(`${rt.url}/api-keys`, { headers: { Authorization: `Bearer ${secret}` } });

    // Assert
    expect(res.status).toBe(200);
    // The account's API request log (GET /v1/logs): one PutItem once answered.
    expect(writesOf(counts as CallCounts)).toEqual([
      ['PutItem sendflow-apiRequests', 1],
      ['UpdateItem sendflow-rateLimits', 1],
    ]);
  });
});

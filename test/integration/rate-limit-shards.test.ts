// A scale account's window (500 requests a second) counted on 4 items over real HTTP, on a clock held inside
// one second: exactly 500 admitted with every header right, the 501st refused, and a container that saw the
// window over its limit refuses the next without another write.
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig, localTableDefaults } from '../../lambdas/runtime/config';
import { documentClient } from '../../lambdas/runtime/document-client';
import { localDynamoClient } from '../../lambdas/runtime/local/dynamo';
import { startTestRuntime, TEST_ENV, type TestRuntime } from '../support/runtime';

const NOW = Date.UTC(2026, 10, 26, 2, 0, 0, 100);
const { rateLimits } = loadConfig(TEST_ENV, localTableDefaults()).tables;

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime({}, { clock: { now: () => NOW } });
});
afterAll(() => rt.stop());

it('admits exactly 500 requests of a scale account in a second on 4 counter items, then refuses without writing', async () => {
  // Arrange
  const { accountId, key } = await rt.newKey({ plan: 'scale' });

  // Act: 500 in chunks of 50 in parallel, then two more one by one
  const admitted: Response[] = [];
  for (let i = 0; i < 10; i++) {
    admitted.push(...(await Promise.all(Array.from({ length: 50 }, () => rt.call('/api-keys', { key })))));
  }
  const refused = await rt.call('/api-keys', { key });
  const refusedAgain = await rt.call('/api-keys', { key });
  const client = localDynamoClient(rt.dynamoEndpoint);
  const { Items = [] } = await documentClient(client).send(new ScanCommand({ TableName: rateLimits }));
  client.destroy();

  // Assert
  expect(admitted.every((r) => r.status === 200)).toBe(true);
  const remaining = admitted.map((r) => Number(r.headers.get('x-ratelimit-remaining')));
  expect(Math.min(...remaining)).toBe(0);
  expect(Math.max(...remaining)).toBeGreaterThanOrEqual(450);
  expect(admitted.every((r) => r.headers.get('x-ratelimit-limit') === '500')).toBe(true);
  expect([refused.status, refusedAgain.status]).toEqual([429, 429]);
  expect(refusedAgain.headers.get('x-ratelimit-remaining')).toBe('0');
  expect(refusedAgain.headers.get('x-ratelimit-reset')).toBe(String(Math.floor(NOW / 1000) + 1));
  const window = Items.filter((item) => String(item.key).startsWith(`account:${accountId}#`));
  expect(window.map((item) => item.key).sort()).toEqual(
    [0, 1, 2, 3].map((s) => `account:${accountId}#${Math.floor(NOW / 1000)}#${s}`),
  );
  // 501 counted: the refused one was, the one after it was not (the window was known closed).
  expect(window.reduce((sum, item) => sum + Number(item.n), 0)).toBe(501);
  expect(Math.max(...window.map((item) => Number(item.n)))).toBeLessThanOrEqual(126);
});

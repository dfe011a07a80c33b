// The local gateway drops a request whose client left while it waited for its account's slot (issue 28): the
// client is gone, so no handler work is done for it, and it gives its turn to the next at once (before, it held the
// slot until its body's idle time-out, 10 s by default, waiting for a body that would never come). Over real HTTP (loopback) against the gateway alone, with a
// fake authorizer and API handler that counts what it is asked to serve.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { KeyedSlots } from '../../lambdas/adapters/in-process/keyed-slots';
import { AuthorizerResultCache, createGateway, createGatewayServer } from '../../lambdas/runtime/local/gateway';

const KEY = `sf_test_${'a'.repeat(32)}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let close: (() => void) | undefined;
afterEach(() => close?.());

/** A gateway whose account may run one request at a time; the API handler holds each request until released. */
async function gatewayWithOneSlot() {
  const served: string[] = [];
  const releases: (() => void)[] = [];
  const slots = new KeyedSlots(1);
  const gateway = createGateway({
    authorizer: async () => ({
      principalId: 'key_1',
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: '*' }],
      },
      context: { accountId: 'acc_a' },
    }),
    cache: new AuthorizerResultCache(),
    api: async (event: APIGatewayProxyEvent) => {
      served.push(event.queryStringParameters?.n ?? '?');
      await new Promise<void>((resolve) => releases.push(resolve));
      return { statusCode: 200, body: '{}' };
    },
    authCacheTtlSeconds: 300,
    clock: Date.now,
    maxBodyBytes: 1_000,
    bodyIdleTimeoutMs: 5_000,
    accountSlots: slots,
  });
  const server = createGatewayServer(gateway, { requestTimeoutMs: 10_000, headersTimeoutMs: 5_000 });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  close = () => {
    server.closeAllConnections();
    server.close();
  };
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/webhooks`;
  const call = (n: string, signal?: AbortSignal) =>
    fetch(`${url}?n=${n}`, {
      method: 'POST',
      body: '{"url":"https://example.com/hook"}',
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
      ...(signal ? { signal } : {}),
    });
  return { served, releases, slots, call };
}

describe('the local gateway and clients that leave', () => {
  it('never serves a request whose client closed while it waited for its account slot', async () => {
    // Arrange: request 1 holds the account's one slot; request 2 waits behind it.
    const { served, releases, slots, call } = await gatewayWithOneSlot();
    const first = call('1');
    while (served.length < 1) await sleep(5);
    const leaving = new AbortController();
    const second = call('2', leaving.signal).catch((error: Error) => error.name);
    const third = call('3');
    await sleep(100);
    expect(served).toEqual(['1']);

    // Act: the second client leaves while queued; then the slot frees.
    leaving.abort();
    await second;
    await sleep(50);
    const freed = performance.now();
    releases.shift()?.();
    expect((await first).status).toBe(200);
    while (served.length < 2 && performance.now() - freed < 8_000) await sleep(5);
    const waited = performance.now() - freed;
    releases.shift()?.();

    // Assert: the one that left was dropped at its turn (it neither ran nor held the slot until its body's idle
    // time-out, 5 s here), the one behind it served at once, and no slot is left held.
    expect(await second).toBe('AbortError');
    expect((await third).status).toBe(200);
    expect(served).toEqual(['1', '3']);
    expect(waited).toBeLessThan(1_000);
    expect(slots.inFlight('acc_a')).toBe(0);
  });
});

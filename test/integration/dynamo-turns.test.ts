// The embedded DynamoDB's thread is shared by every tenant. While tenant A's webhook deliveries flood it (eight
// batches of ten attempts at once, each a chain of calls), tenant B's request takes the next free turn for each
// of its calls (FairTurns, by the account or key each call is made for): B is answered with few of A's calls
// served meanwhile, instead of behind every call A had already queued.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../lambdas/domain/api-keys';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

/** Every DynamoDB call the runtime's client completes, in order: whether it was made for tenant B. */
const completed: boolean[] = [];
let marksOfB: string[] = [];

let rt: TestRuntime;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
  rt = await startTestRuntime(
    {},
    {
      instrument: (client: DynamoDBClient) =>
        client.middlewareStack.add(
          (next) => async (args) => {
            const input = JSON.stringify(args.input);
            const ofB = marksOfB.some((mark) => input.includes(mark));
            try {
              return await next(args);
            } finally {
              completed.push(ofB);
            }
          },
          { step: 'initialize', name: 'completionOrder' },
        ),
    },
  );
});
afterAll(async () => {
  await rt.stop();
  await receiver.close();
});

const email = (i: number) => ({ from: 'a@acme.test', to: `a${i}@example.com`, subject: 'Hi', text: 'Hi' });

describe('fair turns at the embedded DynamoDB', () => {
  it("answers B's request with few of A's calls served meanwhile, while A's deliveries flood the store", async () => {
    // Arrange: A's 300 emails, each delivered to 3 webhooks; B's calls name its account or its key's hash.
    const a = await rt.newKey();
    const b = await rt.newKey();
    marksOfB = [b.accountId, hashApiKey(b.key)];
    for (let i = 0; i < 3; i++) {
      const hook = await rt.call('/webhooks', {
        method: 'POST',
        key: a.key,
        body: JSON.stringify({ url: receiver.url, events: ['email.sent', 'email.delivered'] }),
      });
      expect(hook.status).toBe(201);
    }
    for (let i = 0; i < 3; i++) {
      const batch = Array.from({ length: 100 }, (_, j) => email(i * 100 + j));
      const sent = await rt.call('/emails/batch', { method: 'POST', key: a.key, body: JSON.stringify(batch) });
      expect(sent.status).toBe(200);
    }
    while (rt.queues.deliveries.depth < 100) await new Promise((resolve) => setTimeout(resolve, 5));

    // Act
    const before = completed.length;
    const answer = await rt.call('/usage', { key: b.key });
    const after = completed.length;
    const stillQueued = rt.queues.deliveries.depth;

    // Assert: B's calls went through while A's flood was under way, few of A's calls served meanwhile.
    expect(answer.status).toBe(200);
    const during = completed.slice(before, after);
    const callsOfB = during.filter(Boolean).length;
    expect(callsOfB).toBeGreaterThanOrEqual(3);
    expect(stillQueued).toBeGreaterThan(50);
    expect(during.length - callsOfB).toBeLessThan(250);
  });
});

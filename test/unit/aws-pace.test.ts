// The per-endpoint rate limit on AWS, through aws-sdk-client-mock: the exact UpdateItem each start takes on
// the shared pace (no read; a refusal read from the failed condition's item), a Lambda instance waiting while
// another holds the pace, and the delivery worker sending the jobs past its turn back to SQS with DelaySeconds
// (the same job, unclaimed: no attempt counted, no receive toward the DLQ).
import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { SqsDeliveryQueue } from '../../lambdas/adapters/aws/sqs';
import { DynamoPaceCounter } from '../../lambdas/adapters/dynamodb/pace-counter';
import { EndpointPace, SQS_PACE } from '../../lambdas/app/webhooks/pace';
import type { DeliveryJob, Webhook } from '../../lambdas/app/webhooks/ports';
import { paceSpacingMs } from '../../lambdas/domain/webhooks/pace';
import { createDeliveryWorkerHandler } from '../../lambdas/handlers/queue/delivery-worker';
import { deliveryJobMessage, encodeJob } from '../../lambdas/handlers/queue/messages';
import {
  FakeClock,
  InMemoryDeliveryRepository,
  InMemoryWebhookRepository,
  inMemoryRecoveryDeps,
  ScriptedSender,
} from '../support/fakes';

const TABLE = 'sendflow-rate-limits';
const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries';
const T0 = Date.UTC(2026, 10, 26, 9, 0, 0);
const dynamo = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));

const refusal = (nextAt: number) =>
  new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: {},
    Item: { key: { S: 'pace#wh_paced' }, nextAt: { N: String(nextAt) } },
  });

const updates = () => dynamo.commandCalls(UpdateCommand).map((call) => call.args[0].input);

beforeEach(() => {
  dynamo.reset();
  sqs.reset();
  sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
});

describe('DynamoPaceCounter', () => {
  it("takes a start with one conditional UpdateItem on the webhook's pace item, never a read", async () => {
    // Arrange
    dynamo.on(UpdateCommand).resolves({});

    // Act
    const take = await new DynamoPaceCounter(doc, TABLE).take('wh_paced', 210, T0);

    // Assert
    expect(take).toEqual({ granted: true });
    expect(updates()).toEqual([
      {
        TableName: TABLE,
        Key: { key: 'pace#wh_paced' },
        UpdateExpression: 'SET nextAt = :next, expiresAt = :exp',
        ConditionExpression: 'attribute_not_exists(nextAt) OR nextAt <= :now',
        ExpressionAttributeValues: { ':now': T0, ':next': T0 + 210, ':exp': Math.ceil((T0 + 210) / 1000) + 60 },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    ]);
    expect(dynamo.calls()).toHaveLength(1);
  });

  it("reads a refusal's next allowed start from the failed condition's item", async () => {
    dynamo.on(UpdateCommand).rejects(refusal(T0 + 150));
    expect(await new DynamoPaceCounter(doc, TABLE).take('wh_paced', 210, T0)).toEqual({
      granted: false,
      nextAt: T0 + 150,
    });
  });

  it('lets any other error through (the job is retried by SQS, not sent unpaced)', async () => {
    dynamo.on(UpdateCommand).rejects(new Error('ProvisionedThroughputExceeded'));
    await expect(new DynamoPaceCounter(doc, TABLE).take('wh_paced', 210, T0)).rejects.toThrow('Provisioned');
  });
});

const hook: Webhook = {
  accountId: 'acct_1',
  mode: 'live',
  id: 'wh_paced',
  url: 'https://hooks.example.com/paced',
  events: ['email.sent'],
  format: 'standard',
  secret: `whsec_${Buffer.alloc(32, 3).toString('base64')}`,
  active: true,
  rateLimitPerSecond: 5,
  createdAt: new Date(T0 - 60_000).toISOString(),
  updatedAt: new Date(T0 - 60_000).toISOString(),
};

const job = (n: number): DeliveryJob => ({
  deliveryId: `dlv_${String(n).padStart(4, '0')}`,
  webhookId: hook.id,
  attempt: 1,
  ratePerSecond: 5,
  seed: {
    accountId: hook.accountId,
    mode: hook.mode,
    eventId: `evt_${n}`,
    event: 'email.sent',
    format: 'standard',
    payload: `{"n":${n}}`,
    createdAt: T0,
  },
});

const sqsEvent = (jobs: readonly DeliveryJob[]): SQSEvent =>
  ({
    Records: jobs.map((j, i) => ({ messageId: `m${i}`, body: encodeJob(j), eventSourceARN: 'arn:shared' })),
  }) as unknown as SQSEvent;

/** A Lambda instance of the delivery worker: its own line, the shared pace on (mocked) DynamoDB, SQS to go back to. */
async function instance(clock: FakeClock) {
  const webhooks = new InMemoryWebhookRepository();
  await webhooks.create(hook);
  const deliveries = new InMemoryDeliveryRepository();
  const sender = new ScriptedSender(clock);
  const starts: number[] = [];
  const recording = {
    send: (request: Parameters<ScriptedSender['send']>[0]) => {
      starts.push(clock.now());
      return sender.send(request);
    },
  };
  const time = virtualTime(clock);
  const pace = new EndpointPace(new DynamoPaceCounter(doc, TABLE), clock, SQS_PACE, time.sleep);
  const handle = createDeliveryWorkerHandler({
    ...inMemoryRecoveryDeps(clock, { webhooks, deliveries, sender: recording }),
    pacing: { pace, queue: new SqsDeliveryQueue(new SQSClient({ region: 'eu-west-1' }), QUEUE_URL) },
  });
  return { handler: (event: SQSEvent) => time.run(handle(event)), deliveries, starts };
}

/**
 * Virtual time for the parallel records of a batch: a sleep wakes when the fake clock reaches its deadline; the
 * clock moves to the earliest deadline only once every record is idle (waiting on a sleep or done).
 */
function virtualTime(clock: FakeClock) {
  const sleepers: { at: number; wake: () => void }[] = [];
  const idle = () => new Promise((resolve) => setImmediate(resolve));
  return {
    sleep: (ms: number) => new Promise<void>((wake) => sleepers.push({ at: clock.now() + ms, wake })),
    async run<T>(work: Promise<T>): Promise<T> {
      let done = false;
      const result = work.finally(() => {
        done = true;
      });
      while (!done) {
        await idle();
        sleepers.sort((a, b) => a.at - b.at);
        const next = sleepers.shift();
        if (!next) continue;
        clock.set(Math.max(clock.now(), next.at));
        next.wake();
      }
      return result;
    },
  };
}

describe('delivery worker on AWS: a paced webhook', () => {
  it('starts the jobs of its first second in place, a spacing apart, and sends the rest back to SQS unclaimed', async () => {
    // Arrange: every take is granted (one instance alone); 12 jobs for a webhook paced at 5 a second.
    dynamo.on(UpdateCommand).resolves({});
    const clock = new FakeClock(T0);
    const worker = await instance(clock);
    const jobs = Array.from({ length: 12 }, (_, n) => job(n));

    // Act
    const result = await worker.handler(sqsEvent(jobs));

    // Assert: 5 attempts (turns within a second), each with its UpdateItem just before it.
    expect(result.batchItemFailures).toEqual([]);
    expect(worker.starts).toEqual([0, 1, 2, 3, 4].map((i) => T0 + i * paceSpacingMs(5)));
    expect(updates()).toHaveLength(5);
    for (const [i, update] of updates().entries()) {
      expect(update.Key).toEqual({ key: 'pace#wh_paced' });
      expect(update.ExpressionAttributeValues?.[':now']).toBe(worker.starts[i]);
    }
    // 7 back to the queue: the same jobs (attempt 1, the seed, the rate), 1 or 2 whole seconds later, never past
    // their turn (the 6th's is 1,050 ms away, the 12th's 2,310 ms).
    const sent = sqs.commandCalls(SendMessageBatchCommand).flatMap((call) => call.args[0].input.Entries ?? []);
    expect(sent.map((entry) => entry.DelaySeconds)).toEqual([1, 1, 1, 1, 1, 2, 2]);
    expect(sent.map((entry) => deliveryJobMessage.parse(JSON.parse(String(entry.MessageBody))))).toEqual(jobs.slice(5));
    // Unclaimed: no delivery row for them, so no attempt was counted.
    for (const back of jobs.slice(5))
      expect(await worker.deliveries.get(hook.id, back.deliveryId, clock.now())).toBeNull();
  });

  it('waits while another instance holds the pace, then starts on the next allowed start (one refused take)', async () => {
    // Arrange: another instance started a request 60 ms ago; the item says the next start is 150 ms away.
    const clock = new FakeClock(T0);
    dynamo
      .on(UpdateCommand)
      .rejectsOnce(refusal(T0 + 150))
      .resolves({});
    const worker = await instance(clock);

    // Act
    const result = await worker.handler(sqsEvent([job(1)]));

    // Assert: refused at T0, granted at T0 + 150, the request started then; nothing went back to SQS.
    expect(result.batchItemFailures).toEqual([]);
    expect(updates().map((update) => update.ExpressionAttributeValues?.[':now'])).toEqual([T0, T0 + 150]);
    expect(updates()[1]?.ExpressionAttributeValues?.[':next']).toBe(T0 + 150 + paceSpacingMs(5));
    expect(worker.starts).toEqual([T0 + 150]);
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  it('costs an unpaced webhook nothing: no DynamoDB call, no SQS call', async () => {
    const clock = new FakeClock(T0);
    const worker = await instance(clock);
    const { ratePerSecond: _unpaced, ...plain } = job(1);

    await worker.handler(sqsEvent([plain]));

    expect(worker.starts).toEqual([T0]);
    expect(dynamo.calls()).toHaveLength(0);
    expect(sqs.calls()).toHaveLength(0);
  });
});

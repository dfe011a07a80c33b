// The per-endpoint rate limit on AWS, through aws-sdk-client-mock: the exact UpdateItems of a turn and of a
// start on the shared pace (no read; a refusal read from the failed condition's item), a Lambda instance waiting
// while another's request started late, and the delivery worker sending the jobs past their turn back to SQS
// with DelaySeconds and their turn (the same job, unclaimed: no attempt counted, no receive toward the DLQ).
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
const takes = () => updates().filter((input) => input.UpdateExpression?.includes('nextAt'));
const reserves = () => updates().filter((input) => input.UpdateExpression?.includes('horizon'));

/**
 * The pace item as DynamoDB keeps it, for the worker's tests: each UpdateItem's condition decided on it (the
 * conditions' own semantics are the contract suite's, on dynalite and DynamoDB Local).
 */
function paceItem(refuseFirstTakeUntil?: number) {
  let horizon: number | undefined;
  let nextAt: number | undefined = refuseFirstTakeUntil;
  dynamo
    .on(UpdateCommand)
    .callsFake((input: { UpdateExpression: string; ExpressionAttributeValues: Record<string, number> }) => {
      const v = input.ExpressionAttributeValues;
      const now = v[':now'] as number;
      if (input.UpdateExpression.startsWith('SET horizon = horizon')) {
        if (horizon === undefined || horizon <= now) throw refusal(nextAt ?? 0);
        horizon += v[':spacing'] as number;
        return { Attributes: { horizon } };
      }
      if (input.UpdateExpression.startsWith('SET horizon')) {
        if (horizon !== undefined && horizon > now) throw refusal(nextAt ?? 0);
        horizon = v[':horizon'];
        return {};
      }
      if (nextAt !== undefined && nextAt > now) throw refusal(nextAt);
      nextAt = v[':next'];
      return {};
    });
}

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
        ExpressionAttributeValues: { ':now': T0, ':next': T0 + 210, ':exp': Math.ceil(T0 / 1000) + 86_400 },
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

  it("hands out a busy endpoint's turn with one UpdateItem moving its horizon, an idle one's with one setting it", async () => {
    // Arrange: the first turn finds no horizon (idle); the second, in the same process, guesses busy.
    dynamo
      .on(UpdateCommand, { ConditionExpression: 'attribute_not_exists(horizon) OR horizon <= :now' })
      .resolves({})
      .on(UpdateCommand, { ConditionExpression: 'horizon > :now' })
      .resolves({ Attributes: { horizon: T0 + 420 } });
    const counter = new DynamoPaceCounter(doc, TABLE);

    // Act
    const turns = [await counter.reserve('wh_paced', 210, T0), await counter.reserve('wh_paced', 210, T0 + 10)];

    // Assert
    expect(turns).toEqual([T0, T0 + 210]);
    expect(updates()).toEqual([
      {
        TableName: TABLE,
        Key: { key: 'pace#wh_paced' },
        UpdateExpression: 'SET horizon = :horizon, expiresAt = :exp',
        ConditionExpression: 'attribute_not_exists(horizon) OR horizon <= :now',
        ExpressionAttributeValues: { ':horizon': T0 + 210, ':now': T0, ':exp': Math.ceil(T0 / 1000) + 86_400 },
      },
      {
        TableName: TABLE,
        Key: { key: 'pace#wh_paced' },
        UpdateExpression: 'SET horizon = horizon + :spacing, expiresAt = :exp',
        ConditionExpression: 'horizon > :now',
        ExpressionAttributeValues: { ':spacing': 210, ':now': T0 + 10, ':exp': Math.ceil((T0 + 10) / 1000) + 86_400 },
        ReturnValues: 'UPDATED_NEW',
      },
    ]);
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
  it('starts the jobs of its first second in place, a spacing apart, and sends the rest back to SQS unclaimed with their turns', async () => {
    // Arrange: one instance; 12 jobs for a webhook paced at 5 a second.
    paceItem();
    const clock = new FakeClock(T0);
    const worker = await instance(clock);
    const jobs = Array.from({ length: 12 }, (_, n) => job(n));
    const spacing = paceSpacingMs(5);

    // Act
    const result = await worker.handler(sqsEvent(jobs));

    // Assert: 12 turns, one write each (the first sets the horizon, 11 move it), 5 attempts (turns within a
    // second), each with its start taken just before it, none refused.
    expect(result.batchItemFailures).toEqual([]);
    expect(reserves().map((r) => r.ConditionExpression)).toEqual([
      'attribute_not_exists(horizon) OR horizon <= :now',
      ...Array(11).fill('horizon > :now'),
    ]);
    expect(worker.starts).toEqual([0, 1, 2, 3, 4].map((i) => T0 + i * spacing));
    expect(takes().map((take) => take.ExpressionAttributeValues?.[':now'])).toEqual(worker.starts);
    // 7 back to the queue: the same jobs (attempt 1, the seed, the rate) with their turns, 1 or 2 whole seconds
    // later, never past their turn (the 6th's is 1,050 ms away, the 12th's 2,310 ms).
    const sent = sqs.commandCalls(SendMessageBatchCommand).flatMap((call) => call.args[0].input.Entries ?? []);
    expect(sent.map((entry) => entry.DelaySeconds)).toEqual([1, 1, 1, 1, 1, 2, 2]);
    const back = sent.map((entry) => deliveryJobMessage.parse(JSON.parse(String(entry.MessageBody))));
    expect(back.map(({ paceTurn: _turn, ...rest }) => rest)).toEqual(jobs.slice(5));
    expect(back.map((j) => j.paceTurn)).toEqual([5, 6, 7, 8, 9, 10, 11].map((i) => T0 + i * spacing));
    // Unclaimed: no delivery row for them, so no attempt was counted.
    for (const j of jobs.slice(5)) expect(await worker.deliveries.get(hook.id, j.deliveryId, clock.now())).toBeNull();
  });

  it('keeps the turn a job came back with: no new turn, and it starts on it', async () => {
    // Arrange: the job went back with its turn 2,310 ms out; it comes back 2 s later.
    paceItem();
    const clock = new FakeClock(T0 + 2_000);
    const worker = await instance(clock);

    // Act
    await worker.handler(sqsEvent([{ ...job(11), paceTurn: T0 + 2_310 }]));

    // Assert
    expect(reserves()).toEqual([]);
    expect(worker.starts).toEqual([T0 + 2_310]);
  });

  it('waits when the request before started late, then starts on the next allowed start (one refused take)', async () => {
    // Arrange: another instance's request started late: the next allowed start is 150 ms past this job's turn.
    paceItem(T0 + 150);
    const clock = new FakeClock(T0);
    const worker = await instance(clock);

    // Act
    const result = await worker.handler(sqsEvent([job(1)]));

    // Assert: refused at T0, granted at T0 + 150, the request started then; nothing went back to SQS.
    expect(result.batchItemFailures).toEqual([]);
    expect(takes().map((take) => take.ExpressionAttributeValues?.[':now'])).toEqual([T0, T0 + 150]);
    expect(takes()[1]?.ExpressionAttributeValues?.[':next']).toBe(T0 + 150 + paceSpacingMs(5));
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

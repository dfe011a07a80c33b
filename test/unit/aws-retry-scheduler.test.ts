// Unit tests for the AWS retry transport (lambdas/adapters/aws/retry-scheduler.ts): up to 15 minutes (SQS's
// longest DelaySeconds) the job goes to the deliveries queue with DelaySeconds; beyond, the exact CreateSchedule request
// (at() in UTC rounded up, group, target, role, DLQ, ActionAfterCompletion, ClientToken) through
// aws-sdk-client-mock; a schedule that already exists counts as done.
import {
  ConflictException,
  CreateScheduleCommand,
  SchedulerClient,
  ServiceQuotaExceededException,
  ValidationException,
} from '@aws-sdk/client-scheduler';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { atExpression, SCHEDULE_RETRY_POLICY } from '../../lambdas/adapters/aws/one-shot';
import { AwsRetryScheduler, QueueRetryScheduler, retryScheduleName } from '../../lambdas/adapters/aws/retry-scheduler';
import { SqsDeliveryQueue } from '../../lambdas/adapters/aws/sqs';
import type { DeliveryJob } from '../../lambdas/app/webhooks/ports';
import { timeOrderedId } from '../../lambdas/domain/ids';
import { deliveryIdFor } from '../../lambdas/domain/webhooks/render';
import { deliveryJobMessage } from '../../lambdas/handlers/queue/messages';

const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries';
const QUEUE_ARN = 'arn:aws:sqs:eu-west-1:123456789012:deliveries';
const ROLE_ARN = 'arn:aws:iam::123456789012:role/scheduler-role';
const DLQ_ARN = 'arn:aws:sqs:eu-west-1:123456789012:retry-dlq';
const GROUP = 'SendflowApi-retries';
/** 2026-03-29 23:59:58.250 UTC: crosses a day, a month and (in Europe) a DST change when delayed. */
const NOW = Date.UTC(2026, 2, 29, 23, 59, 58, 250);

const scheduler = mockClient(SchedulerClient);
const sqs = mockClient(SQSClient);

// A real pipeline delivery id: dlv_ + the event id's 26 characters + 10 hex characters of the webhook.
const eventId = timeOrderedId('evt', NOW, (n) => new Uint8Array(n).fill(250));
const job: DeliveryJob = {
  deliveryId: deliveryIdFor(eventId, 'wh_0123456789'),
  webhookId: 'wh_0123456789',
  attempt: 4,
};

function retries(now = () => NOW) {
  return new AwsRetryScheduler({
    scheduler: new SchedulerClient({ region: 'eu-west-1' }),
    queue: new SqsDeliveryQueue(new SQSClient({ region: 'eu-west-1' }), QUEUE_URL),
    groupName: GROUP,
    queueArn: QUEUE_ARN,
    roleArn: ROLE_ARN,
    dlqArn: DLQ_ARN,
    now,
  });
}

beforeEach(() => {
  scheduler.reset();
  sqs.reset();
  scheduler.on(CreateScheduleCommand).resolves({ ScheduleArn: 'arn:aws:scheduler:::schedule/x' });
  sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
});

describe('up to 15 minutes: SQS DelaySeconds', () => {
  it.each([
    [1, 1],
    [30, 30],
    [0, 0],
    [59.2, 60],
    [60, 60],
    [300, 300],
    [899.5, 900],
    [900, 900],
  ])(
    'a %s s retry is the job on the deliveries queue with DelaySeconds %i, and no schedule',
    async (delay, seconds) => {
      // Act
      await retries().schedule(job, delay);

      // Assert
      expect(sqs).toHaveReceivedCommandWith(SendMessageBatchCommand, {
        QueueUrl: QUEUE_URL,
        Entries: [{ Id: 'm0', MessageBody: JSON.stringify(job), DelaySeconds: seconds }],
      });
      expect(scheduler).not.toHaveReceivedCommand(CreateScheduleCommand);
    },
  );
});

describe('beyond 15 minutes: a one-shot Scheduler schedule', () => {
  it('creates exactly this schedule for a 30-minute retry', async () => {
    // Act
    await retries().schedule(job, 1800);

    // Assert: 23:59:58.250 + 30 min = 00:29:58.250 next day, rounded up to :59, written in UTC.
    const name = `${job.deliveryId}-a4`;
    expect(scheduler).toHaveReceivedCommandTimes(CreateScheduleCommand, 1);
    expect(scheduler.commandCalls(CreateScheduleCommand)[0]?.args[0].input).toEqual({
      Name: name,
      ClientToken: name,
      GroupName: GROUP,
      Description: `Attempt 4 of delivery ${job.deliveryId}`,
      ScheduleExpression: 'at(2026-03-30T00:29:59)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      Target: {
        Arn: QUEUE_ARN,
        RoleArn: ROLE_ARN,
        Input: JSON.stringify(job),
        DeadLetterConfig: { Arn: DLQ_ARN },
        RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 3600 },
      },
    });
    expect(sqs).not.toHaveReceivedCommand(SendMessageBatchCommand);
  });

  it('puts in Input what the delivery worker parses as the job', async () => {
    await retries().schedule(job, 1800);
    const input = scheduler.commandCalls(CreateScheduleCommand)[0]?.args[0].input.Target?.Input ?? '';
    expect(deliveryJobMessage.parse(JSON.parse(input))).toEqual(job);
  });

  it.each([
    // the first second past SQS's 15 minutes, from a whole second, stays on that second
    [Date.UTC(2026, 0, 1, 12, 0, 0, 0), 901, 'at(2026-01-01T12:15:01)'],
    // any millisecond rounds up, never down (an attempt must not fire early)
    [Date.UTC(2026, 0, 1, 12, 0, 0, 1), 1800, 'at(2026-01-01T12:30:01)'],
    [Date.UTC(2026, 0, 1, 12, 0, 0, 999), 3600, 'at(2026-01-01T13:00:01)'],
    // a fractional delay also rounds up
    [Date.UTC(2026, 0, 1, 12, 0, 0, 0), 900.4, 'at(2026-01-01T12:15:01)'],
    // across the end of a leap-year February
    [Date.UTC(2028, 1, 28, 23, 45, 0, 0), 1800, 'at(2028-02-29T00:15:00)'],
  ])('from %i + %s s the expression is %s', async (now, delay, expression) => {
    // Act
    await retries(() => now).schedule(job, delay);

    // Assert
    expect(scheduler).toHaveReceivedCommandWith(CreateScheduleCommand, {
      ScheduleExpression: expression,
      ScheduleExpressionTimezone: 'UTC',
    });
  });

  it('writes UTC whatever the process time zone (the expression never carries an offset)', () => {
    const zone = process.env.TZ;
    try {
      // Arrange: Node applies a TZ change at once; in Auckland NOW is already the 30th, midday.
      process.env.TZ = 'Pacific/Auckland';
      expect(new Date(NOW).getDate()).toBe(30);

      // Act & Assert
      expect(atExpression(NOW)).toBe('at(2026-03-29T23:59:59)');
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('counts a ConflictException (the schedule exists: a duplicate job) as done', async () => {
    // Arrange
    scheduler
      .on(CreateScheduleCommand)
      .rejects(new ConflictException({ Message: 'exists', message: 'exists', $metadata: {} }));

    // Act & Assert
    await expect(retries().schedule(job, 1800)).resolves.toBeUndefined();
    expect(sqs).not.toHaveReceivedCommand(SendMessageBatchCommand);
  });

  it.each([
    ['ValidationException', new ValidationException({ Message: 'bad at()', message: 'bad at()', $metadata: {} })],
    [
      'ServiceQuotaExceededException',
      new ServiceQuotaExceededException({ Message: 'quota', message: 'quota', $metadata: {} }),
    ],
  ])('rethrows %s so the SQS record is retried', async (_name, error) => {
    scheduler.on(CreateScheduleCommand).rejects(error);
    await expect(retries().schedule(job, 1800)).rejects.toBe(error);
  });
});

describe('paced schedule creation', () => {
  it('spaces its CreateSchedule calls by the pace (a batch of hanging attempts ends at once; its retries need not)', async () => {
    // Arrange: 10 a second; a clock that stands still (the calls are made together).
    const slept: number[] = [];
    const paced = new AwsRetryScheduler({
      scheduler: new SchedulerClient({ region: 'eu-west-1' }),
      queue: new SqsDeliveryQueue(new SQSClient({ region: 'eu-west-1' }), QUEUE_URL),
      groupName: GROUP,
      queueArn: QUEUE_ARN,
      roleArn: ROLE_ARN,
      dlqArn: DLQ_ARN,
      now: () => NOW,
      schedulesPerSecond: 10,
      sleep: async (ms) => {
        slept.push(ms);
      },
    });

    // Act: three 30-minute retries at once, and one 5-minute retry (SQS: never paced).
    await Promise.all([1, 2, 3].map((attempt) => paced.schedule({ ...job, attempt }, 1800)));
    await paced.schedule(job, 300);

    // Assert
    expect(slept).toEqual([100, 200]);
    expect(scheduler).toHaveReceivedCommandTimes(CreateScheduleCommand, 3);
    expect(sqs).toHaveReceivedCommandTimes(SendMessageBatchCommand, 1);
  });
});

describe('schedule names', () => {
  it('are deliveryId-a<attempt>, and fit both the name (64 of [0-9a-zA-Z-_.]) and client-token rules', () => {
    // Arrange: the longest pipeline id, at an attempt far beyond any schedule.
    const name = retryScheduleName({ deliveryId: job.deliveryId, attempt: 999 });

    // Assert
    expect(job.deliveryId).toMatch(/^dlv_[0-9a-z]{36}$/);
    expect(name).toBe(`${job.deliveryId}-a999`);
    expect(name.length).toBeLessThanOrEqual(64);
    expect(name).toMatch(/^[0-9a-zA-Z-_.]{1,64}$/);
    expect(name).toMatch(/^[a-zA-Z0-9-_]{1,64}$/);
  });

  it('differ per attempt and are stable for the same job', () => {
    expect(retryScheduleName({ ...job, attempt: 2 })).not.toBe(retryScheduleName({ ...job, attempt: 3 }));
    expect(retryScheduleName(job)).toBe(retryScheduleName({ ...job }));
  });

  it('fall back to a deterministic digest for ids too long or with other characters', () => {
    for (const deliveryId of ['dlv_'.padEnd(70, 'x'), 'dlv:with/odd.chars']) {
      const name = retryScheduleName({ deliveryId, attempt: 5 });
      expect(name).toMatch(/^[a-zA-Z0-9-_]{1,64}$/);
      expect(name).toMatch(/-a5$/);
      expect(retryScheduleName({ deliveryId, attempt: 5 })).toBe(name);
      expect(retryScheduleName({ deliveryId, attempt: 6 })).not.toBe(name);
    }
  });

  it('uses the retry policy the stack documents', () => {
    expect(SCHEDULE_RETRY_POLICY).toEqual({ MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 3600 });
  });
});

describe('QueueRetryScheduler (the reconciler)', () => {
  const queue = () => new QueueRetryScheduler(new SqsDeliveryQueue(new SQSClient({ region: 'eu-west-1' }), QUEUE_URL));

  it('re-queues an overdue attempt now', async () => {
    await queue().schedule(job, 0);
    expect(sqs).toHaveReceivedCommandWith(SendMessageBatchCommand, {
      QueueUrl: QUEUE_URL,
      Entries: [{ Id: 'm0', MessageBody: JSON.stringify(job), DelaySeconds: 0 }],
    });
  });

  it('refuses a delay SQS cannot hold instead of firing early', async () => {
    await expect(queue().schedule(job, 1800)).rejects.toThrow(/cannot delay .* by 1800 s/);
    expect(sqs).not.toHaveReceivedCommand(SendMessageBatchCommand);
  });
});

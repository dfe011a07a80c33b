// Unit tests for scheduled sends on AWS (lambdas/adapters/aws/send-scheduler.ts): under a minute the email id
// goes onto the sends queue with DelaySeconds; from a minute on, the exact CreateSchedule request (at() in UTC
// rounded up, sends group, target, role, DLQ, ActionAfterCompletion, ClientToken) through aws-sdk-client-mock;
// a schedule that exists counts as done; cancel deletes it and ignores one that is gone; the reconciler's
// queue-only variant.
import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
  UpdateScheduleCommand,
  ValidationException,
} from '@aws-sdk/client-scheduler';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  AwsSendScheduler,
  QueueSendScheduler,
  SqsSendQueue,
  sendScheduleName,
} from '../../lambdas/adapters/aws/send-scheduler';
import { timeOrderedId } from '../../lambdas/domain/ids';
import { sendMessage } from '../../lambdas/handlers/queue/send-worker';

const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/sends';
const QUEUE_ARN = 'arn:aws:sqs:eu-west-1:123456789012:sends';
const ROLE_ARN = 'arn:aws:iam::123456789012:role/send-scheduler';
const DLQ_ARN = 'arn:aws:sqs:eu-west-1:123456789012:send-schedule-dlq';
const GROUP = 'SendflowApi-sends';
/** 2026-12-31 23:59:30.400 UTC: a minute later is next year. */
const NOW = Date.UTC(2026, 11, 31, 23, 59, 30, 400);
const EMAIL_ID = timeOrderedId('email', NOW, (n) => new Uint8Array(n).fill(7));

const scheduler = mockClient(SchedulerClient);
const sqs = mockClient(SQSClient);

function sends(now = () => NOW) {
  return new AwsSendScheduler({
    scheduler: new SchedulerClient({ region: 'eu-west-1' }),
    queue: new SqsSendQueue(new SQSClient({ region: 'eu-west-1' }), QUEUE_URL),
    groupName: GROUP,
    queueArn: QUEUE_ARN,
    roleArn: ROLE_ARN,
    dlqArn: DLQ_ARN,
    now,
  });
}

/** A modelled service exception, as the SDK would throw it. */
const exception = <T>(Type: new (o: { Message: string; message: string; $metadata: object }) => T) =>
  new Type({ Message: 'x', message: 'x', $metadata: {} });

beforeEach(() => {
  scheduler.reset();
  sqs.reset();
  scheduler.on(CreateScheduleCommand).resolves({ ScheduleArn: 'arn:aws:scheduler:::schedule/x' });
  scheduler.on(DeleteScheduleCommand).resolves({});
  scheduler.on(UpdateScheduleCommand).resolves({ ScheduleArn: 'arn:aws:scheduler:::schedule/x' });
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
});

describe('due within a minute: the sends queue with DelaySeconds', () => {
  it.each([
    ['overdue', -600_000, 0],
    ['due now', 0, 0],
    ['due in 0.4 s', 400, 1],
    ['due in 59.6 s', 59_600, 60],
  ])('%s: {emailId} on the queue with DelaySeconds %i, no schedule', async (_name, inMs, seconds) => {
    // Act
    await sends().schedule(EMAIL_ID, NOW + inMs);

    // Assert
    expect(sqs).toHaveReceivedCommandTimes(SendMessageCommand, 1);
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input).toEqual({
      QueueUrl: QUEUE_URL,
      MessageBody: JSON.stringify({ emailId: EMAIL_ID }),
      DelaySeconds: seconds,
    });
    expect(scheduler).not.toHaveReceivedCommand(CreateScheduleCommand);
  });

  it("names the account as MessageGroupId (a fair queue: one tenant's burst waits its turn) and in the body", async () => {
    // Act
    await sends().schedule(EMAIL_ID, NOW, 'acct_1');

    // Assert
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input).toEqual({
      QueueUrl: QUEUE_URL,
      MessageBody: JSON.stringify({ emailId: EMAIL_ID, accountId: 'acct_1' }),
      DelaySeconds: 0,
      MessageGroupId: 'acct_1',
    });
  });
});

describe('a minute or more: a one-shot schedule in the sends group', () => {
  it('creates exactly this schedule for a send at 2027-01-01T00:30:00.250Z', async () => {
    // Act
    await sends().schedule(EMAIL_ID, Date.UTC(2027, 0, 1, 0, 30, 0, 250));

    // Assert: the at() time is rounded up to the whole second and written in UTC.
    const name = `send-${EMAIL_ID}`;
    expect(scheduler.commandCalls(CreateScheduleCommand)[0]?.args[0].input).toEqual({
      Name: name,
      ClientToken: name,
      GroupName: GROUP,
      Description: `Scheduled send of ${EMAIL_ID}`,
      ScheduleExpression: 'at(2027-01-01T00:30:01)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      Target: {
        Arn: QUEUE_ARN,
        RoleArn: ROLE_ARN,
        Input: JSON.stringify({ emailId: EMAIL_ID }),
        DeadLetterConfig: { Arn: DLQ_ARN },
        RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 3600 },
      },
    });
    expect(sqs).not.toHaveReceivedCommand(SendMessageCommand);
  });

  it('switches to Scheduler at exactly 60 s', async () => {
    await sends().schedule(EMAIL_ID, NOW + 60_000);
    expect(scheduler).toHaveReceivedCommandWith(CreateScheduleCommand, {
      ScheduleExpression: 'at(2027-01-01T00:00:31)',
    });
    expect(sqs).not.toHaveReceivedCommand(SendMessageCommand);
  });

  it('puts in Input what the send worker parses', async () => {
    await sends().schedule(EMAIL_ID, NOW + 86_400_000);
    const input = scheduler.commandCalls(CreateScheduleCommand)[0]?.args[0].input.Target?.Input ?? '';
    expect(sendMessage.parse(JSON.parse(input))).toEqual({ emailId: EMAIL_ID });
  });

  it('counts a ConflictException (already scheduled: a retried request, the reconciler) as done', async () => {
    scheduler.on(CreateScheduleCommand).rejects(exception(ConflictException));
    await expect(sends().schedule(EMAIL_ID, NOW + 3_600_000)).resolves.toBeUndefined();
  });

  it('rethrows anything else, so the caller fails instead of losing the send', async () => {
    const error = exception(ValidationException);
    scheduler.on(CreateScheduleCommand).rejects(error);
    await expect(sends().schedule(EMAIL_ID, NOW + 3_600_000)).rejects.toBe(error);
  });
});

describe('cancel', () => {
  it('deletes the email schedule from the sends group', async () => {
    // Act
    await sends().cancel(EMAIL_ID);

    // Assert
    expect(scheduler.commandCalls(DeleteScheduleCommand)[0]?.args[0].input).toEqual({
      Name: `send-${EMAIL_ID}`,
      GroupName: GROUP,
    });
  });

  it('ignores a schedule that does not exist (sent through SQS, already fired, already deleted)', async () => {
    scheduler.on(DeleteScheduleCommand).rejects(exception(ResourceNotFoundException));
    await expect(sends().cancel(EMAIL_ID)).resolves.toBeUndefined();
  });

  it('rethrows anything else', async () => {
    const error = exception(ValidationException);
    scheduler.on(DeleteScheduleCommand).rejects(error);
    await expect(sends().cancel(EMAIL_ID)).rejects.toBe(error);
  });
});

describe('reschedule', () => {
  const name = sendScheduleName(EMAIL_ID);
  /** The whole definition at a time, as CreateSchedule and UpdateSchedule both take it. */
  const definition = (expression: string, accountId?: string) => ({
    Name: name,
    GroupName: GROUP,
    ScheduleExpression: expression,
    ScheduleExpressionTimezone: 'UTC',
    FlexibleTimeWindow: { Mode: 'OFF' },
    ActionAfterCompletion: 'DELETE',
    Target: {
      Arn: QUEUE_ARN,
      RoleArn: ROLE_ARN,
      Input: JSON.stringify({ emailId: EMAIL_ID, ...(accountId ? { accountId } : {}) }),
      DeadLetterConfig: { Arn: DLQ_ARN },
      RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 3600 },
    },
  });

  it('updates the schedule in place to the new time: one UpdateSchedule, nothing deleted or created', async () => {
    // Act
    await sends().reschedule(EMAIL_ID, NOW + 3 * 86_400_000, 'acct_1');

    // Assert
    expect(scheduler.calls().map((call) => call.args[0].constructor.name)).toEqual(['UpdateScheduleCommand']);
    expect(scheduler.commandCalls(UpdateScheduleCommand)[0]?.args[0].input).toEqual({
      ...definition('at(2027-01-03T23:59:31)', 'acct_1'),
      Description: `Scheduled send of ${EMAIL_ID} (moved)`,
    });
    expect(sqs).not.toHaveReceivedCommand(SendMessageCommand);
  });

  it('a schedule that is gone (fired, or never made) is created, with a client token of its own each time', async () => {
    scheduler.on(UpdateScheduleCommand).rejects(exception(ResourceNotFoundException));
    await sends().reschedule(EMAIL_ID, NOW + 3_600_000);
    await sends().reschedule(EMAIL_ID, NOW + 3_600_000);
    const created = scheduler.commandCalls(CreateScheduleCommand).map((call) => call.args[0].input);
    expect(created).toHaveLength(2);
    expect(created[0]).toMatchObject(definition('at(2027-01-01T00:59:31)'));
    const tokens = created.map((input) => input.ClientToken);
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(new Set([...tokens, name]).size).toBe(3);
  });

  it('a schedule created meanwhile by a concurrent move (ConflictException) is updated to this time', async () => {
    scheduler
      .on(UpdateScheduleCommand)
      .rejectsOnce(exception(ResourceNotFoundException))
      .resolves({ ScheduleArn: 'arn:aws:scheduler:::schedule/x' });
    scheduler.on(CreateScheduleCommand).rejects(exception(ConflictException));
    await sends().reschedule(EMAIL_ID, NOW + 3_600_000);
    expect(scheduler.calls().map((call) => call.args[0].constructor.name)).toEqual([
      'UpdateScheduleCommand',
      'CreateScheduleCommand',
      'UpdateScheduleCommand',
    ]);
    expect(scheduler.commandCalls(UpdateScheduleCommand)[1]?.args[0].input.ScheduleExpression).toBe(
      'at(2027-01-01T00:59:31)',
    );
  });

  it('moved within a minute: deletes the schedule (gone already is fine) and puts the send on the queue', async () => {
    scheduler.on(DeleteScheduleCommand).rejects(exception(ResourceNotFoundException));
    await sends().reschedule(EMAIL_ID, NOW + 30_000);
    expect(scheduler).toHaveReceivedCommandTimes(DeleteScheduleCommand, 1);
    expect(scheduler).not.toHaveReceivedCommand(CreateScheduleCommand);
    expect(scheduler).not.toHaveReceivedCommand(UpdateScheduleCommand);
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input).toMatchObject({
      QueueUrl: QUEUE_URL,
      MessageBody: JSON.stringify({ emailId: EMAIL_ID }),
      DelaySeconds: 30,
    });
  });

  it("a failing update is the caller's error (the API answers 5xx; the PATCH is retried)", async () => {
    scheduler.on(UpdateScheduleCommand).rejects(exception(ValidationException));
    await expect(sends().reschedule(EMAIL_ID, NOW + 3_600_000)).rejects.toThrow(ValidationException);
    expect(scheduler).not.toHaveReceivedCommand(CreateScheduleCommand);
  });
});

describe('reschedule against a model of Scheduler (a client token seen before creates nothing)', () => {
  /** Schedules by name (their expression), and the client tokens Scheduler has answered. */
  function model() {
    const seen = new Set<string>();
    const live = new Map<string, string>();
    scheduler.on(CreateScheduleCommand).callsFake((input) => {
      if (seen.has(input.ClientToken)) return { ScheduleArn: 'arn' }; // an idempotent replay: the earlier answer
      seen.add(input.ClientToken);
      if (live.has(input.Name)) throw exception(ConflictException);
      live.set(input.Name, input.ScheduleExpression);
      return { ScheduleArn: 'arn' };
    });
    scheduler.on(UpdateScheduleCommand).callsFake((input) => {
      if (!live.has(input.Name)) throw exception(ResourceNotFoundException);
      live.set(input.Name, input.ScheduleExpression);
      return { ScheduleArn: 'arn' };
    });
    scheduler.on(DeleteScheduleCommand).callsFake((input) => {
      if (!live.delete(input.Name)) throw exception(ResourceNotFoundException);
      return {};
    });
    return live;
  }
  const A = NOW + 3_600_000;
  const B = NOW + 7_200_000;

  it('A -> B -> A: armed at A', async () => {
    const live = model();
    await sends().schedule(EMAIL_ID, NOW + 600_000);
    for (const at of [A, B, A]) await sends().reschedule(EMAIL_ID, at);
    expect([...live.entries()]).toEqual([[sendScheduleName(EMAIL_ID), 'at(2027-01-01T00:59:31)']]);
  });

  it('a retried PATCH (the same time again after a lost answer): armed at that time', async () => {
    const live = model();
    await sends().schedule(EMAIL_ID, NOW + 600_000);
    await sends().reschedule(EMAIL_ID, A);
    await sends().reschedule(EMAIL_ID, A);
    expect([...live.entries()]).toEqual([[sendScheduleName(EMAIL_ID), 'at(2027-01-01T00:59:31)']]);
  });

  it('after the schedule fired and deleted itself, moved twice to the same time: armed', async () => {
    const live = model();
    await sends().reschedule(EMAIL_ID, A);
    live.clear();
    await sends().reschedule(EMAIL_ID, A);
    expect(live.size).toBe(1);
  });
});

describe('schedule names', () => {
  it('are send-<emailId>, within both the name (64 of [0-9a-zA-Z-_.]) and client-token rules', () => {
    const name = sendScheduleName(EMAIL_ID);
    expect(EMAIL_ID).toMatch(/^email_[0-9a-z]{26}$/);
    expect(name).toBe(`send-${EMAIL_ID}`);
    expect(name).toMatch(/^[0-9a-zA-Z-_.]{1,64}$/);
    expect(name).toMatch(/^[a-zA-Z0-9-_]{1,64}$/);
  });

  it('fall back to a stable digest for ids too long or with other characters', () => {
    for (const id of ['email_'.padEnd(80, 'x'), 'email:odd/chars']) {
      const name = sendScheduleName(id);
      expect(name).toMatch(/^send-[0-9a-f]{59}$/);
      expect(sendScheduleName(id)).toBe(name);
    }
    expect(sendScheduleName('email:a')).not.toBe(sendScheduleName('email:b'));
  });
});

describe('QueueSendScheduler (the reconciler)', () => {
  const queueOnly = () =>
    new QueueSendScheduler(new SqsSendQueue(new SQSClient({ region: 'eu-west-1' }), QUEUE_URL), () => NOW);

  it('puts an overdue send on the queue now', async () => {
    await queueOnly().schedule(EMAIL_ID, NOW - 300_000);
    expect(sqs).toHaveReceivedCommandWith(SendMessageCommand, {
      QueueUrl: QUEUE_URL,
      MessageBody: JSON.stringify({ emailId: EMAIL_ID }),
      DelaySeconds: 0,
    });
  });

  it('refuses a delay SQS cannot hold, and cancelling, instead of misbehaving', async () => {
    await expect(queueOnly().schedule(EMAIL_ID, NOW + 3_600_000)).rejects.toThrow(/cannot delay .* by 3600 s/);
    await expect(queueOnly().cancel(EMAIL_ID)).rejects.toThrow(/cannot cancel/);
    expect(sqs).not.toHaveReceivedCommand(SendMessageCommand);
  });
});

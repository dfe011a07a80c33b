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
  it('deletes the schedule, then makes it again under its name at the new time, with a client token of its own', async () => {
    // Act
    await sends().reschedule(EMAIL_ID, NOW + 3 * 86_400_000, 'acct_1');

    // Assert: delete first, then create, exactly these two calls.
    const name = sendScheduleName(EMAIL_ID);
    const calls = scheduler.calls().map((call) => call.args[0].constructor.name);
    expect(calls).toEqual(['DeleteScheduleCommand', 'CreateScheduleCommand']);
    expect(scheduler.commandCalls(DeleteScheduleCommand)[0]?.args[0].input).toEqual({ Name: name, GroupName: GROUP });
    const created = scheduler.commandCalls(CreateScheduleCommand)[0]?.args[0].input;
    expect(created).toMatchObject({
      Name: name,
      GroupName: GROUP,
      ScheduleExpression: 'at(2027-01-03T23:59:31)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      Target: { Arn: QUEUE_ARN, RoleArn: ROLE_ARN, Input: JSON.stringify({ emailId: EMAIL_ID, accountId: 'acct_1' }) },
    });
    expect(created?.ClientToken).not.toBe(name);
    expect(created?.ClientToken).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    // Another new time, another token: Scheduler never mistakes a second move for the first.
    scheduler.resetHistory();
    await sends().reschedule(EMAIL_ID, NOW + 4 * 86_400_000, 'acct_1');
    expect(scheduler.commandCalls(CreateScheduleCommand)[0]?.args[0].input.ClientToken).not.toBe(created?.ClientToken);
    expect(sqs).not.toHaveReceivedCommand(SendMessageCommand);
  });

  it('moved within a minute: deletes the schedule (gone already is fine) and puts the send on the queue', async () => {
    scheduler.on(DeleteScheduleCommand).rejects(exception(ResourceNotFoundException));
    await sends().reschedule(EMAIL_ID, NOW + 30_000);
    expect(scheduler).toHaveReceivedCommandTimes(DeleteScheduleCommand, 1);
    expect(scheduler).not.toHaveReceivedCommand(CreateScheduleCommand);
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input).toMatchObject({
      QueueUrl: QUEUE_URL,
      MessageBody: JSON.stringify({ emailId: EMAIL_ID }),
      DelaySeconds: 30,
    });
  });

  it('a failing delete stops it before anything is armed (the API answers 5xx; the PATCH is retried)', async () => {
    scheduler.on(DeleteScheduleCommand).rejects(exception(ValidationException));
    await expect(sends().reschedule(EMAIL_ID, NOW + 3_600_000)).rejects.toThrow(ValidationException);
    expect(scheduler).not.toHaveReceivedCommand(CreateScheduleCommand);
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

// Scheduled sends on AWS (DESIGN §6): an email due in under a minute goes onto the sends queue with SQS
// DelaySeconds (exact to the second); a later one becomes a one-shot EventBridge Scheduler schedule in the
// sends group that puts {emailId} on the same queue at its time, then deletes itself. Cancelling deletes the
// schedule; a send that fires anyway finds the email cancelled and is skipped by the worker.
import { createHash } from 'node:crypto';
import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  type SchedulerClient,
} from '@aws-sdk/client-scheduler';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SendScheduler } from '../../app/emails/ports';
import { encodeSend } from '../../handlers/queue/send-worker';
import { atExpression, SCHEDULE_RETRY_POLICY, SCHEDULER_MIN_DELAY_SECONDS } from './retry-scheduler';
import { SQS_MAX_DELAY_SECONDS, sqsDelaySeconds } from './sqs';

/** Schedule names: 1–64 of [0-9a-zA-Z-_.]; client tokens: 1–64 of [a-zA-Z0-9-_]. The name obeys both. */
const SAFE_NAME = /^[0-9A-Za-z_-]{1,64}$/;

/**
 * Schedule name and client token of one email's send: `send-${emailId}`, so scheduling the same email twice
 * (a retried API call, the reconciler) asks for the same schedule and the second is refused. Email ids
 * (`email_` + 26) give 37 characters; anything longer or with other characters becomes a stable digest.
 */
export function sendScheduleName(emailId: string): string {
  const name = `send-${emailId}`;
  if (SAFE_NAME.test(name)) return name;
  return `send-${createHash('sha256').update(emailId).digest('hex').slice(0, 48)}`;
}

/** The sends queue with a delay: one SendMessage per email (a scheduled send is one email). */
export class SqsSendQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(emailId: string, delaySeconds: number): Promise<void> {
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: encodeSend(emailId),
        DelaySeconds: sqsDelaySeconds(delaySeconds),
      }),
    );
  }
}

export interface AwsSendSchedulerOptions {
  readonly scheduler: SchedulerClient;
  /** Sends due within a minute (or overdue): the sends queue with DelaySeconds. */
  readonly queue: SqsSendQueue;
  /** The sends schedule group (the stack's ScheduleGroup). */
  readonly groupName: string;
  /** Target of every schedule: the sends queue. */
  readonly queueArn: string;
  /** Assumed by Scheduler; may only send to the sends queue and the send-schedule DLQ. */
  readonly roleArn: string;
  /** Standard SQS queue for sends Scheduler could not deliver. */
  readonly dlqArn: string;
  /** Epoch ms. */
  readonly now: () => number;
}

export class AwsSendScheduler implements SendScheduler {
  constructor(private readonly options: AwsSendSchedulerOptions) {}

  async schedule(emailId: string, atMs: number): Promise<void> {
    const { scheduler, queue, groupName, queueArn, roleArn, dlqArn, now } = this.options;
    const delaySeconds = (atMs - now()) / 1000;
    if (delaySeconds < SCHEDULER_MIN_DELAY_SECONDS) {
      await queue.send(emailId, delaySeconds);
      return;
    }
    const name = sendScheduleName(emailId);
    try {
      await scheduler.send(
        new CreateScheduleCommand({
          Name: name,
          ClientToken: name,
          GroupName: groupName,
          Description: `Scheduled send of ${emailId}`,
          ScheduleExpression: atExpression(atMs),
          ScheduleExpressionTimezone: 'UTC',
          FlexibleTimeWindow: { Mode: 'OFF' },
          ActionAfterCompletion: 'DELETE',
          Target: {
            Arn: queueArn,
            RoleArn: roleArn,
            Input: encodeSend(emailId),
            DeadLetterConfig: { Arn: dlqArn },
            RetryPolicy: { ...SCHEDULE_RETRY_POLICY },
          },
        }),
      );
    } catch (error) {
      // Already scheduled (a retried request, or the reconciler): the first schedule stands.
      if (error instanceof ConflictException) return;
      throw error;
    }
  }

  async cancel(emailId: string): Promise<void> {
    try {
      await this.options.scheduler.send(
        new DeleteScheduleCommand({ Name: sendScheduleName(emailId), GroupName: this.options.groupName }),
      );
    } catch (error) {
      // Never scheduled (it went through SQS), already fired, or already deleted: nothing left to stop.
      if (error instanceof ResourceNotFoundException) return;
      throw error;
    }
  }
}

/**
 * The reconciler's send transport: it only re-queues sends that are already overdue, so it needs the queue
 * alone and no Scheduler permissions. A delay SQS cannot hold, or a cancel, is a wiring mistake.
 */
export class QueueSendScheduler implements SendScheduler {
  constructor(
    private readonly queue: SqsSendQueue,
    private readonly now: () => number,
  ) {}

  async schedule(emailId: string, atMs: number): Promise<void> {
    const delaySeconds = Math.max(0, (atMs - this.now()) / 1000);
    if (delaySeconds > SQS_MAX_DELAY_SECONDS) {
      throw new Error(
        `QueueSendScheduler cannot delay the send of ${emailId} by ${Math.ceil(delaySeconds)} s ` +
          `(SQS holds at most ${SQS_MAX_DELAY_SECONDS} s); use AwsSendScheduler.`,
      );
    }
    await this.queue.send(emailId, delaySeconds);
  }

  async cancel(emailId: string): Promise<void> {
    throw new Error(`QueueSendScheduler cannot cancel the send of ${emailId}; use AwsSendScheduler.`);
  }
}

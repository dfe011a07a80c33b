// Scheduled sends on AWS (DESIGN §6): an email due in under a minute goes onto the sends queue with SQS
// DelaySeconds (exact to the second); a later one becomes a one-shot EventBridge Scheduler schedule in the
// sends group that puts {emailId} on the same queue at its time, then deletes itself. Cancelling deletes the
// schedule; a send that fires anyway finds the email cancelled and is skipped by the worker. Rescheduling updates
// the schedule in place (UpdateSchedule; created if gone); a send already on the queue (due within a minute)
// cannot be taken back, and the worker skips it: the email is not due then.
import { DeleteScheduleCommand, ResourceNotFoundException, type SchedulerClient } from '@aws-sdk/client-scheduler';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SendScheduler } from '../../app/emails/ports';
import { encodeSend } from '../../handlers/queue/send-worker';
import { createOneShot, moveOneShot, SCHEDULER_MIN_DELAY_SECONDS, safeScheduleName } from './one-shot';
import { SQS_MAX_DELAY_SECONDS, sqsDelaySeconds } from './sqs';

/**
 * Schedule name and client token of one email's send: `send-${emailId}`, so scheduling the same email twice
 * (a retried API call, the reconciler) asks for the same schedule and the second is refused. Email ids
 * (`email_` + 26) give 37 characters; anything longer or with other characters becomes a stable digest.
 */
export function sendScheduleName(emailId: string): string {
  return safeScheduleName(`send-${emailId}`, 'send-');
}

/** The sends queue with a delay: one SendMessage per email (a scheduled send is one email). */
export class SqsSendQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  /** With the account as MessageGroupId, the standard queue is a fair queue: a burst of one tenant waits its turn. */
  async send(emailId: string, delaySeconds: number, accountId?: string): Promise<void> {
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: encodeSend(emailId, accountId),
        DelaySeconds: sqsDelaySeconds(delaySeconds),
        ...(accountId ? { MessageGroupId: accountId } : {}),
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

  async schedule(emailId: string, atMs: number, accountId?: string): Promise<void> {
    const delaySeconds = (atMs - this.options.now()) / 1000;
    if (delaySeconds < SCHEDULER_MIN_DELAY_SECONDS) {
      await this.options.queue.send(emailId, delaySeconds, accountId);
      return;
    }
    await createOneShot(this.options, {
      name: sendScheduleName(emailId),
      description: `Scheduled send of ${emailId}`,
      atMs,
      input: encodeSend(emailId, accountId),
    });
  }

  /**
   * Due from a minute on: the schedule is updated in place to the new time (created if it is gone; see
   * moveOneShot), never deleted and made again under a token derived from the time, which Scheduler would take
   * for a request already answered after a move back (A→B→A) or a retried PATCH, leaving nothing armed. Due
   * within a minute: the schedule goes and the send is put on the queue with its delay. A failure leaves the
   * email stored with its new time: the API answers 5xx (the caller retries), and the reconciler re-queues it
   * once overdue.
   */
  async reschedule(emailId: string, atMs: number, accountId?: string): Promise<void> {
    const delaySeconds = (atMs - this.options.now()) / 1000;
    if (delaySeconds < SCHEDULER_MIN_DELAY_SECONDS) {
      await this.cancel(emailId);
      await this.options.queue.send(emailId, delaySeconds, accountId);
      return;
    }
    await moveOneShot(this.options, {
      name: sendScheduleName(emailId),
      description: `Scheduled send of ${emailId} (moved)`,
      atMs,
      input: encodeSend(emailId, accountId),
    });
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

  async schedule(emailId: string, atMs: number, accountId?: string): Promise<void> {
    const delaySeconds = Math.max(0, (atMs - this.now()) / 1000);
    if (delaySeconds > SQS_MAX_DELAY_SECONDS) {
      throw new Error(
        `QueueSendScheduler cannot delay the send of ${emailId} by ${Math.ceil(delaySeconds)} s ` +
          `(SQS holds at most ${SQS_MAX_DELAY_SECONDS} s); use AwsSendScheduler.`,
      );
    }
    await this.queue.send(emailId, delaySeconds, accountId);
  }

  async cancel(emailId: string): Promise<void> {
    throw new Error(`QueueSendScheduler cannot cancel the send of ${emailId}; use AwsSendScheduler.`);
  }

  async reschedule(emailId: string): Promise<void> {
    throw new Error(`QueueSendScheduler cannot reschedule the send of ${emailId}; use AwsSendScheduler.`);
  }
}

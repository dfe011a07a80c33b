// The retry transport on AWS (DESIGN §4). EventBridge Scheduler fires with one-minute precision, so a delay
// under 60 s goes through SQS DelaySeconds (exact to the second) and a longer one becomes a one-shot at()
// schedule in our own group that sends the job to the deliveries queue, then deletes itself. Both paths end
// on the same queue with the same message.
import { createHash } from 'node:crypto';
import { ConflictException, CreateScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import type { DeliveryJob, DeliveryQueue, RetryScheduler } from '../../app/webhooks/ports';
import { encodeJob } from '../../handlers/queue/messages';
import { SQS_MAX_DELAY_SECONDS } from './sqs';

/** Below this, Scheduler's one-minute precision is worse than the delay itself. */
export const SCHEDULER_MIN_DELAY_SECONDS = 60;

/**
 * Scheduler's own retries when it cannot reach the queue: a handful, within an hour. After that the event
 * goes to the scheduler DLQ (alarmed), and the reconciler re-queues the overdue attempt in any case.
 */
export const SCHEDULE_RETRY_POLICY = { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 3600 } as const;

/** Schedule names: 1–64 of [0-9a-zA-Z-_.]; client tokens: 1–64 of [a-zA-Z0-9-_]. The name obeys both. */
const SAFE_NAME = /^[0-9A-Za-z_-]{1,64}$/;

export interface AwsRetrySchedulerOptions {
  readonly scheduler: SchedulerClient;
  /** Delays under a minute: the deliveries queue with DelaySeconds. */
  readonly queue: DeliveryQueue;
  /** The retry schedule group (the stack's ScheduleGroup). */
  readonly groupName: string;
  /** Target of every schedule: the deliveries queue. */
  readonly queueArn: string;
  /** Assumed by Scheduler; may only send to the deliveries queue and the scheduler DLQ. */
  readonly roleArn: string;
  /** Standard SQS queue for events Scheduler could not deliver. */
  readonly dlqArn: string;
  /** Epoch ms. */
  readonly now: () => number;
}

/**
 * Schedule name and client token of one attempt: `${deliveryId}-a${attempt}`, so a job handled twice asks for
 * the same schedule and Scheduler refuses the second. Pipeline delivery ids (`dlv_` + 36) give 45 characters
 * at most; anything longer or with other characters falls back to a digest, still deterministic.
 */
export function retryScheduleName(job: Pick<DeliveryJob, 'deliveryId' | 'attempt'>): string {
  const name = `${job.deliveryId}-a${job.attempt}`;
  if (SAFE_NAME.test(name)) return name;
  const digest = createHash('sha256').update(name).digest('hex').slice(0, 40);
  return `dlv-${digest}-a${job.attempt}`.slice(0, 64);
}

/** `at(yyyy-mm-ddThh:mm:ss)` in UTC, rounded up to the whole second so an attempt never fires early. */
export function atExpression(epochMs: number): string {
  const whole = Math.ceil(epochMs / 1000) * 1000;
  return `at(${new Date(whole).toISOString().slice(0, 19)})`;
}

export class AwsRetryScheduler implements RetryScheduler {
  constructor(private readonly options: AwsRetrySchedulerOptions) {}

  async schedule(job: DeliveryJob, delaySeconds: number): Promise<void> {
    if (delaySeconds < SCHEDULER_MIN_DELAY_SECONDS) {
      await this.options.queue.send([job], delaySeconds);
      return;
    }
    const { scheduler, groupName, queueArn, roleArn, dlqArn, now } = this.options;
    const name = retryScheduleName(job);
    try {
      await scheduler.send(
        new CreateScheduleCommand({
          Name: name,
          ClientToken: name,
          GroupName: groupName,
          Description: `Attempt ${job.attempt} of delivery ${job.deliveryId}`,
          ScheduleExpression: atExpression(now() + delaySeconds * 1000),
          ScheduleExpressionTimezone: 'UTC',
          FlexibleTimeWindow: { Mode: 'OFF' },
          ActionAfterCompletion: 'DELETE',
          Target: {
            Arn: queueArn,
            RoleArn: roleArn,
            Input: encodeJob(job),
            DeadLetterConfig: { Arn: dlqArn },
            RetryPolicy: { ...SCHEDULE_RETRY_POLICY },
          },
        }),
      );
    } catch (error) {
      // The schedule exists: this job was handled before (an SQS redelivery). The first one stands.
      if (error instanceof ConflictException) return;
      throw error;
    }
  }
}

/**
 * The reconciler's retry transport: it only re-queues attempts that are already overdue (delay 0), so it needs
 * the queue alone and no Scheduler permissions. A delay SQS cannot hold is a wiring mistake, not a retry.
 */
export class QueueRetryScheduler implements RetryScheduler {
  constructor(private readonly queue: DeliveryQueue) {}

  async schedule(job: DeliveryJob, delaySeconds: number): Promise<void> {
    if (delaySeconds > SQS_MAX_DELAY_SECONDS) {
      throw new Error(
        `QueueRetryScheduler cannot delay ${job.deliveryId} attempt ${job.attempt} by ${delaySeconds} s ` +
          `(SQS holds at most ${SQS_MAX_DELAY_SECONDS} s); use AwsRetryScheduler.`,
      );
    }
    await this.queue.send([job], delaySeconds);
  }
}

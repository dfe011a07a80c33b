// The retry transport on AWS (DESIGN §4). EventBridge Scheduler fires with one-minute precision, so a delay
// under 60 s goes through SQS DelaySeconds (exact to the second) and a longer one becomes a one-shot at()
// schedule in our own group that sends the job to the deliveries queue, then deletes itself. Both paths end
// on the same queue with the same message.
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import type { DeliveryJob, DeliveryQueue, RetryScheduler } from '../../app/webhooks/ports';
import { encodeJob } from '../../handlers/queue/messages';
import { createOneShot, SCHEDULER_MIN_DELAY_SECONDS, safeScheduleName } from './one-shot';
import { SQS_MAX_DELAY_SECONDS } from './sqs';

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
  return safeScheduleName(name, 'dlv-', `-a${job.attempt}`);
}

export class AwsRetryScheduler implements RetryScheduler {
  constructor(private readonly options: AwsRetrySchedulerOptions) {}

  async schedule(job: DeliveryJob, delaySeconds: number): Promise<void> {
    if (delaySeconds < SCHEDULER_MIN_DELAY_SECONDS) {
      await this.options.queue.send([job], delaySeconds);
      return;
    }
    await createOneShot(this.options, {
      name: retryScheduleName(job),
      description: `Attempt ${job.attempt} of delivery ${job.deliveryId}`,
      atMs: this.options.now() + delaySeconds * 1000,
      input: encodeJob(job),
    });
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

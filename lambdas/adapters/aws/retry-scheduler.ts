// The retry transport on AWS (DESIGN §4, §12). A delay SQS can hold (DelaySeconds, up to 15 minutes) goes
// through SQS: exact to the second, no Scheduler call, and nothing to outlive (the job is a queue message all
// along, which the queues keep 14 days). Only a longer one (the schedule's 30-minute step, a Retry-After up to an
// hour) becomes a one-shot at() schedule in our own group that sends the job to the deliveries queue, then
// deletes itself: Scheduler's default quotas (about 1,000 schedules fired a second) then carry only those.
// Both paths end on the same queue with the same message.
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import type { DeliveryJob, DeliveryQueue, RetryScheduler } from '../../app/webhooks/ports';
import { encodeJob } from '../../handlers/queue/messages';
import { createOneShot, safeScheduleName } from './one-shot';
import { SQS_MAX_DELAY_SECONDS } from './sqs';

/** Where a retry due in `delaySeconds` waits: SQS DelaySeconds up to its 900 s, a Scheduler schedule beyond. */
export function retryTransport(delaySeconds: number): 'sqs' | 'scheduler' {
  return delaySeconds <= SQS_MAX_DELAY_SECONDS ? 'sqs' : 'scheduler';
}

export interface AwsRetrySchedulerOptions {
  readonly scheduler: SchedulerClient;
  /** Delays up to 15 minutes: the deliveries queue with DelaySeconds. */
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
  /**
   * CreateSchedule calls this scheduler makes a second at most (none: unpaced). A batch of hanging attempts times
   * out at once, and its 30-minute retries would reach Scheduler within milliseconds of each other: spaced, the
   * slow lane's 50 containers stay under 1,000 a second (bench:scale), the oldest quota figure.
   */
  readonly schedulesPerSecond?: number;
  /** Waits for the pace (tests and bench:scale give their own clock's). */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** What each delivery container's retry scheduler allows itself (lambdas/runtime/aws/plugs/schedules.ts). */
export const SCHEDULES_PER_SECOND = 20;

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
  /** When the next CreateSchedule may go (epoch ms), with `schedulesPerSecond`. */
  private nextSlot = 0;

  constructor(private readonly options: AwsRetrySchedulerOptions) {}

  async schedule(job: DeliveryJob, delaySeconds: number): Promise<void> {
    if (retryTransport(delaySeconds) === 'sqs') {
      await this.options.queue.send([job], delaySeconds);
      return;
    }
    await this.pace();
    await createOneShot(this.options, {
      name: retryScheduleName(job),
      description: `Attempt ${job.attempt} of delivery ${job.deliveryId}`,
      atMs: this.options.now() + delaySeconds * 1000,
      input: encodeJob(job),
    });
  }

  /** Takes the next slot (synchronously, so calls made together queue up) and waits for it. */
  private async pace(): Promise<void> {
    const rate = this.options.schedulesPerSecond;
    if (!rate) return;
    const now = this.options.now();
    const at = Math.max(now, this.nextSlot);
    this.nextSlot = at + 1000 / rate;
    if (at > now) await (this.options.sleep ?? sleep)(at - now);
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

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

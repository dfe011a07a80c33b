// EventBridge Scheduler plugs: retries and scheduled sends under a minute through SQS delays, beyond through
// one-shot schedules in the stack's groups. The Scheduler client and the SQS client.
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { AwsRetryScheduler, SCHEDULES_PER_SECOND } from '../../../adapters/aws/retry-scheduler';
import { AwsSendScheduler } from '../../../adapters/aws/send-scheduler';
import type { AwsPlug } from '../services';
import { deliveries, deliveriesQueue, queuedSends, sendsQueue } from './queues';

/** AwsRetryScheduler on the deliveries queue and the retries group (the delivery worker). */
export const scheduledRetries: AwsPlug = {
  requires: (ctx) => [
    ...deliveriesQueue.requires(ctx),
    ['SF_DELIVERIES_QUEUE_ARN', ctx.config.aws.deliveriesQueueArn],
    ['SF_SCHEDULE_GROUP', ctx.config.aws.scheduleGroup],
    ['SF_SCHEDULER_ROLE_ARN', ctx.config.aws.schedulerRoleArn],
    ['SF_SCHEDULER_DLQ_ARN', ctx.config.aws.schedulerDlqArn],
  ],
  build: (ctx) => ({
    retries: new AwsRetryScheduler({
      scheduler: ctx.client(SchedulerClient),
      queue: deliveries(ctx),
      groupName: String(ctx.config.aws.scheduleGroup),
      queueArn: String(ctx.config.aws.deliveriesQueueArn),
      roleArn: String(ctx.config.aws.schedulerRoleArn),
      dlqArn: String(ctx.config.aws.schedulerDlqArn),
      now: ctx.now,
      schedulesPerSecond: SCHEDULES_PER_SECOND,
    }),
  }),
};

/** AwsSendScheduler on the sends queue and the sends group, cancellable (the API). */
export const scheduledSends: AwsPlug = {
  requires: (ctx) => [
    ...queuedSends.requires(ctx),
    ['SF_SENDS_QUEUE_ARN', ctx.wiring.sendsQueueArn],
    ['SF_SENDS_SCHEDULE_GROUP', ctx.wiring.sendsScheduleGroup],
    ['SF_SENDS_SCHEDULER_ROLE_ARN', ctx.wiring.sendsSchedulerRoleArn],
    ['SF_SENDS_SCHEDULER_DLQ_ARN', ctx.wiring.sendsSchedulerDlqArn],
  ],
  build: (ctx) => ({
    sendScheduler: new AwsSendScheduler({
      scheduler: ctx.client(SchedulerClient),
      queue: sendsQueue(ctx),
      groupName: String(ctx.wiring.sendsScheduleGroup),
      queueArn: String(ctx.wiring.sendsQueueArn),
      roleArn: String(ctx.wiring.sendsSchedulerRoleArn),
      dlqArn: String(ctx.wiring.sendsSchedulerDlqArn),
      now: ctx.now,
    }),
  }),
};

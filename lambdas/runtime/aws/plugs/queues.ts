// SQS plugs: the events queue, the deliveries queue and its slow lane, and the queue-only retry and send
// schedulers (the reconciler's: what it re-queues is due now). Only the SQS client.
import { SQSClient } from '@aws-sdk/client-sqs';
import { QueueRetryScheduler } from '../../../adapters/aws/retry-scheduler';
import { QueueSendScheduler, SqsSendQueue } from '../../../adapters/aws/send-scheduler';
import {
  SQS_MAX_DELAY_SECONDS,
  SqsDeliveryQueue,
  SqsEventPublisher,
  SqsQueueDepth,
  SqsRecoveryQueue,
} from '../../../adapters/aws/sqs';
import { BypassDeliveryQueue } from '../../../app/webhooks/bypass-delivery-queue';
import { DELIVERIES_BYPASS } from '../../../manifest';
import type { AwsPlug } from '../services';

/** SqsEventPublisher on the events queue (the API, the send worker, the SES mapper, the reconciler). */
export const eventsQueue: AwsPlug = {
  requires: ({ config }) => [['SF_EVENTS_QUEUE_URL', config.aws.eventsQueueUrl]],
  build: (ctx) => ({ events: new SqsEventPublisher(ctx.client(SQSClient), String(ctx.config.aws.eventsQueueUrl)) }),
};

/**
 * SqsDeliveryQueue (the fan-out of every function that makes first attempts, the delivery worker's lane moves);
 * where the stack gives a function the bypass queue (SF_DELIVERIES_BYPASS_QUEUE_URL), its first attempts go there
 * while the deliveries queue is behind (BypassDeliveryQueue).
 */
export const deliveriesQueue: AwsPlug = {
  requires: ({ config }) => [['SF_DELIVERIES_QUEUE_URL', config.aws.deliveriesQueueUrl]],
  build: (ctx) => {
    const bypassUrl = ctx.wiring.deliveriesBypassQueueUrl;
    if (!bypassUrl) return { deliveryQueue: deliveries(ctx) };
    const client = ctx.client(SQSClient);
    const mainUrl = String(ctx.config.aws.deliveriesQueueUrl);
    return {
      deliveryQueue: new BypassDeliveryQueue(
        { queue: deliveries(ctx), depth: new SqsQueueDepth(client, mainUrl) },
        { queue: new SqsDeliveryQueue(client, bypassUrl), depth: new SqsQueueDepth(client, bypassUrl) },
        { now: ctx.now },
        DELIVERIES_BYPASS,
      ),
    };
  },
};

/** Recovery steps on the deliveries queue (the API starts a job, the delivery worker queues its next steps). */
export const recoverySteps: AwsPlug = {
  requires: deliveriesQueue.requires,
  build: (ctx) => ({
    recoveryQueue: new SqsRecoveryQueue(ctx.client(SQSClient), String(ctx.config.aws.deliveriesQueueUrl)),
  }),
};

/** The slow deliveries lane (the delivery worker sends slow endpoints' jobs there, and consumes it). */
export const slowLane: AwsPlug = {
  requires: ({ wiring }) => [
    ['SF_SLOW_DELIVERIES_QUEUE_URL', wiring.slowDeliveriesQueueUrl],
    ['SF_SLOW_DELIVERIES_QUEUE_ARN', wiring.slowDeliveriesQueueArn],
  ],
  build: (ctx) => ({
    slowLane: {
      queue: new SqsDeliveryQueue(ctx.client(SQSClient), String(ctx.wiring.slowDeliveriesQueueUrl)),
      steps: new SqsRecoveryQueue(ctx.client(SQSClient), String(ctx.wiring.slowDeliveriesQueueUrl)),
      arn: String(ctx.wiring.slowDeliveriesQueueArn),
      maxDelaySeconds: SQS_MAX_DELAY_SECONDS,
    },
  }),
};

/** The deliveries DLQs the delivery worker consumes: a record from one is a dead letter, recorded failed. */
export const deadLetters: AwsPlug = {
  requires: ({ wiring }) => [['SF_DELIVERY_DLQ_ARNS', wiring.deliveryDlqArns]],
  build: (ctx) => ({ deliveryDlqArns: String(ctx.wiring.deliveryDlqArns).split(',') }),
};

/** QueueRetryScheduler: retries on the deliveries queue only (the reconciler re-queues overdue attempts). */
export const queuedRetries: AwsPlug = {
  requires: deliveriesQueue.requires,
  build: (ctx) => ({ retries: new QueueRetryScheduler(deliveries(ctx)) }),
};

/** QueueSendScheduler: sends on the sends queue only (the reconciler re-queues overdue sends). */
export const queuedSends: AwsPlug = {
  requires: ({ wiring }) => [['SF_SENDS_QUEUE_URL', wiring.sendsQueueUrl]],
  build: (ctx) => ({ sendScheduler: new QueueSendScheduler(sendsQueue(ctx), ctx.now) }),
};

/** The deliveries queue on this cold start's SQS client (shared with the Scheduler plugs). */
export function deliveries(ctx: Parameters<AwsPlug['build']>[0]): SqsDeliveryQueue {
  return new SqsDeliveryQueue(ctx.client(SQSClient), String(ctx.config.aws.deliveriesQueueUrl));
}

/** The sends queue on this cold start's SQS client (shared with the Scheduler plugs). */
export function sendsQueue(ctx: Parameters<AwsPlug['build']>[0]): SqsSendQueue {
  return new SqsSendQueue(ctx.client(SQSClient), String(ctx.wiring.sendsQueueUrl));
}

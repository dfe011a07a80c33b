// Building blocks shared by the webhook and email pipelines: manifest queues with their DLQs, Scheduler DLQs,
// SQS event sources with partial batch responses, scoped send permissions, Scheduler trust, and the two
// alarms every queue gets (a dead-lettered message; the oldest message getting too old).
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Effect, type IRole, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { type QueueSpec, visibilityTimeoutSeconds } from '../../lambdas/manifest';
import type { NodeFunction } from './node-function';

/** DLQs keep messages for the SQS maximum, so nobody loses one over a long weekend. */
export const DLQ_RETENTION = Duration.days(14);

/**
 * Main queues keep messages for the SQS maximum too (the default is 4 days). A first attempt exists only as its
 * queue message until a worker claims it, so a backlog must drain before its oldest message expires: with 14 days
 * the queue outlives auto-disable's 5 days (a webhook failing that long is disabled first) and any backlog the
 * defaults leave (bench:scale drains a million pending deliveries in hours).
 */
export const QUEUE_RETENTION = Duration.days(14);

/**
 * A manifest queue: visibility 6× its consumer's time-out, redrive after maxReceiveCount, SSE, TLS only. Its own
 * DLQ, or `into` one it shares with another queue.
 */
export function queueWithDlq(
  scope: Construct,
  name: string,
  spec: QueueSpec,
  into?: Queue,
): { queue: Queue; dlq: Queue } {
  const dlq =
    into ??
    new Queue(scope, `${name}Dlq`, {
      retentionPeriod: DLQ_RETENTION,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
  const queue = new Queue(scope, `${name}Queue`, {
    retentionPeriod: QUEUE_RETENTION,
    visibilityTimeout: Duration.seconds(visibilityTimeoutSeconds(spec)),
    deadLetterQueue: { queue: dlq, maxReceiveCount: spec.maxReceiveCount },
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
  });
  return { queue, dlq };
}

/** Standard queue for a schedule's undeliverable events (Scheduler requires a standard queue). */
export function schedulerDlq(scope: Construct, id: string, what: string): Queue {
  const dlq = new Queue(scope, id, {
    retentionPeriod: DLQ_RETENTION,
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
  });
  Validations.of(dlq).acknowledge({
    id: 'AwsSolutions-SQS3',
    reason:
      `This queue is the EventBridge Scheduler dead-letter queue of ${what} (Target.DeadLetterConfig), which ` +
      'cdk-nag does not recognise as a DLQ; a DLQ has no DLQ of its own, and its depth is alarmed.',
  });
  return dlq;
}

/**
 * SQS event source with partial batch responses (one failed record is retried alone, not the batch) and a
 * bounded MaximumConcurrency, so no queue's backlog can take the account concurrency the API needs. It invokes
 * the function's `live` alias: during a canary deployment, the alias's weights split the batches between versions.
 */
export function consume(fn: NodeFunction, queue: Queue, spec: QueueSpec): void {
  fn.live.addEventSource(
    new SqsEventSource(queue, {
      batchSize: spec.batchSize,
      ...(spec.maxBatchingWindowSeconds ? { maxBatchingWindow: Duration.seconds(spec.maxBatchingWindowSeconds) } : {}),
      reportBatchItemFailures: true,
      maxConcurrency: spec.maxConcurrency,
    }),
  );
}

/** sqs:GetQueueAttributes (a queue's depth: the bypass's look, app/webhooks/bypass-delivery-queue) and nothing else. */
export function allowDepth(role: IRole, ...targets: Queue[]): void {
  role.addToPrincipalPolicy(
    new PolicyStatement({
      effect: Effect.ALLOW,
      actions: ['sqs:GetQueueAttributes'],
      resources: targets.map((queue) => queue.queueArn),
    }),
  );
}

/** scheduler.amazonaws.com, only on behalf of this account's schedules in `groupArn`. */
export function schedulerPrincipal(stack: Stack, groupArn: string): ServicePrincipal {
  return new ServicePrincipal('scheduler.amazonaws.com', {
    conditions: { StringEquals: { 'aws:SourceAccount': stack.account, 'aws:SourceArn': groupArn } },
  });
}

/** sqs:SendMessage (which also authorizes SendMessageBatch) and nothing else; SSE-SQS needs no KMS grant. */
export function allowSend(role: IRole, ...targets: Queue[]): void {
  role.addToPrincipalPolicy(
    new PolicyStatement({
      effect: Effect.ALLOW,
      actions: ['sqs:SendMessage'],
      resources: targets.map((queue) => queue.queueArn),
    }),
  );
}

/**
 * Alarms as soon as one message is dead-lettered: one visible in the DLQ, or, for a DLQ a function consumes
 * (`consumed`: its depth stays near 0), one received from it in a minute (every dead letter is received at least
 * once, and again each visibility timeout while its handling fails).
 */
export function dlqAlarm(scope: Construct, name: string, dlq: Queue, kind: 'kept' | 'consumed' = 'kept'): Alarm {
  const period = Duration.minutes(1);
  return new Alarm(scope, `${name}DepthAlarm`, {
    alarmName: stageAlarmName(scope, `${name}Depth`),
    alarmDescription:
      kind === 'consumed'
        ? `Sendflow ${name}: a job was dead-lettered; its delivery is recorded failed (see the runbook)`
        : `Sendflow ${name}: at least one message is dead-lettered; inspect and redrive it`,
    metric:
      kind === 'consumed'
        ? dlq.metricNumberOfMessagesReceived({ period, statistic: 'Sum' })
        : dlq.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
    threshold: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}

/** Alarms when the queue's oldest message is older than `seconds`: its consumer is failing or far behind. */
export function ageAlarm(scope: Construct, name: string, queue: Queue, seconds: number): Alarm {
  return new Alarm(scope, `${name}QueueOldestMessageAlarm`, {
    alarmName: stageAlarmName(scope, `${name}QueueOldestMessage`),
    alarmDescription: `Sendflow ${name.toLowerCase()} queue: oldest message older than ${seconds} s`,
    metric: queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), statistic: 'Maximum' }),
    threshold: seconds,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}

/**
 * `<stack name>-<suffix>`: alarm names are unique per account and region, and the stack name carries the stage,
 * so two stages never share one (and the name says at once which stage is paging).
 */
export function stageAlarmName(scope: Construct, suffix: string): string {
  return `${Stack.of(scope).stackName}-${suffix}`;
}

// The webhook pipeline on AWS (DESIGN §1, §4): events queue → dispatcher → deliveries queue → delivery worker,
// retries through SQS delays (< 60 s) or one-shot EventBridge Scheduler schedules in their own group, and a
// reconciler on a rate schedule that re-queues overdue retries. Every queue has a DLQ and an alarm on it (the
// deliveries DLQs, which the delivery worker drains, on the messages received from them); the main queues also
// alarm on the age of their oldest message. Queue settings come from the manifest.
import { Duration, Fn, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyStatement, Role } from 'aws-cdk-lib/aws-iam';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Schedule, ScheduleExpression, ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DEFAULT_DISABLE_AFTER_SECONDS } from '../../lambdas/domain/webhooks/auto-disable';
import { type QueueName, type QueueSpec, queues, RECONCILE_EVERY_MINUTES } from '../../lambdas/manifest';
import { DEFAULT_MAX_CONCURRENCY, type MaxConcurrency } from '../consumers';
import { NodeFunction } from './node-function';
import {
  ageAlarm,
  allowDepth,
  allowSend,
  consume,
  dlqAlarm,
  queueWithDlq,
  schedulerDlq,
  schedulerPrincipal,
} from './queues';
import { quickjsWasmBundling } from './quickjs-wasm';

/**
 * Age of the oldest message before its queue alarms, seconds. Events: the dispatcher only reads webhooks and
 * writes jobs, so a healthy queue drains in seconds; 5 minutes means it is failing or far behind, and every
 * webhook is that late. Deliveries: a job may legitimately wait up to 59 s of DelaySeconds plus a backlog of
 * slow endpoints (10 s each); 15 minutes behind means the retry schedule (next step 30 min) is no longer kept.
 */
export const OLDEST_MESSAGE_ALARM_SECONDS: Readonly<Record<'events' | 'deliveries' | 'slowDeliveries', number>> = {
  events: 300,
  deliveries: 900,
  // The slow lane is slow by design (hanging endpoints, 5 at a time), but 30 minutes behind skips a retry step.
  slowDeliveries: 1800,
};

/**
 * MaximumConcurrency of the delivery worker on each deliveries DLQ (Lambda's least): a dead letter is rare, and
 * its handling (a claim and a record) is quick. Counted in the concurrency check (lib/concurrency.ts).
 */
export const DEAD_LETTER_CONCURRENCY = 2;

/** How long the reconciler may run: it pages through overdue deliveries for up to 40 s (reconcile.ts), then the rest. */
const RECONCILER_TIMEOUT = Duration.seconds(60);

export interface DeliveryPipelineProps {
  /** Variables every function gets (table names, limits): loadConfig requires them. */
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetention: RetentionDays;
  /** MaximumConcurrency of the events, deliveries, bypass and slow-lane consumers; the defaults when omitted. */
  readonly maxConcurrency?: Pick<MaxConcurrency, 'events' | 'deliveries' | 'deliveriesBypass' | 'slowDeliveries'>;
  /** Auto-disable's window, seconds (the worker's SF_WEBHOOK_DISABLE_AFTER_SECONDS); the runtime's default when omitted. */
  readonly webhookDisableAfterSeconds?: number;
}

export class DeliveryPipeline extends Construct {
  readonly eventsQueue: Queue;
  readonly eventsDlq: Queue;
  readonly deliveriesQueue: Queue;
  readonly deliveriesDlq: Queue;
  /**
   * The shared lane's bypass (manifest DELIVERIES_BYPASS): first attempts go there while the deliveries queue is
   * behind. The deliveries queue's settings and DLQ, consumed by the same worker as the shared lane.
   */
  readonly deliveriesBypassQueue: Queue;
  /** The slow lane (DESIGN §4, isolation): consumed by the same worker with its own small concurrency. */
  readonly slowDeliveriesQueue: Queue;
  readonly slowDeliveriesDlq: Queue;
  /** Where Scheduler puts retry schedules it could not deliver to the deliveries queue. */
  readonly retryScheduleDlq: Queue;
  /** Where Scheduler puts reconciler invocations it could not make. */
  readonly reconcileScheduleDlq: Queue;
  readonly retryGroup: ScheduleGroup;
  /** Assumed by Scheduler for the retry schedules: may only send to the deliveries queue and its DLQ. */
  readonly schedulerRole: Role;
  readonly dispatcher: NodeFunction;
  readonly delivery: NodeFunction;
  readonly reconciler: NodeFunction;
  readonly reconcileSchedule: Schedule;
  /** Each main queue's oldest-message alarm: deliveries are late (a page, lib/constructs/monitoring.ts). */
  readonly ageAlarms: readonly Alarm[];
  /**
   * Each DLQ's alarm by queue: work set aside (data at risk, a page); a canary deployment of the function that
   * feeds one rolls back on it.
   */
  readonly deadLetterAlarms: Readonly<
    Record<'events' | 'deliveries' | 'slowDeliveries' | 'retrySchedules' | 'reconcileSchedule', Alarm>
  >;

  constructor(scope: Construct, id: string, props: DeliveryPipelineProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const spec = (name: QueueName & keyof NonNullable<DeliveryPipelineProps['maxConcurrency']>): QueueSpec => ({
      ...queues[name],
      maxConcurrency: props.maxConcurrency?.[name] ?? queues[name].maxConcurrency,
    });

    ({ queue: this.eventsQueue, dlq: this.eventsDlq } = queueWithDlq(this, 'Events', queues.events));
    ({ queue: this.deliveriesQueue, dlq: this.deliveriesDlq } = queueWithDlq(this, 'Deliveries', queues.deliveries));
    this.deliveriesBypassQueue = queueWithDlq(this, 'DeliveriesBypass', queues.deliveries, this.deliveriesDlq).queue;
    ({ queue: this.slowDeliveriesQueue, dlq: this.slowDeliveriesDlq } = queueWithDlq(
      this,
      'SlowDeliveries',
      queues.slowDeliveries,
    ));
    this.retryScheduleDlq = schedulerDlq(this, 'RetryScheduleDlq', 'retry schedules');
    this.reconcileScheduleDlq = schedulerDlq(this, 'ReconcileScheduleDlq', 'the reconciler schedule');

    // Retries: one-shot schedules created at run time by the delivery worker, each deleted after it fires.
    // Not retained: its schedules target this stack's queues, which go with it; the next deploy of the stage
    // creates the group again under the same stage-qualified name.
    this.retryGroup = new ScheduleGroup(this, 'RetryGroup', {
      scheduleGroupName: `${stack.stackName}-retries`,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.schedulerRole = new Role(this, 'SchedulerRole', {
      description:
        'Assumed by EventBridge Scheduler for webhook retry schedules: sends the job to the deliveries queue',
      // Confused-deputy guard: only schedules of this account's retry group may use the role.
      assumedBy: schedulerPrincipal(stack, this.retryGroup.scheduleGroupArn),
    });
    // Input goes to the deliveries queue; undeliverable events go to the DLQ with the same role.
    allowSend(this.schedulerRole, this.deliveriesQueue, this.retryScheduleDlq);

    const common = { logRetention: props.logRetention, memorySize: 512 };
    this.dispatcher = new NodeFunction(this, 'Dispatcher', {
      ...common,
      entry: 'lambdas/runtime/aws/dispatcher.ts',
      description: 'Sendflow dispatcher: one event to a delivery job per subscribed webhook',
      serviceName: 'sendflow-dispatcher',
      timeout: Duration.seconds(queues.events.functionTimeoutSeconds),
      environment: { ...props.environment, SF_DELIVERIES_QUEUE_URL: this.deliveriesQueue.queueUrl },
    });
    allowSend(this.dispatcher.role, this.deliveriesQueue);
    this.bypassFirstAttempts(this.dispatcher);
    consume(this.dispatcher, this.eventsQueue, spec('events'));

    this.delivery = new NodeFunction(this, 'Delivery', {
      ...common,
      entry: 'lambdas/runtime/aws/delivery.ts',
      description: 'Sendflow delivery worker: one signed webhook attempt per job, then the retry on schedule',
      serviceName: 'sendflow-delivery',
      // Webhook transformations run here (each attempt's request): the sandbox's WebAssembly beside the bundle.
      afterBundling: quickjsWasmBundling,
      timeout: Duration.seconds(queues.deliveries.functionTimeoutSeconds),
      environment: {
        ...props.environment,
        SF_DELIVERIES_QUEUE_URL: this.deliveriesQueue.queueUrl,
        SF_DELIVERIES_QUEUE_ARN: this.deliveriesQueue.queueArn,
        SF_SCHEDULE_GROUP: this.retryGroup.scheduleGroupName,
        SF_SCHEDULER_ROLE_ARN: this.schedulerRole.roleArn,
        SF_SCHEDULER_DLQ_ARN: this.retryScheduleDlq.queueArn,
        SF_SLOW_DELIVERIES_QUEUE_URL: this.slowDeliveriesQueue.queueUrl,
        SF_SLOW_DELIVERIES_QUEUE_ARN: this.slowDeliveriesQueue.queueArn,
        SF_DELIVERY_DLQ_ARNS: Fn.join(',', [this.deliveriesDlq.queueArn, this.slowDeliveriesDlq.queueArn]),
        SF_WEBHOOK_DISABLE_AFTER_SECONDS: String(props.webhookDisableAfterSeconds ?? DEFAULT_DISABLE_AFTER_SECONDS),
      },
    });
    allowSend(this.delivery.role, this.deliveriesQueue, this.slowDeliveriesQueue);
    const schedules = stack.formatArn({
      service: 'scheduler',
      resource: 'schedule',
      resourceName: `${this.retryGroup.scheduleGroupName}/*`,
    });
    this.delivery.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['scheduler:CreateSchedule'], resources: [schedules] }),
    );
    this.delivery.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.schedulerRole.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
    Validations.of(this.delivery.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${this.retryGroup.scheduleGroupName}/*]`,
      reason:
        'Retry schedules are created at run time, one per delivery attempt, with names derived from the ' +
        'delivery id; the wildcard is the schedule name inside our own retry group, and the only action is ' +
        'scheduler:CreateSchedule.',
    });
    consume(this.delivery, this.deliveriesQueue, spec('deliveries'));
    consume(this.delivery, this.deliveriesBypassQueue, {
      ...queues.deliveries,
      maxConcurrency: props.maxConcurrency?.deliveriesBypass ?? DEFAULT_MAX_CONCURRENCY.deliveriesBypass,
    });
    consume(this.delivery, this.slowDeliveriesQueue, spec('slowDeliveries'));
    // A first attempt's row is in no due index, so a job that dead-letters must not leave it pending: the worker
    // consumes both DLQs and records their jobs' deliveries failed (docs/architecture.md, "Never lost"). The
    // DLQs are drained at once, so their alarms count the messages received from them.
    for (const dlq of [this.deliveriesDlq, this.slowDeliveriesDlq]) {
      consume(this.delivery, dlq, { ...queues.deliveries, maxConcurrency: DEAD_LETTER_CONCURRENCY });
    }

    this.reconciler = new NodeFunction(this, 'Reconciler', {
      ...common,
      memorySize: 256,
      entry: 'lambdas/runtime/aws/reconciler.ts',
      description: 'Sendflow reconciler: re-queues pending webhook attempts that are overdue',
      serviceName: 'sendflow-reconciler',
      timeout: RECONCILER_TIMEOUT,
      environment: { ...props.environment, SF_DELIVERIES_QUEUE_URL: this.deliveriesQueue.queueUrl },
    });
    allowSend(this.reconciler.role, this.deliveriesQueue);
    const reconcileRole = new Role(this, 'ReconcileScheduleRole', {
      description: 'Assumed by EventBridge Scheduler to invoke the Sendflow reconciler',
      assumedBy: schedulerPrincipal(
        stack,
        stack.formatArn({ service: 'scheduler', resource: 'schedule-group', resourceName: 'default' }),
      ),
    });
    this.reconcileSchedule = new Schedule(this, 'ReconcileSchedule', {
      description: 'Runs the Sendflow reconciler: overdue webhook attempts are queued again',
      schedule: ScheduleExpression.rate(Duration.minutes(RECONCILE_EVERY_MINUTES)),
      // A missed run is made up by the next one a minute later: retry briefly, then give up into the DLQ.
      target: new LambdaInvoke(this.reconciler.live, {
        role: reconcileRole,
        deadLetterQueue: this.reconcileScheduleDlq,
        retryAttempts: 2,
        maxEventAge: Duration.minutes(5),
      }),
    });
    // The schedule invokes the reconciler's `live` alias: the role may invoke that alias and nothing else.

    this.ageAlarms = [
      ageAlarm(this, 'Events', this.eventsQueue, OLDEST_MESSAGE_ALARM_SECONDS.events),
      ageAlarm(this, 'Deliveries', this.deliveriesQueue, OLDEST_MESSAGE_ALARM_SECONDS.deliveries),
      ageAlarm(this, 'DeliveriesBypass', this.deliveriesBypassQueue, OLDEST_MESSAGE_ALARM_SECONDS.deliveries),
      ageAlarm(this, 'SlowDeliveries', this.slowDeliveriesQueue, OLDEST_MESSAGE_ALARM_SECONDS.slowDeliveries),
    ];
    this.deadLetterAlarms = {
      events: dlqAlarm(this, 'EventsDlq', this.eventsDlq),
      deliveries: dlqAlarm(this, 'DeliveriesDlq', this.deliveriesDlq, 'consumed'),
      slowDeliveries: dlqAlarm(this, 'SlowDeliveriesDlq', this.slowDeliveriesDlq, 'consumed'),
      retrySchedules: dlqAlarm(this, 'RetryScheduleDlq', this.retryScheduleDlq),
      reconcileSchedule: dlqAlarm(this, 'ReconcileScheduleDlq', this.reconcileScheduleDlq),
    };
  }

  /**
   * A function that sends first attempts (its fan-out) sends them to the bypass while the deliveries queue is
   * behind: the bypass queue's URL, sqs:SendMessage on it, and sqs:GetQueueAttributes on both queues (their depth).
   */
  bypassFirstAttempts(fn: NodeFunction): void {
    fn.handler.addEnvironment('SF_DELIVERIES_BYPASS_QUEUE_URL', this.deliveriesBypassQueue.queueUrl);
    allowSend(fn.role, this.deliveriesBypassQueue);
    allowDepth(fn.role, this.deliveriesQueue, this.deliveriesBypassQueue);
  }
}

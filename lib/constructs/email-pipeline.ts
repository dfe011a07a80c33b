// The email side on AWS (DESIGN §6). Scheduled sends: the sends queue (with its DLQ) → the send worker, fed
// by SQS DelaySeconds under a minute and by one-shot EventBridge Scheduler schedules in their own group
// beyond, through a role that may only send to that queue and the schedule DLQ. Queues and DLQs alarm.
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyStatement, Role } from 'aws-cdk-lib/aws-iam';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { queues } from '../../lambdas/manifest';
import { NodeFunction } from './node-function';
import { ageAlarm, allowSend, consume, dlqAlarm, queueWithDlq, schedulerDlq, schedulerPrincipal } from './queues';

/**
 * Age of the oldest message on the sends queue before it alarms, seconds. A send waits at most 59 s of
 * DelaySeconds and the worker hands each email over in well under a second, so 5 minutes behind means the
 * worker is failing and scheduled emails are going out late.
 */
export const SENDS_OLDEST_MESSAGE_ALARM_SECONDS = 300;

export interface EmailPipelineProps {
  /** Variables every function gets (table names, limits): loadConfig requires them. */
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetention: RetentionDays;
  /** Where the send worker publishes events (the simulator's, in test mode). */
  readonly eventsQueue: Queue;
}

export class EmailPipeline extends Construct {
  readonly sendsQueue: Queue;
  readonly sendsDlq: Queue;
  /** Where Scheduler puts scheduled sends it could not deliver to the sends queue. */
  readonly sendScheduleDlq: Queue;
  readonly sendGroup: ScheduleGroup;
  /** Assumed by Scheduler for send schedules: may only send to the sends queue and its schedule DLQ. */
  readonly sendSchedulerRole: Role;
  readonly sender: NodeFunction;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: EmailPipelineProps) {
    super(scope, id);
    const stack = Stack.of(this);

    ({ queue: this.sendsQueue, dlq: this.sendsDlq } = queueWithDlq(this, 'Sends', queues.sends));
    this.sendScheduleDlq = schedulerDlq(this, 'SendScheduleDlq', 'scheduled sends');
    // One-shot schedules created at run time by the API (one per scheduled email), each deleted after it fires.
    this.sendGroup = new ScheduleGroup(this, 'SendGroup', { scheduleGroupName: `${stack.stackName}-sends` });
    this.sendSchedulerRole = new Role(this, 'SendSchedulerRole', {
      description: 'Assumed by EventBridge Scheduler for scheduled sends: puts the email id on the sends queue',
      // Confused-deputy guard: only schedules of this account's sends group may use the role.
      assumedBy: schedulerPrincipal(stack, this.sendGroup.scheduleGroupArn),
    });
    allowSend(this.sendSchedulerRole, this.sendsQueue, this.sendScheduleDlq);

    this.sender = new NodeFunction(this, 'Sender', {
      entry: 'lambdas/runtime/aws/sender.ts',
      description: 'Sendflow send worker: scheduled emails whose time has come go to the provider',
      serviceName: 'sendflow-sender',
      timeout: Duration.seconds(queues.sends.functionTimeoutSeconds),
      memorySize: 512,
      logRetention: props.logRetention,
      environment: { ...props.environment, SF_EVENTS_QUEUE_URL: props.eventsQueue.queueUrl },
    });
    allowSend(this.sender.role, props.eventsQueue);
    consume(this.sender, this.sendsQueue, queues.sends);

    this.alarms.push(
      ageAlarm(this, 'Sends', this.sendsQueue, SENDS_OLDEST_MESSAGE_ALARM_SECONDS),
      dlqAlarm(this, 'SendsDlq', this.sendsDlq),
      dlqAlarm(this, 'SendScheduleDlq', this.sendScheduleDlq),
    );
  }

  /** What a function needs to schedule and cancel sends (runtime/aws AwsSendScheduler). */
  schedulingEnvironment(): Record<string, string> {
    return {
      SF_SENDS_QUEUE_URL: this.sendsQueue.queueUrl,
      SF_SENDS_QUEUE_ARN: this.sendsQueue.queueArn,
      SF_SENDS_SCHEDULE_GROUP: this.sendGroup.scheduleGroupName,
      SF_SENDS_SCHEDULER_ROLE_ARN: this.sendSchedulerRole.roleArn,
      SF_SENDS_SCHEDULER_DLQ_ARN: this.sendScheduleDlq.queueArn,
    };
  }

  /**
   * Lets `fn` schedule and cancel sends: Create/DeleteSchedule on schedules of the sends group only, pass the
   * send scheduler role to Scheduler only, and put sends due within a minute on the queue directly.
   */
  grantScheduling(fn: NodeFunction): void {
    const stack = Stack.of(this);
    const groupName = this.sendGroup.scheduleGroupName;
    allowSend(fn.role, this.sendsQueue);
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['scheduler:CreateSchedule', 'scheduler:DeleteSchedule'],
        resources: [stack.formatArn({ service: 'scheduler', resource: 'schedule', resourceName: `${groupName}/*` })],
      }),
    );
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.sendSchedulerRole.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
    Validations.of(fn.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${groupName}/*]`,
      reason:
        'Send schedules are created at run time, one per scheduled email, named after the email id; the ' +
        'wildcard is the schedule name inside our own sends group, and the only actions are ' +
        'scheduler:CreateSchedule and scheduler:DeleteSchedule.',
    });
  }
}

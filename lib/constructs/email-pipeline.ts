// The email side on AWS (DESIGN §6). Scheduled sends: the sends queue (with its DLQ) → the send worker, fed
// by SQS DelaySeconds under a minute and by one-shot EventBridge Scheduler schedules in their own group
// beyond, through a role that may only send to that queue and the schedule DLQ. SES: a configuration set
// whose event destination is the default EventBridge bus; a rule for that configuration set's events → the
// provider-events queue (with its DLQ) → the mapper, which processes our events where they arrive (history,
// suppressions, webhook fan-out onto the deliveries queue). Queues and DLQs alarm.
import { Annotations, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { EventBus, Rule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement, Role } from 'aws-cdk-lib/aws-iam';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import { ConfigurationSet, EmailSendingEvent, EventDestination } from 'aws-cdk-lib/aws-ses';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { configurationSetFor, TRACKING_VARIANTS } from '../../lambdas/adapters/ses/configuration-sets';
import { NO_TRACKING, type Tracking } from '../../lambdas/app/domains/tracking';
import { EMAIL_LIMITS } from '../../lambdas/domain/email/limits';
import { type QueueSpec, queues, SES_IDENTITY_TAGS } from '../../lambdas/manifest';
import type { MaxConcurrency } from '../consumers';
import { NodeFunction } from './node-function';
import { ageAlarm, allowSend, consume, dlqAlarm, queueWithDlq, schedulerDlq, schedulerPrincipal } from './queues';

/**
 * Age of the oldest message on the sends queue before it alarms, seconds. A send waits at most 59 s of
 * DelaySeconds and the worker hands each email over in well under a second, so 5 minutes behind means the
 * worker is failing and scheduled emails are going out late.
 */
export const SENDS_OLDEST_MESSAGE_ALARM_SECONDS = 300;

/**
 * The provider-events queue (AWS only, so not in the manifest): SES events in their EventBridge envelope →
 * the mapper, which maps them and processes them as the dispatcher does, so a batch takes well under a second.
 */
export const PROVIDER_EVENTS_QUEUE: QueueSpec = {
  functionTimeoutSeconds: 30,
  batchSize: 10,
  maxReceiveCount: 5,
  maxConcurrency: 10,
};
/** A healthy mapper drains the queue in seconds; 5 minutes behind means every webhook is that late. */
export const PROVIDER_EVENTS_OLDEST_MESSAGE_ALARM_SECONDS = 300;

/**
 * One send worker invocation's share of the account's sending rate: the rate over the sends consumer's
 * MaximumConcurrency, so all invocations together stay under it. Rounded down to a thousandth of an email per
 * second (never over the account's rate); with a rate of at least 1 and at most 1000 invocations the share is
 * at least 0.001, never 0.
 */
export function sendRateShare(accountRate: number, sendsConcurrency: number): number {
  return Math.floor((accountRate * 1000) / sendsConcurrency) / 1000;
}

/**
 * Seconds of an invocation in which the send worker may start copies: its time-out less the deadline margin
 * (lambdas/handlers/queue/send-worker.ts SEND_DEADLINE_MARGIN_MS, 15 s).
 */
export const SEND_WINDOW_SECONDS = queues.sends.functionTimeoutSeconds - 15;
/** Warning id when a share cannot send one full email (EMAIL_LIMITS.recipients copies) in one invocation. */
export const SLOW_SHARE_WARNING = '@sendflow/send-rate-share';

/**
 * SES events every configuration set publishes to EventBridge: all but Send (the send worker tells email.sent
 * itself when SES takes a copy, so no Send event crosses EventBridge and the queues), Subscription (Sendflow does
 * not use SES list management) and the tracking events, which only the tracking sets add (trackedEventTypes).
 */
export const SES_EVENT_TYPES = [
  EmailSendingEvent.REJECT,
  EmailSendingEvent.BOUNCE,
  EmailSendingEvent.COMPLAINT,
  EmailSendingEvent.DELIVERY,
  EmailSendingEvent.RENDERING_FAILURE,
  EmailSendingEvent.DELIVERY_DELAY,
] as const;

/**
 * A set's event types for a tracking combination. SES adds the open pixel, or rewrites links, only for a set
 * whose destination takes open or click events: so the base set takes neither, and every email goes without
 * unless its sender domain turned tracking on (lambdas/adapters/ses/configuration-sets.ts).
 */
export function trackedEventTypes(tracking: Tracking): EmailSendingEvent[] {
  return [
    ...SES_EVENT_TYPES,
    ...(tracking.open ? [EmailSendingEvent.OPEN] : []),
    ...(tracking.click ? [EmailSendingEvent.CLICK] : []),
  ];
}

/** Their EventBridge detail-types (research/email.md §1.1), which the rule matches. */
export const SES_DETAIL_TYPES = [
  'Email Rejected',
  'Email Bounced',
  'Email Complaint Received',
  'Email Delivered',
  'Email Opened',
  'Email Clicked',
  'Email Rendering Failed',
  'Email Delivery Delayed',
] as const;

/** SES identity actions for domains: the API adds, reads and deletes them; the reconciler only reads. */
export type IdentityAction = 'ses:CreateEmailIdentity' | 'ses:GetEmailIdentity' | 'ses:DeleteEmailIdentity';

export interface EmailPipelineProps {
  /** Variables every function gets (table names, limits): loadConfig requires them. */
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetention: RetentionDays;
  /** Where the send worker publishes events (the simulator's, in test mode; the ones it could not process). */
  readonly eventsQueue: Queue;
  /**
   * Where the send worker's own email.sent and the SES mapper's events fan out: both process their events where
   * they arise, as the dispatcher does with the events queue's.
   */
  readonly deliveriesQueue: Queue;
  /** MaximumConcurrency of the sends and provider-events consumers; the manifest's when omitted. */
  readonly maxConcurrency?: Pick<MaxConcurrency, 'sends' | 'providerEvents'>;
  /**
   * The SES account's sending rate, emails per second: each send worker invocation paces its live-mode
   * SendEmail calls at its share (sendRateShare). No pacing when omitted.
   */
  readonly sesMaxSendRate?: number;
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
  /** Untracked emails name it (no open or click events); its event destination is the default EventBridge bus. */
  readonly configurationSet: ConfigurationSet;
  readonly configurationSetName: string;
  /** Every set, the base one first, then one per tracking combination (`-open`, `-click`, `-open-click`). */
  readonly configurationSetNames: string[];
  readonly providerEventsQueue: Queue;
  readonly providerEventsDlq: Queue;
  readonly sesEventsRule: Rule;
  /** The mapper: SES events → our events, processed where they arrive. */
  readonly sesEvents: NodeFunction;
  /** The sends queue's oldest-message alarm: sends are late (a page, with SendLag). */
  readonly sendsAgeAlarm: Alarm;
  /** The provider-events queue's: SES events, and so their webhooks, are late (a page). */
  readonly providerEventsAgeAlarm: Alarm;
  /**
   * Each DLQ's alarm by queue: work set aside (data at risk, a page); a canary deployment of the function that
   * feeds one rolls back on it.
   */
  readonly deadLetterAlarms: Readonly<Record<'sends' | 'sendSchedules' | 'providerEvents', Alarm>>;

  constructor(scope: Construct, id: string, props: EmailPipelineProps) {
    super(scope, id);
    const stack = Stack.of(this);

    ({ queue: this.sendsQueue, dlq: this.sendsDlq } = queueWithDlq(this, 'Sends', queues.sends));
    this.sendScheduleDlq = schedulerDlq(this, 'SendScheduleDlq', 'scheduled sends');
    // One-shot schedules created at run time by the API (one per scheduled email), each deleted after it fires.
    // Not retained, like the retry group: its schedules target this stack's sends queue.
    this.sendGroup = new ScheduleGroup(this, 'SendGroup', {
      scheduleGroupName: `${stack.stackName}-sends`,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.sendSchedulerRole = new Role(this, 'SendSchedulerRole', {
      description: 'Assumed by EventBridge Scheduler for scheduled sends: puts the email id on the sends queue',
      // Confused-deputy guard: only schedules of this account's sends group may use the role.
      assumedBy: schedulerPrincipal(stack, this.sendGroup.scheduleGroupArn),
    });
    allowSend(this.sendSchedulerRole, this.sendsQueue, this.sendScheduleDlq);

    const sends = { ...queues.sends, maxConcurrency: props.maxConcurrency?.sends ?? queues.sends.maxConcurrency };
    const providerEvents = {
      ...PROVIDER_EVENTS_QUEUE,
      maxConcurrency: props.maxConcurrency?.providerEvents ?? PROVIDER_EVENTS_QUEUE.maxConcurrency,
    };
    // Each invocation paces itself at its share, so the sends consumer as a whole stays under the account's rate.
    const share =
      props.sesMaxSendRate === undefined ? undefined : sendRateShare(props.sesMaxSendRate, sends.maxConcurrency);
    const pacing: Record<string, string> = share === undefined ? {} : { SF_SES_MAX_SEND_RATE: String(share) };
    if (share !== undefined && share * SEND_WINDOW_SECONDS < EMAIL_LIMITS.recipients) {
      // Not an error (a sandbox account sends 1/s): such emails go out over several receives of their message.
      Annotations.of(this).addWarningV2(
        SLOW_SHARE_WARNING,
        `Each send worker invocation may send ${share}/s (sendflow:sesMaxSendRate ${props.sesMaxSendRate} over ` +
          `${sends.maxConcurrency} invocations): an email to ${EMAIL_LIMITS.recipients} recipients needs ` +
          `${Math.ceil(EMAIL_LIMITS.recipients / share)} s, more than the ${SEND_WINDOW_SECONDS} s an invocation ` +
          'has, so it goes out over several receives (6 minutes apart). Lower the sends concurrency ' +
          '(sendflow:maxConcurrency) or raise the rate.',
      );
    }
    this.sender = new NodeFunction(this, 'Sender', {
      entry: 'lambdas/runtime/aws/sender.ts',
      description: 'Sendflow send worker: scheduled emails whose time has come go to the provider',
      serviceName: 'sendflow-sender',
      timeout: Duration.seconds(queues.sends.functionTimeoutSeconds),
      memorySize: 512,
      logRetention: props.logRetention,
      environment: {
        ...props.environment,
        SF_EVENTS_QUEUE_URL: props.eventsQueue.queueUrl,
        SF_DELIVERIES_QUEUE_URL: props.deliveriesQueue.queueUrl,
        // An email of a batch the worker has no time left to start goes back onto its own queue.
        SF_SENDS_QUEUE_URL: this.sendsQueue.queueUrl,
        ...pacing,
      },
    });
    allowSend(this.sender.role, props.eventsQueue, props.deliveriesQueue, this.sendsQueue);
    consume(this.sender, this.sendsQueue, sends);

    // SES → EventBridge (default bus: the only one SES publishes to) → our queue. The rule matches these
    // configuration sets only, through the tag SES puts on every event of a message sent with one.
    this.configurationSetName = `${stack.stackName}-email-events`;
    const defaultBus = EventBus.fromEventBusName(this, 'DefaultBus', 'default');
    const configurationSet = (id: string, tracking: Tracking): ConfigurationSet => {
      const set = new ConfigurationSet(this, id, {
        configurationSetName: configurationSetFor(this.configurationSetName, tracking),
        reputationMetrics: true,
        sendingEnabled: true,
      });
      set.addEventDestination('EventBridge', {
        destination: EventDestination.eventBus(defaultBus),
        events: trackedEventTypes(tracking),
      });
      return set;
    };
    this.configurationSet = configurationSet('ConfigurationSet', NO_TRACKING);
    for (const tracking of TRACKING_VARIANTS) {
      const suffix = `${tracking.open ? 'Open' : ''}${tracking.click ? 'Click' : ''}`;
      configurationSet(`TrackingConfigurationSet${suffix}`, tracking);
    }
    this.configurationSetNames = [NO_TRACKING, ...TRACKING_VARIANTS].map((tracking) =>
      configurationSetFor(this.configurationSetName, tracking),
    );
    ({ queue: this.providerEventsQueue, dlq: this.providerEventsDlq } = queueWithDlq(
      this,
      'ProviderEvents',
      PROVIDER_EVENTS_QUEUE,
    ));
    this.sesEventsRule = new Rule(this, 'SesEventsRule', {
      description: `SES events of the ${this.configurationSetName} configuration set → the provider-events queue`,
      eventPattern: {
        source: ['aws.ses'],
        detailType: [...SES_DETAIL_TYPES],
        detail: { mail: { tags: { 'ses:configuration-set': this.configurationSetNames } } },
      },
      // An event EventBridge cannot deliver lands in the same DLQ as one the mapper cannot handle: both are
      // the same envelope, so one redrive to the provider-events queue replays either.
      targets: [
        new SqsQueue(this.providerEventsQueue, {
          deadLetterQueue: this.providerEventsDlq,
          retryAttempts: 185,
          maxEventAge: Duration.hours(24),
        }),
      ],
    });
    this.sesEvents = new NodeFunction(this, 'SesEvents', {
      entry: 'lambdas/runtime/aws/ses-events.ts',
      description: 'Sendflow SES event mapper: SES events of our configuration sets to Sendflow events, processed',
      serviceName: 'sendflow-ses-events',
      timeout: Duration.seconds(PROVIDER_EVENTS_QUEUE.functionTimeoutSeconds),
      memorySize: 256,
      logRetention: props.logRetention,
      environment: { ...props.environment, SF_DELIVERIES_QUEUE_URL: props.deliveriesQueue.queueUrl },
    });
    allowSend(this.sesEvents.role, props.deliveriesQueue);
    consume(this.sesEvents, this.providerEventsQueue, providerEvents);

    this.sendsAgeAlarm = ageAlarm(this, 'Sends', this.sendsQueue, SENDS_OLDEST_MESSAGE_ALARM_SECONDS);
    this.providerEventsAgeAlarm = ageAlarm(
      this,
      'ProviderEvents',
      this.providerEventsQueue,
      PROVIDER_EVENTS_OLDEST_MESSAGE_ALARM_SECONDS,
    );
    this.deadLetterAlarms = {
      sends: dlqAlarm(this, 'SendsDlq', this.sendsDlq),
      sendSchedules: dlqAlarm(this, 'SendScheduleDlq', this.sendScheduleDlq),
      providerEvents: dlqAlarm(this, 'ProviderEventsDlq', this.providerEventsDlq),
    };
  }

  /**
   * The `sendflow:managed` tag value of this deployment's SES identities: the stack's (stage-qualified) name.
   * Identities outlive the stack (CloudFormation does not manage them), so a redeploy under the same name
   * finds its own again, and another stage's, or the operator's untagged ones, are never ours.
   */
  get identityOwner(): string {
    return Stack.of(this).stackName;
  }

  /**
   * Lets `fn` send through SES: ses:SendEmail from identities this deployment created (tagged
   * `sendflow:managed` = identityOwner, so never the operator's own or another stage's) and with our
   * configuration set, which SES authorizes separately whenever a send names one. No IAM condition key names
   * the configuration set, so the configuration-set resource is the scope: naming any other set is denied.
   */
  grantSending(fn: NodeFunction): void {
    const stack = Stack.of(this);
    fn.handler.addEnvironment('SF_SES_CONFIGURATION_SET', this.configurationSetName);
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['ses:SendEmail'],
        resources: [identityArns(stack)],
        conditions: { StringEquals: { [`aws:ResourceTag/${SES_IDENTITY_TAGS.managed}`]: this.identityOwner } },
      }),
    );
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['ses:SendEmail'],
        resources: this.configurationSetNames.map((resourceName) =>
          stack.formatArn({ service: 'ses', resource: 'configuration-set', resourceName }),
        ),
      }),
    );
    acknowledgeIdentities(fn, 'Customers send from their own verified domains, added at run time (POST /v1/domains)');
  }

  /**
   * Lets `fn` manage domain identities (Easy DKIM), and only this deployment's: it may create an identity only
   * with our two tags (SES needs ses:TagResource for tags given at creation, allowed under the same
   * conditions), and read or delete only an identity tagged `sendflow:managed` = identityOwner. The app then
   * checks the `sendflow:account` tag against the caller (lambdas/adapters/ses/ses-domains.ts), which IAM cannot.
   */
  grantIdentities(fn: NodeFunction, actions: readonly IdentityAction[]): void {
    const stack = Stack.of(this);
    const owner = this.identityOwner;
    fn.handler.addEnvironment('SF_SES_IDENTITY_OWNER', owner);
    if (actions.includes('ses:CreateEmailIdentity')) {
      fn.role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: ['ses:CreateEmailIdentity', 'ses:TagResource'],
          resources: [identityArns(stack)],
          conditions: {
            StringEquals: { [`aws:RequestTag/${SES_IDENTITY_TAGS.managed}`]: owner },
            Null: { [`aws:RequestTag/${SES_IDENTITY_TAGS.account}`]: 'false' },
            'ForAllValues:StringEquals': { 'aws:TagKeys': [SES_IDENTITY_TAGS.managed, SES_IDENTITY_TAGS.account] },
          },
        }),
      );
    }
    const onOurs = actions.filter((action) => action !== 'ses:CreateEmailIdentity');
    if (onOurs.length) {
      fn.role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: onOurs,
          resources: [identityArns(stack)],
          conditions: { StringEquals: { [`aws:ResourceTag/${SES_IDENTITY_TAGS.managed}`]: owner } },
        }),
      );
    }
    acknowledgeIdentities(fn, 'Domain identities are created per customer domain at run time, named by the domain');
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
   * Lets `fn` schedule, move and cancel sends: Create/Update/DeleteSchedule on schedules of the sends group only, pass the
   * send scheduler role to Scheduler only, and put sends due within a minute on the queue directly.
   */
  grantScheduling(fn: NodeFunction): void {
    const stack = Stack.of(this);
    const groupName = this.sendGroup.scheduleGroupName;
    allowSend(fn.role, this.sendsQueue);
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule'],
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
        'scheduler:CreateSchedule, scheduler:UpdateSchedule and scheduler:DeleteSchedule.',
    });
  }
}

/** Every SES identity of this account and region: the names are customers' domains, added at run time. */
function identityArns(stack: Stack): string {
  return stack.formatArn({ service: 'ses', resource: 'identity', resourceName: '*' });
}

function acknowledgeIdentities(fn: NodeFunction, why: string): void {
  Validations.of(fn.role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/*]',
    reason:
      `${why}; their names are not known at deploy time. The wildcard covers SES identities of this account ` +
      'and region only, conditioned on the sendflow:managed tag this deployment puts on the identities it ' +
      'creates, and sending also requires our configuration set.',
  });
}

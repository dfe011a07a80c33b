// What pages the platform team and what they look at. Two SNS topics: the paging topic, which only a few composite
// alarms of symptoms notify (deliveries late, the API failing or slow, sends late, data at risk, SES reputation),
// subscribed by the stage's committed page subscribers; and the non-paging topic, which every other alarm (the
// causes: each function's errors and throttles, each queue, each table) notifies, for working hours. Both say when
// an alarm recovers. Also the alarms only this view can add (Lambda errors and throttles per function, API 5XX and
// p99 latency, SES reputation, DynamoDB throttling per table, account concurrency near the quota, queue messages
// near their retention), and a CloudWatch dashboard of the API, the functions, the queues and the EMF metrics.
import { Duration, Stack } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  AlarmRule,
  ComparisonOperator,
  CompositeAlarm,
  Dashboard,
  GraphWidget,
  type IAlarm,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { FilterPattern, type ILogGroup, MetricFilter } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription, UrlSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { CfnQueue, Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  METRIC_DIMENSIONS,
  METRIC_NAMES,
  METRICS_NAMESPACE,
  NOTICE_NOT_SENT_PREFIX,
  NOTICES_NOT_SENT_METRIC,
  REPUTATION_LOG_LINES,
  REPUTATION_PAUSES_METRIC,
} from '../../lambdas/domain/metric-names';
import type { AlarmSubscribers } from '../alarm-settings';
import { CONCURRENCY_ALARM_SHARE } from '../concurrency';
import type { NodeFunction } from './node-function';
import { stageAlarmName } from './queues';

/** API p99 latency above this for three 5-minute periods pages: sends and reads answer in well under a second. */
export const API_P99_LATENCY_ALARM_MS = 5_000;
/**
 * SendLag p90 above this for three 5-minute periods pages: most emails start within seconds of being due, so a
 * tenth of them 5 minutes late is a backlog (the sends queue's oldest-message age misses one whose emails are
 * handed back, each as a new message, by invocations with no time left).
 */
export const SEND_LAG_ALARM_MS = 300_000;
/** 5XX answers in 5 minutes before the API pages: one is a bug to read about, five is an outage. */
export const API_5XX_ALARM_COUNT = 5;
/**
 * SES reviews an account whose bounce rate passes 5% and may pause it past 10%; complaints 0.1% and 0.5%
 * (research/email.md). Page well before the review: at 4% and 0.08%.
 */
export const SES_BOUNCE_RATE_ALARM = 0.04;
export const SES_COMPLAINT_RATE_ALARM = 0.0008;
/** At most this many alarms of a stage notify the paging topic (a pager that rings for everything is muted). */
export const MAX_PAGING_ALARMS = 10;
/**
 * A main queue's oldest message past this share of the queue's retention alarms (data at risk): SQS deletes a
 * message unread at its retention, so three quarters leaves a quarter of it (a day of the default 4) to act.
 */
export const NEAR_RETENTION_SHARE = 0.75;
/** SQS's default retention, for a queue that sets none: 4 days. */
const SQS_DEFAULT_RETENTION_SECONDS = 345_600;

/**
 * The alarms other constructs made that a page is made of, by symptom. Each composite alarm pages when any of its
 * alarms is in ALARM, and again when all are OK.
 */
export interface Symptoms {
  /** Queues in front of the webhook deliveries falling behind (oldest-message age). */
  readonly deliveriesLate: readonly IAlarm[];
  /** The sends queue falling behind (SendLag, which Monitoring adds itself, sees the rest). */
  readonly sendsLate: readonly IAlarm[];
  /** Work that could be lost: dead letters, received mail not recorded (near-retention alarms are added here). */
  readonly dataLossRisk: readonly IAlarm[];
}

export interface MonitoringProps {
  /** Every function of the stack, by a short name used in alarm names and dashboard labels. */
  readonly functions: Readonly<Record<string, NodeFunction>>;
  readonly api: RestApi;
  /** Main queues (depth and age on the dashboard) and dead-letter queues (depth), by name. */
  readonly queues: Readonly<Record<string, Queue>>;
  readonly deadLetterQueues: Readonly<Record<string, Queue>>;
  /** `service` dimension of the EMF metrics (SF_METRICS_SERVICE of the functions). */
  readonly metricsService: string;
  /**
   * The stage's subscribers (sendflow:alarmSubscribers, sendflow:alarmEmails): `page` to the paging topic, `notify`
   * to the non-paging one; e-mail addresses confirm AWS's mail once, https endpoints confirm SNS's request.
   */
  readonly subscribers: AlarmSubscribers;
  /** The pipelines' alarms each page is made of (lib/api-stack.ts). */
  readonly symptoms: Symptoms;
  /** Physical table names by manifest name: one throttling alarm each. */
  readonly tables: Readonly<Record<string, string>>;
  /**
   * Each table's deployed GSIs, by manifest name: one throttling alarm each, since the table's throttle metrics
   * leave its indexes out (an index's need the GlobalSecondaryIndexName dimension).
   */
  readonly indexes?: Readonly<Record<string, readonly string[]>>;
  /** The account's Lambda concurrency quota (sendflow:lambdaConcurrency): its alarm pages at CONCURRENCY_ALARM_SHARE. */
  readonly accountConcurrencyQuota: number;
  /**
   * The log groups of the functions that judge sending reputation (dispatcher, SES mapper): each pause is a WARN
   * line there, counted by a metric filter whose alarm tells the non-paging subscribers (who lift pauses).
   */
  readonly reputationLogs?: readonly ILogGroup[];
  /**
   * The log groups of the functions where accounts' notices arise: each notice not sent (the stage has no sender,
   * or SES failed it) is a WARN line there, counted by a metric filter (no alarm: a stage may run without a sender).
   */
  readonly noticeLogs?: readonly ILogGroup[];
}

export class Monitoring extends Construct {
  /** Notified by the composite alarms only: what wakes someone up. Output AlarmTopicArn. */
  readonly pagingTopic: Topic;
  /** Notified by every metric alarm of the stack: the causes, read in working hours. Output NotifyTopicArn. */
  readonly notifyTopic: Topic;
  readonly dashboard: Dashboard;
  readonly alarms: Alarm[] = [];
  readonly pages: CompositeAlarm[] = [];
  /** Each function's Errors alarm, by its name in `functions`: what a canary deployment of it rolls back on. */
  readonly functionErrors: Record<string, Alarm> = {};
  /** API 5XX: the API's and the authorizer's deployments roll back on it too. */
  readonly api5xx: Alarm;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const stack = Stack.of(this);

    // A customer-managed key: CloudWatch must be allowed to encrypt what it publishes, which the AWS-managed
    // SNS key's policy cannot grant.
    const key = new Key(this, 'AlarmTopicKey', {
      description: `${stack.stackName}: encrypts the alarm topic`,
      enableKeyRotation: true,
    });
    key.addToResourcePolicy(
      new PolicyStatement({
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
    );
    const topic = (id: string, displayName: string, subscribers: readonly string[]) => {
      const created = new Topic(this, id, { displayName, masterKey: key, enforceSSL: true });
      // enforceSSL gives the topic a policy, which replaces the default one: CloudWatch needs its own allow.
      created.addToResourcePolicy(
        new PolicyStatement({
          actions: ['sns:Publish'],
          principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
          resources: [created.topicArn],
          conditions: {
            StringEquals: { 'aws:SourceAccount': stack.account },
            ArnLike: {
              'aws:SourceArn': stack.formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: '*' }),
            },
          },
        }),
      );
      // An e-mail subscription keeps the id it always had (the address): a confirmed one survives upgrades.
      for (const endpoint of subscribers) {
        created.addSubscription(
          endpoint.startsWith('https://') ? new UrlSubscription(endpoint) : new EmailSubscription(endpoint),
        );
      }
      return created;
    };
    // `AlarmTopic` is the topic every alarm notified before pages and notices were split: its subscribers (and
    // any subscribed by hand) now get the pages only.
    this.pagingTopic = topic('AlarmTopic', `Sendflow pages (${stack.stackName})`, props.subscribers.page);
    this.notifyTopic = topic(
      'NotifyTopic',
      `Sendflow alarms, not paging (${stack.stackName})`,
      props.subscribers.notify,
    );

    for (const [name, fn] of Object.entries(props.functions)) {
      // Every version's and alias's invocations (the FunctionName dimension alone): a canary's errors count.
      const errors = sumAlarm(this, `${pascal(name)}Errors`, fn.handler.metricErrors(fiveMinutes), 1, {
        description: `Sendflow ${name} function: an invocation failed (unhandled error or time-out); read its log`,
      });
      this.functionErrors[name] = errors;
      this.alarms.push(
        errors,
        sumAlarm(this, `${pascal(name)}Throttles`, fn.handler.metricThrottles(fiveMinutes), 1, {
          description: `Sendflow ${name} function: invocations throttled; account concurrency is exhausted`,
        }),
      );
    }
    this.api5xx = sumAlarm(this, 'Api5xx', props.api.metricServerError(fiveMinutes), API_5XX_ALARM_COUNT, {
      description: `Sendflow API: ${API_5XX_ALARM_COUNT} or more 5XX answers in 5 minutes`,
    });
    const apiLatency = new Alarm(this, 'ApiLatencyP99Alarm', {
      alarmName: stageAlarmName(this, 'ApiLatencyP99'),
      alarmDescription: `Sendflow API: p99 latency above ${API_P99_LATENCY_ALARM_MS} ms for 15 minutes`,
      metric: props.api.metricLatency({ ...fiveMinutes, statistic: 'p99' }),
      threshold: API_P99_LATENCY_ALARM_MS,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.alarms.push(this.api5xx, apiLatency);

    const sendLag = new Alarm(this, 'SendLagP90Alarm', {
      alarmName: stageAlarmName(this, 'SendLagP90'),
      alarmDescription: `Sendflow sends: p90 of SendLag above ${SEND_LAG_ALARM_MS / 60_000} minutes for 15 minutes`,
      metric: new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: METRIC_NAMES.sendLag,
        dimensionsMap: { [METRIC_DIMENSIONS.service]: props.metricsService },
        statistic: 'p90',
        period: Duration.minutes(5),
      }),
      threshold: SEND_LAG_ALARM_MS,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.alarms.push(sendLag);
    const sesBounce = new Alarm(this, 'SesBounceRateAlarm', {
      alarmName: stageAlarmName(this, 'SesBounceRate'),
      alarmDescription: `SES account bounce rate at ${SES_BOUNCE_RATE_ALARM * 100}% or more: SES reviews the account at 5%`,
      metric: sesReputation('Reputation.BounceRate'),
      threshold: SES_BOUNCE_RATE_ALARM,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const sesComplaint = new Alarm(this, 'SesComplaintRateAlarm', {
      alarmName: stageAlarmName(this, 'SesComplaintRate'),
      alarmDescription: `SES account complaint rate at ${SES_COMPLAINT_RATE_ALARM * 100}% or more: SES reviews the account at 0.1%`,
      metric: sesReputation('Reputation.ComplaintRate'),
      threshold: SES_COMPLAINT_RATE_ALARM,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.alarms.push(sesBounce, sesComplaint);
    for (const [name, tableName] of Object.entries(props.tables)) {
      const throttles = (metricName: string) =>
        new Metric({ namespace: 'AWS/DynamoDB', metricName, dimensionsMap: { TableName: tableName }, ...fiveMinutes });
      this.alarms.push(
        sumAlarm(
          this,
          `${pascal(name)}TableThrottles`,
          new MathExpression({
            expression: 'reads + writes',
            usingMetrics: { reads: throttles('ReadThrottleEvents'), writes: throttles('WriteThrottleEvents') },
            period: fiveMinutes.period,
            label: `${name} throttle events`,
          }),
          1,
          {
            description:
              `Sendflow ${name} table: DynamoDB throttled reads or writes (a hot partition key, on-demand ` +
              'scaling behind a sudden peak, or provisioned capacity used up); see "Alarms and what to do"',
          },
        ),
      );
      for (const index of props.indexes?.[name] ?? [])
        this.alarms.push(indexThrottlesAlarm(this, name, tableName, index));
    }
    const concurrencyThreshold = Math.floor(props.accountConcurrencyQuota * CONCURRENCY_ALARM_SHARE);
    this.alarms.push(
      new Alarm(this, 'AccountConcurrencyAlarm', {
        alarmName: stageAlarmName(this, 'AccountConcurrency'),
        alarmDescription:
          `Lambda account concurrency at ${concurrencyThreshold} or more of the quota of ` +
          `${props.accountConcurrencyQuota} (sendflow:lambdaConcurrency): functions will soon be throttled`,
        metric: new Metric({
          namespace: 'AWS/Lambda',
          metricName: 'ConcurrentExecutions',
          statistic: 'Maximum',
          period: Duration.minutes(1),
        }),
        threshold: concurrencyThreshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 3,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );

    if (props.reputationLogs?.length) this.alarms.push(this.reputationPausesAlarm(props.reputationLogs));
    this.countUnsentNotices(props.noticeLogs ?? []);

    const nearRetention = Object.entries(props.queues).map(([name, queue]) => nearRetentionAlarm(this, name, queue));
    this.alarms.push(...nearRetention);
    this.pageOn(
      'DeliveriesLate',
      'Webhook deliveries are late: a queue in front of them (events, deliveries, slow lane, SES events) is ' +
        'falling behind. The alarm in ALARM among its children names the queue; see "Alarms and what to do"',
      props.symptoms.deliveriesLate,
    );
    this.pageOn('ApiUnhealthy', 'The API fails (5XX answers) or is slow (p99 latency); see "Alarms and what to do"', [
      this.api5xx,
      apiLatency,
    ]);
    this.pageOn(
      'SendsLate',
      'Emails go out late: SendLag p90 above 5 minutes, or the sends queue falling behind; see "Alarms and what to do"',
      [sendLag, ...props.symptoms.sendsLate],
    );
    this.pageOn(
      'DataLossRisk',
      'Work may be lost: a message was dead-lettered, a queue message nears its retention (SQS deletes it unread ' +
        'then), or received mail was not recorded; see "Alarms and what to do"',
      [...props.symptoms.dataLossRisk, ...nearRetention],
    );
    this.pageOn(
      'SesReputation',
      'The SES account bounce or complaint rate nears the level where SES reviews (and may pause) sending for every ' +
        'tenant; see "Alarms and what to do"',
      [sesBounce, sesComplaint],
    );
    if (this.pages.length > MAX_PAGING_ALARMS) {
      throw new Error(`${this.pages.length} paging alarms; at most ${MAX_PAGING_ALARMS} may page (MAX_PAGING_ALARMS)`);
    }

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: stack.stackName,
      defaultInterval: Duration.hours(3),
    });
    this.dashboard.addWidgets(...this.widgets(props));
  }

  /**
   * Every metric alarm of the stack, queue alarms of the pipelines included, notifies the non-paging topic, and
   * again when OK; the composite alarms (the pages) notify the paging topic only.
   */
  notifyAll(): void {
    const action = new SnsAction(this.notifyTopic);
    for (const construct of Stack.of(this).node.findAll()) {
      if (construct instanceof Alarm) {
        construct.addAlarmAction(action);
        construct.addOkAction(action);
      }
    }
  }

  /**
   * A customer's sending was paused for its bounce or complaint rate (app/reputation/track-reputation): the paused
   * WARN line of any judging function, counted by a metric filter (the stage's own metric: its stack name is in the
   * name). Not a page: the customer is already refused with a 403 that says why; whoever lifts pauses reads the
   * account and the rates on the line (docs/runbook.md, "A customer's sending is paused (`sending_paused`)").
   */
  private reputationPausesAlarm(logGroups: readonly ILogGroup[]): Alarm {
    const metricName = `${REPUTATION_PAUSES_METRIC}-${Stack.of(this).stackName}`;
    logGroups.forEach((logGroup, i) => {
      new MetricFilter(this, `ReputationPausesFilter${i}`, {
        logGroup,
        filterPattern: FilterPattern.stringValue('$.message', '=', REPUTATION_LOG_LINES.paused),
        metricNamespace: METRICS_NAMESPACE,
        metricName,
        metricValue: '1',
      });
    });
    return sumAlarm(
      this,
      'ReputationPauses',
      new Metric({ namespace: METRICS_NAMESPACE, metricName, ...fiveMinutes }),
      1,
      {
        description:
          "Sendflow: a customer's sending was paused for its bounce or complaint rate (sending_paused); the " +
          'functions\' log line names the account and its rates; see "A customer\'s sending is paused"',
      },
    );
  }

  /**
   * Accounts' notices not sent (runtime/services' notify): the `account notice not sent…` WARN line of any notifying
   * function, counted in `NoticesNotSent-<stack>` (Sendflow namespace). On a stage without `sendflow:noticeFrom` it
   * counts every notice raised (so nothing is dropped unseen); with one, the sends SES refused or failed.
   */
  private countUnsentNotices(logGroups: readonly ILogGroup[]): void {
    const metricName = `${NOTICES_NOT_SENT_METRIC}-${Stack.of(this).stackName}`;
    logGroups.forEach((logGroup, i) => {
      new MetricFilter(this, `NoticesNotSentFilter${i}`, {
        logGroup,
        filterPattern: FilterPattern.stringValue('$.message', '=', `${NOTICE_NOT_SENT_PREFIX}*`),
        metricNamespace: METRICS_NAMESPACE,
        metricName,
        metricValue: '1',
      });
    });
  }

  /** A composite alarm that pages while any of `alarms` is in ALARM, and says so when all are OK again. */
  private pageOn(name: string, description: string, alarms: readonly IAlarm[]): void {
    if (!alarms.length) throw new Error(`Page ${name} has no alarm to watch`);
    const page = new CompositeAlarm(this, `${name}Page`, {
      compositeAlarmName: stageAlarmName(this, name),
      alarmDescription: `Sendflow ${Stack.of(this).stackName}: ${description}`,
      alarmRule: AlarmRule.anyOf(...alarms),
    });
    const action = new SnsAction(this.pagingTopic);
    page.addAlarmAction(action);
    page.addOkAction(action);
    this.pages.push(page);
  }

  private widgets(props: MonitoringProps): GraphWidget[] {
    const { api } = props;
    const sendflow = (metricName: string, dimensions: Record<string, string> = {}, statistic = 'Sum'): Metric =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName,
        dimensionsMap: { [METRIC_DIMENSIONS.service]: props.metricsService, ...dimensions },
        statistic,
        period: Duration.minutes(1),
      });
    const functions = Object.entries(props.functions);
    const perFunction = (label: string, metric: (fn: NodeFunction) => IMetric) =>
      graph(
        label,
        functions.map(([name, fn]) => withLabel(metric(fn), name)),
      );
    const queues = Object.entries(props.queues);
    return [
      graph('API requests', [
        withLabel(api.metricCount(oneMinute), 'requests'),
        withLabel(api.metricClientError(oneMinute), '4XX'),
        withLabel(api.metricServerError(oneMinute), '5XX'),
      ]),
      graph('API latency (ms)', [
        withLabel(api.metricLatency({ ...oneMinute, statistic: 'p50' }), 'p50'),
        withLabel(api.metricLatency({ ...oneMinute, statistic: 'p99' }), 'p99'),
      ]),
      graph('Webhook attempts', [
        withLabel(sendflow(METRIC_NAMES.deliveriesAttempted), 'attempted'),
        withLabel(sendflow(METRIC_NAMES.deliveriesSucceeded), 'succeeded'),
        withLabel(sendflow(METRIC_NAMES.deliveriesFailed), 'failed'),
      ]),
      graph('Attempt duration and first-attempt lag (ms, p99)', [
        withLabel(sendflow(METRIC_NAMES.attemptDuration, {}, 'p99'), 'attempt duration'),
        withLabel(sendflow(METRIC_NAMES.firstAttemptLag, {}, 'p99'), 'event to first attempt'),
      ]),
      graph('Emails', [
        withLabel(sendflow(METRIC_NAMES.emailsAccepted), 'accepted'),
        withLabel(sendflow(METRIC_NAMES.emailsSent), 'recipients sent'),
        withLabel(sendflow(METRIC_NAMES.emailsFailed), 'recipients failed'),
      ]),
      graph('Send lag (ms: due to the send worker’s start)', [
        withLabel(sendflow(METRIC_NAMES.sendLag, {}, 'p50'), 'p50'),
        withLabel(sendflow(METRIC_NAMES.sendLag, {}, 'p90'), 'p90'),
      ]),
      perFunction('Function errors', (fn) => fn.handler.metricErrors(oneMinute)),
      perFunction('Function throttles', (fn) => fn.handler.metricThrottles(oneMinute)),
      perFunction('Function duration (ms, p99)', (fn) => fn.handler.metricDuration({ ...oneMinute, statistic: 'p99' })),
      graph(
        'Queue depth (visible messages)',
        queues.map(([name, q]) => withLabel(q.metricApproximateNumberOfMessagesVisible(maxPerMinute), name)),
      ),
      graph(
        'Oldest message (s)',
        queues.map(([name, q]) => withLabel(q.metricApproximateAgeOfOldestMessage(maxPerMinute), name)),
      ),
      graph(
        'Dead-lettered messages',
        Object.entries(props.deadLetterQueues).map(([name, q]) =>
          withLabel(q.metricApproximateNumberOfMessagesVisible(maxPerMinute), name),
        ),
      ),
      graph('SES reputation (account)', [
        withLabel(sesReputation('Reputation.BounceRate'), 'bounce rate'),
        withLabel(sesReputation('Reputation.ComplaintRate'), 'complaint rate'),
      ]),
      graph(`Lambda concurrent executions (account quota ${props.accountConcurrencyQuota})`, [
        withLabel(
          new Metric({ namespace: 'AWS/Lambda', metricName: 'ConcurrentExecutions', ...maxPerMinute }),
          'account',
        ),
      ]),
    ];
  }
}

const oneMinute = { period: Duration.minutes(1), statistic: 'Sum' } as const;

/**
 * The account-wide reputation rate SES itself reviews (no dimension), as SES publishes it: a running rate, so
 * its highest value over an hour.
 */
function sesReputation(metricName: string): Metric {
  return new Metric({ namespace: 'AWS/SES', metricName, statistic: 'Maximum', period: Duration.hours(1) });
}
const fiveMinutes = { period: Duration.minutes(5), statistic: 'Sum' } as const;
const maxPerMinute = { period: Duration.minutes(1), statistic: 'Maximum' } as const;

function sumAlarm(
  scope: Construct,
  name: string,
  metric: IMetric,
  threshold: number,
  { description }: { description: string },
): Alarm {
  return new Alarm(scope, `${name}Alarm`, {
    alarmName: stageAlarmName(scope, name),
    alarmDescription: description,
    metric,
    threshold,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}

/** Read and write throttle events of one GSI, which its table's metrics do not count. */
function indexThrottlesAlarm(scope: Construct, table: string, tableName: string, index: string): Alarm {
  const throttles = (metricName: string) =>
    new Metric({
      namespace: 'AWS/DynamoDB',
      metricName,
      dimensionsMap: { TableName: tableName, GlobalSecondaryIndexName: index },
      ...fiveMinutes,
    });
  return sumAlarm(
    scope,
    `${pascal(table)}${pascal(index)}IndexThrottles`,
    new MathExpression({
      expression: 'reads + writes',
      usingMetrics: { reads: throttles('ReadThrottleEvents'), writes: throttles('WriteThrottleEvents') },
      period: fiveMinutes.period,
      label: `${table} ${index} throttle events`,
    }),
    1,
    {
      description:
        `Sendflow ${table} table, index ${index}: DynamoDB throttled reads or writes (a hot index key, or ` +
        "provisioned capacity used up: a GSI short of writes throttles its table's writes too); " +
        'see "Alarms and what to do"',
    },
  );
}

function graph(title: string, metrics: IMetric[]): GraphWidget {
  return new GraphWidget({ title, left: metrics, width: 12, height: 6 });
}

function withLabel(metric: IMetric, label: string): IMetric {
  return metric instanceof Metric || metric instanceof MathExpression ? metric.with({ label }) : metric;
}

function pascal(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/**
 * The queue's oldest message past NEAR_RETENTION_SHARE of the queue's retention: SQS deletes it unread at the
 * retention, so whatever job it carries would be lost (data at risk, a page).
 */
function nearRetentionAlarm(scope: Construct, name: string, queue: Queue): Alarm {
  const retention = (queue.node.defaultChild as CfnQueue).messageRetentionPeriod ?? SQS_DEFAULT_RETENTION_SECONDS;
  const threshold = Math.floor(retention * NEAR_RETENTION_SHARE);
  return new Alarm(scope, `${pascal(name)}QueueNearRetentionAlarm`, {
    alarmName: stageAlarmName(scope, `${pascal(name)}QueueNearRetention`),
    alarmDescription:
      `Sendflow ${name} queue: a message has waited ${Math.round(threshold / 3600)} h of its ` +
      `${Math.round(retention / 3600)} h retention; SQS deletes it unread then (see "Alarms and what to do")`,
    metric: queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5), statistic: 'Maximum' }),
    threshold,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}

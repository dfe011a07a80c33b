// Inbound email on AWS, for a stage that `sendflow:inbound` names: an SES receipt rule set with one rule (TLS
// required, spam and virus scan on) whose actions store each message in an encrypted bucket, then invoke the
// inbound function asynchronously (retries, then an on-failure queue that alarms). The function reads the
// message back and calls receiveEmail. The rule set is made active when asked (receipt-rule-set-activation.ts;
// CloudFormation cannot), else by the runbook's CLI step.
import { Aws, CfnRule, Duration, Fn, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { EventInvokeConfig, type IDestination } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { CfnReceiptRule, CfnReceiptRuleSet } from 'aws-cdk-lib/aws-ses';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { PARSE_THREAD_BUNDLE } from '../../lambdas/adapters/mime/parse-thread-module';
import { INBOUND_OBJECTS_PREFIX } from '../../lambdas/app/inbound/raw-messages';
import type { InboundSettings } from '../inbound-settings';
import { LIVE_ALIAS, NodeFunction } from './node-function';
import { DLQ_RETENTION, dlqAlarm, stageAlarmName } from './queues';
import { ReceiptRuleSetActivation } from './receipt-rule-set-activation';

/** The one rule of the set: every recipient at every domain verified in this account and region. */
export const INBOUND_RULE_NAME = 'store-then-receive';
/** Lambda's async retries of a failed event (its maximum), then the on-failure queue. */
export const INBOUND_RETRY_ATTEMPTS = 2;
/** How long Lambda keeps retrying an event (its maximum): a table outage of hours still loses nothing. */
export const INBOUND_MAX_EVENT_AGE = Duration.hours(6);
/** The inbound function's time-out: a 40 MB message read, parsed and stored, with room to spare. */
export const INBOUND_TIMEOUT = Duration.minutes(2);
export const INBOUND_MEMORY_MB = 1024;
/**
 * The parse's time-box in the function (SF_INBOUND_PARSE_SECONDS): past it the parse thread is terminated and
 * the message stored with its header fields (a header parse of at most 5 s more). Far below INBOUND_TIMEOUT, so
 * a hostile message ends as a partial email, never as an invocation timed out and retried to the failures queue.
 */
export const INBOUND_PARSE_SECONDS = 30;

/**
 * The parse thread's module, built beside the function's index.mjs (adapters/mime/parse-thread-module.ts finds
 * it there): the same esbuild, target and format as the bundle, postal-mime and the scan inlined.
 */
export function parseThreadBundling(inputDir: string, outputDir: string): string[] {
  const entry = `${inputDir}/lambdas/adapters/mime/parse-thread.ts`;
  return [
    `npx --no-install esbuild "${entry}" --bundle --platform=node --target=node22 --format=esm --minify ` +
      `--main-fields=module,main --outfile="${outputDir}/${PARSE_THREAD_BUNDLE}"`,
  ];
}

export interface InboundMailProps extends InboundSettings {
  /** The variables every function gets (table names, retention): receiveEmail's configuration. */
  readonly environment: Readonly<Record<string, string>>;
  /** Days received messages are kept in the bucket: the stage's email retention. */
  readonly retentionDays: number;
  readonly logRetention: RetentionDays;
  /**
   * Executions reserved for (and capping) the function: a mail flood throttles here, and Lambda retries the
   * throttled events for up to INBOUND_MAX_EVENT_AGE, instead of taking the consumers' unreserved pool.
   * Undefined reserves nothing (sendflow:lambdaConcurrency.inbound, lib/concurrency.ts).
   */
  readonly reservedConcurrency?: number | undefined;
  /**
   * Grants what receiveEmail needs beyond reading the message (its tables, the outbox, the FileStore): given the
   * inbound function at merge with the use case (issue 19); until then the function may only read its objects.
   */
  readonly grantReceiveEmail?: (fn: NodeFunction) => void;
}

export class InboundMail extends Construct {
  readonly bucket: Bucket;
  readonly handler: NodeFunction;
  /** Events Lambda gave up on (the SES event itself, with the error): replayed by the runbook's steps. */
  readonly failures: Queue;
  readonly ruleSetName: string;
  readonly failuresAlarm: Alarm;
  /** A failed event the failures queue refused: gone (data lost, a page). */
  readonly destinationFailuresAlarm: Alarm;

  constructor(scope: Construct, id: string, props: InboundMailProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.ruleSetName = `${stack.stackName}-inbound`;
    const ruleArn = `arn:${Aws.PARTITION}:ses:${Aws.REGION}:${Aws.ACCOUNT_ID}:receipt-rule-set/${this.ruleSetName}:receipt-rule/${INBOUND_RULE_NAME}`;
    const fromThisRule = { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID, 'aws:SourceArn': ruleArn } };

    // SES receiving exists in a few regions only; the stack is region-agnostic, so the template checks.
    new CfnRule(stack, 'InboundRegion', {
      assertions: [
        {
          assert: Fn.conditionEquals(Aws.REGION, props.region),
          assertDescription: `sendflow:inbound names ${props.region} for this stage: deploy it there (SES receives email in a few regions only)`,
        },
      ],
    });

    this.bucket = new Bucket(this, 'Messages', {
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // Received mail is customer data: removing inbound (or the stack) keeps it; the lifecycle still empties it.
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        { id: 'inbound-retention', prefix: INBOUND_OBJECTS_PREFIX, expiration: Duration.days(props.retentionDays) },
        { id: 'unfinished-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });
    // SES writes the messages, for this account's rule only (the confused-deputy conditions AWS documents).
    const sesWrites = this.bucket.addToResourcePolicy(
      new PolicyStatement({
        sid: 'SesPutsReceivedMail',
        principals: [new ServicePrincipal('ses.amazonaws.com')],
        actions: ['s3:PutObject'],
        resources: [this.bucket.arnForObjects(`${INBOUND_OBJECTS_PREFIX}*`)],
        conditions: fromThisRule,
      }),
    );
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Server access logs would add a log object per message written or read; only SES (this rule) writes and ' +
        'one function role reads, and CloudTrail data events can record both when an audit needs them.',
    });

    this.handler = new NodeFunction(this, 'Function', {
      entry: 'lambdas/runtime/aws/inbound.ts',
      description: 'Sendflow inbound mail: reads what SES received and stored, and records it (receiveEmail)',
      serviceName: 'sendflow-inbound',
      environment: {
        ...props.environment,
        SF_INBOUND_BUCKET: this.bucket.bucketName,
        SF_INBOUND_PARSE_SECONDS: String(INBOUND_PARSE_SECONDS),
      },
      // A 40 MB message is read, parsed and stored: time and memory for that, far from SES's point of view.
      timeout: INBOUND_TIMEOUT,
      memorySize: INBOUND_MEMORY_MB,
      afterBundling: parseThreadBundling,
      logRetention: props.logRetention,
      ...(props.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: props.reservedConcurrency }),
    });
    // Its messages only: read, and deleted when no account received one (adapters/aws/s3-raw-messages.ts).
    for (const action of ['s3:GetObject', 's3:DeleteObject']) {
      this.handler.role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: [action],
          resources: [this.bucket.arnForObjects(`${INBOUND_OBJECTS_PREFIX}*`)],
        }),
      );
    }
    Validations.of(this.handler.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${stack.getLogicalId(this.bucket.node.defaultChild as never)}.Arn>/${INBOUND_OBJECTS_PREFIX}*]`,
      reason:
        'One object per received message, named by SES after its messageId: the policy names the bucket and the ' +
        'prefix SES writes under, never the bucket itself or another prefix.',
    });
    props.grantReceiveEmail?.(this.handler);

    // Nothing lost: SES's Event invocation is retried by Lambda, then lands here with the error; an alarm pages.
    // It holds whole SES events (subject, from, to): no longer than the stage keeps email, at most SQS's 14 days.
    this.failures = new Queue(this, 'Failures', {
      retentionPeriod: Duration.days(Math.min(DLQ_RETENTION.toDays(), props.retentionDays)),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    Validations.of(this.failures).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "This queue is the inbound function's on-failure destination (its dead letters); a DLQ has no DLQ of its " +
        'own, and its depth is alarmed.',
    });
    // On the alias SES invokes (an unqualified configuration would not apply to its invocations).
    const asyncInvoke = new EventInvokeConfig(this, 'AsyncInvoke', {
      function: this.handler.handler,
      qualifier: LIVE_ALIAS,
      retryAttempts: INBOUND_RETRY_ATTEMPTS,
      maxEventAge: INBOUND_MAX_EVENT_AGE,
      onFailure: sendOnly(this.failures),
    });
    if (this.handler.alias) asyncInvoke.node.addDependency(this.handler.alias);
    this.failuresAlarm = dlqAlarm(this, 'InboundFailures', this.failures);
    // Were the failure queue ever refused, the event would be gone: that must page too.
    this.destinationFailuresAlarm = new Alarm(this, 'DestinationDeliveryFailuresAlarm', {
      alarmName: stageAlarmName(this, 'InboundDestinationDeliveryFailures'),
      alarmDescription: 'Sendflow inbound: a failed SES event could not be put on the failures queue (see the runbook)',
      metric: this.handler.handler.metric('DestinationDeliveryFailures', {
        period: Duration.minutes(1),
        statistic: 'Sum',
      }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    // SES may invoke the function for this rule only. SES checks both grants when the rule is created.
    this.handler.live.addPermission('SesInvoke', {
      principal: new ServicePrincipal('ses.amazonaws.com'),
      action: 'lambda:InvokeFunction',
      sourceAccount: Aws.ACCOUNT_ID,
      sourceArn: ruleArn,
    });

    const ruleSet = new CfnReceiptRuleSet(this, 'RuleSet', { ruleSetName: this.ruleSetName });
    const rule = new CfnReceiptRule(this, 'Rule', {
      ruleSetName: this.ruleSetName,
      rule: {
        name: INBOUND_RULE_NAME,
        enabled: true,
        // Refuse senders that will not use TLS; the verdicts (spam, virus, SPF, DKIM, DMARC) need the scan.
        tlsPolicy: 'Require',
        scanEnabled: true,
        // No recipients: the rule takes mail for every domain verified in this account and region; receiveEmail
        // keeps what a domain with receiving enabled gets and drops the rest.
        actions: [
          { s3Action: { bucketName: this.bucket.bucketName, objectKeyPrefix: INBOUND_OBJECTS_PREFIX } },
          { lambdaAction: { functionArn: this.handler.live.functionArn, invocationType: 'Event' } },
        ],
      },
    });
    rule.node.addDependency(ruleSet);
    if (sesWrites.policyDependable) rule.node.addDependency(sesWrites.policyDependable);
    const invoke = this.handler.live.permissionsNode.tryFindChild('SesInvoke');
    if (invoke) rule.node.addDependency(invoke);

    if (props.activate) {
      new ReceiptRuleSetActivation(this, 'Activation', {
        ruleSetName: this.ruleSetName,
        rule,
        logRetention: props.logRetention,
      });
    }
  }
}

/**
 * The queue as an async-invoke destination with sqs:SendMessage only: Lambda puts the failed event there with
 * the function's role, and calls nothing else (SqsDestination would also grant GetQueueAttributes and GetQueueUrl).
 */
function sendOnly(queue: Queue): IDestination {
  return {
    bind: (_scope, fn) => {
      fn.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [queue.queueArn] }));
      return { destination: queue.queueArn };
    },
  };
}

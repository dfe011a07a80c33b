// Deployment stages, and the stack and output names the admin CLI reads with CloudFormation DescribeStacks.
// Plain data, no aws-cdk-lib, so the CLI can import it without loading the CDK.
import type { PlanName } from '../lambdas/domain/plans';
import { type TableName, tableNames } from '../lambdas/manifest';

/**
 * A deployment stage (`-c sendflow:stage=NAME`, the admin CLI's `--stage NAME`): every stack and physical name
 * carries it, so stages live side by side in one account and region. Not to be confused with the API Gateway
 * stage (`v1`), which is the same in every deployment stage.
 */
export const DEFAULT_STAGE = 'prod';

/** Lowercase letters, digits and hyphens, 1–20 characters, starting with a letter: fits every name it goes into. */
export const STAGE_PATTERN = /^[a-z][a-z0-9-]{0,19}$/;

/** The tag every stack (and so every taggable resource) carries; the data-stack guard finds retained data by it. */
export const STAGE_TAG = 'sendflow:stage';

export class InvalidStageError extends Error {
  constructor(value: unknown) {
    super(
      `Invalid Sendflow stage ${JSON.stringify(value)}: use 1 to 20 lowercase letters, digits or hyphens, ` +
        `starting with a letter (e.g. ${DEFAULT_STAGE}, staging, dev-alice)`,
    );
    this.name = 'InvalidStageError';
  }
}

/** `value` as a stage name, or InvalidStageError; undefined means the default stage. */
export function parseStage(value: unknown): string {
  if (value === undefined) return DEFAULT_STAGE;
  if (typeof value !== 'string' || !STAGE_PATTERN.test(value)) throw new InvalidStageError(value);
  return value;
}

/** Stack names of a stage; `cdk deploy --all` deploys the data stack first. */
export function stackNames(stage: string = DEFAULT_STAGE): { readonly data: string; readonly api: string } {
  const valid = parseStage(stage);
  return {
    /** Tables and the link-signing secret (retained). */
    data: `Sendflow-${valid}-Data`,
    /** API, functions, usage plans, WAF: stateless, safe to replace. Every output below lives here. */
    api: `Sendflow-${valid}-Api`,
  };
}

/** `apiKeys` → `ApiKeys` */
function pascal(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/** Output keys of the api stack. Values: the stage URL, physical table names, usage plan ids, queue URLs. */
export const outputNames = {
  /** e.g. https://abc123.execute-api.eu-west-1.amazonaws.com/v1/ */
  apiUrl: 'ApiUrl',
  /** The REST API id: the admin CLI flushes its authorizer cache after revoke-key and set-plan. */
  restApiId: 'RestApiId',
  /** TableAccounts, TableApiKeys, TableRateLimits, … */
  tables: Object.fromEntries(tableNames.map((table) => [table, `Table${pascal(table)}`])) as Readonly<
    Record<TableName, string>
  >,
  usagePlans: {
    free: 'UsagePlanFree',
    starter: 'UsagePlanStarter',
    growth: 'UsagePlanGrowth',
    scale: 'UsagePlanScale',
  } as const satisfies Readonly<Record<PlanName, string>>,
  /** Queue URLs of the pipelines (to inspect depth, or send a test event by hand). */
  queues: {
    events: 'EventsQueueUrl',
    deliveries: 'DeliveriesQueueUrl',
    /** Scheduled sends that came due ({emailId}). */
    sends: 'SendsQueueUrl',
    /** SES events (EventBridge envelopes) on their way to the mapper. */
    providerEvents: 'ProviderEventsQueueUrl',
  } as const,
  /** Dead-letter queue URLs: where to look, and redrive from, when a DLQ alarm fires. */
  deadLetterQueues: {
    events: 'EventsDlqUrl',
    deliveries: 'DeliveriesDlqUrl',
    /** Retry schedules EventBridge Scheduler could not deliver to the deliveries queue. */
    retrySchedules: 'RetryScheduleDlqUrl',
    /** Reconciler runs EventBridge Scheduler could not invoke. */
    reconcileSchedule: 'ReconcileScheduleDlqUrl',
    sends: 'SendsDlqUrl',
    /** Send schedules EventBridge Scheduler could not deliver to the sends queue. */
    sendSchedules: 'SendScheduleDlqUrl',
    /** SES events the mapper could not handle, or EventBridge could not deliver to the queue. */
    providerEvents: 'ProviderEventsDlqUrl',
    /** Jobs of slow endpoints the delivery worker could not settle. */
    slowDeliveries: 'SlowDeliveriesDlqUrl',
  } as const,
  /** The paging SNS topic: a few composite alarms of symptoms notify it (subscribe a pager to it). */
  alarmTopic: 'AlarmTopicArn',
  /** The non-paging SNS topic every other alarm notifies (subscribe a team list or chat to it). */
  notifyTopic: 'NotifyTopicArn',
  /** Only with a custom domain (`-c sendflow:domainName=…`): where its DNS record points. */
  customDomain: {
    /** The regional domain name (d-….execute-api.REGION.amazonaws.com): the CNAME or alias target. */
    target: 'CustomDomainTarget',
    /** The Route 53 hosted zone id of that target, for an alias record. */
    hostedZoneId: 'CustomDomainHostedZoneId',
  } as const,
  /** The SES configuration set live-mode email is sent with (its events come back through EventBridge). */
  sesConfigurationSet: 'SesConfigurationSet',
} as const;

// Stack and output names the admin CLI reads with CloudFormation DescribeStacks. Plain data, no aws-cdk-lib,
// so the CLI can import it without loading the CDK.
import type { PlanName } from '../lambdas/domain/plans';
import { type TableName, tableNames } from '../lambdas/manifest';

/** Default stack names; `cdk deploy --all` deploys the data stack first. */
export const stackNames = {
  /** Tables (retained). */
  data: 'SendflowData',
  /** API, functions, usage plans, WAF: stateless, safe to replace. Every output below lives here. */
  api: 'SendflowApi',
} as const;

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
  } as const,
  /** The SES configuration set live-mode email is sent with (its events come back through EventBridge). */
  sesConfigurationSet: 'SesConfigurationSet',
} as const;

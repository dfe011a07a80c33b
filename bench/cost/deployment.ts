// What the meter needs from the deployment, read from the synthesized CDK app (bundling skipped), not restated:
// each function's memory, architecture and logging (format, application and system log levels), the web ACL's
// rule count, log retention, tables' PITR and TTL, the authorizer cache TTL, and which tables and GSIs run in
// provisioned mode at what target utilization. Re-running after a change to lib/ prices the changed configuration.
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { tableNames } from '../../lambdas/manifest';
import { buildSendflow, CONTEXT_UNMONITORED_STAGES } from '../../lib/app';

export interface FunctionConfig {
  readonly service: string;
  readonly memoryMb: number;
  readonly architecture: 'arm64' | 'x86_64';
  /** Lambda's logging controls: levels apply to JSON logs only (text logs are never filtered by Lambda). */
  readonly logging: {
    readonly format: 'JSON' | 'Text';
    readonly applicationLevel?: string;
    readonly systemLevel?: string;
  };
}

export interface Deployment {
  /** By POWERTOOLS_SERVICE_NAME, e.g. sendflow-delivery. */
  readonly functions: ReadonlyMap<string, FunctionConfig>;
  readonly webAclRules: number;
  readonly logRetentionDays: number;
  /** Tables with point-in-time recovery on, and all tables. */
  readonly pitrTables: number;
  readonly tables: number;
  readonly authorizerCacheTtlSeconds: number;
  /** The API stage's access log line format (one line per request), '' when access logging is off. */
  readonly accessLogFormat: string;
  /**
   * Tables and GSIs in provisioned mode (`table` or `table index`, as the meter names them) → the target utilization
   * of their read and write auto scaling, as fractions; absent ones bill per request (on demand).
   */
  readonly provisioned?: ReadonlyMap<string, ProvisionedUtilization>;
  /** Every SQS event source mapping (each long-polls its queue when idle), with its batch size and concurrency. */
  readonly eventSourceMappings: readonly { readonly batchSize: number; readonly maxConcurrency?: number }[];
  /** Alarms by what CloudWatch bills: metrics evaluated at standard and high resolution, composite alarms. */
  readonly alarms: {
    readonly count: number;
    readonly metrics: number;
    readonly highResolutionMetrics: number;
    readonly composite: number;
  };
  readonly dashboards: number;
  readonly kmsKeys: number;
}

export interface ProvisionedUtilization {
  readonly read: number;
  readonly write: number;
}

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

/** The default stage's deployment; `context` adds CDK context (e.g. `sendflow:capacity`) as cdk.json would. */
export function readDeployment(context: Record<string, unknown> = {}): Deployment {
  const app = new App({
    // Priced, never deployed: declared unmonitored, as a stage without alarm subscribers must be (the alarms and
    // topics are the same as a monitored stage's; only the subscriptions differ, which SNS bills per message).
    context: { [CONTEXT_UNMONITORED_STAGES]: ['prod'], ...context, 'aws:cdk:bundling-stacks': [] },
    builtinCloudFormationValidation: false,
  });
  const stacks = buildSendflow(app);
  const api = Template.fromStack(stacks.api);
  const data = Template.fromStack(stacks.data);
  const functions = new Map<string, FunctionConfig>();
  for (const fn of Object.values(api.findResources('AWS::Lambda::Function') as Resources)) {
    const env = (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    const service = env.POWERTOOLS_SERVICE_NAME;
    if (typeof service !== 'string') continue; // CDK's own helpers (log retention, custom resources)
    const [architecture = 'x86_64'] = (fn.Properties.Architectures as ('arm64' | 'x86_64')[] | undefined) ?? [];
    const config = (fn.Properties.LoggingConfig ?? {}) as Record<string, string | undefined>;
    const format = config.LogFormat === 'JSON' ? 'JSON' : 'Text';
    const logging = {
      format,
      ...(format === 'JSON' ? { applicationLevel: config.ApplicationLogLevel ?? 'INFO' } : {}),
      ...(format === 'JSON' ? { systemLevel: config.SystemLogLevel ?? 'INFO' } : {}),
    } as const;
    functions.set(service, { service, memoryMb: Number(fn.Properties.MemorySize ?? 128), architecture, logging });
  }
  const acls = Object.values(api.findResources('AWS::WAFv2::WebACL') as Resources);
  const webAclRules = acls.reduce((n, acl) => n + ((acl.Properties.Rules as unknown[]) ?? []).length, 0);
  const retentions = Object.values(api.findResources('AWS::Logs::LogGroup') as Resources).map((g) =>
    Number(g.Properties.RetentionInDays ?? 0),
  );
  // TableV2 synthesizes AWS::DynamoDB::GlobalTable, with PITR on each replica.
  const tables = Object.values(data.findResources('AWS::DynamoDB::GlobalTable') as Resources);
  const pitrTables = tables.filter((t) =>
    (
      (t.Properties.Replicas as { PointInTimeRecoverySpecification?: { PointInTimeRecoveryEnabled?: boolean } }[]) ?? []
    ).some((r) => r.PointInTimeRecoverySpecification?.PointInTimeRecoveryEnabled),
  ).length;
  const authorizers = Object.values(api.findResources('AWS::ApiGateway::Authorizer') as Resources);
  const everyStack = [api, data];
  const all = (type: string) => everyStack.flatMap((t) => Object.values(t.findResources(type) as Resources));
  const [stage] = Object.values(api.findResources('AWS::ApiGateway::Stage') as Resources);
  const accessLog = stage?.Properties.AccessLogSetting as { Format?: string } | undefined;
  return {
    functions,
    webAclRules,
    logRetentionDays: Math.max(...retentions),
    pitrTables,
    tables: tables.length,
    authorizerCacheTtlSeconds: Number(authorizers[0]?.Properties.AuthorizerResultTtlInSeconds ?? 300),
    accessLogFormat: accessLog?.Format ?? '',
    provisioned: provisionedCapacity(stacks.data, data),
    eventSourceMappings: all('AWS::Lambda::EventSourceMapping').map((m) => ({
      batchSize: Number(m.Properties.BatchSize ?? 10),
      ...((m.Properties.ScalingConfig as { MaximumConcurrency?: number } | undefined)?.MaximumConcurrency
        ? { maxConcurrency: (m.Properties.ScalingConfig as { MaximumConcurrency: number }).MaximumConcurrency }
        : {}),
    })),
    alarms: alarmBilling(all('AWS::CloudWatch::Alarm'), all('AWS::CloudWatch::CompositeAlarm').length),
    dashboards: all('AWS::CloudWatch::Dashboard').length,
    kmsKeys: all('AWS::KMS::Key').length,
  };
}

interface AlarmProperties {
  readonly Period?: number;
  readonly Metrics?: readonly { readonly MetricStat?: { readonly Period?: number } }[];
}

/** What CloudWatch bills each alarm for: every metric it evaluates, at its resolution (under 60 s: high). */
function alarmBilling(alarms: readonly { Properties: Record<string, unknown> }[], composite: number) {
  let metrics = 0;
  let highResolutionMetrics = 0;
  for (const alarm of alarms) {
    const p = alarm.Properties as AlarmProperties;
    const periods = p.Metrics
      ? p.Metrics.flatMap((m) => (m.MetricStat ? [m.MetricStat.Period ?? 60] : []))
      : [p.Period ?? 60];
    for (const period of periods) {
      if (period < 60) highResolutionMetrics += 1;
      else metrics += 1;
    }
  }
  return { count: alarms.length, metrics, highResolutionMetrics, composite };
}

interface AutoScaling {
  readonly TargetTrackingScalingPolicyConfiguration?: { readonly TargetValue?: number };
}
interface GlobalTableProperties {
  readonly BillingMode?: string;
  readonly WriteProvisionedThroughputSettings?: { readonly WriteCapacityAutoScalingSettings?: AutoScaling };
  readonly GlobalSecondaryIndexes?: readonly {
    readonly IndexName: string;
    readonly WriteProvisionedThroughputSettings?: { readonly WriteCapacityAutoScalingSettings?: AutoScaling };
  }[];
  readonly Replicas?: readonly {
    readonly ReadProvisionedThroughputSettings?: { readonly ReadCapacityAutoScalingSettings?: AutoScaling };
    readonly GlobalSecondaryIndexes?: readonly {
      readonly IndexName: string;
      readonly ReadProvisionedThroughputSettings?: { readonly ReadCapacityAutoScalingSettings?: AutoScaling };
    }[];
  }[];
}

/**
 * Each provisioned table's and GSI's target utilization, from its GlobalTable resource (TableV2 puts auto scaling
 * there, not in Application Auto Scaling resources): writes on the table and its indexes, reads on the replica.
 */
function provisionedCapacity(
  stack: ReturnType<typeof buildSendflow>['data'],
  template: Template,
): Map<string, ProvisionedUtilization> {
  const resources = template.findResources('AWS::DynamoDB::GlobalTable') as Record<
    string,
    { Properties: GlobalTableProperties }
  >;
  const target = (settings: AutoScaling | undefined, what: string) => {
    const value = settings?.TargetTrackingScalingPolicyConfiguration?.TargetValue;
    if (typeof value !== 'number') throw new Error(`${what}: provisioned without target-tracking auto scaling`);
    return value / 100;
  };
  const found = new Map<string, ProvisionedUtilization>();
  for (const name of tableNames) {
    const id = stack.getLogicalId(stack.tables[name].node.defaultChild as CfnElement);
    const table = resources[id]?.Properties;
    if (table?.BillingMode !== 'PROVISIONED') continue;
    const [replica] = table.Replicas ?? [];
    found.set(name, {
      read: target(replica?.ReadProvisionedThroughputSettings?.ReadCapacityAutoScalingSettings, name),
      write: target(table.WriteProvisionedThroughputSettings?.WriteCapacityAutoScalingSettings, name),
    });
    for (const index of table.GlobalSecondaryIndexes ?? []) {
      const what = `${name} ${index.IndexName}`;
      const reads = replica?.GlobalSecondaryIndexes?.find((r) => r.IndexName === index.IndexName);
      found.set(what, {
        read: target(reads?.ReadProvisionedThroughputSettings?.ReadCapacityAutoScalingSettings, what),
        write: target(index.WriteProvisionedThroughputSettings?.WriteCapacityAutoScalingSettings, what),
      });
    }
  }
  return found;
}

// Alarms: the two SNS topics (paging and not: what pages is test/infra/paging.test.ts), the per-function and API
// alarms, the email subscription from context, the platform dashboard, X-Ray off, and the metrics' service
// dimension per stage.
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPUTATION_LOG_LINES } from '../../lambdas/domain/metric-names';
import { tableNames } from '../../lambdas/manifest';
import {
  CONTEXT_ALARM_EMAIL,
  CONTEXT_ALARM_EMAILS,
  CONTEXT_LAMBDA_CONCURRENCY,
  CONTEXT_MAX_CONCURRENCY,
  CONTEXT_STAGE,
  CONTEXT_UNMONITORED_STAGES,
} from '../../lib/app';
import { API_5XX_ALARM_COUNT, API_P99_LATENCY_ALARM_MS, SEND_LAG_ALARM_MS } from '../../lib/constructs/monitoring';
import { only, synthSendflow } from './synth';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

let api: Template;
let withEmail: Template;
let staging: Template;

beforeAll(() => {
  api = synthSendflow().api;
  withEmail = synthSendflow({
    [CONTEXT_ALARM_EMAILS]: { prod: ['oncall@example.com', 'pager@example.com'], staging: ['dev@example.com'] },
  }).api;
  staging = synthSendflow({ [CONTEXT_STAGE]: 'staging' }).api;
});

const alarms = (template: Template) => Object.values(template.findResources('AWS::CloudWatch::Alarm') as Resources);
/** The paging topic (AlarmTopicArn) or the non-paging one (NotifyTopicArn), by logical id. */
const topicId = (template: Template, output = 'AlarmTopicArn') =>
  (template.findOutputs(output)[output]?.Value as { Ref: string } | undefined)?.Ref ?? '';
const notifyTopicId = (template: Template) => topicId(template, 'NotifyTopicArn');
/** Our functions: every one the NodeFunction construct builds carries POWERTOOLS_SERVICE_NAME. */
function ourFunctions(template: Template): string[] {
  const functions = template.findResources('AWS::Lambda::Function') as Resources;
  return Object.entries(functions)
    .filter(([, f]) => {
      const env = (f.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables;
      return env?.POWERTOOLS_SERVICE_NAME !== undefined;
    })
    .map(([id]) => id);
}
function dimension(alarm: { Properties: Record<string, unknown> }, name: string): unknown {
  const dims = (alarm.Properties.Dimensions ?? []) as { Name: string; Value: unknown }[];
  return dims.find((d) => d.Name === name)?.Value;
}

describe('alarm topic', () => {
  it('every metric alarm of the stack notifies the non-paging topic, in alarm and when it recovers', () => {
    const topic = { Ref: notifyTopicId(api) };
    const all = alarms(api);
    expect(all.length).toBeGreaterThan(20);
    for (const alarm of all) {
      expect(alarm.Properties.AlarmActions, String(alarm.Properties.AlarmName)).toEqual([topic]);
      expect(alarm.Properties.OKActions, String(alarm.Properties.AlarmName)).toEqual([topic]);
    }
  });

  it('both topics are encrypted with a rotated customer key that CloudWatch may use, and refuse plain HTTP', () => {
    const topics = Object.entries(api.findResources('AWS::SNS::Topic') as Resources);
    const key = only(api, 'AWS::KMS::Key');
    expect(topics.map(([id]) => id).sort()).toEqual([topicId(api), notifyTopicId(api)].sort());
    for (const [, topic] of topics) expect(topic.Properties.KmsMasterKeyId).toEqual({ 'Fn::GetAtt': [key.id, 'Arn'] });
    expect(key.properties.EnableKeyRotation).toBe(true);
    const keyStatements = (key.properties.KeyPolicy as { Statement: { Principal?: unknown; Action: unknown }[] })
      .Statement;
    expect(keyStatements).toContainEqual(
      expect.objectContaining({
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      }),
    );
    const policies = Object.values(api.findResources('AWS::SNS::TopicPolicy') as Resources);
    expect(policies).toHaveLength(2);
    for (const found of policies) {
      const policy = found.Properties.PolicyDocument as {
        Statement: { Effect: string; Action: unknown; Principal?: unknown; Condition?: unknown }[];
      };
      expect(policy.Statement).toContainEqual(
        expect.objectContaining({
          Effect: 'Allow',
          Action: 'sns:Publish',
          Principal: { Service: 'cloudwatch.amazonaws.com' },
        }),
      );
      expect(policy.Statement).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    }
  });

  it("subscribes the stage's addresses from committed configuration (sendflow:alarmEmails), and no other stage's", () => {
    const subscriptions = Object.values(withEmail.findResources('AWS::SNS::Subscription') as Resources);
    expect(subscriptions.map((s) => s.Properties.Endpoint).sort()).toEqual(['oncall@example.com', 'pager@example.com']);
    for (const subscription of subscriptions) {
      expect(subscription.Properties).toMatchObject({ Protocol: 'email', TopicArn: { Ref: topicId(withEmail) } });
    }
    const staged = synthSendflow({
      [CONTEXT_STAGE]: 'staging',
      [CONTEXT_ALARM_EMAILS]: JSON.stringify({ prod: ['oncall@example.com'], staging: ['dev@example.com'] }),
    }).api;
    expect(only(staged, 'AWS::SNS::Subscription').properties.Endpoint).toBe('dev@example.com');
  });

  it('refuses at synth a stage with no alarm address that is not declared unmonitored (it used to warn only)', () => {
    expect(() => synthSendflow({ [CONTEXT_UNMONITORED_STAGES]: [] })).toThrow(/has no alarm subscriber/);
    expect(() =>
      synthSendflow({ [CONTEXT_UNMONITORED_STAGES]: [], [CONTEXT_ALARM_EMAILS]: { prod: ['oncall@example.com'] } }),
    ).not.toThrow();
  });

  it('refuses an address that is not one, and the old one-off flag that a later deploy silently undid', () => {
    expect(() => synthSendflow({ [CONTEXT_ALARM_EMAILS]: { prod: ['not an address'] } })).toThrow(
      /sendflow:alarmEmails/,
    );
    expect(() => synthSendflow({ [CONTEXT_ALARM_EMAILS]: { prod: 'oncall@example.com' } })).toThrow(
      /sendflow:alarmEmails/,
    );
    expect(() => synthSendflow({ [CONTEXT_ALARM_EMAIL]: 'oncall@example.com' })).toThrow(
      /sendflow:alarmEmail is replaced by sendflow:alarmEmails/,
    );
  });

  it('reads object settings from cdk.json or their JSON from -c, and refuses malformed JSON or a non-object', () => {
    for (const [key, valid, example] of [
      [CONTEXT_ALARM_EMAILS, { prod: ['oncall@example.com'] }, /such as \{"prod"/],
      [CONTEXT_LAMBDA_CONCURRENCY, { api: 100 }, /such as \{"accountQuota"/],
    ] as const) {
      expect(() => synthSendflow({ [key]: JSON.stringify(valid) })).not.toThrow();
      expect(() => synthSendflow({ [key]: '{"prod": [' })).toThrow(new RegExp(`Context ${key} must be a JSON object`));
      expect(() => synthSendflow({ [key]: '["a"]' })).toThrow(example);
    }
  });
});

describe('account and service alarms', () => {
  const byMetric = (template: Template, namespace: string, metric: string) =>
    alarms(template).filter((a) => a.Properties.Namespace === namespace && a.Properties.MetricName === metric);

  it('pages on SES reputation before SES reviews the account (bounce 4% < 5%, complaints 0.08% < 0.1%)', () => {
    const [bounce] = byMetric(api, 'AWS/SES', 'Reputation.BounceRate');
    const [complaint] = byMetric(api, 'AWS/SES', 'Reputation.ComplaintRate');
    expect(bounce?.Properties).toMatchObject({
      Threshold: 0.04,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Statistic: 'Maximum',
      TreatMissingData: 'notBreaching',
    });
    expect(complaint?.Properties).toMatchObject({ Threshold: 0.0008, Statistic: 'Maximum' });
    // Account-wide rates (what SES reviews), not one configuration set's.
    expect(bounce?.Properties.Dimensions).toBeUndefined();
  });

  it("tells the non-paging subscribers when a customer's sending is paused: a metric filter on the judges' paused line", () => {
    // Arrange
    const filters = Object.values(api.findResources('AWS::Logs::MetricFilter') as Resources).filter((f) =>
      JSON.stringify(f.Properties.MetricTransformations).includes('ReputationPauses'),
    );
    const logGroups = api.findResources('AWS::Logs::LogGroup') as Resources;
    const functions = api.findResources('AWS::Lambda::Function') as Resources;
    const serviceOf = (logGroupRef: unknown) => {
      const id = (logGroupRef as { Ref: string }).Ref;
      const fn = Object.values(functions).find(
        (f) =>
          JSON.stringify((f.Properties.LoggingConfig as { LogGroup?: unknown } | undefined)?.LogGroup) ===
          JSON.stringify({ Ref: id }),
      );
      return (fn?.Properties.Environment as { Variables: Record<string, string> } | undefined)?.Variables
        .POWERTOOLS_SERVICE_NAME;
    };
    const [metricName] = filters.map(
      (f) => (f.Properties.MetricTransformations as { MetricName: string }[])[0]?.MetricName,
    );

    // Assert: the dispatcher's and the SES mapper's log groups, the exact line the code writes, one stage's metric.
    expect(filters.map((f) => serviceOf(f.Properties.LogGroupName)).sort()).toEqual([
      'sendflow-dispatcher',
      'sendflow-ses-events',
    ]);
    for (const filter of filters) {
      expect(Object.keys(logGroups)).toContain((filter.Properties.LogGroupName as { Ref: string }).Ref);
      expect(filter.Properties.FilterPattern).toBe(`{ $.message = "${REPUTATION_LOG_LINES.paused}" }`);
      expect(filter.Properties.MetricTransformations).toEqual([
        { MetricNamespace: 'Sendflow', MetricName: metricName, MetricValue: '1' },
      ]);
    }
    expect(metricName).toMatch(/^ReputationPauses-Sendflow\S*Api/);
    const [alarm] = byMetric(api, 'Sendflow', metricName as string);
    expect(alarm?.Properties).toMatchObject({
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Statistic: 'Sum',
      TreatMissingData: 'notBreaching',
      AlarmActions: [{ Ref: notifyTopicId(api) }],
    });
  });

  it('pages on DynamoDB throttling, one alarm per table (read and write throttle events summed)', () => {
    const throttles = alarms(api).filter((a) => String(a.Properties.AlarmName).endsWith('TableThrottles'));
    expect(throttles).toHaveLength(tableNames.length);
    for (const alarm of throttles) {
      const metrics = alarm.Properties.Metrics as {
        Id: string;
        MetricStat?: { Metric: { MetricName: string; Namespace: string; Dimensions: { Name: string }[] } };
      }[];
      const names = metrics.flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : [])).sort();
      expect(names).toEqual(['ReadThrottleEvents', 'WriteThrottleEvents']);
      for (const m of metrics.filter((x) => x.MetricStat)) {
        expect(m.MetricStat?.Metric.Namespace).toBe('AWS/DynamoDB');
        expect(m.MetricStat?.Metric.Dimensions.map((d) => d.Name)).toEqual(['TableName']);
      }
      expect(alarm.Properties.Threshold).toBe(1);
    }
  });

  it('pages when account concurrency nears the configured quota (80%)', () => {
    const [concurrency] = byMetric(api, 'AWS/Lambda', 'ConcurrentExecutions');
    expect(concurrency?.Properties).toMatchObject({ Threshold: 800, Statistic: 'Maximum', Period: 60 });
    expect(concurrency?.Properties.Dimensions).toBeUndefined();
    // A smaller account: its consumers lowered to fit what the reservations leave (250).
    const small = synthSendflow({
      [CONTEXT_LAMBDA_CONCURRENCY]: { accountQuota: 400, api: 100, authorizer: 50 },
      [CONTEXT_MAX_CONCURRENCY]: { deliveries: 100, deliveriesBypass: 20, slowDeliveries: 20 },
    }).api;
    expect(byMetric(small, 'AWS/Lambda', 'ConcurrentExecutions')[0]?.Properties.Threshold).toBe(320);
  });
});

describe('reserved concurrency', () => {
  const reserved = (template: Template, service: string) => {
    const functions = template.findResources('AWS::Lambda::Function') as Resources;
    const fn = Object.values(functions).find(
      (f) =>
        (f.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables
          ?.POWERTOOLS_SERVICE_NAME === service,
    );
    return fn?.Properties.ReservedConcurrentExecutions;
  };

  it('reserves concurrency for the API and the authorizer, so a backlog of queue work cannot starve them', () => {
    expect(reserved(api, 'sendflow-api')).toBe(100);
    expect(reserved(api, 'sendflow-authorizer')).toBe(50);
    expect(reserved(api, 'sendflow-public')).toBe(20);
    for (const service of ['sendflow-dispatcher', 'sendflow-delivery', 'sendflow-sender', 'sendflow-ses-events']) {
      expect(reserved(api, service), service).toBeUndefined();
    }
    const custom = synthSendflow({ [CONTEXT_LAMBDA_CONCURRENCY]: { accountQuota: 3000, api: 500, authorizer: 200 } });
    expect(reserved(custom.api, 'sendflow-api')).toBe(500);
    expect(reserved(custom.api, 'sendflow-authorizer')).toBe(200);
  });

  it('refuses reservations that leave Lambda less than its 100 unreserved', () => {
    expect(() =>
      synthSendflow({ [CONTEXT_LAMBDA_CONCURRENCY]: { accountQuota: 200, api: 100, authorizer: 50 } }),
    ).toThrow(/sendflow:lambdaConcurrency: .*\+ 20 \(public\) .*leaves 30 unreserved.*at least 100/);
  });

  it("refuses queue consumers whose bounds do not fit in what the reservations leave of the account's quota", () => {
    expect(() =>
      synthSendflow({
        [CONTEXT_LAMBDA_CONCURRENCY]: { accountQuota: 300, api: 100, authorizer: 50 },
        [CONTEXT_MAX_CONCURRENCY]: { deliveries: 200 },
      }),
    ).toThrow(/queue consumers may run 600 .*only 130 .*sendflow:maxConcurrency/);
  });
});

describe('alarms', () => {
  it('one Errors and one Throttles alarm on every function', () => {
    const functions = ourFunctions(api);
    expect(functions).toHaveLength(8);
    for (const metric of ['Errors', 'Throttles']) {
      const watched = alarms(api)
        .filter((a) => a.Properties.Namespace === 'AWS/Lambda' && a.Properties.MetricName === metric)
        .map((a) => (dimension(a, 'FunctionName') as { Ref: string }).Ref);
      expect(watched.sort(), metric).toEqual([...functions].sort());
    }
  });

  it('pages on API 5XX answers and on p99 latency of the stage', () => {
    const gateway = alarms(api).filter((a) => a.Properties.Namespace === 'AWS/ApiGateway');
    const errors = gateway.find((a) => a.Properties.MetricName === '5XXError');
    const latency = gateway.find((a) => a.Properties.MetricName === 'Latency');
    expect(errors?.Properties).toMatchObject({ Statistic: 'Sum', Threshold: API_5XX_ALARM_COUNT, Period: 300 });
    expect(latency?.Properties).toMatchObject({
      ExtendedStatistic: 'p99',
      Threshold: API_P99_LATENCY_ALARM_MS,
      EvaluationPeriods: 3,
    });
  });

  it('pages when sends start late: SendLag p90 above 5 minutes for 15 minutes (the sends queue age cannot see hand-backs)', () => {
    const lag = alarms(api).filter((a) => a.Properties.MetricName === 'SendLag');
    expect(lag.map((a) => a.Properties)).toEqual([
      expect.objectContaining({
        AlarmName: 'Sendflow-prod-Api-SendLagP90',
        Namespace: 'Sendflow',
        ExtendedStatistic: 'p90',
        Threshold: SEND_LAG_ALARM_MS,
        Period: 300,
        EvaluationPeriods: 3,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'notBreaching',
      }),
    ]);
    expect(SEND_LAG_ALARM_MS).toBe(300_000);
  });

  it('watches the age of the oldest message on every main queue, slow lane included', () => {
    // (The same metric near each queue's retention is the data-loss alarm: test/infra/paging.test.ts.)
    const ages = alarms(api).filter(
      (a) =>
        a.Properties.MetricName === 'ApproximateAgeOfOldestMessage' &&
        String(a.Properties.AlarmName).endsWith('QueueOldestMessage'),
    );
    expect(ages.map((a) => a.Properties.AlarmName).sort()).toEqual(
      [
        'Sendflow-prod-Api-DeliveriesQueueOldestMessage',
        'Sendflow-prod-Api-DeliveriesBypassQueueOldestMessage',
        'Sendflow-prod-Api-EventsQueueOldestMessage',
        'Sendflow-prod-Api-ProviderEventsQueueOldestMessage',
        'Sendflow-prod-Api-SendsQueueOldestMessage',
        'Sendflow-prod-Api-SlowDeliveriesQueueOldestMessage',
      ].sort(),
    );
  });
});

describe('dashboard and metrics', () => {
  it('a dashboard per stage, named after its stack, graphing the EMF metrics of that stage', () => {
    const prod = only(api, 'AWS::CloudWatch::Dashboard').properties;
    const other = only(staging, 'AWS::CloudWatch::Dashboard').properties;
    expect(prod.DashboardName).toBe('Sendflow-prod-Api');
    expect(other.DashboardName).toBe('Sendflow-staging-Api');
    const body = JSON.stringify(prod.DashboardBody);
    for (const name of [
      'Reputation.BounceRate',
      'Reputation.ComplaintRate',
      'ConcurrentExecutions',
      'DeliveriesAttempted',
      'DeliveriesFailed',
      'AttemptDuration',
      'FirstAttemptLag',
      'EmailsSent',
    ]) {
      expect(body).toContain(name);
    }
    expect(body).toContain('Sendflow-prod-Api');
  });

  it('every function publishes its metrics under its stage (SF_METRICS_SERVICE = the stack name)', () => {
    const functions = api.findResources('AWS::Lambda::Function') as Resources;
    for (const id of ourFunctions(api)) {
      const env = (functions[id]?.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)
        ?.Variables;
      expect(env?.SF_METRICS_SERVICE, id).toBe('Sendflow-prod-Api');
    }
  });

  it('X-Ray is off: no function traces and the stage does not either', () => {
    const functions = api.findResources('AWS::Lambda::Function') as Resources;
    for (const [id, fn] of Object.entries(functions)) {
      expect((fn.Properties.TracingConfig as { Mode?: string } | undefined)?.Mode, id).not.toBe('Active');
    }
    expect(only(api, 'AWS::ApiGateway::Stage').properties.TracingEnabled).toBe(false);
    expect(JSON.stringify(api.toJSON())).not.toContain('xray:');
  });
});

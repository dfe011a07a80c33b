// Alarms that page: the SNS topic every alarm notifies, the per-function and API alarms, the email subscription
// from context, the platform dashboard, X-Ray off, and the metrics' service dimension per stage.
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { CONTEXT_ALARM_EMAIL, CONTEXT_STAGE } from '../../lib/app';
import { API_5XX_ALARM_COUNT, API_P99_LATENCY_ALARM_MS } from '../../lib/constructs/monitoring';
import { only, synthSendflow } from './synth';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

let api: Template;
let withEmail: Template;
let staging: Template;

beforeAll(() => {
  api = synthSendflow().api;
  withEmail = synthSendflow({ [CONTEXT_ALARM_EMAIL]: 'oncall@example.com' }).api;
  staging = synthSendflow({ [CONTEXT_STAGE]: 'staging' }).api;
});

const alarms = (template: Template) => Object.values(template.findResources('AWS::CloudWatch::Alarm') as Resources);
const topicId = (template: Template) => only(template, 'AWS::SNS::Topic').id;
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
  it('every alarm of the stack notifies the topic, in alarm and when it recovers', () => {
    const topic = { Ref: topicId(api) };
    const all = alarms(api);
    expect(all.length).toBeGreaterThan(20);
    for (const alarm of all) {
      expect(alarm.Properties.AlarmActions, String(alarm.Properties.AlarmName)).toEqual([topic]);
      expect(alarm.Properties.OKActions, String(alarm.Properties.AlarmName)).toEqual([topic]);
    }
  });

  it('is encrypted with a rotated customer key that CloudWatch may use, and refuses plain HTTP', () => {
    const topic = only(api, 'AWS::SNS::Topic');
    const key = only(api, 'AWS::KMS::Key');
    expect(topic.properties.KmsMasterKeyId).toEqual({ 'Fn::GetAtt': [key.id, 'Arn'] });
    expect(key.properties.EnableKeyRotation).toBe(true);
    const keyStatements = (key.properties.KeyPolicy as { Statement: { Principal?: unknown; Action: unknown }[] })
      .Statement;
    expect(keyStatements).toContainEqual(
      expect.objectContaining({
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      }),
    );
    const policy = only(api, 'AWS::SNS::TopicPolicy').properties.PolicyDocument as {
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
  });

  it('subscribes the alarm email only when the context names one', () => {
    expect(Object.keys(api.findResources('AWS::SNS::Subscription'))).toHaveLength(0);
    const subscription = only(withEmail, 'AWS::SNS::Subscription').properties;
    expect(subscription).toMatchObject({ Protocol: 'email', Endpoint: 'oncall@example.com' });
    expect(subscription.TopicArn).toEqual({ Ref: topicId(withEmail) });
  });

  it('refuses an alarm email that is not an address', () => {
    expect(() => synthSendflow({ [CONTEXT_ALARM_EMAIL]: 'not an address' })).toThrow(/sendflow:alarmEmail/);
  });
});

describe('alarms', () => {
  it('one Errors and one Throttles alarm on every function', () => {
    const functions = ourFunctions(api);
    expect(functions).toHaveLength(7);
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

  it('watches the age of the oldest message on every main queue, slow lane included', () => {
    const ages = alarms(api).filter((a) => a.Properties.MetricName === 'ApproximateAgeOfOldestMessage');
    expect(ages.map((a) => a.Properties.AlarmName).sort()).toEqual(
      [
        'Sendflow-prod-Api-DeliveriesQueueOldestMessage',
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

// The assembled app as bin/app.ts builds it: AwsSolutions checks registered, bundling skipped. cdk-nag v3
// makes app.synth() throw on any finding. CDK's built-in CloudFormation schema validation stays off here
// (its wasm engine costs seconds per worker); `npm run synth` runs it.
import { App, Stack, Validations } from 'aws-cdk-lib';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { DEFAULT_API_THROTTLE } from '../../lib/api-throttle';
import {
  buildSendflow,
  CONTEXT_AUTHORIZER_CACHE_TTL,
  CONTEXT_EMAIL_RETENTION_DAYS,
  CONTEXT_WEBHOOK_DISABLE_AFTER_SECONDS,
  settingsFromContext,
} from '../../lib/app';
import { DEFAULT_LAMBDA_CONCURRENCY } from '../../lib/concurrency';
import { DEFAULT_MAX_CONCURRENCY } from '../../lib/consumers';
import { CONTEXT_REPUTATION, DEFAULT_REPUTATION } from '../../lib/reputation-settings';
import { synthSendflow, TEST_CONTEXT } from './synth';

function nagCheckedApp(context: Record<string, unknown> = {}): App {
  const app = new App({ context: { ...TEST_CONTEXT, ...context }, builtinCloudFormationValidation: false });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return app;
}

describe('cdk-nag AwsSolutions', () => {
  it('finds nothing unacknowledged in the whole app', () => {
    // Arrange
    const app = nagCheckedApp();
    buildSendflow(app);

    // Act & Assert
    expect(() => app.synth()).not.toThrow();
  });

  it('fails synthesis on a finding nobody acknowledged (the check above is live)', () => {
    // Arrange: a table without point-in-time recovery (AwsSolutions-DDB3).
    const app = nagCheckedApp();
    buildSendflow(app);
    new Table(new Stack(app, 'Careless'), 'Table', { partitionKey: { name: 'id', type: AttributeType.STRING } });

    // Act & Assert
    expect(() => app.synth()).toThrow(/AwsSolutions-DDB3/);
  });

  it('acknowledges specific findings, each with a reason', () => {
    // Arrange
    const app = nagCheckedApp();
    buildSendflow(app);

    // Act
    const acknowledged = app.node
      .findAll()
      .flatMap((construct) => construct.node.metadata)
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => Object.entries(entry.data as Record<string, string>));

    // Assert
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const [id, reason] of acknowledged) {
      expect(id).toMatch(
        new RegExp(
          '^(annotation::)?AwsSolutions-(' +
            [
              'COG4',
              'APIG2',
              'APIG4',
              'IAM4\\[Policy::.+\\]',
              'IAM5\\[Resource::\\*\\]',
              'L1',
              // Scheduler DLQs, which cdk-nag does not recognise as DLQs
              'SQS3',
              // the delivery worker creates retry schedules by name inside its own group only
              'IAM5\\[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/Sendflow-prod-Api-retries/\\*\\]',
              // the API creates and deletes send schedules by name inside the sends group only
              'IAM5\\[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/Sendflow-prod-Api-sends/\\*\\]',
              // the link-signing key is not rotated: delivered links must keep verifying
              'SMG4',
              // AWS destinations: customers' roles, in their accounts, named at run time; only with an external id
              'IAM5\\[Resource::arn:<AWS::Partition>:iam::\\*:role/\\*\\]',
              // SES identities are customer domains added at run time
              'IAM5\\[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/\\*\\]',
              // grantInvoke's function-versions suffix on the reconciler schedule role
              'IAM5\\[Resource::<DeliveryPipelineReconcilerFunction[0-9A-F]{8}\\.Arn>:\\*\\]',
              // the same suffix on the stage guard's Provider framework role, which invokes the guard function
              'IAM5\\[Resource::<StageGuardHandlerFunction[0-9A-F]{8}\\.Arn>:\\*\\]',
              // email bodies: one object per email under the bucket's emails/ prefix (retention/emails/ for those that
              // expire within the retention: the lifecycle's prefix), named at run time
              'IAM5\\[Resource::arn:<AWS::Partition>:s3:::<SsmParameterValue[A-Za-z0-9]+Parameter>/(retention/)?emails/\\*\\]',
              // no server access logs on the bodies bucket: as many log objects again as bodies read or written
              'S1',
              // the execution log group's LogRetention function creates its own log group, whose name is generated
              'IAM5\\[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:/aws/lambda/\\*\\]',
              // and the `:*` form of the execution log group's own ARN (CreateLogGroup only)
              'IAM5\\[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:API-Gateway-Execution-Logs_<Api[0-9A-F]{8}>/v1:\\*\\]',
            ].join('|') +
            ')$',
          'i',
        ),
      );
      expect(reason.length).toBeGreaterThan(40);
    }
  });
});

describe('settings from CDK context', () => {
  it('defaults the authorizer cache to 60 s, the consumers to the manifest, the SES rate to 14/s, no alarm address, tables on demand, canary deployments, the stored formats of this release', () => {
    expect(settingsFromContext(new App())).toEqual({
      authorizerCacheTtlSeconds: 60,
      stage: 'prod',
      alarmEmails: [],
      alarmSubscribers: { page: [], notify: [] },
      unmonitored: false,
      lambdaConcurrency: DEFAULT_LAMBDA_CONCURRENCY,
      maxConcurrency: DEFAULT_MAX_CONCURRENCY,
      apiThrottle: DEFAULT_API_THROTTLE,
      sesMaxSendRate: 14,
      emailRetentionDays: 30,
      tableCapacity: { mode: 'on-demand' },
      webhookDisableAfterSeconds: 432_000,
      reputation: DEFAULT_REPUTATION,
      deployment: 'canary10Percent5Minutes',
      storedFormats: '',
    });
  });

  it('gives every function the stage’s reputation settings (sendflow:reputation), the defaults for a stage without', () => {
    const variablesOf = (context: Record<string, unknown>) =>
      Object.values(synthSendflow(context).api.findResources('AWS::Lambda::Function'))
        .map((fn) => (fn.Properties.Environment?.Variables ?? {}) as Record<string, unknown>)
        .filter((variables) => 'SF_TABLE_REPUTATION' in variables);
    const byDefault = variablesOf({});
    const strict = variablesOf({
      [CONTEXT_REPUTATION]: { prod: { minimumSent: 500, pauseBounceRate: 0.06, events: true }, staging: {} },
    });
    expect(byDefault.length).toBeGreaterThan(3);
    for (const variables of byDefault) {
      expect(variables).toMatchObject({
        SF_REPUTATION_WINDOW_DAYS: '7',
        SF_REPUTATION_MINIMUM_SENT: '200',
        SF_REPUTATION_WARN_BOUNCE_RATE: '0.04',
        SF_REPUTATION_WARN_COMPLAINT_RATE: '0.0008',
        SF_REPUTATION_PAUSE_BOUNCE_RATE: '0.08',
        SF_REPUTATION_PAUSE_COMPLAINT_RATE: '0.003',
        SF_REPUTATION_JUDGE_TEST_MODE: 'false',
        SF_REPUTATION_EVENTS: 'false',
      });
    }
    for (const variables of strict) {
      expect(variables).toMatchObject({
        SF_REPUTATION_MINIMUM_SENT: '500',
        SF_REPUTATION_PAUSE_BOUNCE_RATE: '0.06',
        SF_REPUTATION_WARN_BOUNCE_RATE: '0.04',
        SF_REPUTATION_EVENTS: 'true',
      });
    }
  });

  it.each([
    [{ prod: { pauseBounceRate: 0.1 } }, /prod: pause.bounceRate must be below SES's own pause \(10%\)/],
    [{ staging: { warnComplaintRate: 0.004 } }, /staging: warn.complaintRate is above pause.complaintRate/],
    [{ prod: { windowDays: 0 } }, /prod.windowDays/],
    [{ prod: { bounceRate: 0.05 } }, /Unrecognized key/],
    ['{"prod": ', /must be a JSON object/],
  ])('refuses sendflow:reputation %j, whichever stage is synthesized', (raw, message) => {
    const app = new App({ context: { [CONTEXT_REPUTATION]: raw } });
    expect(() => settingsFromContext(app)).toThrow(message);
  });

  it.each([
    ['86400', 86_400],
    [3600, 3600],
  ])('takes the auto-disable window from sendflow:webhookDisableAfterSeconds (%j)', (raw, seconds) => {
    const app = new App({ context: { [CONTEXT_WEBHOOK_DISABLE_AFTER_SECONDS]: raw } });
    expect(settingsFromContext(app).webhookDisableAfterSeconds).toBe(seconds);
  });

  it.each(['0', 59, '1.5', 'soon', 90 * 86_400 + 1])('refuses sendflow:webhookDisableAfterSeconds %j', (raw) => {
    const app = new App({ context: { [CONTEXT_WEBHOOK_DISABLE_AFTER_SECONDS]: raw } });
    expect(() => settingsFromContext(app)).toThrow(/webhookDisableAfterSeconds/);
  });

  it.each([
    [90, 90],
    ['7', 7],
  ])(
    'takes the email retention in days from sendflow:emailRetentionDays (%j), and gives it to every function',
    (value, days) => {
      const app = new App({ context: { [CONTEXT_EMAIL_RETENTION_DAYS]: value } });
      expect(settingsFromContext(app).emailRetentionDays).toBe(days);
    },
  );

  it('gives every function the email retention (SF_EMAIL_RETENTION_DAYS): 30 days unless the stage says', () => {
    const variablesOf = (context: Record<string, unknown>) =>
      Object.values(synthSendflow(context).api.findResources('AWS::Lambda::Function'))
        .map((fn) => (fn.Properties.Environment?.Variables ?? {}) as Record<string, unknown>)
        .filter((variables) => 'SF_TABLE_EMAILS' in variables);
    const byDefault = variablesOf({});
    const ninety = variablesOf({ [CONTEXT_EMAIL_RETENTION_DAYS]: '90' });
    expect(byDefault.length).toBeGreaterThan(3);
    expect(byDefault.every((v) => v.SF_EMAIL_RETENTION_DAYS === '30')).toBe(true);
    expect(ninety.every((v) => v.SF_EMAIL_RETENTION_DAYS === '90')).toBe(true);
  });

  it.each([['0'], ['3651'], ['1.5'], ['a month'], [true]])('refuses the email retention %j', (value) => {
    const app = new App({ context: { [CONTEXT_EMAIL_RETENTION_DAYS]: value } });
    expect(() => settingsFromContext(app)).toThrow(CONTEXT_EMAIL_RETENTION_DAYS);
  });

  it.each([
    [300, 300],
    ['0', 0],
    ['3600', 3600],
  ])('accepts %j (numbers from cdk.json, strings from -c)', (value, expected) => {
    const app = new App({ context: { [CONTEXT_AUTHORIZER_CACHE_TTL]: value } });
    expect(settingsFromContext(app).authorizerCacheTtlSeconds).toBe(expected);
  });

  it.each([['-1'], ['3601'], ['1.5'], ['sixty'], [''], [true]])('refuses %j', (value) => {
    const app = new App({ context: { [CONTEXT_AUTHORIZER_CACHE_TTL]: value } });
    expect(() => settingsFromContext(app)).toThrow(CONTEXT_AUTHORIZER_CACHE_TTL);
  });
});

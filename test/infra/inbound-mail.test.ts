// Inbound email on AWS (lib/constructs/inbound-mail.ts): nothing of it without `sendflow:inbound` for the stage;
// with it, a receipt rule set whose rule requires TLS, scans, stores the message in an encrypted bucket that only
// SES (this rule) may write, then invokes the inbound function asynchronously, whose failures are retried, queued
// and alarmed; the function may read its objects and nothing else; the rule set is activated only when asked.
import { App, Validations } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { loadConfig, localTableDefaults } from '../../lambdas/runtime/config';
import { buildSendflow } from '../../lib/app';
import { checkConcurrency, parseLambdaConcurrency } from '../../lib/concurrency';
import { INBOUND_PARSE_SECONDS, INBOUND_RULE_NAME, INBOUND_TIMEOUT } from '../../lib/constructs/inbound-mail';
import { CONTEXT_INBOUND, parseInbound, SES_RECEIVING_REGIONS } from '../../lib/inbound-settings';
import { synthSendflow, TEST_CONTEXT } from './synth';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] }>;

const INBOUND = { prod: { region: 'eu-west-1', activate: true } };
const RULE_SET = 'Sendflow-prod-Api-inbound';
const RULE_ARN = {
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':ses:',
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      `:receipt-rule-set/${RULE_SET}:receipt-rule/${INBOUND_RULE_NAME}`,
    ],
  ],
};

function inboundApi(context: Record<string, unknown> = { [CONTEXT_INBOUND]: INBOUND }): Template {
  return synthSendflow(context).api;
}

/** The logical id of the one resource of `type` whose properties match `props` (a partial match). */
function idOf(template: Template, type: string, props: Record<string, unknown> = {}): string {
  const ids = Object.keys(template.findResources(type, { Properties: props }));
  if (ids.length !== 1) throw new Error(`expected one ${type}, found ${ids.length}`);
  return ids[0] as string;
}

function inboundFunctionId(template: Template): string {
  return idOf(template, 'AWS::Lambda::Function', {
    Environment: { Variables: Match.objectLike({ POWERTOOLS_SERVICE_NAME: 'sendflow-inbound' }) },
  });
}

/** The inbound function's `live` alias, which SES invokes (lib/constructs/deployments.ts). */
function inboundAliasId(template: Template): string {
  return idOf(template, 'AWS::Lambda::Alias', { FunctionName: { Ref: inboundFunctionId(template) } });
}

describe('inbound mail: synthesized only where configured', () => {
  it.each([
    ['no sendflow:inbound', {}],
    ['sendflow:inbound for another stage only', { [CONTEXT_INBOUND]: { staging: { region: 'eu-west-1' } } }],
  ])('%s: no rule set, rule, bucket, inbound function, activation or region rule', (_, context) => {
    // Act
    const api = inboundApi(context);

    // Assert
    for (const type of ['AWS::SES::ReceiptRuleSet', 'AWS::SES::ReceiptRule', 'AWS::S3::Bucket', 'Custom::AWS']) {
      expect(api.findResources(type), type).toEqual({});
    }
    expect(
      api.findResources('AWS::Lambda::Function', {
        Properties: { Environment: { Variables: Match.objectLike({ POWERTOOLS_SERVICE_NAME: 'sendflow-inbound' }) } },
      }),
    ).toEqual({});
    expect(api.toJSON().Rules?.InboundRegion).toBeUndefined();
  });

  it('takes the stage entry from a -c JSON string too, and checks the deploy region in the template', () => {
    // Act
    const api = inboundApi({ [CONTEXT_INBOUND]: JSON.stringify({ prod: { region: 'us-east-1' } }) });

    // Assert
    expect(api.toJSON().Rules.InboundRegion).toEqual({
      Assertions: [
        {
          Assert: { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'] },
          AssertDescription: expect.stringContaining('us-east-1'),
        },
      ],
    });
    api.resourceCountIs('AWS::SES::ReceiptRuleSet', 1);
  });

  it.each([
    [{ prod: { region: 'eu-west-3' } }, /SES receives email .*got "eu-west-3"/],
    [{ prod: {} }, /region must be one where SES receives email/],
    [{ prod: { region: 'eu-west-1', activate: 'yes' } }, /activate must be true or false/],
    [{ prod: { region: 'eu-west-1', mx: 'x' } }, /unknown setting mx/],
    [{ prod: 'eu-west-1' }, /prod must be an object/],
    ['not json', /must be a JSON object/],
  ])('refuses %j, naming the problem', (raw, message) => {
    // Act & Assert
    expect(() => parseInbound(raw, 'prod')).toThrow(message);
  });

  it('accepts every listed SES receiving region; activation is off unless asked', () => {
    // Act
    const parsed = SES_RECEIVING_REGIONS.map((region) => parseInbound({ prod: { region } }, 'prod'));

    // Assert
    expect(parsed.every((settings) => settings?.activate === false)).toBe(true);
    expect(SES_RECEIVING_REGIONS).toContain('eu-west-1');
    expect(SES_RECEIVING_REGIONS).not.toContain('eu-west-3');
  });
});

describe('inbound mail: the receipt rule', () => {
  const api = inboundApi();

  it('one rule set per stage, one enabled rule: TLS required, scan on, store in S3 first, then invoke the function (Event)', () => {
    // Assert
    api.hasResourceProperties('AWS::SES::ReceiptRuleSet', { RuleSetName: RULE_SET });
    const bucketId = idOf(api, 'AWS::S3::Bucket');
    api.hasResourceProperties('AWS::SES::ReceiptRule', {
      RuleSetName: RULE_SET,
      Rule: {
        Name: INBOUND_RULE_NAME,
        Enabled: true,
        TlsPolicy: 'Require',
        ScanEnabled: true,
        Actions: [
          { S3Action: { BucketName: { Ref: bucketId }, ObjectKeyPrefix: 'inbound/' } },
          { LambdaAction: { FunctionArn: { Ref: inboundAliasId(api) }, InvocationType: 'Event' } },
        ],
      },
    });
    // No recipients: every domain verified in the account; receiveEmail keeps those with receiving enabled.
    const rule = Object.values(api.findResources('AWS::SES::ReceiptRule') as Resources)[0];
    expect((rule?.Properties.Rule as Record<string, unknown> | undefined)?.Recipients).toBeUndefined();
    expect(rule).toBeDefined();
  });

  it('is created after the bucket policy and the invoke permission SES checks when the rule is created', () => {
    // Arrange
    const [rule] = Object.values(api.findResources('AWS::SES::ReceiptRule') as Resources);

    // Assert
    expect(rule?.DependsOn).toEqual(
      expect.arrayContaining([
        idOf(api, 'AWS::S3::BucketPolicy'),
        idOf(api, 'AWS::Lambda::Permission', { Principal: 'ses.amazonaws.com' }),
        idOf(api, 'AWS::SES::ReceiptRuleSet'),
      ]),
    );
  });

  it('lets SES invoke the function for this account and rule only', () => {
    api.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 'ses.amazonaws.com',
      FunctionName: { Ref: inboundAliasId(api) },
      SourceAccount: { Ref: 'AWS::AccountId' },
      SourceArn: RULE_ARN,
    });
  });
});

describe('inbound mail: the bucket', () => {
  it('is encrypted, private, TLS only, retained, and expires messages after the stage’s email retention', () => {
    // Act
    const api = inboundApi({ [CONTEXT_INBOUND]: INBOUND, 'sendflow:emailRetentionDays': 45 });

    // Assert
    api.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      Properties: {
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
        LifecycleConfiguration: {
          Rules: Match.arrayWith([
            { Id: 'inbound-retention', Prefix: 'inbound/', ExpirationInDays: 45, Status: 'Enabled' },
            { Id: 'failures-retention', Prefix: 'inbound-failures/', ExpirationInDays: 45, Status: 'Enabled' },
          ]),
        },
      },
    });
  });

  it('lets ses.amazonaws.com put objects under inbound/ only for this account and rule, and refuses plain HTTP', () => {
    // Arrange
    const api = inboundApi();
    const bucketId = idOf(api, 'AWS::S3::Bucket');
    const [policy] = Object.values(api.findResources('AWS::S3::BucketPolicy') as Resources);
    const document = policy?.Properties.PolicyDocument as { Statement: Record<string, unknown>[] } | undefined;
    const statements = document?.Statement ?? [];

    // Assert
    expect(statements).toHaveLength(2);
    expect(statements).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
    expect(statements).toContainEqual({
      Sid: 'SesPutsReceivedMail',
      Effect: 'Allow',
      Principal: { Service: 'ses.amazonaws.com' },
      Action: 's3:PutObject',
      Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId, 'Arn'] }, '/inbound/*']] },
      Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' }, 'aws:SourceArn': RULE_ARN } },
    });
  });
});

describe('inbound mail: the function', () => {
  const api = inboundApi();
  const functionId = inboundFunctionId(api);

  it('is told its bucket and may only read (and delete) objects under inbound/, and what receiveEmail needs besides', () => {
    // Arrange
    const fn = api.findResources('AWS::Lambda::Function')[functionId] as Resources[string];
    const roleId = (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const policies = Object.values(api.findResources('AWS::IAM::Policy') as Resources).filter((p) =>
      (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId),
    );
    const statements = policies.flatMap(
      (p) => (p.Properties.PolicyDocument as { Statement: { Action: string | string[] }[] }).Statement,
    );
    const actions = statements.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action])).sort();

    // Assert
    expect((fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables.SF_INBOUND_BUCKET).toEqual({
      Ref: idOf(api, 'AWS::S3::Bucket'),
    });
    // The failures queue is the async-invoke destination: Lambda sends to it with the function's role (SendMessage
    // alone, not the GetQueueAttributes and GetQueueUrl that SqsDestination would add).
    // receiveEmail: the name's claim and the domain (GetItem), the received email and its relay (UpdateItem), its
    // parts in the bodies bucket (PutObject, untagged: under retention/emails/), email.received to the events queue.
    // It consumes its own failures queue (ReceiveMessage, DeleteMessage, ChangeMessageVisibility and the
    // attributes and URL Lambda's event source reads).
    expect([...new Set(actions)]).toEqual([
      'dynamodb:GetItem',
      'dynamodb:UpdateItem',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      's3:DeleteObject',
      's3:GetObject',
      's3:PutObject',
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
      'sqs:SendMessage',
    ]);
    // Its parts go to the bodies bucket under retention/emails/ only (a received email expires within the
    // retention); the SES event of an arrival every try failed on goes beside the messages, under inbound-failures/.
    expect(statements.filter((st) => [st.Action].flat().includes('s3:PutObject'))).toEqual([
      {
        Effect: 'Allow',
        Action: 's3:PutObject',
        Resource: {
          'Fn::Join': ['', [{ 'Fn::GetAtt': [idOf(api, 'AWS::S3::Bucket'), 'Arn'] }, '/inbound-failures/*']],
        },
      },
      {
        Effect: 'Allow',
        Action: 's3:PutObject',
        Resource: {
          'Fn::Join': [
            '',
            ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', { Ref: expect.any(String) }, '/retention/emails/*'],
          ],
        },
      },
    ]);
    // An arrival nobody receives is deleted at once (handlers/queue/inbound-mail.ts); only under inbound/.
    expect(statements).toContainEqual(
      expect.objectContaining({
        Action: 's3:DeleteObject',
        Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [idOf(api, 'AWS::S3::Bucket'), 'Arn'] }, '/inbound/*']] },
      }),
    );
    expect(statements).toContainEqual(
      expect.objectContaining({
        Action: 's3:GetObject',
        Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [idOf(api, 'AWS::S3::Bucket'), 'Arn'] }, '/inbound/*']] },
      }),
    );
  });

  it('is retried twice over up to six hours, then its event goes to the failures queue, which the function consumes and which alarms on every message', () => {
    // Arrange
    const queueId = Object.keys(api.findResources('AWS::SQS::Queue')).find((id) =>
      id.startsWith('InboundMailFailures'),
    );
    if (!queueId) throw new Error('no failures queue');
    // Visible again only after the function's time-out (2 minutes) has passed six times over, as Lambda advises.
    api.hasResourceProperties('AWS::SQS::Queue', {
      MessageRetentionPeriod: 1_209_600,
      SqsManagedSseEnabled: true,
      VisibilityTimeout: 720,
    });

    // Assert
    // On the alias SES invokes: an unqualified configuration would not apply to its invocations.
    api.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: functionId },
      Qualifier: 'live',
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 21_600,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } } },
    });
    // The function takes the failures back, one at a time, on its live alias: received once more, else shown to
    // the receiving accounts as failed (handlers/queue/inbound-mail.ts).
    api.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
      // The alias's name (function:alias), from its ARN.
      FunctionName: {
        'Fn::Join': [
          '',
          Match.arrayWith([
            Match.objectLike({
              'Fn::Select': [6, { 'Fn::Split': [':', { Ref: Match.stringLikeRegexp('^InboundMailFunctionLive') }] }],
            }),
          ]),
        ],
      },
      BatchSize: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 2 },
    });
    // Consumed, so its depth stays near 0: every message received from it alarms (and again while it fails).
    api.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'Sendflow-prod-Api-InboundFailuresDepth',
      MetricName: 'NumberOfMessagesReceived',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }],
      Threshold: 1,
      AlarmActions: [{ Ref: Match.stringLikeRegexp('^MonitoringNotifyTopic') }],
    });
    api.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'Sendflow-prod-Api-InboundDestinationDeliveryFailures',
      MetricName: 'DestinationDeliveryFailures',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionId } }],
      Threshold: 1,
    });
  });
});

describe('inbound mail: one hostile message ends within the function’s time, not at its time-out', () => {
  const api = inboundApi();
  const fn = api.findResources('AWS::Lambda::Function', {
    Properties: { Environment: { Variables: Match.objectLike({ POWERTOOLS_SERVICE_NAME: 'sendflow-inbound' }) } },
  });
  const properties = (Object.values(fn)[0] as { Properties: Record<string, unknown> }).Properties as {
    Timeout: number;
    MemorySize: number;
    Environment: { Variables: Record<string, string> };
  };

  it('runs 2 minutes at most with 1,024 MB, its parse time-boxed at 30 s (SF_INBOUND_PARSE_SECONDS)', () => {
    expect(properties.Timeout).toBe(INBOUND_TIMEOUT.toSeconds());
    expect(properties.Timeout).toBe(120);
    expect(properties.MemorySize).toBe(1024);
    expect(properties.Environment.Variables.SF_INBOUND_PARSE_SECONDS).toBe(String(INBOUND_PARSE_SECONDS));
  });

  it('leaves room within the time-out for the parse, the header parse after a time-out, and storing', () => {
    // The time-boxed parse, then at most 5 s more for the header block (ThreadMimeParser), then a minute at
    // least to read the message from S3 and write its parts: a time-out never comes from a parse.
    const parse = Number(properties.Environment.Variables.SF_INBOUND_PARSE_SECONDS);
    expect(parse + 5 + 60).toBeLessThanOrEqual(properties.Timeout);
    // The config schema takes it as given (a positive whole number of seconds).
    expect(loadConfig({ SF_INBOUND_PARSE_SECONDS: String(parse) }, localTableDefaults()).inboundParseMs).toBe(
      parse * 1000,
    );
  });
});

describe('inbound mail: its dead letters on the stage’s dashboard', () => {
  it('graphs the failures queue’s depth beside the other dead-letter queues', () => {
    const api = inboundApi();
    const queueId = Object.keys(api.findResources('AWS::SQS::Queue')).find((id) =>
      id.startsWith('InboundMailFailures'),
    );
    const dashboard = Object.values(api.findResources('AWS::CloudWatch::Dashboard'))[0] as {
      Properties: { DashboardBody: unknown };
    };
    const body = JSON.stringify(dashboard.Properties.DashboardBody);

    expect(queueId).toBeDefined();
    expect(body).toContain(`"${queueId}","QueueName"`);
    expect(body).toContain('inboundFailures');
  });
});

describe('inbound mail: the failures queue keeps SES events no longer than the stage keeps email', () => {
  /** The failures queue's MessageRetentionPeriod (it holds whole SES events: subject, from, to). */
  function failuresRetention(api: Template): unknown {
    const [id, queue] =
      Object.entries(api.findResources('AWS::SQS::Queue') as Resources).find(([id]) =>
        id.startsWith('InboundMailFailures'),
      ) ?? [];
    if (!id) throw new Error('no failures queue');
    return queue?.Properties.MessageRetentionPeriod;
  }

  it.each([
    [undefined, 14 * 86_400],
    ['3', 3 * 86_400],
    ['1', 86_400],
    ['14', 14 * 86_400],
    ['90', 14 * 86_400],
  ])('sendflow:emailRetentionDays %j: %i seconds (at most SQS’s 14 days)', (days, seconds) => {
    // Act
    const api = inboundApi({
      [CONTEXT_INBOUND]: INBOUND,
      ...(days === undefined ? {} : { 'sendflow:emailRetentionDays': days }),
    });

    // Assert
    expect(failuresRetention(api)).toBe(seconds);
  });
});

describe('inbound mail: reserved concurrency', () => {
  it('reserves 5 executions for the inbound function by default, so a mail flood cannot take the consumers’ pool', () => {
    // Act
    const api = inboundApi();

    // Assert
    const fn = api.findResources('AWS::Lambda::Function')[inboundFunctionId(api)] as Resources[string];
    expect(fn.Properties.ReservedConcurrentExecutions).toBe(5);
  });

  it('takes sendflow:lambdaConcurrency.inbound; 0 reserves nothing', () => {
    // Act
    const eight = inboundApi({ [CONTEXT_INBOUND]: INBOUND, 'sendflow:lambdaConcurrency': { inbound: 8 } });
    const none = inboundApi({ [CONTEXT_INBOUND]: INBOUND, 'sendflow:lambdaConcurrency': '{"inbound": 0}' });

    // Assert
    const reserved = (api: Template) =>
      (api.findResources('AWS::Lambda::Function')[inboundFunctionId(api)] as Resources[string]).Properties
        .ReservedConcurrentExecutions;
    expect(reserved(eight)).toBe(8);
    expect(reserved(none)).toBeUndefined();
  });

  it('counts the inbound reservation against the account quota only on a stage that receives', () => {
    // Arrange: 1000 - 800 - 100 leaves Lambda's least (100) without inbound, 95 with it.
    const tight = { accountQuota: 1000, api: 800, authorizer: 100, public: 0, inbound: 5 };
    const small = { events: 2, deliveries: 2, deliveriesBypass: 2, slowDeliveries: 2, sends: 2, providerEvents: 2 };

    // Act / Assert
    expect(() => checkConcurrency(tight, small)).not.toThrow();
    expect(() => checkConcurrency(tight, small, 'sendflow:lambdaConcurrency', true)).toThrow(
      /reserving 800 \(api\) \+ 100 \(authorizer\) \+ 5 \(inbound\) of an account quota of 1000 leaves 95 unreserved/,
    );
    expect(() =>
      synthSendflow({ [CONTEXT_INBOUND]: INBOUND, 'sendflow:lambdaConcurrency': { api: 800, authorizer: 100 } }),
    ).toThrow(/\+ 5 \(inbound\)/);
  });

  it('refuses a negative or fractional inbound reservation', () => {
    expect(() => parseLambdaConcurrency({ inbound: -1 })).toThrow(/inbound must be a whole number, got -1/);
    expect(() => parseLambdaConcurrency({ inbound: 2.5 })).toThrow(/inbound must be a whole number/);
  });
});

describe('inbound mail: monitoring', () => {
  it('gives the inbound function the Errors and Throttles alarms every function has, notifying the non-paging topic', () => {
    // Arrange
    const api = inboundApi();
    const functionId = inboundFunctionId(api);

    // Assert
    for (const [name, metric] of [
      ['InboundErrors', 'Errors'],
      ['InboundThrottles', 'Throttles'],
    ]) {
      api.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmName: `Sendflow-prod-Api-${name}`,
        MetricName: metric,
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionId } }],
        AlarmActions: [{ Ref: Match.stringLikeRegexp('^MonitoringNotifyTopic') }],
      });
    }
  });
});

describe('inbound mail: activating the rule set', () => {
  it('with activate, a custom resource sets this rule set active when created (after the rule), and none on delete', () => {
    // Arrange
    const api = inboundApi();
    const [activation] = Object.values(api.findResources('Custom::AWS') as Resources);

    // Assert
    const create = JSON.parse(String(activation?.Properties.Create));
    const del = JSON.parse(String(activation?.Properties.Delete));
    expect(create).toMatchObject({
      service: 'SES',
      action: 'SetActiveReceiptRuleSet',
      parameters: { RuleSetName: RULE_SET },
    });
    // No call on update: a deploy never takes the active set back from one an operator switched to (the rule set's
    // name is the stack's, so it never changes within a stack; only CDK's own call shape could trigger an update).
    expect(activation?.Properties.Update).toBeUndefined();
    expect(del).toMatchObject({ service: 'SES', action: 'SetActiveReceiptRuleSet' });
    expect(del.parameters).toBeUndefined();
    expect(activation?.DependsOn).toContain(idOf(api, 'AWS::SES::ReceiptRule'));
    // Its role may set the active rule set and nothing else (SES has no resource-level permission for it).
    api.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [{ Action: 'ses:SetActiveReceiptRuleSet', Effect: 'Allow', Resource: '*' }],
      },
    });
  });

  it('has no property that changes from one deploy to the next (no timestamp, no asset hash)', () => {
    // Arrange: two deploys of the stage that differ in everything but the rule set (its functions' code and
    // settings change with the retention).
    const activationOf = (api: Template) => {
      const [activation] = Object.values(api.findResources('Custom::AWS') as Resources);
      return activation?.Properties;
    };
    const before = activationOf(inboundApi());
    const after = activationOf(inboundApi({ [CONTEXT_INBOUND]: INBOUND, 'sendflow:emailRetentionDays': '7' }));

    // Assert: the rule set's name and the calls only; no timestamp or asset hash that would change every deploy.
    expect(Object.keys(before ?? {}).sort()).toEqual(['Create', 'Delete', 'InstallLatestAwsSdk', 'ServiceToken']);
    expect(after).toEqual(before);
  });

  it('without activate, no custom resource: the runbook’s CLI step activates it', () => {
    // Act
    const api = inboundApi({ [CONTEXT_INBOUND]: { prod: { region: 'eu-west-1' } } });

    // Assert
    expect(api.findResources('Custom::AWS')).toEqual({});
    api.resourceCountIs('AWS::SES::ReceiptRule', 1);
  });
});

describe('inbound mail: cdk-nag', () => {
  it('finds nothing unacknowledged in the app with inbound mail and activation on', () => {
    // Arrange
    const app = new App({
      context: { ...TEST_CONTEXT, [CONTEXT_INBOUND]: INBOUND },
      builtinCloudFormationValidation: false,
    });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    buildSendflow(app);

    // Act & Assert
    expect(() => app.synth()).not.toThrow();
  });
});

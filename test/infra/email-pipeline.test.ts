// Template assertions for the email side of the api stack (lib/constructs/email-pipeline.ts and its wiring
// in lib/api-stack.ts): the sends queue and its DLQ, the send worker, the sends schedule group and the role
// Scheduler assumes, the API's scoped scheduling permissions, the link-signing secret and public URL, the
// reconciler's access to overdue sends; the SES configuration set, its EventBridge destination, the rule,
// the provider-events queue with its DLQ and the mapper; SES permissions scoped to the configuration set and
// identities; table access and alarms.
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { queues, visibilityTimeoutSeconds } from '../../lambdas/manifest';
import {
  PROVIDER_EVENTS_OLDEST_MESSAGE_ALARM_SECONDS,
  PROVIDER_EVENTS_QUEUE,
  SENDS_OLDEST_MESSAGE_ALARM_SECONDS,
} from '../../lib/constructs/email-pipeline';
import { invokedFunction, synthSendflow } from './synth';

type Resource = { Type: string; Properties: Record<string, unknown> };
type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };

let api: Template;
let data: Template;
let resources: Record<string, Resource>;
const ids = {} as Record<
  | 'sendsQueue'
  | 'deliveriesBypassQueue'
  | 'sendsDlq'
  | 'sendScheduleDlq'
  | 'eventsQueue'
  | 'deliveriesQueue'
  | 'sendGroup'
  | 'sendRole'
  | 'restApi'
  | 'configurationSet'
  | 'providerEventsQueue'
  | 'providerEventsDlq'
  | 'rule',
  string
>;
const functions = {} as Record<string, string>;

beforeAll(() => {
  ({ api, data } = synthSendflow());
  resources = api.toJSON().Resources as Record<string, Resource>;
  const find = (type: string, pattern: RegExp) => {
    const found = Object.keys(api.findResources(type)).filter((id) => pattern.test(id));
    if (found.length !== 1) throw new Error(`expected one ${type} matching ${pattern}, found ${found.join(', ')}`);
    return found[0] as string;
  };
  ids.sendsQueue = find('AWS::SQS::Queue', /^EmailPipelineSendsQueue/);
  ids.sendsDlq = find('AWS::SQS::Queue', /^EmailPipelineSendsDlq/);
  ids.sendScheduleDlq = find('AWS::SQS::Queue', /^EmailPipelineSendScheduleDlq/);
  ids.eventsQueue = find('AWS::SQS::Queue', /^DeliveryPipelineEventsQueue/);
  ids.deliveriesQueue = find('AWS::SQS::Queue', /^DeliveryPipelineDeliveriesQueue/);
  ids.deliveriesBypassQueue = find('AWS::SQS::Queue', /^DeliveryPipelineDeliveriesBypassQueue/);
  ids.sendGroup = find('AWS::Scheduler::ScheduleGroup', /SendGroup/);
  ids.sendRole = find('AWS::IAM::Role', /SendSchedulerRole/);
  ids.restApi = find('AWS::ApiGateway::RestApi', /^Api/);
  ids.configurationSet = find('AWS::SES::ConfigurationSet', /ConfigurationSet[0-9A-F]{8}$/);
  ids.providerEventsQueue = find('AWS::SQS::Queue', /^EmailPipelineProviderEventsQueue/);
  ids.providerEventsDlq = find('AWS::SQS::Queue', /^EmailPipelineProviderEventsDlq/);
  ids.rule = find('AWS::Events::Rule', /SesEventsRule/);
  for (const [id, fn] of Object.entries(api.findResources('AWS::Lambda::Function'))) {
    // Ours carry a service name; CDK's own LogRetention function (the execution log group's) has none. The public
    // function is the API code with the API's role (test/infra/public-isolation.test.ts): its grants are the API's.
    const name = fn.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME;
    if (name !== undefined && name !== 'sendflow-public') functions[String(name).replace('sendflow-', '')] = id;
  }
});

const arn = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
const actionsOf = (statement: Statement) => [statement.Action].flat();
/** What the event source mapping of a queue invokes (its FunctionName: the consumer's `live` alias). */
const consumerOf = (queueId: string) =>
  Object.values(api.findResources('AWS::Lambda::EventSourceMapping')).find(
    (m) => JSON.stringify(m.Properties.EventSourceArn) === JSON.stringify(arn(queueId)),
  )?.Properties.FunctionName;

function roleOf(fn: string): string {
  const role = resources[functions[fn] ?? '']?.Properties.Role as { 'Fn::GetAtt': [string] } | undefined;
  if (!role) throw new Error(`no function ${fn}`);
  return role['Fn::GetAtt'][0];
}

function statementsOf(roleId: string): Statement[] {
  return Object.values(api.findResources('AWS::IAM::Policy'))
    .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
}

function variablesOf(fn: string): Record<string, unknown> {
  const environment = resources[functions[fn] ?? '']?.Properties.Environment as { Variables: Record<string, unknown> };
  return environment.Variables;
}

const sendsTo = (fn: string) =>
  statementsOf(roleOf(fn))
    .filter((s) => actionsOf(s).includes('sqs:SendMessage'))
    // A statement names one queue, or several in a list.
    .flatMap((s) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]));

const schedulesArn = {
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':scheduler:',
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      ':schedule/Sendflow-prod-Api-sends/*',
    ],
  ],
};

describe('sends queue', () => {
  it('has visibility 6× the send worker time-out and redrives to its DLQ after maxReceiveCount', () => {
    expect(resources[ids.sendsQueue]?.Properties).toMatchObject({
      VisibilityTimeout: visibilityTimeoutSeconds(queues.sends),
      RedrivePolicy: { deadLetterTargetArn: arn(ids.sendsDlq), maxReceiveCount: queues.sends.maxReceiveCount },
      SqsManagedSseEnabled: true,
    });
    expect(resources[functions.sender ?? '']?.Properties.Timeout).toBe(queues.sends.functionTimeoutSeconds);
  });

  it('its DLQ and the send-schedule DLQ keep messages 14 days, encrypted', () => {
    for (const id of [ids.sendsDlq, ids.sendScheduleDlq]) {
      expect(resources[id]?.Properties).toEqual({
        MessageRetentionPeriod: 14 * 86_400,
        SqsManagedSseEnabled: true,
        Tags: [{ Key: 'sendflow:stage', Value: 'prod' }],
      });
    }
  });

  it('is consumed by the send worker in manifest batches with partial batch responses', () => {
    expect(invokedFunction(api, consumerOf(ids.sendsQueue))).toBe(functions.sender);
    api.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: arn(ids.sendsQueue),
      BatchSize: queues.sends.batchSize,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });
});

describe('send schedules', () => {
  it('live in their own group', () => {
    expect(resources[ids.sendGroup]?.Properties).toEqual({
      Name: 'Sendflow-prod-Api-sends',
      Tags: [{ Key: 'sendflow:stage', Value: 'prod' }],
    });
  });

  it('are sent by a role only Scheduler may assume, for this account and the sends group', () => {
    expect(resources[ids.sendRole]?.Properties.AssumeRolePolicyDocument).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Principal: { Service: 'scheduler.amazonaws.com' },
          Action: 'sts:AssumeRole',
          Condition: {
            StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' }, 'aws:SourceArn': arn(ids.sendGroup) },
          },
        },
      ],
    });
    expect(resources[ids.sendRole]?.Properties.ManagedPolicyArns).toBeUndefined();
  });

  it('whose role may only sqs:SendMessage to the sends queue and the send-schedule DLQ', () => {
    expect(statementsOf(ids.sendRole)).toEqual([
      { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: [arn(ids.sendsQueue), arn(ids.sendScheduleDlq)] },
    ]);
  });

  it('the API may create and delete schedules only in the sends group, and pass only that role to Scheduler', () => {
    const statements = statementsOf(roleOf('api'));
    expect(statements.filter((s) => actionsOf(s).some((a) => a.startsWith('scheduler:')))).toEqual([
      {
        Effect: 'Allow',
        Action: ['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule'],
        Resource: schedulesArn,
      },
    ]);
    expect(statements.filter((s) => actionsOf(s).includes('iam:PassRole'))).toEqual([
      {
        Effect: 'Allow',
        Action: 'iam:PassRole',
        Resource: arn(ids.sendRole),
        Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      },
    ]);
  });

  it('the API is told the queue, group, role and DLQ it schedules with', () => {
    expect(variablesOf('api')).toMatchObject({
      SF_SENDS_QUEUE_URL: { Ref: ids.sendsQueue },
      SF_SENDS_QUEUE_ARN: arn(ids.sendsQueue),
      SF_SENDS_SCHEDULE_GROUP: 'Sendflow-prod-Api-sends',
      SF_SENDS_SCHEDULER_ROLE_ARN: arn(ids.sendRole),
      SF_SENDS_SCHEDULER_DLQ_ARN: arn(ids.sendScheduleDlq),
    });
  });

  it('no function but the API may touch Scheduler or pass the send role', () => {
    for (const fn of Object.keys(functions).filter((f) => f !== 'api' && f !== 'delivery')) {
      const actions = statementsOf(roleOf(fn)).flatMap(actionsOf);
      expect(actions.filter((a) => a.startsWith('scheduler:') || a.startsWith('iam:'))).toEqual([]);
    }
    expect(JSON.stringify(statementsOf(roleOf('delivery')))).not.toContain(ids.sendRole);
  });
});

describe('queue access', () => {
  it('the API puts sends due within a minute on the sends queue, besides publishing events', () => {
    expect(sendsTo('api')).toEqual(expect.arrayContaining([arn(ids.eventsQueue), arn(ids.sendsQueue)]));
  });

  it('the reconciler re-queues overdue sends on the sends queue, and knows its URL', () => {
    expect(sendsTo('reconciler')).toContainEqual(arn(ids.sendsQueue));
    expect(variablesOf('reconciler').SF_SENDS_QUEUE_URL).toEqual({ Ref: ids.sendsQueue });
  });

  it('the send worker fans its email.sent out onto the deliveries queue (or its bypass), publishes the rest to the events queue, hands sends back to its own', () => {
    const queues = sendsTo('sender');
    expect(queues).toHaveLength(4);
    expect(queues).toEqual(
      expect.arrayContaining([
        arn(ids.deliveriesQueue),
        arn(ids.deliveriesBypassQueue),
        arn(ids.eventsQueue),
        arn(ids.sendsQueue),
      ]),
    );
    expect(variablesOf('sender').SF_DELIVERIES_BYPASS_QUEUE_URL).toEqual({ Ref: ids.deliveriesBypassQueue });
    expect(variablesOf('sender').SF_EVENTS_QUEUE_URL).toEqual({ Ref: ids.eventsQueue });
    expect(variablesOf('sender').SF_DELIVERIES_QUEUE_URL).toEqual({ Ref: ids.deliveriesQueue });
    expect(variablesOf('sender').SF_SENDS_QUEUE_URL).toEqual({ Ref: ids.sendsQueue });
  });
});

describe('links', () => {
  it('the data stack generates the signing secret, 64 characters, retained under a generated name', () => {
    const secrets = data.findResources('AWS::SecretsManager::Secret');
    expect(Object.values(secrets)).toEqual([
      expect.objectContaining({
        DeletionPolicy: 'RetainExceptOnCreate',
        UpdateReplacePolicy: 'Retain',
        Properties: expect.objectContaining({
          GenerateSecretString: { PasswordLength: 64, ExcludePunctuation: true, IncludeSpace: false },
        }),
      }),
    ]);
    // A fixed name would collide with the retained secret when the stage is deployed again.
    expect(Object.values(secrets)[0]?.Properties.Name).toBeUndefined();
  });

  it('the data stack publishes the secret ARN in SSM; the API reads exactly that secret, no other function any', () => {
    // Arrange: the data stack's parameter and the api stack's deploy-time reference to it.
    const [secretId] = Object.keys(data.findResources('AWS::SecretsManager::Secret'));
    data.hasResourceProperties('AWS::SSM::Parameter', {
      Name: '/Sendflow-prod-Data/signing-secret',
      Type: 'String',
      Value: { Ref: secretId },
    });
    const parameters = api.toJSON().Parameters as Record<string, { Type: string; Default?: string }>;
    const [parameterId] = Object.entries(parameters)
      .filter(([, p]) => p.Default === '/Sendflow-prod-Data/signing-secret')
      .map(([id, p]) => {
        expect(p.Type).toBe('AWS::SSM::Parameter::Value<String>');
        return id;
      });
    expect(parameterId).toBeDefined();

    // Act & Assert
    expect(variablesOf('api').SF_SIGNING_SECRET_ID).toEqual({ Ref: parameterId });
    expect(variablesOf('api').SF_SIGNING_SECRET).toBeUndefined();
    const reads = statementsOf(roleOf('api')).filter((s) => actionsOf(s).some((a) => a.startsWith('secretsmanager:')));
    expect(reads).toEqual([
      { Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: { Ref: parameterId } },
    ]);
    for (const fn of Object.keys(functions).filter((f) => f !== 'api')) {
      expect(JSON.stringify(statementsOf(roleOf(fn)))).not.toContain('secretsmanager:');
    }
  });

  it('the public URL is the v1 stage URL built from the API id alone (no dependency on the stage)', () => {
    expect(variablesOf('api').SF_PUBLIC_URL).toEqual({
      'Fn::Join': [
        '',
        [
          'https://',
          { Ref: ids.restApi },
          '.execute-api.',
          { Ref: 'AWS::Region' },
          '.',
          { Ref: 'AWS::URLSuffix' },
          '/v1',
        ],
      ],
    });
  });
});

const sesArn = (resource: string) => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':ses:',
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      `:${resource}`,
    ],
  ],
});

describe('SES configuration set and its events', () => {
  const BASE = 'Sendflow-prod-Api-email-events';
  const SETS = [BASE, `${BASE}-open`, `${BASE}-click`, `${BASE}-open-click`];
  const UNTRACKED = ['reject', 'bounce', 'complaint', 'delivery', 'renderingFailure', 'deliveryDelay'];
  /** Each configuration set's name, by logical id. */
  const setNames = () =>
    Object.fromEntries(
      Object.entries(api.findResources('AWS::SES::ConfigurationSet')).map(([id, r]) => [id, r.Properties.Name]),
    );

  it('one set per tracking combination, named after the stack, with reputation metrics, sending enabled', () => {
    expect(resources[ids.configurationSet]?.Properties).toEqual({
      Name: BASE,
      ReputationOptions: { ReputationMetricsEnabled: true },
      SendingOptions: { SendingEnabled: true },
      Tags: [{ Key: 'sendflow:stage', Value: 'prod' }],
    });
    expect(Object.values(setNames()).sort()).toEqual([...SETS].sort());
    for (const [id, name] of Object.entries(setNames())) {
      expect(resources[id]?.Properties, name).toMatchObject({
        ReputationOptions: { ReputationMetricsEnabled: true },
        SendingOptions: { SendingEnabled: true },
      });
    }
  });

  it('publishes to the default EventBridge bus (the only bus SES supports); open and click only where tracked', () => {
    // SES adds the pixel and rewrites links only for a set whose destination takes open or click events: the
    // base set, every email's unless its domain turned tracking on, takes neither.
    const names = setNames();
    const destinations = Object.values(api.findResources('AWS::SES::ConfigurationSetEventDestination'));
    expect(destinations).toHaveLength(SETS.length);
    const bySet: Record<string, { EventBridgeDestination?: unknown; MatchingEventTypes?: string[] }> =
      Object.fromEntries(
        destinations.map((d) => [names[d.Properties.ConfigurationSetName.Ref], d.Properties.EventDestination]),
      );
    const eventBus = {
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':events:',
          { Ref: 'AWS::Region' },
          ':',
          { Ref: 'AWS::AccountId' },
          ':event-bus/default',
        ],
      ],
    };
    expect(bySet[BASE]).toEqual({
      Enabled: true,
      EventBridgeDestination: { EventBusArn: eventBus },
      MatchingEventTypes: UNTRACKED,
    });
    expect(bySet[`${BASE}-open`]?.MatchingEventTypes).toEqual([...UNTRACKED, 'open']);
    expect(bySet[`${BASE}-click`]?.MatchingEventTypes).toEqual([...UNTRACKED, 'click']);
    expect(bySet[`${BASE}-open-click`]?.MatchingEventTypes).toEqual([...UNTRACKED, 'open', 'click']);
    for (const destination of Object.values(bySet))
      expect(destination?.EventBridgeDestination).toEqual({ EventBusArn: eventBus });
  });

  it('a rule on the default bus takes the SES events of that configuration set to the provider-events queue', () => {
    expect(resources[ids.rule]?.Properties).toMatchObject({
      State: 'ENABLED',
      EventPattern: {
        source: ['aws.ses'],
        'detail-type': [
          'Email Rejected',
          'Email Bounced',
          'Email Complaint Received',
          'Email Delivered',
          'Email Opened',
          'Email Clicked',
          'Email Rendering Failed',
          'Email Delivery Delayed',
        ],
        detail: { mail: { tags: { 'ses:configuration-set': SETS } } },
      },
      Targets: [
        {
          Arn: arn(ids.providerEventsQueue),
          Id: 'Target0',
          DeadLetterConfig: { Arn: arn(ids.providerEventsDlq) },
          RetryPolicy: { MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: 86_400 },
        },
      ],
    });
    expect(resources[ids.rule]?.Properties.EventBusName).toBeUndefined();
  });

  it('the provider-events queue redrives to its DLQ; only that rule may send to either', () => {
    expect(resources[ids.providerEventsQueue]?.Properties).toMatchObject({
      VisibilityTimeout: visibilityTimeoutSeconds(PROVIDER_EVENTS_QUEUE),
      RedrivePolicy: {
        deadLetterTargetArn: arn(ids.providerEventsDlq),
        maxReceiveCount: PROVIDER_EVENTS_QUEUE.maxReceiveCount,
      },
      SqsManagedSseEnabled: true,
    });
    for (const queue of [ids.providerEventsQueue, ids.providerEventsDlq]) {
      const policy = Object.values(api.findResources('AWS::SQS::QueuePolicy')).find((p) =>
        (p.Properties.Queues as { Ref: string }[]).some((q) => q.Ref === queue),
      );
      const statements = (policy?.Properties.PolicyDocument.Statement ?? []) as Statement[];
      const allows = statements.filter((s) => s.Effect === 'Allow');
      expect(allows).toEqual([
        expect.objectContaining({
          Principal: { Service: 'events.amazonaws.com' },
          Condition: { ArnEquals: { 'aws:SourceArn': arn(ids.rule) } },
          Resource: arn(queue),
        }),
      ]);
    }
  });

  it('the mapper consumes it with partial batch responses and fans out onto the deliveries queue (or its bypass) only', () => {
    expect(invokedFunction(api, consumerOf(ids.providerEventsQueue))).toBe(functions['ses-events']);
    api.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: arn(ids.providerEventsQueue),
      BatchSize: PROVIDER_EVENTS_QUEUE.batchSize,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(sendsTo('ses-events')).toEqual([arn(ids.deliveriesQueue), arn(ids.deliveriesBypassQueue)]);
    expect(variablesOf('ses-events').SF_DELIVERIES_QUEUE_URL).toEqual({ Ref: ids.deliveriesQueue });
    expect(variablesOf('ses-events').SF_EVENTS_QUEUE_URL).toBeUndefined();
    expect(JSON.stringify(statementsOf(roleOf('ses-events')))).not.toMatch(/ses:/);
  });
});

describe('SES permissions', () => {
  const sesStatements = (fn: string) =>
    statementsOf(roleOf(fn)).filter((s) => actionsOf(s).some((a) => a.startsWith('ses:')));
  const OWNER = 'Sendflow-prod-Api';
  /** Only identities this deployment created (tagged sendflow:managed = its stack name), never untagged ones. */
  const onOurIdentities = { StringEquals: { 'aws:ResourceTag/sendflow:managed': OWNER } };
  const sending = [
    { Effect: 'Allow', Action: 'ses:SendEmail', Resource: sesArn('identity/*'), Condition: onOurIdentities },
    {
      Effect: 'Allow',
      Action: 'ses:SendEmail',
      Resource: ['', '-open', '-click', '-open-click'].map((suffix) =>
        sesArn(`configuration-set/Sendflow-prod-Api-email-events${suffix}`),
      ),
    },
  ];

  it('the API may only manage identities, and only ones it creates with our tags or finds tagged as ours', () => {
    expect(sesStatements('api')).toEqual([
      {
        Effect: 'Allow',
        Action: ['ses:CreateEmailIdentity', 'ses:TagResource'],
        Resource: sesArn('identity/*'),
        Condition: {
          StringEquals: { 'aws:RequestTag/sendflow:managed': OWNER },
          Null: { 'aws:RequestTag/sendflow:account': 'false' },
          'ForAllValues:StringEquals': { 'aws:TagKeys': ['sendflow:managed', 'sendflow:account'] },
        },
      },
      {
        Effect: 'Allow',
        Action: ['ses:GetEmailIdentity', 'ses:DeleteEmailIdentity'],
        Resource: sesArn('identity/*'),
        Condition: onOurIdentities,
      },
    ]);
    expect(variablesOf('api').SF_SES_CONFIGURATION_SET).toBeUndefined();
    expect(variablesOf('api').SF_SES_IDENTITY_OWNER).toBe(OWNER);
  });

  it('the send worker may send only from identities tagged as ours, and only with our configuration set', () => {
    expect(sesStatements('sender')).toEqual(sending);
    expect(variablesOf('sender').SF_SES_CONFIGURATION_SET).toBe('Sendflow-prod-Api-email-events');
  });

  it('the reconciler may only read identities tagged as ours (pending domains)', () => {
    expect(sesStatements('reconciler')).toEqual([
      { Effect: 'Allow', Action: 'ses:GetEmailIdentity', Resource: sesArn('identity/*'), Condition: onOurIdentities },
    ]);
    expect(variablesOf('reconciler').SF_SES_IDENTITY_OWNER).toBe(OWNER);
  });

  it('every statement on identities is conditioned on our tag: none reaches an untagged identity', () => {
    for (const fn of Object.keys(functions)) {
      for (const s of sesStatements(fn)) {
        if (!JSON.stringify(s.Resource).includes('identity/')) continue;
        const equals = (s.Condition as { StringEquals?: Record<string, string> } | undefined)?.StringEquals ?? {};
        const tagged = equals['aws:ResourceTag/sendflow:managed'] ?? equals['aws:RequestTag/sendflow:managed'];
        expect(tagged, `${fn}: ${actionsOf(s).join(', ')}`).toBe(OWNER);
      }
    }
  });

  it('only the API may create or delete identities', () => {
    for (const fn of Object.keys(functions).filter((f) => f !== 'api')) {
      const actions = statementsOf(roleOf(fn)).flatMap(actionsOf);
      expect(actions).not.toContain('ses:CreateEmailIdentity');
      expect(actions).not.toContain('ses:DeleteEmailIdentity');
    }
  });

  it('no other function may send email', () => {
    for (const fn of Object.keys(functions).filter((f) => f !== 'sender')) {
      expect(statementsOf(roleOf(fn)).flatMap(actionsOf)).not.toContain('ses:SendEmail');
    }
  });

  it('no statement grants ses:* or any action on every SES resource', () => {
    for (const fn of Object.keys(functions)) {
      for (const s of sesStatements(fn)) {
        expect(actionsOf(s).some((a) => a.includes('*'))).toBe(false);
        expect(JSON.stringify(s.Resource)).not.toBe('"*"');
      }
    }
  });
});

describe('table access', () => {
  /** Per table: the actions and whether they reach the table itself or only indexes. */
  function access(fn: string) {
    const result: Record<string, { actions: Set<string>; targets: Set<string> }> = {};
    for (const s of statementsOf(roleOf(fn))) {
      for (const resource of [s.Resource].flat()) {
        const text = JSON.stringify(resource);
        const table = /tables(\w+?)[0-9A-F]{8,}/.exec(text)?.[1];
        if (!table) continue;
        result[table] ??= { actions: new Set(), targets: new Set() };
        for (const a of actionsOf(s)) result[table].actions.add(a);
        result[table].targets.add(/\/index\/(\w+)/.exec(text)?.[1] ?? 'table');
      }
    }
    return Object.fromEntries(
      Object.entries(result).map(([t, v]) => [t, { actions: [...v.actions].sort(), targets: [...v.targets].sort() }]),
    );
  }

  it('the send worker reads emails and settles recipients, decides undecided batches, reads suppressions, processes its email.sent; nothing else', () => {
    expect(access('sender')).toEqual({
      emails: { actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'], targets: ['table'] },
      // The body (GetItem), links and states (Query); each recipient's own item changed (UpdateItem). No index.
      emailParts: { actions: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem'], targets: ['table'] },
      // Read by key only (one BatchGetItem per send): no Query, no index.
      suppressions: { actions: ['dynamodb:BatchGetItem'], targets: ['table'] },
      // The sender domain's open and click tracking: one GetItem a minute a domain.
      domains: { actions: ['dynamodb:GetItem'], targets: ['table'] },
      // Its own email.sent, processed where it arises: the tenant's webhooks, the history and status note, the
      // account's listen sessions; claimed copies' own email.sent read by key (BatchGetItem) on a message received again.
      webhooks: { actions: ['dynamodb:Query'], targets: ['table'] },
      // Per-email ordering: each copy's email.sent enters its lanes before the hand-over, and leaves them if the copy
      // was not taken: UpdateItems of lane items, never a delivery row read.
      deliveries: { actions: ['dynamodb:UpdateItem'], targets: ['table'] },
      emailEvents: {
        actions: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
        targets: ['table'],
      },
      listenSessions: { actions: ['dynamodb:PutItem', 'dynamodb:Query'], targets: ['table'] },
      // Its email.sent counted (UpdateItem ADD of a counter); a paused tenant's standing read before a send (Query).
      reputation: { actions: ['dynamodb:Query', 'dynamodb:UpdateItem'], targets: ['table'] },
      // An email.sent a webhook's filter kept back, counted (ADD on a filtered#… counter only).
      rateLimits: { actions: ['dynamodb:UpdateItem'], targets: ['table'] },
    });
  });

  it('the mapper processes its events as the dispatcher does: the same table access, and reads emails by key', () => {
    expect(access('ses-events')).toEqual({
      // The tags of an email whose tags did not fit SES's message tags (adapters/ses/tags): one GetItem by id.
      emails: { actions: ['dynamodb:GetItem'], targets: ['table'] },
      webhooks: { actions: ['dynamodb:Query'], targets: ['table'] },
      deliveries: { actions: ['dynamodb:UpdateItem'], targets: ['table'] },
      emailEvents: { actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'], targets: ['table'] },
      suppressions: { actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'], targets: ['table'] },
      listenSessions: { actions: ['dynamodb:PutItem', 'dynamodb:Query'], targets: ['table'] },
      // Bounces and complaints counted and judged (app/reputation/track-reputation).
      reputation: { actions: ['dynamodb:Query', 'dynamodb:UpdateItem'], targets: ['table'] },
      // Events webhook filters kept back, counted as the dispatcher counts them.
      rateLimits: { actions: ['dynamodb:UpdateItem'], targets: ['table'] },
    });
  });
});

describe('alarms', () => {
  const on = (queueId: string, metric: string) =>
    Object.values(api.findResources('AWS::CloudWatch::Alarm'))
      .map((a) => a.Properties)
      .filter(
        (a) =>
          a.MetricName === metric &&
          // The same metric near the queue's retention is the data-loss alarm (test/infra/paging.test.ts).
          !String(a.AlarmName).endsWith('QueueNearRetention') &&
          JSON.stringify(a.Dimensions) ===
            JSON.stringify([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }]),
      );

  it.each([
    ['sends DLQ', 'sendsDlq'],
    ['send-schedule DLQ', 'sendScheduleDlq'],
    ['provider-events DLQ', 'providerEventsDlq'],
  ] as const)('the %s alarms as soon as one message is visible', (_name, key) => {
    expect(on(ids[key], 'ApproximateNumberOfMessagesVisible')).toEqual([
      expect.objectContaining({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', Period: 60 }),
    ]);
  });

  it('the sends queue alarms when its oldest message is older than 5 minutes', () => {
    expect(SENDS_OLDEST_MESSAGE_ALARM_SECONDS).toBe(300);
    expect(on(ids.sendsQueue, 'ApproximateAgeOfOldestMessage')).toEqual([
      expect.objectContaining({ Threshold: 300, ComparisonOperator: 'GreaterThanThreshold', Statistic: 'Maximum' }),
    ]);
  });

  it('the provider-events queue alarms when its oldest message is older than 5 minutes', () => {
    expect(on(ids.providerEventsQueue, 'ApproximateAgeOfOldestMessage')).toEqual([
      expect.objectContaining({ Threshold: PROVIDER_EVENTS_OLDEST_MESSAGE_ALARM_SECONDS }),
    ]);
  });
});

describe('email bodies bucket (lib/data-stack.ts) and its grants', () => {
  /** The SSM parameter the api stack resolves the bucket's name from, as CloudFormation references it. */
  const bucketRef = () => {
    const parameters = api.toJSON().Parameters as Record<string, { Default?: string }>;
    const found = Object.entries(parameters).filter(([, p]) => p.Default === '/Sendflow-prod-Data/email-bodies-bucket');
    expect(found).toHaveLength(1);
    return { Ref: found[0]?.[0] };
  };
  const objects = (prefix: string) => ({
    'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', bucketRef(), `/${prefix}*`]],
  });
  /** Both keys an email's object may have: under the retention prefix, and the plain one. */
  const bothKeys = () => [objects('retention/emails/'), objects('emails/')];
  const s3Statements = (fn: string) =>
    statementsOf(roleOf(fn)).filter((s) => actionsOf(s).some((a) => a.startsWith('s3:')));

  it('is private, encrypted, TLS only, retained, and expires bodies by key prefix after the email retention (scheduled: plus 30 days)', () => {
    const [id, bucket] = Object.entries(data.findResources('AWS::S3::Bucket'))[0] ?? [];
    expect(Object.keys(data.findResources('AWS::S3::Bucket'))).toHaveLength(1);
    expect(bucket?.DeletionPolicy).toBe('Retain');
    expect(bucket?.Properties.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    });
    expect(bucket?.Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket?.Properties.OwnershipControls).toEqual({ Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] });
    expect(bucket?.Properties.LifecycleConfiguration).toEqual({
      Rules: [
        { Id: 'email-retention-by-prefix', Prefix: 'retention/emails/', ExpirationInDays: 30, Status: 'Enabled' },
        // Objects tagged before the prefix (none are tagged now): kept for one retention period after the change.
        {
          Id: 'email-retention',
          Prefix: 'emails/',
          TagFilters: [{ Key: 'sendflow-expiry', Value: 'retention' }],
          ExpirationInDays: 30,
          Status: 'Enabled',
        },
        { Id: 'scheduled-email-retention', Prefix: 'emails/', ExpirationInDays: 60, Status: 'Enabled' },
        // Test-mode emails' attachments (issue 28): tagged at their PUT, deleted after a day.
        {
          Id: 'short-lived-files',
          Prefix: 'retention/emails/',
          TagFilters: [{ Key: 'sendflow-expiry', Value: 'short' }],
          ExpirationInDays: 1,
          Status: 'Enabled',
        },
        { Id: 'unfinished-uploads', AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' },
      ],
    });
    // TLS only: every request without it is denied.
    const policy = Object.values(data.findResources('AWS::S3::BucketPolicy'))[0];
    expect(policy?.Properties.Bucket).toEqual({ Ref: id });
    expect(policy?.Properties.PolicyDocument.Statement).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
    data.hasResourceProperties('AWS::SSM::Parameter', {
      Name: '/Sendflow-prod-Data/email-bodies-bucket',
      Value: { Ref: id },
    });
  });

  it('follows the stage email retention (sendflow:emailRetentionDays)', () => {
    const rules = synthSendflow({ 'sendflow:emailRetentionDays': '90' }).data.toJSON().Resources;
    const bucket = Object.values(rules as Record<string, Resource>).find((r) => r.Type === 'AWS::S3::Bucket');
    const lifecycle = bucket?.Properties.LifecycleConfiguration as { Rules: { ExpirationInDays?: number }[] };
    expect(lifecycle.Rules.map((r) => r.ExpirationInDays)).toEqual([90, 90, 120, 1, undefined]);
  });

  it('lets the API put and get body objects (tagging only under retention/: short-lived files) and the send worker get them, under both keys, nothing else and no one else', () => {
    expect(s3Statements('api')).toEqual([
      { Effect: 'Allow', Action: ['s3:PutObject', 's3:GetObject'], Resource: bothKeys() },
      { Effect: 'Allow', Action: 's3:PutObjectTagging', Resource: bothKeys()[0] },
    ]);
    expect(s3Statements('sender')).toEqual([{ Effect: 'Allow', Action: 's3:GetObject', Resource: bothKeys() }]);
    expect(variablesOf('api').SF_EMAIL_BODIES_BUCKET).toEqual(bucketRef());
    expect(variablesOf('sender').SF_EMAIL_BODIES_BUCKET).toEqual(bucketRef());
    for (const fn of Object.keys(functions).filter((f) => f !== 'api' && f !== 'sender')) {
      expect(s3Statements(fn), fn).toEqual([]);
      expect(variablesOf(fn).SF_EMAIL_BODIES_BUCKET, fn).toBeUndefined();
    }
  });
});

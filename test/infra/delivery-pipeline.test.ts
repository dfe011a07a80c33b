// Template assertions for the webhook pipeline (lib/constructs/delivery-pipeline.ts in the api stack): queues
// and DLQs from the manifest, event sources with partial batch responses, the retry schedule group and the
// role Scheduler assumes, the delivery worker's scoped Scheduler permissions, the reconciler schedule, the
// functions' table access, and the alarms.
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DISABLE_AFTER_SECONDS } from '../../lambdas/domain/webhooks/auto-disable';
import { queues, RECONCILE_EVERY_MINUTES, visibilityTimeoutSeconds } from '../../lambdas/manifest';
import { DEAD_LETTER_CONCURRENCY, OLDEST_MESSAGE_ALARM_SECONDS } from '../../lib/constructs/delivery-pipeline';
import { invokedFunction, only, synthSendflow } from './synth';

type Resource = { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] };
type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };

let api: Template;
let resources: Record<string, Resource>;
const ids = {} as Record<
  | 'eventsQueue'
  | 'eventsDlq'
  | 'deliveriesQueue'
  | 'deliveriesBypassQueue'
  | 'deliveriesDlq'
  | 'slowDeliveriesQueue'
  | 'slowDeliveriesDlq'
  | 'retryDlq'
  | 'reconcileDlq',
  string
>;
const functions = {} as Record<'api' | 'authorizer' | 'dispatcher' | 'delivery' | 'reconciler' | 'sender', string>;

beforeAll(() => {
  ({ api } = synthSendflow());
  resources = api.toJSON().Resources as Record<string, Resource>;
  const queueId = (pattern: RegExp) => {
    const found = Object.keys(api.findResources('AWS::SQS::Queue')).filter((id) => pattern.test(id));
    if (found.length !== 1) throw new Error(`expected one queue matching ${pattern}, found ${found.join(', ')}`);
    return found[0] as string;
  };
  ids.eventsQueue = queueId(/^DeliveryPipelineEventsQueue/);
  ids.eventsDlq = queueId(/^DeliveryPipelineEventsDlq/);
  ids.deliveriesQueue = queueId(/^DeliveryPipelineDeliveriesQueue/);
  ids.deliveriesBypassQueue = queueId(/^DeliveryPipelineDeliveriesBypassQueue/);
  ids.slowDeliveriesQueue = queueId(/^DeliveryPipelineSlowDeliveriesQueue/);
  ids.deliveriesDlq = queueId(/^DeliveryPipelineDeliveriesDlq/);
  ids.slowDeliveriesDlq = queueId(/^DeliveryPipelineSlowDeliveriesDlq/);
  ids.retryDlq = queueId(/RetryScheduleDlq/);
  ids.reconcileDlq = queueId(/ReconcileScheduleDlq/);
  for (const [id, fn] of Object.entries(api.findResources('AWS::Lambda::Function'))) {
    // Ours carry a service name; CDK's own LogRetention function (the execution log group's) has none.
    const name = fn.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME;
    if (name === undefined) continue;
    const service = String(name).replace('sendflow-', '');
    functions[service as keyof typeof functions] = id;
  }
});

const arn = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
const functionId = (pattern: RegExp) =>
  Object.keys(api.findResources('AWS::Lambda::Function')).find((id) => pattern.test(id)) ?? '';
const retryGroupId = () =>
  Object.keys(api.findResources('AWS::Scheduler::ScheduleGroup')).find((id) => /RetryGroup/.test(id)) ?? '';
const sendsQueueId = () =>
  Object.keys(api.findResources('AWS::SQS::Queue')).find((id) => /EmailPipelineSendsQueue/.test(id)) ?? '';

function roleOf(functionId: string): string {
  const role = resources[functionId]?.Properties.Role as { 'Fn::GetAtt': [string] } | undefined;
  if (!role) throw new Error(`no function ${functionId}`);
  return role['Fn::GetAtt'][0];
}

/** Every statement of every inline policy attached to the role. */
/** The event source mapping that reads a queue (by the queue's logical id). */
function mappingOf(queueId: string): Record<string, unknown> {
  const found = Object.values(api.findResources('AWS::Lambda::EventSourceMapping')).filter(
    (m) => JSON.stringify(m.Properties.EventSourceArn) === JSON.stringify(arn(queueId)),
  );
  if (found.length !== 1) throw new Error(`expected one event source mapping of ${queueId}, found ${found.length}`);
  return found[0]?.Properties as Record<string, unknown>;
}

function statementsOf(roleId: string): Statement[] {
  return Object.values(api.findResources('AWS::IAM::Policy'))
    .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
}

function variablesOf(functionId: string): Record<string, unknown> {
  const environment = resources[functionId]?.Properties.Environment as
    | { Variables: Record<string, unknown> }
    | undefined;
  return environment?.Variables ?? {};
}

const actionsOf = (statement: Statement) => [statement.Action].flat();
const mentions = (statement: Statement, needle: string) => JSON.stringify(statement.Resource).includes(needle);

describe('queues', () => {
  it.each([
    ['events', 'eventsQueue', 'eventsDlq'],
    ['deliveries', 'deliveriesQueue', 'deliveriesDlq'],
  ] as const)('%s: visibility 6× the consumer time-out, redrive to its DLQ after maxReceiveCount', (name, q, dlq) => {
    const spec = queues[name];
    const queue = resources[ids[q]]?.Properties;
    expect(queue).toMatchObject({
      VisibilityTimeout: visibilityTimeoutSeconds(spec),
      RedrivePolicy: { deadLetterTargetArn: arn(ids[dlq]), maxReceiveCount: spec.maxReceiveCount },
      SqsManagedSseEnabled: true,
    });
    expect(queue?.VisibilityTimeout as number).toBeGreaterThanOrEqual(6 * spec.functionTimeoutSeconds);
    expect(spec.maxReceiveCount).toBeGreaterThanOrEqual(5);
  });

  it('consumer time-outs are the manifest ones, so visibility stays at least 6× the real time-out', () => {
    for (const [name, fn] of [
      ['events', functions.dispatcher],
      ['deliveries', functions.delivery],
    ] as const) {
      const timeout = resources[fn]?.Properties.Timeout as number;
      expect(timeout).toBe(queues[name].functionTimeoutSeconds);
      const queue = resources[name === 'events' ? ids.eventsQueue : ids.deliveriesQueue];
      expect(queue?.Properties.VisibilityTimeout as number).toBeGreaterThanOrEqual(6 * timeout);
    }
  });

  it('every DLQ (including the schedulers) keeps messages 14 days, encrypted, with no DLQ of its own', () => {
    for (const id of [ids.eventsDlq, ids.deliveriesDlq, ids.slowDeliveriesDlq, ids.retryDlq, ids.reconcileDlq]) {
      expect(resources[id]?.Properties).toEqual({
        MessageRetentionPeriod: 14 * 86_400,
        SqsManagedSseEnabled: true,
        Tags: [{ Key: 'sendflow:stage', Value: 'prod' }],
      });
    }
  });

  it('every main queue of the stack keeps messages 14 days, the SQS maximum (a first attempt is only its message)', () => {
    // Main queues are the ones with a redrive policy (the DLQs are checked above).
    const main = Object.entries(api.findResources('AWS::SQS::Queue')).filter(([, q]) => q.Properties.RedrivePolicy);
    expect(main.map(([id]) => id)).toEqual(
      expect.arrayContaining([
        ids.eventsQueue,
        ids.deliveriesQueue,
        ids.deliveriesBypassQueue,
        ids.slowDeliveriesQueue,
      ]),
    );
    expect(main.length).toBeGreaterThanOrEqual(5);
    for (const [, queue] of main) expect(queue.Properties.MessageRetentionPeriod).toBe(14 * 86_400);
  });

  it("keeps a job longer than auto-disable's window: a failing webhook is disabled before any of its jobs could expire", () => {
    const retention = resources[ids.deliveriesQueue]?.Properties.MessageRetentionPeriod as number;
    expect(DEFAULT_DISABLE_AFTER_SECONDS).toBeLessThan(retention);
  });

  it('has these nine queues (the email pipeline adds its own), all standard (DelaySeconds needs standard)', () => {
    const all = Object.keys(api.findResources('AWS::SQS::Queue'));
    const pipeline = all.filter((id) => id.startsWith('DeliveryPipeline'));
    expect(pipeline.sort()).toEqual(Object.values(ids).sort());
    for (const id of all) expect(resources[id]?.Properties.FifoQueue).toBeUndefined();
  });

  it('refuses plain-HTTP access to every queue', () => {
    const policies = Object.values(api.findResources('AWS::SQS::QueuePolicy'));
    const guarded = policies.flatMap((p) => {
      const denies = (p.Properties.PolicyDocument.Statement as Statement[]).some(
        (s) =>
          s.Effect === 'Deny' &&
          JSON.stringify(s.Condition) === JSON.stringify({ Bool: { 'aws:SecureTransport': 'false' } }),
      );
      return denies ? (p.Properties.Queues as { Ref: string }[]).map((q) => q.Ref) : [];
    });
    expect(guarded.sort()).toEqual(Object.keys(api.findResources('AWS::SQS::Queue')).sort());
  });
});

describe('event sources', () => {
  it.each([
    ['dispatcher', 'eventsQueue', 'events'],
    ['delivery', 'deliveriesQueue', 'deliveries'],
    // The shared lane's bypass: the deliveries queue's settings.
    ['delivery', 'deliveriesBypassQueue', 'deliveries'],
    ['delivery', 'slowDeliveriesQueue', 'slowDeliveries'],
  ] as const)('%s consumes %s in manifest batches, partial batch responses, bounded concurrency', (fn, q, name) => {
    expect(invokedFunction(api, mappingOf(ids[q]).FunctionName)).toBe(functions[fn]);
    api.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: arn(ids[q]),
      BatchSize: queues[name].batchSize,
      MaximumBatchingWindowInSeconds: queues[name].maxBatchingWindowSeconds,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: queues[name].maxConcurrency },
    });
  });

  it.each([
    ['eventsQueue', 100, 1, 25],
    ['deliveriesQueue', 500, 1, 300],
    ['deliveriesBypassQueue', 500, 1, 300],
    ['slowDeliveriesQueue', 100, 1, 50],
  ] as const)(
    '%s: batches of %i gathered for up to %i s, %i at once (what bench:scale carries 10,000/s with)',
    (q, batch, window, max) => {
      api.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        EventSourceArn: arn(ids[q]),
        BatchSize: batch,
        MaximumBatchingWindowInSeconds: window,
        ScalingConfig: { MaximumConcurrency: max },
      });
    },
  );

  it('gathers for a window wherever a batch may hold more than 10 records (Lambda requires it)', () => {
    for (const mapping of Object.values(api.findResources('AWS::Lambda::EventSourceMapping'))) {
      if ((mapping.Properties.BatchSize ?? 10) > 10) {
        expect(mapping.Properties.MaximumBatchingWindowInSeconds).toBeGreaterThanOrEqual(1);
      }
    }
  });

  it('bounds every event source of the stack (the slow lane far below the shared one)', () => {
    const mappings = Object.values(api.findResources('AWS::Lambda::EventSourceMapping'));
    for (const mapping of mappings) {
      expect(mapping.Properties.ScalingConfig?.MaximumConcurrency).toBeGreaterThanOrEqual(2);
    }
    expect(queues.slowDeliveries.maxConcurrency).toBeLessThan(queues.deliveries.maxConcurrency / 5);
  });

  it.each([['deliveriesDlq'], ['slowDeliveriesDlq']] as const)(
    'the delivery worker consumes %s (its dead-lettered jobs are recorded failed), at the least concurrency',
    (q) => {
      expect(invokedFunction(api, mappingOf(ids[q]).FunctionName)).toBe(functions.delivery);
      api.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        EventSourceArn: arn(ids[q]),
        BatchSize: queues.deliveries.batchSize,
        MaximumBatchingWindowInSeconds: queues.deliveries.maxBatchingWindowSeconds,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: DEAD_LETTER_CONCURRENCY },
      });
    },
  );

  it('names the deliveries DLQs in the delivery worker environment (how it tells a dead letter from a job)', () => {
    expect(variablesOf(functions.delivery).SF_DELIVERY_DLQ_ARNS).toEqual({
      'Fn::Join': [',', [arn(ids.deliveriesDlq), arn(ids.slowDeliveriesDlq)]],
    });
  });

  it("gives the delivery worker the stage's auto-disable window (SF_WEBHOOK_DISABLE_AFTER_SECONDS: 5 days by default)", () => {
    expect(variablesOf(functions.delivery).SF_WEBHOOK_DISABLE_AFTER_SECONDS).toBe('432000');
    const { api: shortened } = synthSendflow({ 'sendflow:webhookDisableAfterSeconds': '86400' });
    const delivery = Object.values(shortened.findResources('AWS::Lambda::Function')).find(
      (fn) => fn.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME === 'sendflow-delivery',
    );
    expect(delivery?.Properties.Environment.Variables.SF_WEBHOOK_DISABLE_AFTER_SECONDS).toBe('86400');
  });

  it('names the slow lane in the delivery worker environment', () => {
    const variables = variablesOf(functions.delivery);
    expect(variables.SF_SLOW_DELIVERIES_QUEUE_URL).toEqual({ Ref: ids.slowDeliveriesQueue });
    expect(variables.SF_SLOW_DELIVERIES_QUEUE_ARN).toEqual(arn(ids.slowDeliveriesQueue));
  });
});

describe('retry schedules', () => {
  it('live in their own schedule group', () => {
    expect(resources[retryGroupId()]?.Properties).toEqual({
      Name: 'Sendflow-prod-Api-retries',
      Tags: [{ Key: 'sendflow:stage', Value: 'prod' }],
    });
  });

  it('are sent by a role only scheduler.amazonaws.com may assume, for this account and group', () => {
    const roleId =
      Object.keys(api.findResources('AWS::IAM::Role')).find((id) => /DeliveryPipelineSchedulerRole/.test(id)) ?? '';
    const group = retryGroupId();
    expect(resources[roleId]?.Properties.AssumeRolePolicyDocument).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Principal: { Service: 'scheduler.amazonaws.com' },
          Action: 'sts:AssumeRole',
          Condition: {
            StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' }, 'aws:SourceArn': arn(group) },
          },
        },
      ],
    });
    expect(resources[roleId]?.Properties.ManagedPolicyArns).toBeUndefined();
  });

  it('the scheduler role may only sqs:SendMessage to the deliveries queue and the retry DLQ', () => {
    const roleId =
      Object.keys(api.findResources('AWS::IAM::Role')).find((id) => /DeliveryPipelineSchedulerRole/.test(id)) ?? '';
    expect(statementsOf(roleId)).toEqual([
      { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: [arn(ids.deliveriesQueue), arn(ids.retryDlq)] },
    ]);
  });

  it('the delivery worker may create schedules only in that group and pass only that role, only to Scheduler', () => {
    const roleId =
      Object.keys(api.findResources('AWS::IAM::Role')).find((id) => /DeliveryPipelineSchedulerRole/.test(id)) ?? '';
    const statements = statementsOf(roleOf(functions.delivery));
    const scheduling = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('scheduler:')));
    expect(scheduling).toEqual([
      {
        Effect: 'Allow',
        Action: 'scheduler:CreateSchedule',
        Resource: {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':scheduler:',
              { Ref: 'AWS::Region' },
              ':',
              { Ref: 'AWS::AccountId' },
              ':schedule/Sendflow-prod-Api-retries/*',
            ],
          ],
        },
      },
    ]);
    const passing = statements.filter((s) => actionsOf(s).includes('iam:PassRole'));
    expect(passing).toEqual([
      {
        Effect: 'Allow',
        Action: 'iam:PassRole',
        Resource: arn(roleId),
        Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      },
    ]);
    // No other function may touch Scheduler or pass roles (the API's send schedules: email-pipeline tests).
    for (const fn of ['authorizer', 'dispatcher', 'reconciler'] as const) {
      const actions = statementsOf(roleOf(functions[fn])).flatMap(actionsOf);
      expect(actions.filter((a) => a.startsWith('scheduler:') || a.startsWith('iam:'))).toEqual([]);
    }
    expect(JSON.stringify(statementsOf(roleOf(functions.api)))).not.toContain('retries');
  });

  it('the delivery worker is told the group, queue, role and DLQ it schedules with', () => {
    const roleId =
      Object.keys(api.findResources('AWS::IAM::Role')).find((id) => /DeliveryPipelineSchedulerRole/.test(id)) ?? '';
    const variables = variablesOf(functions.delivery);
    expect(variables).toMatchObject({
      SF_DELIVERIES_QUEUE_URL: { Ref: ids.deliveriesQueue },
      SF_DELIVERIES_QUEUE_ARN: arn(ids.deliveriesQueue),
      SF_SCHEDULE_GROUP: 'Sendflow-prod-Api-retries',
      SF_SCHEDULER_ROLE_ARN: arn(roleId),
      SF_SCHEDULER_DLQ_ARN: arn(ids.retryDlq),
    });
  });
});

describe('queue access', () => {
  const sends = (fn: keyof typeof functions) =>
    statementsOf(roleOf(functions[fn]))
      .filter((s) => actionsOf(s).includes('sqs:SendMessage'))
      .map((s) => s.Resource);

  it('the API publishes to the events queue, starts recovery jobs on the deliveries queue, and knows both URLs', () => {
    expect(sends('api')).toContainEqual([arn(ids.eventsQueue), arn(ids.deliveriesQueue)]);
    expect(JSON.stringify(sends('api'))).not.toContain(ids.slowDeliveriesQueue);
    const variables = variablesOf(functions.api);
    expect(variables.SF_EVENTS_QUEUE_URL).toEqual({ Ref: ids.eventsQueue });
    expect(variables.SF_DELIVERIES_QUEUE_URL).toEqual({ Ref: ids.deliveriesQueue });
  });

  it('the dispatcher sends to the deliveries queue and its bypass; the delivery worker to it and the slow lane', () => {
    expect(sends('dispatcher')).toEqual([arn(ids.deliveriesQueue), arn(ids.deliveriesBypassQueue)]);
    expect(sends('delivery')).toEqual([[arn(ids.deliveriesQueue), arn(ids.slowDeliveriesQueue)]]);
  });

  it("every function that fans out first attempts knows the bypass and may read both queues' depth, nothing more", () => {
    // The dispatcher, the send worker and the SES mapper (events processed where they arise).
    const fanOuts = Object.entries(api.findResources('AWS::Lambda::Function'))
      .filter(([, fn]) => fn.Properties.Environment?.Variables?.SF_DELIVERIES_BYPASS_QUEUE_URL)
      .map(([id]) => id);
    expect(fanOuts.sort()).toEqual(
      [functions.dispatcher, functions.sender, functionId(/^EmailPipelineSesEvents/)].sort(),
    );
    for (const id of fanOuts) {
      expect(variablesOf(id).SF_DELIVERIES_BYPASS_QUEUE_URL).toEqual({ Ref: ids.deliveriesBypassQueue });
      // (A consumer's own grant on its queue includes GetQueueAttributes too: the statement of that action alone.)
      const depth = statementsOf(roleOf(id)).filter((s) => s.Action === 'sqs:GetQueueAttributes');
      expect(depth).toEqual([
        {
          Effect: 'Allow',
          Action: 'sqs:GetQueueAttributes',
          Resource: [arn(ids.deliveriesQueue), arn(ids.deliveriesBypassQueue)],
        },
      ]);
      const sending = statementsOf(roleOf(id)).filter((s) => actionsOf(s).includes('sqs:SendMessage'));
      expect(JSON.stringify(sending)).toContain(ids.deliveriesBypassQueue);
    }
    // The delivery worker consumes it, and sends retries and moves only: never to the bypass (see above); the
    // reconciler and the API (a recovery job's first step) have no business with it.
    for (const fn of ['reconciler', 'api'] as const) {
      expect(JSON.stringify(statementsOf(roleOf(functions[fn])))).not.toContain(ids.deliveriesBypassQueue);
    }
  });

  it('the bypass keeps 14 days, redrives into the deliveries DLQ (whose consumer records dead letters failed)', () => {
    const bypass = resources[ids.deliveriesBypassQueue]?.Properties;
    const deliveries = resources[ids.deliveriesQueue]?.Properties;
    expect(bypass?.MessageRetentionPeriod).toBe(14 * 86_400);
    expect(bypass?.VisibilityTimeout).toBe(deliveries?.VisibilityTimeout);
    expect(bypass?.RedrivePolicy).toEqual({
      deadLetterTargetArn: arn(ids.deliveriesDlq),
      maxReceiveCount: queues.deliveries.maxReceiveCount,
    });
  });

  it('the reconciler sends to the deliveries queue, the sends queue and (domain.updated) the events queue', () => {
    expect(sends('reconciler')).toEqual([arn(ids.deliveriesQueue), arn(sendsQueueId()), arn(ids.eventsQueue)]);
    expect(variablesOf(functions.reconciler).SF_EVENTS_QUEUE_URL).toEqual({ Ref: ids.eventsQueue });
  });

  it('the authorizer sends nowhere', () => {
    expect(sends('authorizer')).toEqual([]);
  });

  it('sending is sqs:SendMessage alone (it authorizes SendMessageBatch); no queue admin actions', () => {
    for (const fn of ['api', 'dispatcher', 'delivery', 'reconciler'] as const) {
      for (const s of statementsOf(roleOf(functions[fn]))) {
        if (actionsOf(s).includes('sqs:SendMessage')) expect(s.Action).toBe('sqs:SendMessage');
      }
    }
  });
});

describe('table access', () => {
  /** Per table (by its SSM parameter): the actions and whether they reach the table itself or only indexes. */
  function access(fn: keyof typeof functions) {
    const result: Record<string, { actions: Set<string>; targets: Set<string> }> = {};
    for (const s of statementsOf(roleOf(functions[fn]))) {
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
  // No Scan, DescribeTable or ConditionCheckItem, no DeleteItem or BatchWriteItem: no pipeline function calls
  // them (test/iam records every call each bundle makes).
  const writes = ['dynamodb:PutItem', 'dynamodb:UpdateItem'];

  it('the dispatcher lists webhooks (Query), reads a status note before raising it, may only PutItem email history, suppressions and listen sessions, and enter ordering lanes', () => {
    expect(access('dispatcher')).toEqual({
      webhooks: { actions: ['dynamodb:Query'], targets: ['table'] },
      // An ordered webhook's delivery enters its email's lane before its job is queued: UpdateItem, never a read.
      deliveries: { actions: ['dynamodb:UpdateItem'], targets: ['table'] },
      emailEvents: { actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'], targets: ['table'] },
      suppressions: { actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'], targets: ['table'] },
      // Live listen sessions: the account's, one Query a batch; each event they take, one PutItem.
      listenSessions: { actions: ['dynamodb:PutItem', 'dynamodb:Query'], targets: ['table'] },
      // Reputation: counters added to (UpdateItem ADD) and a window read (Query); standings read and noted.
      reputation: { actions: ['dynamodb:Query', 'dynamodb:UpdateItem'], targets: ['table'] },
      // The events webhook filters kept back: an ADD on a filtered#… counter (the next test scopes it).
      rateLimits: { actions: ['dynamodb:UpdateItem'], targets: ['table'] },
    });
  });

  it('the event processors may only ADD to filtered-event counters of the counters table (dynamodb:LeadingKeys filtered#*)', () => {
    for (const fn of ['dispatcher', 'sender'] as const) {
      const onCounters = statementsOf(roleOf(functions[fn])).filter((s) =>
        /tablesrateLimits[0-9A-F]{8,}/i.test(JSON.stringify(s.Resource)),
      );
      expect(onCounters, fn).toEqual([
        expect.objectContaining({
          Action: 'dynamodb:UpdateItem',
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['filtered#*'] } },
        }),
      ]);
    }
  });

  it('the event processors touch reputation counters (c#*) and standings (s#*) each with their own actions only', () => {
    const onReputation = (fn: keyof typeof functions) =>
      statementsOf(roleOf(functions[fn]))
        .filter((s) => /tablesreputation[0-9A-F]{8,}/.test(JSON.stringify(s.Resource)))
        .map((s) => ({ actions: actionsOf(s).sort(), condition: s.Condition ?? null }));
    const scoped = (keys: string[]) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': keys } });
    expect(onReputation('dispatcher')).toEqual([
      { actions: ['dynamodb:Query', 'dynamodb:UpdateItem'], condition: scoped(['c#*', 's#*']) },
    ]);
    expect(onReputation('sender')).toEqual([
      { actions: ['dynamodb:UpdateItem'], condition: scoped(['c#*']) },
      { actions: ['dynamodb:Query'], condition: scoped(['s#*']) },
    ]);
    // The reconciler relays a standing's outbox (its index, then UpdateItem of standings only).
    expect(onReputation('reconciler')).toEqual([
      { actions: ['dynamodb:UpdateItem'], condition: scoped(['s#*']) },
      { actions: ['dynamodb:Query'], condition: null },
    ]);
    // The API reads (a send's standing check, the metrics route), never writes.
    expect(onReputation('api')).toEqual([{ actions: ['dynamodb:Query'], condition: null }]);
    expect(onReputation('delivery')).toEqual([]);
    expect(onReputation('authorizer')).toEqual([]);
  });

  it('the dispatcher and the send worker may write only ordering lane items of the deliveries table (dynamodb:LeadingKeys ord#*)', () => {
    for (const fn of ['dispatcher', 'sender'] as const) {
      const onDeliveries = statementsOf(roleOf(functions[fn])).filter((s) =>
        /tablesdeliveries[0-9A-F]{8,}/i.test(JSON.stringify(s.Resource)),
      );
      expect(onDeliveries).toEqual([
        expect.objectContaining({
          Action: 'dynamodb:UpdateItem',
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['ord#*'] } },
        }),
      ]);
    }
  });

  it('the delivery worker reads webhooks by key (and updates them: auto-disable), writes delivery rows by key, pages a log for recovery jobs, and paces on the rate-limits table', () => {
    expect(access('delivery')).toEqual({
      // Auto-disable: the streak and the disabling are conditional UpdateItems of the webhook item; its events are
      // fanned out to the tenant's webhooks (Query).
      webhooks: {
        actions: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
        targets: ['table'],
      },
      // Query: a recovery step's page of the log (the table), or of its failed rows (byStatusKey) only.
      deliveries: {
        actions: ['dynamodb:GetItem', 'dynamodb:Query', ...writes].sort(),
        targets: ['byStatusKey', 'table'],
      },
      // A paced webhook's turns and starts: conditional UpdateItems of its pace item, never a read.
      rateLimits: { actions: ['dynamodb:UpdateItem'], targets: ['table'] },
    });
  });

  it('the reconciler queries byDueShard, byScheduleShard and every byOutboxEvents index, and relays outboxes item by item', () => {
    const { domains, ...rest } = access('reconciler');
    expect(rest).toEqual({
      deliveries: { actions: ['dynamodb:Query'], targets: ['byDueShard'] },
      emails: {
        actions: ['dynamodb:Query', 'dynamodb:UpdateItem'],
        targets: ['byOutboxEvents', 'byScheduleShard', 'table'],
      },
      // Recipients' email.failed / email.suppressed wait in emailParts' own outbox.
      emailParts: { actions: ['dynamodb:Query', 'dynamodb:UpdateItem'], targets: ['byOutboxEvents', 'table'] },
      // Outbox sweeps: the index, then UpdateItem (clear) and, for tombstones, DeleteItem.
      contacts: {
        actions: ['dynamodb:DeleteItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
        targets: ['byOutboxEvents', 'table'],
      },
      suppressions: {
        actions: ['dynamodb:DeleteItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
        targets: ['byOutboxEvents', 'table'],
      },
      // email.received left in a received email's outbox.
      inboundEmails: { actions: ['dynamodb:Query', 'dynamodb:UpdateItem'], targets: ['byOutboxEvents', 'table'] },
      // account.reputation_warning left in a reputation standing's outbox.
      reputation: { actions: ['dynamodb:Query', 'dynamodb:UpdateItem'], targets: ['byOutboxEvents', 'table'] },
    });
    // Pending domains: byPending, then one item read or conditional update; its outbox as the others.
    expect(domains).toEqual({
      actions: ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
      targets: ['byOutboxEvents', 'byPending', 'table'],
    });
  });

  it('the authorizer reaches accounts and API keys only', () => {
    expect(Object.keys(access('authorizer')).sort()).toEqual(['accounts', 'apiKeys']);
  });
});

describe('reconciler', () => {
  it(`runs every ${RECONCILE_EVERY_MINUTES} minute through Scheduler, with retries and its own DLQ`, () => {
    const schedule = only(api, 'AWS::Scheduler::Schedule').properties;
    // Its `live` alias (lib/constructs/deployments.ts).
    expect(invokedFunction(api, (schedule.Target as { Arn: unknown }).Arn)).toBe(functions.reconciler);
    expect(schedule).toMatchObject({
      ScheduleExpression: 'rate(1 minute)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: {
        Arn: { Ref: expect.stringMatching(/ReconcilerLive/) },
        DeadLetterConfig: { Arn: arn(ids.reconcileDlq) },
        RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 300 },
      },
    });
    // The schedule is in the default group, not the retry group whose schedules come and go.
    expect(schedule.GroupName).toBeUndefined();
  });

  it('invokes through a role that may only invoke the reconciler and dead-letter into its DLQ', () => {
    const schedule = only(api, 'AWS::Scheduler::Schedule').properties as { Target: { RoleArn: unknown } };
    const roleId = (schedule.Target.RoleArn as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
    const trust = resources[roleId]?.Properties.AssumeRolePolicyDocument as { Statement: Statement[] };
    expect(trust.Statement).toEqual([
      expect.objectContaining({
        Principal: { Service: 'scheduler.amazonaws.com' },
        Condition: {
          StringEquals: {
            'aws:SourceAccount': { Ref: 'AWS::AccountId' },
            'aws:SourceArn': expect.anything(),
          },
        },
      }),
    ]);
    expect(JSON.stringify(trust)).toContain(':schedule-group/default');
    const statements = statementsOf(roleId);
    expect(statements.flatMap(actionsOf).sort()).toEqual(['lambda:InvokeFunction', 'sqs:SendMessage']);
    const invoke = statements.find((s) => actionsOf(s).includes('lambda:InvokeFunction'));
    expect(invokedFunction(api, invoke?.Resource)).toBe(functions.reconciler);
    expect(mentions(invoke as Statement, functions.dispatcher)).toBe(false);
    const send = statements.find((s) => actionsOf(s).includes('sqs:SendMessage'));
    expect(send?.Resource).toEqual(arn(ids.reconcileDlq));
  });

  it('has a time-out for one page of overdue deliveries and knows the deliveries queue', () => {
    const fn = resources[functions.reconciler]?.Properties as {
      Timeout: number;
      Environment: { Variables: Record<string, unknown> };
    };
    expect(fn.Timeout).toBe(60);
    expect(fn.Environment.Variables.SF_DELIVERIES_QUEUE_URL).toEqual({ Ref: ids.deliveriesQueue });
  });
});

describe('alarms', () => {
  const alarms = () => Object.values(api.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);
  const on = (queueId: string, metric: string) =>
    alarms().filter(
      (a) =>
        a.MetricName === metric &&
        // The same metric near the queue's retention is the data-loss alarm (test/infra/paging.test.ts).
        !String(a.AlarmName).endsWith('QueueNearRetention') &&
        JSON.stringify(a.Dimensions) ===
          JSON.stringify([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }]),
    );

  it.each([
    ['deliveries DLQ', 'deliveriesDlq'],
    ['slow lane DLQ', 'slowDeliveriesDlq'],
  ] as const)('the %s, drained by its consumer, alarms as soon as one message is received from it', (_name, key) => {
    expect(on(ids[key], 'NumberOfMessagesReceived')).toEqual([
      expect.objectContaining({
        Namespace: 'AWS/SQS',
        Statistic: 'Sum',
        Period: 60,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      }),
    ]);
    expect(on(ids[key], 'ApproximateNumberOfMessagesVisible')).toEqual([]);
  });

  it.each([
    ['events DLQ', 'eventsDlq'],
    ['retry schedule DLQ', 'retryDlq'],
    ['reconcile schedule DLQ', 'reconcileDlq'],
  ] as const)('the %s alarms as soon as one message is visible', (_name, key) => {
    expect(on(ids[key], 'ApproximateNumberOfMessagesVisible')).toEqual([
      expect.objectContaining({
        Namespace: 'AWS/SQS',
        Statistic: 'Maximum',
        Period: 60,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      }),
    ]);
  });

  it.each([
    ['events', 'eventsQueue', 300],
    ['deliveries', 'deliveriesQueue', 900],
  ] as const)('the %s queue alarms when its oldest message is older than %i s', (name, key, seconds) => {
    expect(OLDEST_MESSAGE_ALARM_SECONDS[name]).toBe(seconds);
    expect(on(ids[key], 'ApproximateAgeOfOldestMessage')).toEqual([
      expect.objectContaining({
        Namespace: 'AWS/SQS',
        Statistic: 'Maximum',
        Period: 60,
        Threshold: seconds,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'notBreaching',
      }),
    ]);
  });

  it('has these nine alarms (the email pipeline adds its own)', () => {
    const pipeline = Object.keys(api.findResources('AWS::CloudWatch::Alarm')).filter((id) =>
      id.startsWith('DeliveryPipeline'),
    );
    expect(pipeline).toHaveLength(9);
    expect(pipeline.some((id) => id.startsWith('DeliveryPipelineDeliveriesBypassQueueOldestMessageAlarm'))).toBe(true);
    expect(pipeline.some((id) => id.startsWith('DeliveryPipelineSlowDeliveriesQueueOldestMessageAlarm'))).toBe(true);
    expect(pipeline.some((id) => id.startsWith('DeliveryPipelineSlowDeliveriesDlqDepthAlarm'))).toBe(true);
  });
});

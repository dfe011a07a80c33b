// The Lambda entry points (lambdas/runtime/aws/*.ts) as Lambda loads them: each with exactly the environment
// the synthesized api stack gives its function (tokens replaced by stand-ins), DynamoDB, SQS, Scheduler and
// Secrets Manager mocked, Powertools logs carrying the invocation's request id. No entry point calls AWS at
// import: the API reads its signing secret on first use, and a failed read fails that request only. A variable an entry point
// needs that the stack forgot fails here at import, as it would at a cold start.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CreateScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { GetEmailIdentityCommand, SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
  SQSBatchResponse,
  SQSEvent,
} from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeAll, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import type { Delivery } from '../../lambdas/app/webhooks/ports';
import { generateApiKey, hashApiKey } from '../../lambdas/domain/api-keys';
import { SCOPES } from '../../lambdas/domain/scopes';
import { signToken } from '../../lambdas/domain/tokens';
import { deliveryIdFor, renderPayload } from '../../lambdas/domain/webhooks/render';
import { synthSendflow } from './synth';

type Handler<E, R> = (event: E, context: Context) => Promise<R>;
type Entry = 'api' | 'authorizer' | 'dispatcher' | 'delivery' | 'reconciler' | 'sender' | 'sesEvents';

const dynamo = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);
const scheduler = mockClient(SchedulerClient);
const secrets = mockClient(SecretsManagerClient);
const ses = mockClient(SESv2Client);
/** What Secrets Manager holds for the stack's signing secret. */
const SIGNING_SECRET = 'k'.repeat(64);
/** The secret's generated name, as its ARN reaches the api stack through SSM. */
const SIGNING_SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:SigningSecretCF7EC744-AbCdEf';
const handlers = {} as Record<Entry, Handler<unknown, unknown>>;
const environments = {} as Record<Entry, Record<string, string>>;
let stdout: MockInstance;
/** Secrets Manager reads made while the seven entry points were imported (cold starts). */
let secretReadsAtColdStart = -1;

function lambdaContext(awsRequestId: string): Context {
  return {
    awsRequestId,
    functionName: 'sendflow-test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:sendflow-test',
    memoryLimitInMB: '1024',
    logGroupName: '/aws/lambda/sendflow-test',
    logStreamName: 'stream',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => 10_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** JSON log lines written since the spy started. */
function logLines(): Record<string, unknown>[] {
  return stdout.mock.calls
    .map(([chunk]) => String(chunk))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

/** The EMF lines among them (Powertools Metrics). */
function emfLines(): Record<string, unknown>[] {
  return logLines().filter((line) => '_aws' in line);
}

/** A deploy-time value (SSM parameter, queue URL, ARN) becomes a readable stand-in: SF_TABLE_API_KEYS → api-keys-table. */
function standIn(name: string): string {
  if (name === 'SF_PUBLIC_URL') return 'https://abc123.execute-api.eu-west-1.amazonaws.com/v1';
  if (name === 'SF_SIGNING_SECRET_ID') return SIGNING_SECRET_ARN;
  const table = /^SF_TABLE_(\w+)$/.exec(name)?.[1];
  if (table) return `${table.toLowerCase().replaceAll('_', '-')}-table`;
  if (name.endsWith('_URL')) return `https://sqs.eu-west-1.amazonaws.com/123456789012/${name.toLowerCase()}`;
  if (name.endsWith('_ARN')) return `arn:aws:test:eu-west-1:123456789012:${name.toLowerCase()}`;
  return `${name.toLowerCase()}-value`;
}

/** Each function's environment from the template, keyed by its service name. */
function templateEnvironments(): Record<string, Record<string, string>> {
  const { api } = synthSendflow();
  const result: Record<string, Record<string, string>> = {};
  for (const fn of Object.values(api.findResources('AWS::Lambda::Function'))) {
    // Ours carry a service name; CDK's own LogRetention function (the execution log group's) has no environment.
    const variables = fn.Properties.Environment?.Variables as Record<string, unknown> | undefined;
    if (variables?.POWERTOOLS_SERVICE_NAME === undefined) continue;
    result[String(variables.POWERTOOLS_SERVICE_NAME)] = Object.fromEntries(
      Object.entries(variables).map(([name, value]) => [name, typeof value === 'string' ? value : standIn(name)]),
    );
  }
  return result;
}

function sqsEvent(bodies: unknown[]): SQSEvent {
  return {
    Records: bodies.map((body, i) => ({
      messageId: `msg-${i}`,
      receiptHandle: `rh-${i}`,
      body: JSON.stringify(body),
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: '0',
        SenderId: 'x',
        ApproximateFirstReceiveTimestamp: '0',
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:queue',
      awsRegion: 'eu-west-1',
    })),
  };
}

/** Bodies of every SQS message sent, with the queue and delay. */
function sentMessages() {
  return sqs.commandCalls(SendMessageBatchCommand).flatMap((call) =>
    (call.args[0].input.Entries ?? []).map((entry) => ({
      queueUrl: call.args[0].input.QueueUrl,
      delaySeconds: entry.DelaySeconds,
      body: JSON.parse(entry.MessageBody ?? '{}'),
    })),
  );
}

const clean = { ...process.env };
const loaders: Record<Entry, () => Promise<unknown>> = {
  api: () => import('../../lambdas/runtime/aws/api'),
  authorizer: () => import('../../lambdas/runtime/aws/authorizer'),
  dispatcher: () => import('../../lambdas/runtime/aws/dispatcher'),
  delivery: () => import('../../lambdas/runtime/aws/delivery'),
  reconciler: () => import('../../lambdas/runtime/aws/reconciler'),
  sender: () => import('../../lambdas/runtime/aws/sender'),
  sesEvents: () => import('../../lambdas/runtime/aws/ses-events'),
};

beforeAll(async () => {
  const byService = templateEnvironments();
  const entries: Record<Entry, string> = {
    api: 'sendflow-api',
    authorizer: 'sendflow-authorizer',
    dispatcher: 'sendflow-dispatcher',
    delivery: 'sendflow-delivery',
    reconciler: 'sendflow-reconciler',
    sender: 'sendflow-sender',
    sesEvents: 'sendflow-ses-events',
  };
  secrets.on(GetSecretValueCommand).resolves({ SecretString: SIGNING_SECRET });
  for (const [entry, service] of Object.entries(entries) as [Entry, string][]) {
    const environment = byService[service];
    if (!environment) throw new Error(`no function with service ${service} in the api stack`);
    environments[entry] = environment;
    // Exactly what Lambda would set: the function's variables on a clean process environment.
    // SF_METRICS is unset on Lambda (metrics on); test/setup.ts turns it off for every other test.
    const { SF_METRICS: _off, ...unset } = clean;
    process.env = { ...unset, AWS_REGION: 'eu-west-1', POWERTOOLS_LOG_LEVEL: 'DEBUG', ...environment };
    handlers[entry] = ((await loaders[entry]()) as unknown as { handler: Handler<unknown, unknown> }).handler;
  }
  process.env = clean;
  secretReadsAtColdStart = secrets.commandCalls(GetSecretValueCommand).length;
});

beforeEach(() => {
  dynamo.reset();
  sqs.reset();
  scheduler.reset();
  ses.reset();
  ses.on(SendEmailCommand).resolves({ MessageId: 'ses-message-1' });
  sqs.on(SendMessageBatchCommand).resolves({ Failed: [] });
  scheduler.on(CreateScheduleCommand).resolves({ ScheduleArn: 'arn:aws:scheduler:eu-west-1:1:schedule/g/n' });
  stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
});

afterEach(() => {
  stdout.mockRestore();
});

describe('api entry point', () => {
  it('answers an unknown path with 404 and rate-limit headers, writes nothing to DynamoDB, and logs the request id', async () => {
    // Arrange: an unknown key (the API Lambda looks its hash up, and finds nothing).
    dynamo.on(GetCommand).resolves({});
    const event = {
      resource: '/{proxy+}',
      path: '/nope',
      httpMethod: 'GET',
      headers: { Authorization: `Bearer ${generateApiKey('test', randomBytes)}` },
      multiValueHeaders: {},
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      pathParameters: { proxy: 'nope' },
      stageVariables: null,
      body: null,
      isBase64Encoded: false,
      requestContext: { requestId: 'gw-req-1', path: '/v1/nope', identity: { sourceIp: '198.51.100.7' } },
    } as unknown as APIGatewayProxyEvent;

    // Act
    const response = (await handlers.api(event, lambdaContext('lambda-req-1'))) as APIGatewayProxyResult;

    // Assert
    expect(response.statusCode).toBe(404);
    expect(JSON.parse(response.body)).toMatchObject({ status: 404, code: 'not_found' });
    expect(response.headers).toMatchObject({ 'X-RateLimit-Limit': '20', 'X-Request-Id': 'gw-req-1' });
    // Anonymous traffic is counted per IP in memory (the WAF limits it on AWS): never a DynamoDB write.
    expect(dynamo.calls().map((call) => call.args[0].constructor.name)).toEqual(['GetCommand']);
    expect(logLines()).toContainEqual(
      expect.objectContaining({ service: 'sendflow-api', function_request_id: 'lambda-req-1' }),
    );
    // One request line, and its EMF published before the invocation returned.
    expect(logLines()).toContainEqual(
      expect.objectContaining({
        message: 'api request',
        route: 'unmatched',
        method: 'GET',
        status: 404,
        request_id: 'gw-req-1',
        function_request_id: 'lambda-req-1',
      }),
    );
    expect(emfLines()).toContainEqual(
      expect.objectContaining({ service: 'Sendflow-prod-Api', route: 'unmatched', status: '404', ApiRequests: 1 }),
    );
  });
});

describe('authorizer entry point', () => {
  it('allows a known key with the account usage key, reading the configured tables', async () => {
    // Arrange
    const secret = generateApiKey('live', randomBytes);
    dynamo.on(GetCommand, { TableName: 'api-keys-table' }).resolves({
      Item: {
        id: 'key_1',
        hash: hashApiKey(secret),
        accountId: 'acct_1',
        mode: 'live',
        scopes: [...SCOPES],
        name: 'Default',
        hint: 'sf_live…abcd',
        createdAt: '2026-11-22T00:00:00.000Z',
      },
    });
    dynamo.on(GetCommand, { TableName: 'accounts-table' }).resolves({
      Item: { id: 'acct_1', plan: 'growth', createdAt: '2026-11-22T00:00:00.000Z', usageKey: 'U'.repeat(40) },
    });
    const event = {
      type: 'REQUEST',
      methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/GET/api-keys',
      headers: { Authorization: `Bearer ${secret}` },
    } as unknown as APIGatewayRequestAuthorizerEvent;

    // Act
    const result = (await handlers.authorizer(event, lambdaContext('lambda-req-2'))) as APIGatewayAuthorizerResult;

    // Assert
    expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Allow' });
    expect(result.usageIdentifierKey).toBe('U'.repeat(40));
    expect(result.context).toMatchObject({ accountId: 'acct_1', plan: 'growth' });
  });

  it.each([
    ['an unknown, well-formed key', () => `Bearer ${generateApiKey('test', randomBytes)}`, ['GetCommand']],
    ['a malformed key', () => 'Bearer sf_test_not-a-key', []],
  ])('denies %s with no DynamoDB write', async (_name, header, calls) => {
    // Arrange
    dynamo.on(GetCommand).resolves({});
    const event = {
      type: 'REQUEST',
      methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/GET/api-keys',
      headers: { Authorization: header() },
    } as unknown as APIGatewayRequestAuthorizerEvent;

    // Act
    const result = (await handlers.authorizer(event, lambdaContext('lambda-req-4'))) as APIGatewayAuthorizerResult;

    // Assert
    expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Deny' });
    expect(dynamo.calls().map((call) => call.args[0].constructor.name)).toEqual(calls);
  });

  it('denies a request without a key and logs why with the request id', async () => {
    // Arrange
    const event = {
      type: 'REQUEST',
      methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/GET/api-keys',
      headers: {},
    } as unknown as APIGatewayRequestAuthorizerEvent;

    // Act
    const result = (await handlers.authorizer(event, lambdaContext('lambda-req-3'))) as APIGatewayAuthorizerResult;

    // Assert
    expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Deny' });
    expect(dynamo.calls()).toHaveLength(0);
    expect(logLines()).toContainEqual(
      expect.objectContaining({
        message: 'authorization denied',
        service: 'sendflow-authorizer',
        function_request_id: 'lambda-req-3',
      }),
    );
  });
});

const NOW = Date.now();
const webhook = {
  tenant: 'acct_1#live',
  id: 'wh_1',
  accountId: 'acct_1',
  mode: 'live',
  // Refused by the SSRF guard before any connection: the attempt fails without the network.
  url: 'https://127.0.0.1/hook',
  events: ['email.delivered'],
  format: 'standard',
  secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
  active: true,
  createdAt: '2026-11-22T00:00:00.000Z',
  updatedAt: '2026-11-22T00:00:00.000Z',
};

function pendingDelivery(attempts: number): Delivery & { claim: { attempt: number; until: number } } {
  return {
    id: 'dlv_01jaaaaaaaaaaaaaaaaaaaaaaa0123456789',
    webhookId: 'wh_1',
    accountId: 'acct_1',
    mode: 'live',
    eventId: 'evt_01jaaaaaaaaaaaaaaaaaaaaaaa',
    event: 'email.delivered',
    format: 'standard',
    payload: '{"type":"email.delivered"}',
    status: 'pending',
    attempts,
    maxAttempts: 5,
    attemptLog: [],
    response: '',
    nextAttemptAt: NOW,
    deliveredAt: null,
    createdAt: NOW - 60_000,
    claim: { attempt: attempts + 1, until: NOW + 30_000 },
  };
}

describe('dispatcher entry point', () => {
  it('fans an event out to a subscribed webhook as a job on the stack deliveries queue', async () => {
    // Arrange: the tenant has one webhook and no listen session.
    dynamo.on(QueryCommand).resolves({ Items: [] });
    dynamo.on(QueryCommand, { TableName: 'webhooks-table' }).resolves({ Items: [webhook] });
    const event = {
      id: 'evt_01jaaaaaaaaaaaaaaaaaaaaaaa',
      type: 'email.delivered',
      accountId: 'acct_1',
      mode: 'live',
      timestamp: '2026-11-22T10:00:00.000Z',
      data: { email_id: 'em_1' },
    };

    // Act
    const result = (await handlers.dispatcher(sqsEvent([event]), lambdaContext('lambda-req-4'))) as SQSBatchResponse;

    // Assert
    expect(result).toEqual({ batchItemFailures: [] });
    expect(dynamo).toHaveReceivedCommandWith(QueryCommand, { TableName: 'webhooks-table' });
    // The account's live listen sessions: one consistent Query of its partition (`npm run listen`).
    expect(dynamo).toHaveReceivedCommandWith(QueryCommand, {
      TableName: 'listen-sessions-table',
      ConsistentRead: true,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': 'acct#acct_1' },
    });
    expect(sentMessages()).toEqual([
      {
        queueUrl: environments.dispatcher.SF_DELIVERIES_QUEUE_URL,
        delaySeconds: 0,
        body: expect.objectContaining({ deliveryId: deliveryIdFor(event.id, 'wh_1'), webhookId: 'wh_1', attempt: 1 }),
      },
    ]);
  });

  it('puts an event on a live listen session of its tenant: one PutItem of the exact standard payload', async () => {
    // Arrange: no webhook; one live session of the account in the event's mode.
    const nowSeconds = Math.floor(Date.now() / 1000);
    dynamo.on(QueryCommand).resolves({ Items: [] });
    dynamo.on(QueryCommand, { TableName: 'listen-sessions-table' }).resolves({
      Items: [
        {
          pk: 'acct#acct_1',
          sk: 'ls_1',
          id: 'ls_1',
          accountId: 'acct_1',
          mode: 'live',
          secret: 'whsec_x',
          events: null,
          createdAt: Date.now(),
          expiresAt: nowSeconds + 300,
        },
      ],
    });
    dynamo.on(PutCommand).resolves({});
    const event = {
      id: 'evt_01jaaaaaaaaaaaaaaaaaaaaalx',
      type: 'email.delivered',
      accountId: 'acct_1',
      mode: 'live',
      timestamp: '2026-11-22T10:00:00.000Z',
      data: {},
    };

    // Act
    const result = (await handlers.dispatcher(sqsEvent([event]), lambdaContext('lambda-req-5'))) as SQSBatchResponse;

    // Assert
    expect(result).toEqual({ batchItemFailures: [] });
    expect(dynamo).toHaveReceivedCommandWith(PutCommand, {
      TableName: 'listen-sessions-table',
      Item: expect.objectContaining({
        pk: 'ls_1',
        sk: expect.stringMatching(/^\d{13}#evt_01jaaaaaaaaaaaaaaaaaaaaalx$/),
        eventId: event.id,
        type: 'email.delivered',
        payload: renderPayload({ ...event, type: 'email.delivered', mode: 'live' }, 'standard'),
      }),
    });
    expect(sentMessages()).toEqual([]);
  });

  it("sends a batch's jobs in one SendMessageBatch of 10, not one per event", async () => {
    // Arrange: 12 events for a tenant with one webhook (and no listen session).
    dynamo.on(QueryCommand).resolves({ Items: [] });
    dynamo.on(QueryCommand, { TableName: 'webhooks-table' }).resolves({ Items: [webhook] });
    const events = Array.from({ length: 12 }, (_, i) => ({
      id: `evt_01jaaaaaaaaaaaaaaaaaaaaa${String(i).padStart(2, '0')}`,
      type: 'email.delivered',
      accountId: 'acct_1',
      mode: 'live',
      timestamp: '2026-11-22T10:00:00.000Z',
      data: {},
    }));

    // Act
    const result = (await handlers.dispatcher(sqsEvent(events), lambdaContext('lambda-req-6'))) as SQSBatchResponse;

    // Assert
    expect(result).toEqual({ batchItemFailures: [] });
    const sends = sqs.commandCalls(SendMessageBatchCommand).map((call) => call.args[0].input.Entries?.length);
    expect(sends).toEqual([10, 2]);
    expect(new Set(sentMessages().map((m) => m.body.deliveryId)).size).toBe(12);
  });

  it('reports a record whose body is not an event as a batch item failure, alone', async () => {
    dynamo.on(QueryCommand).resolves({ Items: [] });
    const result = (await handlers.dispatcher(sqsEvent([{ nope: true }]), lambdaContext('r'))) as SQSBatchResponse;
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'msg-0' }] });
  });
});

describe('delivery entry point', () => {
  function arrange(attemptsBefore: number) {
    dynamo.on(UpdateCommand).resolves({ Attributes: pendingDelivery(attemptsBefore) });
    // Auto-disable's bookkeeping: the failure starts the webhook's streak (one conditional UpdateItem).
    dynamo
      .on(UpdateCommand, { TableName: 'webhooks-table' })
      .resolves({ Attributes: { ...webhook, failingSince: NOW, failedDeliveries: 1 } });
    dynamo.on(GetCommand).resolves({ Item: webhook });
    dynamo.on(PutCommand).resolves({});
  }

  it('retries a failed second attempt in 30 s through SQS DelaySeconds on the stack queue', async () => {
    // Arrange
    arrange(1);
    const job = { deliveryId: pendingDelivery(1).id, webhookId: 'wh_1', attempt: 2 };

    // Act
    const result = (await handlers.delivery(sqsEvent([job]), lambdaContext('lambda-req-5'))) as SQSBatchResponse;

    // Assert
    expect(result).toEqual({ batchItemFailures: [] });
    expect(dynamo).toHaveReceivedCommandWith(PutCommand, { TableName: 'deliveries-table' });
    expect(dynamo).toHaveReceivedCommandWith(UpdateCommand, {
      TableName: 'webhooks-table',
      Key: { tenant: 'acct_1#live', id: 'wh_1' },
      UpdateExpression: 'SET failingSince = :at, failedDeliveries = :one REMOVE failingNotifiedAt',
    });
    expect(sentMessages()).toEqual([
      {
        queueUrl: environments.delivery.SF_DELIVERIES_QUEUE_URL,
        delaySeconds: 30,
        body: { ...job, attempt: 3, accountId: 'acct_1' },
      },
    ]);
    expect(scheduler).not.toHaveReceivedCommand(CreateScheduleCommand);
    // The attempt's line carries the invocation's request id; its metrics are out when the invocation ends.
    expect(logLines()).toContainEqual(
      expect.objectContaining({
        message: 'webhook attempt',
        delivery_id: job.deliveryId,
        webhook_id: 'wh_1',
        attempt: 2,
        outcome: 'failed',
        function_request_id: 'lambda-req-5',
      }),
    );
    expect(emfLines()).toContainEqual(
      expect.objectContaining({ service: 'Sendflow-prod-Api', DeliveriesAttempted: 1 }),
    );
    expect(emfLines()).toContainEqual(expect.objectContaining({ DeliveriesFailed: 1, errorClass: expect.any(String) }));
  });

  it('retries a failed third attempt in 5 min through SQS DelaySeconds too (15 minutes and less: no schedule)', async () => {
    // Arrange
    arrange(2);
    const job = { deliveryId: pendingDelivery(2).id, webhookId: 'wh_1', attempt: 3 };

    // Act
    const result = (await handlers.delivery(sqsEvent([job]), lambdaContext('lambda-req-6'))) as SQSBatchResponse;

    // Assert
    expect(result).toEqual({ batchItemFailures: [] });
    expect(sentMessages()).toEqual([
      {
        queueUrl: environments.delivery.SF_DELIVERIES_QUEUE_URL,
        delaySeconds: 300,
        body: { ...job, attempt: 4, accountId: 'acct_1' },
      },
    ]);
    expect(scheduler).not.toHaveReceivedCommand(CreateScheduleCommand);
  });

  it('retries a failed fourth attempt in 30 min through a schedule in the stack group, role and DLQ', async () => {
    // Arrange
    arrange(3);
    const job = { deliveryId: pendingDelivery(3).id, webhookId: 'wh_1', attempt: 4 };

    // Act
    const result = (await handlers.delivery(sqsEvent([job]), lambdaContext('lambda-req-7'))) as SQSBatchResponse;

    // Assert
    expect(result).toEqual({ batchItemFailures: [] });
    const env = environments.delivery;
    expect(scheduler).toHaveReceivedCommandWith(CreateScheduleCommand, {
      Name: `${job.deliveryId}-a5`,
      GroupName: env.SF_SCHEDULE_GROUP,
      ActionAfterCompletion: 'DELETE',
      Target: expect.objectContaining({
        Arn: env.SF_DELIVERIES_QUEUE_ARN,
        RoleArn: env.SF_SCHEDULER_ROLE_ARN,
        DeadLetterConfig: { Arn: env.SF_SCHEDULER_DLQ_ARN },
        Input: JSON.stringify({ ...job, attempt: 5, accountId: 'acct_1' }),
      }),
    });
    expect(sqs).not.toHaveReceivedCommand(SendMessageBatchCommand);
  });
});

describe('reconciler entry point', () => {
  it('re-queues an overdue pending attempt now, found through the byDueShard index (one shard of several)', async () => {
    // Arrange: the entry as the index projects it (keys and attempts), in one shard; the others are empty.
    const overdue = pendingDelivery(2);
    dynamo.on(QueryCommand).resolves({ Items: [] });
    dynamo.on(QueryCommand, { IndexName: 'byDueShard', ExpressionAttributeValues: { ':d': 'due#3' } }).resolves({
      Items: [
        {
          id: overdue.id,
          webhookId: 'wh_1',
          dueShard: 'due#3',
          dueAt: String(NOW - 600_000).padStart(15, '0'),
          attempts: overdue.attempts,
        },
      ],
    });

    // Act
    const result = await handlers.reconciler({}, lambdaContext('lambda-req-7'));

    // Assert
    expect(result).toMatchObject({ requeued: 1 });
    expect(dynamo).toHaveReceivedCommandWith(QueryCommand, { TableName: 'deliveries-table', IndexName: 'byDueShard' });
    expect(sentMessages()).toEqual([
      {
        queueUrl: environments.reconciler.SF_DELIVERIES_QUEUE_URL,
        delaySeconds: 0,
        body: { deliveryId: overdue.id, webhookId: 'wh_1', attempt: 3 },
      },
    ]);
  });
});

describe('reconciler entry point: scheduled sends', () => {
  it('puts an overdue scheduled email on the stack sends queue now, found through the byScheduleShard index', async () => {
    // Arrange: in one shard of several.
    dynamo.on(QueryCommand).resolves({ Items: [] });
    dynamo
      .on(QueryCommand, { IndexName: 'byScheduleShard', ExpressionAttributeValues: { ':s': 'scheduled#5' } })
      .resolves({ Items: [{ id: 'email_1', sendAt: String(NOW - 600_000).padStart(15, '0') }] });
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm-1' });

    // Act
    const result = await handlers.reconciler({}, lambdaContext('lambda-req-8'));

    // Assert
    expect(result).toMatchObject({ requeued: 1 });
    expect(dynamo).toHaveReceivedCommandWith(QueryCommand, { TableName: 'emails-table', IndexName: 'byScheduleShard' });
    expect(sqs).toHaveReceivedCommandWith(SendMessageCommand, {
      QueueUrl: environments.reconciler.SF_SENDS_QUEUE_URL,
      MessageBody: JSON.stringify({ emailId: 'email_1' }),
      DelaySeconds: 0,
    });
    expect(scheduler).not.toHaveReceivedCommand(CreateScheduleCommand);
  });
});

describe('api entry point: listen sessions', () => {
  it('answers a poll at once on AWS: no waiting poll holds one of the API function’s reserved executions', () => {
    expect(environments.api.SF_LISTEN_MAX_WAIT_SECONDS).toBe('0');
  });
});

describe('api entry point: links', () => {
  it('reads no secret at cold start', () => {
    expect(secretReadsAtColdStart).toBe(0);
    expect(environments.api.SF_SIGNING_SECRET_ID).toBeTruthy();
  });

  it('answers 503 when the secret cannot be read, reads it again on the next request, then keeps it', async () => {
    // Arrange: the first read fails (the SDK's own retries are behind the mock), the next ones succeed.
    secrets.reset();
    secrets
      .on(GetSecretValueCommand)
      .rejectsOnce(new Error('Secrets Manager is unavailable'))
      .resolves({ SecretString: SIGNING_SECRET });
    dynamo.on(UpdateCommand).resolves({ Attributes: { n: 1 } });
    dynamo.on(GetCommand, { TableName: 'emails-table' }).resolves({ Item: undefined });
    const token = signToken(
      'unsubscribe',
      { a: 'acct_1', m: 'live', e: 'email_9', r: 'x@example.com' },
      SIGNING_SECRET,
    );
    const event = {
      resource: '/unsubscribe/{token}',
      path: `/unsubscribe/${token}`,
      httpMethod: 'GET',
      headers: {},
      multiValueHeaders: {},
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      pathParameters: { token },
      stageVariables: null,
      body: null,
      isBase64Encoded: false,
      requestContext: {
        requestId: 'gw-req-8',
        path: `/v1/unsubscribe/${token}`,
        identity: { sourceIp: '198.51.100.8' },
      },
    } as unknown as APIGatewayProxyEvent;

    // Powertools writes ERROR lines to stderr.
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);

    // Act
    const failed = (await handlers.api(event, lambdaContext('lambda-req-s1'))) as APIGatewayProxyResult;
    const errorLines = stderr.mock.calls.map(([chunk]) => String(chunk));
    stderr.mockRestore();
    const next = (await handlers.api(event, lambdaContext('lambda-req-s2'))) as APIGatewayProxyResult;
    const cached = (await handlers.api(event, lambdaContext('lambda-req-s3'))) as APIGatewayProxyResult;

    // Assert: the container survived the failure; only the request that needed the secret got the 503.
    expect(failed.statusCode).toBe(503);
    expect(JSON.parse(failed.body)).toEqual({
      error: 'Links cannot be signed or checked right now; try again shortly.',
      status: 503,
      code: 'service_unavailable',
      name: 'service_unavailable',
      message: 'Links cannot be signed or checked right now; try again shortly.',
      statusCode: 503,
    });
    expect(failed.body).not.toContain(environments.api.SF_SIGNING_SECRET_ID);
    // The log says what failed (the message the caller saw does not).
    const errorLine = JSON.parse(errorLines.at(-1) ?? '{}');
    expect(errorLine).toMatchObject({
      level: 'ERROR',
      message: 'request failed',
      function_request_id: 'lambda-req-s1',
    });
    expect(errorLine.error.cause.message).toBe(
      `Could not read the signing secret ${environments.api.SF_SIGNING_SECRET_ID}`,
    );
    // Verified with the secret read on the second request: the token is genuine, the email unknown (404).
    expect(next.statusCode).toBe(404);
    expect(cached.statusCode).toBe(404);
    expect(secrets).toHaveReceivedCommandTimes(GetSecretValueCommand, 2);
    expect(secrets).toHaveReceivedCommandWith(GetSecretValueCommand, {
      SecretId: environments.api.SF_SIGNING_SECRET_ID,
    });
    expect(environments.api.SF_SIGNING_SECRET_ID).toBe(SIGNING_SECRET_ARN);
  });

  it('verify an unsubscribe link signed with that secret (a public route: no authorizer)', async () => {
    // Arrange
    dynamo.on(UpdateCommand).resolves({ Attributes: { n: 1 } });
    // An email's links and recipient states (emailParts): none stored for this one.
    dynamo.on(QueryCommand, { TableName: 'email-parts-table' }).resolves({ Items: [] });
    dynamo.on(GetCommand, { TableName: 'emails-table' }).resolves({
      Item: {
        id: 'email_1',
        accountId: 'acct_1',
        mode: 'live',
        from: 'Acme <news@acme.example>',
        to: ['bob@example.com'],
        cc: [],
        bcc: [],
        replyTo: [],
        subject: 'Hello',
        headers: {},
        tags: [],
        createdAt: new Date(NOW).toISOString(),
        events: [],
      },
    });
    const token = signToken(
      'unsubscribe',
      { a: 'acct_1', m: 'live', e: 'email_1', r: 'bob@example.com' },
      SIGNING_SECRET,
    );
    const event = (value: string) =>
      ({
        resource: '/unsubscribe/{token}',
        path: `/unsubscribe/${value}`,
        httpMethod: 'GET',
        headers: {},
        multiValueHeaders: {},
        queryStringParameters: null,
        multiValueQueryStringParameters: null,
        pathParameters: { token: value },
        stageVariables: null,
        body: null,
        isBase64Encoded: false,
        requestContext: {
          requestId: 'gw-req-9',
          path: `/v1/unsubscribe/${value}`,
          identity: { sourceIp: '198.51.100.9' },
        },
      }) as unknown as APIGatewayProxyEvent;

    // Act
    const valid = (await handlers.api(event(token), lambdaContext('lambda-req-9'))) as APIGatewayProxyResult;
    const forged = (await handlers.api(
      event(signToken('unsubscribe', { a: 'acct_1', m: 'live', e: 'email_1', r: 'bob@example.com' }, 'x'.repeat(64))),
      lambdaContext('lambda-req-10'),
    )) as APIGatewayProxyResult;

    // Assert
    expect(valid.statusCode).toBe(200);
    expect(valid.body).toContain('bob@example.com');
    expect(forged.statusCode).toBe(404);
  });
});

describe('sender entry point', () => {
  it('sends a scheduled test-mode email through the simulator: its email.sent fanned out here, the story onto the events queue', async () => {
    // Arrange
    const email = {
      id: 'email_2',
      accountId: 'acct_1',
      mode: 'test',
      from: 'news@acme.example',
      to: ['success@simulator.amazonses.com'],
      cc: [],
      bcc: [],
      replyTo: [],
      subject: 'Later',
      html: '<p>hi</p>',
      headers: {},
      tags: [],
      createdAt: new Date(NOW - 3_600_000).toISOString(),
      events: [],
      scheduledAt: new Date(NOW).toISOString(),
      unsubscribeUrls: {},
    };
    dynamo.on(QueryCommand).resolves({ Items: [] });
    dynamo.on(GetCommand).resolves({});
    dynamo.on(GetCommand, { TableName: 'emails-table' }).resolves({ Item: { ...email, scheduleShard: 'scheduled#1' } });
    dynamo.on(UpdateCommand, { TableName: 'emails-table' }).resolves({ Attributes: { ...email, sentAt: 'now' } });
    dynamo.on(BatchGetCommand).resolves({ Responses: { 'suppressions-table': [] } });
    // Its links and recipient states (emailParts): none yet; each recipient's claim and outcome is an UpdateItem.
    dynamo.on(QueryCommand, { TableName: 'email-parts-table' }).resolves({ Items: [] });
    dynamo.on(UpdateCommand, { TableName: 'email-parts-table' }).resolves({});
    // The tenant's webhook takes email.sent: the send worker fans it out itself.
    const hook = { ...webhook, tenant: 'acct_1#test', mode: 'test', events: ['email.sent'] };
    dynamo.on(QueryCommand, { TableName: 'webhooks-table' }).resolves({ Items: [hook] });

    // Act
    const result = (await handlers.sender(
      sqsEvent([{ emailId: 'email_2' }]),
      lambdaContext('r11'),
    )) as SQSBatchResponse;

    // Assert
    expect(result).toEqual({ batchItemFailures: [] });
    expect(dynamo).toHaveReceivedCommandWith(UpdateCommand, { TableName: 'emails-table', Key: { id: 'email_2' } });
    const sent = sentMessages();
    expect(sent.map((m) => [m.queueUrl, m.body.type ?? m.body.seed?.event])).toEqual([
      [environments.sender.SF_EVENTS_QUEUE_URL, 'email.delivered'],
      [environments.sender.SF_DELIVERIES_QUEUE_URL, 'email.sent'],
    ]);
    const history = dynamo.commandCalls(PutCommand).map((c) => c.args[0].input);
    expect(history).toEqual([
      expect.objectContaining({
        TableName: 'email-events-table',
        Item: expect.objectContaining({
          emailId: 'email_2',
          type: 'email.sent',
          to: 'success@simulator.amazonses.com',
        }),
      }),
    ]);
  });
});

describe('sender entry point: live mode', () => {
  it('sends a scheduled live-mode email through SES with the stack configuration set and its unsubscribe link', async () => {
    // Arrange
    const url = 'https://abc123.execute-api.eu-west-1.amazonaws.com/v1/unsubscribe/tok';
    const email = {
      id: 'email_3',
      accountId: 'acct_1',
      mode: 'live',
      from: 'news@acme.example',
      to: ['bob@example.com'],
      cc: [],
      bcc: [],
      replyTo: [],
      subject: 'Later',
      html: '<p>hi</p>',
      headers: {},
      tags: [],
      createdAt: new Date(NOW - 3_600_000).toISOString(),
      events: [],
      scheduledAt: new Date(NOW).toISOString(),
      unsubscribeUrls: { 'bob@example.com': url },
    };
    dynamo.on(QueryCommand).resolves({ Items: [] });
    dynamo.on(GetCommand).resolves({});
    dynamo.on(GetCommand, { TableName: 'emails-table' }).resolves({ Item: { ...email, scheduleShard: 'scheduled#1' } });
    dynamo.on(UpdateCommand, { TableName: 'emails-table' }).resolves({ Attributes: { ...email, sentAt: 'now' } });
    dynamo.on(BatchGetCommand).resolves({ Responses: { 'suppressions-table': [] } });
    // Its links and recipient states (emailParts): none yet; each recipient's claim and outcome is an UpdateItem.
    dynamo.on(QueryCommand, { TableName: 'email-parts-table' }).resolves({ Items: [] });
    dynamo.on(UpdateCommand, { TableName: 'email-parts-table' }).resolves({});

    // Act
    const result = (await handlers.sender(
      sqsEvent([{ emailId: 'email_3' }]),
      lambdaContext('r12'),
    )) as SQSBatchResponse;

    // Assert
    expect(result).toEqual({ batchItemFailures: [] });
    expect(ses).toHaveReceivedCommandTimes(SendEmailCommand, 1);
    expect(ses).toHaveReceivedCommandWith(SendEmailCommand, {
      ConfigurationSetName: environments.sender.SF_SES_CONFIGURATION_SET,
      Destination: { ToAddresses: ['bob@example.com'] },
      EmailTags: [
        { Name: 'email_id', Value: 'email_3' },
        { Name: 'account_id', Value: 'acct_1' },
        { Name: 'mode', Value: 'live' },
        // The email's own tags travel inline as t-<name> (none here); the marker says they are complete.
        { Name: 'tags', Value: 'inline' },
      ],
    });
    const headers = ses.commandCalls(SendEmailCommand)[0]?.args[0].input.Content?.Simple?.Headers;
    expect(headers).toContainEqual({ Name: 'List-Unsubscribe', Value: `<${url}>` });
    // Its email.sent is the send worker's, processed here: in the history, fanned out to no webhook (none).
    expect(sentMessages()).toEqual([]);
    expect(dynamo).toHaveReceivedCommandWith(PutCommand, {
      TableName: 'email-events-table',
      Item: expect.objectContaining({ emailId: 'email_3', type: 'email.sent', to: 'bob@example.com' }),
    });
  });
});

describe('SES events entry point', () => {
  it('maps an SES bounce from the provider-events queue and processes it there: history, fan-out onto the deliveries queue', async () => {
    // Arrange: the email's tenant has a webhook that takes bounces and failures.
    const body = JSON.parse(
      readFileSync(new URL('../fixtures/ses/bounce-permanent-onaccountsuppressionlist.json', import.meta.url), 'utf8'),
    );
    const tags = body.detail.mail.tags as Record<string, [string]>;
    const [accountId, mode] = [tags.account_id?.[0], tags.mode?.[0]];
    dynamo.on(QueryCommand).resolves({ Items: [] });
    dynamo.on(GetCommand).resolves({});
    const hook = {
      ...webhook,
      tenant: `${accountId}#${mode}`,
      accountId,
      mode,
      events: ['email.bounced', 'email.failed'],
    };
    dynamo.on(QueryCommand, { TableName: 'webhooks-table' }).resolves({ Items: [hook] });

    // Act
    const result = (await handlers.sesEvents(sqsEvent([body]), lambdaContext('r13'))) as SQSBatchResponse;

    // Assert: no events queue; both events' deliveries in one send, both in the email's history.
    expect(result).toEqual({ batchItemFailures: [] });
    const sent = sentMessages();
    expect(sent.map((m) => [m.queueUrl, m.body.seed?.event])).toEqual([
      [environments.sesEvents.SF_DELIVERIES_QUEUE_URL, 'email.bounced'],
      [environments.sesEvents.SF_DELIVERIES_QUEUE_URL, 'email.failed'],
    ]);
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(1);
    const history = dynamo.commandCalls(PutCommand).map((c) => c.args[0].input);
    expect(history.map((put) => [put.TableName, put.Item?.emailId, put.Item?.type])).toEqual([
      ['email-events-table', 'email_01jdxk3m7q8r9s0t1v2w3x4y5z', 'email.bounced'],
      ['email-events-table', 'email_01jdxk3m7q8r9s0t1v2w3x4y5z', 'email.failed'],
    ]);
  });
});

describe('reconciler entry point: pending domains', () => {
  it('asks SES about a pending domain and, once verified, stores it and announces domain.updated', async () => {
    // Arrange
    const pending = {
      tenant: 'acct_1#live',
      id: 'dom_1',
      accountId: 'acct_1',
      mode: 'live',
      name: 'acme.example',
      status: 'pending',
      records: [{ type: 'CNAME', name: 'tok1._domainkey.acme.example', value: 'tok1.dkim.amazonses.com' }],
      createdAt: new Date(NOW - 3_600_000).toISOString(),
      updatedAt: new Date(NOW - 3_600_000).toISOString(),
      pendingShard: 'pending',
    };
    dynamo.on(QueryCommand).resolves({ Items: [] });
    dynamo.on(QueryCommand, { TableName: 'domains-table' }).resolves({ Items: [pending] });
    dynamo
      .on(UpdateCommand, { TableName: 'domains-table' })
      .resolves({ Attributes: { ...pending, status: 'verified' } });
    ses.on(GetEmailIdentityCommand).resolves({
      VerifiedForSendingStatus: true,
      DkimAttributes: { Status: 'SUCCESS' },
      // Tagged by this deployment (the owner its template sets) for this account.
      Tags: [
        { Key: 'sendflow:managed', Value: environments.reconciler.SF_SES_IDENTITY_OWNER },
        { Key: 'sendflow:account', Value: 'acct_1' },
      ],
    });

    // Act
    const result = await handlers.reconciler({}, lambdaContext('r14'));

    // Assert
    expect(result).toMatchObject({ domainsChecked: 1 });
    expect(ses).toHaveReceivedCommandWith(GetEmailIdentityCommand, { EmailIdentity: 'acme.example' });
    expect(sentMessages()).toEqual([
      {
        queueUrl: environments.reconciler.SF_EVENTS_QUEUE_URL,
        delaySeconds: 0,
        body: expect.objectContaining({ type: 'domain.updated', accountId: 'acct_1', mode: 'live' }),
      },
    ]);
  });
});

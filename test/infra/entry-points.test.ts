// The Lambda entry points (lambdas/runtime/aws/*.ts) as Lambda loads them: configuration from the
// environment the api stack sets, DynamoDB through the document client (mocked here), Powertools logs
// carrying the invocation's request id.
import { randomBytes } from 'node:crypto';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeAll, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { generateApiKey, hashApiKey } from '../../lambdas/domain/api-keys';
import { SCOPES } from '../../lambdas/domain/scopes';

type Handler<E, R> = (event: E, context: Context) => Promise<R>;

const dynamo = mockClient(DynamoDBDocumentClient);
let api: Handler<APIGatewayProxyEvent, APIGatewayProxyResult>;
let authorizer: Handler<APIGatewayRequestAuthorizerEvent, APIGatewayAuthorizerResult>;
let stdout: MockInstance;

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

beforeAll(async () => {
  // What the api stack puts in both functions' environment.
  Object.assign(process.env, {
    AWS_REGION: 'eu-west-1',
    SF_TABLE_ACCOUNTS: 'accounts-table',
    SF_TABLE_API_KEYS: 'api-keys-table',
    SF_TABLE_RATE_LIMITS: 'rate-limits-table',
    SF_AUTH_CACHE_TTL: '60',
    SF_IP_RATE_LIMIT: '7',
    POWERTOOLS_LOG_LEVEL: 'DEBUG',
  });
  ({ handler: api } = (await import('../../lambdas/runtime/aws/api')) as unknown as { handler: typeof api });
  ({ handler: authorizer } = (await import('../../lambdas/runtime/aws/authorizer')) as unknown as {
    handler: typeof authorizer;
  });
});

beforeEach(() => {
  dynamo.reset();
  stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
});

afterEach(() => {
  stdout.mockRestore();
});

describe('api entry point', () => {
  it('answers an unknown path with 404, counts the caller IP in the configured table, and logs the request id', async () => {
    // Arrange
    dynamo.on(UpdateCommand).resolves({ Attributes: { n: 1 } });
    const event = {
      resource: '/{proxy+}',
      path: '/nope',
      httpMethod: 'GET',
      headers: {},
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
    const response = await api(event, lambdaContext('lambda-req-1'));

    // Assert
    expect(response.statusCode).toBe(404);
    expect(JSON.parse(response.body)).toMatchObject({ status: 404, code: 'not_found' });
    expect(response.headers).toMatchObject({ 'X-RateLimit-Limit': '7', 'X-Request-Id': 'gw-req-1' });
    expect(dynamo).toHaveReceivedCommandWith(UpdateCommand, { TableName: 'rate-limits-table' });
    expect(logLines()).toContainEqual(
      expect.objectContaining({ service: 'sendflow-api', function_request_id: 'lambda-req-1' }),
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
    const result = await authorizer(event, lambdaContext('lambda-req-2'));

    // Assert
    expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Allow' });
    expect(result.usageIdentifierKey).toBe('U'.repeat(40));
    expect(result.context).toMatchObject({ accountId: 'acct_1', plan: 'growth' });
  });

  it('denies a request without a key and logs why with the request id', async () => {
    // Arrange
    const event = {
      type: 'REQUEST',
      methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/GET/api-keys',
      headers: {},
    } as unknown as APIGatewayRequestAuthorizerEvent;

    // Act
    const result = await authorizer(event, lambdaContext('lambda-req-3'));

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

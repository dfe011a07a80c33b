// Anonymous traffic on the AWS code paths costs no DynamoDB write (issue 9, item 8): the REQUEST authorizer and
// the API Lambda (its fallback 404/405 and a protected route reached without the authorizer's context) wired
// as on AWS (createServices) against dynalite, with every DynamoDB call counted (adapters/dynamodb/call-counter).
// Unknown and malformed keys may be read (one GetItem for an unknown key's hash); nothing is ever written.
import { randomBytes } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CallCounts, countCalls } from '../../lambdas/adapters/dynamodb/call-counter';
import { generateApiKey } from '../../lambdas/domain/api-keys';
import { createAuthorizerHandler } from '../../lambdas/handlers/authorizer';
import { createApiHandler } from '../../lambdas/handlers/http/api';
import { loadConfig, localTableDefaults } from '../../lambdas/runtime/config';
import { type LocalDynamo, startDynalite } from '../../lambdas/runtime/local/dynalite';
import { createTables, localDynamoClient } from '../../lambdas/runtime/local/dynamo';
import { createLogger } from '../../lambdas/runtime/logger';
import { createServices } from '../../lambdas/runtime/services';
import { fixedLinks } from '../support/fakes';

/** The DynamoDB operations that write (or could write) an item. */
const WRITES = ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems'];
const writesOf = (counts: CallCounts) =>
  Object.entries(counts.snapshot({ byTable: true })).filter(([key]) => WRITES.includes(key.split(' ')[0] ?? ''));

/** Well-formed keys nobody issued, malformed ones, and none at all. */
const CALLERS = [
  ['an unknown sf_test_ key', `Bearer ${generateApiKey('test', randomBytes)}`],
  ['an unknown sf_live_ key', `Bearer ${generateApiKey('live', randomBytes)}`],
  ['a malformed key', 'Bearer sf_test_short'],
  ['a key of another service', `Bearer sk_live_${'x'.repeat(40)}`],
  ['a non-Bearer header', 'Basic dXNlcjpwYXNz'],
  ['no Authorization header', undefined],
] as const;

const context = { awsRequestId: 'lambda-req' } as Context as Parameters<ReturnType<typeof createApiHandler>>[1];
let ips = 0;

function apiEvent(
  httpMethod: string,
  resource: string,
  path: string,
  authorization: string | undefined,
): APIGatewayProxyEvent {
  return {
    resource,
    path,
    httpMethod,
    headers: authorization ? { Authorization: authorization } : {},
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: resource === '/{proxy+}' ? { proxy: path.slice(1) } : null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    // One IP per request: the per-IP window (3 a second here) is tested on its own below.
    requestContext: { requestId: 'gw-req', path: `/v1${path}`, identity: { sourceIp: `198.51.100.${++ips}` } },
  } as unknown as APIGatewayProxyEvent;
}

describe('anonymous traffic on the AWS code paths: no DynamoDB write', () => {
  let dynamo: LocalDynamo;
  let client: DynamoDBClient;
  let counts: CallCounts;
  let services: ReturnType<typeof createServices>;

  beforeAll(async () => {
    dynamo = await startDynalite(':memory:');
    client = localDynamoClient(dynamo.endpoint);
    const config = loadConfig({ POWERTOOLS_LOG_LEVEL: 'SILENT', SF_IP_RATE_LIMIT: '3' }, localTableDefaults('anon'));
    await createTables(client, config.tables);
    const refuse = () => Promise.reject(new Error('not used by anonymous requests'));
    services = createServices(config, client, createLogger(config), {
      deliveryQueue: { send: refuse },
      recoveryQueue: { send: refuse },
      retries: { schedule: refuse },
      events: { publish: refuse },
      sendScheduler: { schedule: refuse, reschedule: refuse, cancel: refuse },
      authorizerCache: { flush: refuse },
      links: fixedLinks(),
    });
  });

  afterAll(async () => {
    client.destroy();
    await dynamo.close();
  });

  beforeEach(() => {
    counts?.detach();
    counts = countCalls(client);
  });

  describe('the REQUEST authorizer', () => {
    it.each(CALLERS)('denies %s and writes nothing', async (_name, authorization) => {
      // Arrange
      const authorizer = createAuthorizerHandler(services);
      const event = {
        type: 'REQUEST',
        methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/GET/api-keys',
        headers: authorization ? { Authorization: authorization } : {},
      } as unknown as APIGatewayRequestAuthorizerEvent;

      // Act
      const result = await authorizer(event);

      // Assert
      expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Deny' });
      expect(writesOf(counts)).toEqual([]);
    });
  });

  describe('the API Lambda without the authorizer’s context', () => {
    const requests = [
      ['a protected route (401)', 'GET', '/api-keys', '/api-keys', 401],
      ['an undeclared method on a declared path, the ANY fallback (405)', 'PUT', '/webhooks', '/webhooks', 405],
      ['an unknown path, the {proxy+} fallback (404)', 'GET', '/{proxy+}', '/nope', 404],
      ['an unknown path below a route (404)', 'POST', '/{proxy+}', '/emails/x/y/z', 404],
    ] as const;
    const cases = requests.flatMap(([route, method, resource, path, status]) =>
      CALLERS.map(([caller, authorization]) => [route, caller, method, resource, path, status, authorization] as const),
    );

    it.each(cases)('%s with %s: the right status, X-RateLimit-* headers, no write', async (...args) => {
      // Arrange
      const [, , method, resource, path, status, authorization] = args;
      const api = createApiHandler(services);

      // Act
      const response = await api(apiEvent(method, resource, path, authorization), context);

      // Assert
      expect(response.statusCode).toBe(status);
      expect(JSON.parse(response.body)).toMatchObject({ status });
      expect(response.headers).toMatchObject({ 'X-RateLimit-Limit': '3' });
      expect(writesOf(counts)).toEqual([]);
    });

    it('still refuses the 4th anonymous request of a second from one IP with 429, writing nothing', async () => {
      // Arrange: a fresh handler and IP; the window is one second, so start early in one.
      const api = createApiHandler(services);
      const intoWindow = Date.now() % 1000;
      if (intoWindow > 500) await new Promise((r) => setTimeout(r, 1000 - intoWindow + 5));
      const event = () => {
        const e = apiEvent('GET', '/api-keys', '/api-keys', CALLERS[0][1]);
        (e.requestContext.identity as { sourceIp: string }).sourceIp = '203.0.113.99';
        return e;
      };

      // Act
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await api(event(), context)).statusCode);

      // Assert
      expect(statuses).toEqual([401, 401, 401, 429]);
      expect(writesOf(counts)).toEqual([]);
    });
  });
});

// Template assertions for the api stack (lib/api-stack.ts): routes, authorizer, fallbacks, usage plans,
// gateway responses, functions, IAM, WAF and outputs.
import { randomBytes } from 'node:crypto';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../lambdas/domain/api-keys';
import { PLANS } from '../../lambdas/domain/plans';
import { routes, tableEnvVar, tableNames } from '../../lambdas/manifest';
import { WELL_FORMED_BEARER } from '../../lib/constructs/firewall';
import { gatewayErrors } from '../../lib/constructs/gateway-responses';
import { outputNames } from '../../lib/outputs';
import { invokedFunction, type MethodView, methods, only, synthSendflow } from './synth';

let api: Template;
let allMethods: MethodView[];
let authorizerId: string;
let apiFunctionId: string;
let publicFunctionId: string;
let authorizerFunctionId: string;
let dispatcherFunctionId: string;
let deliveryFunctionId: string;

beforeAll(() => {
  ({ api } = synthSendflow());
  allMethods = methods(api);
  authorizerId = only(api, 'AWS::ApiGateway::Authorizer').id;
  const functions = api.findResources('AWS::Lambda::Function');
  const byService = (service: string) =>
    Object.keys(functions).find(
      (id) => functions[id]?.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME === service,
    ) ?? '';
  apiFunctionId = byService('sendflow-api');
  publicFunctionId = byService('sendflow-public');
  authorizerFunctionId = byService('sendflow-authorizer');
  dispatcherFunctionId = byService('sendflow-dispatcher');
  deliveryFunctionId = byService('sendflow-delivery');
});

/** The function an AWS_PROXY integration URI invokes (through its `live` alias). */
function integrationTarget(method: MethodView): string {
  return invokedFunction(api, (method.properties.Integration as { Uri: unknown }).Uri) ?? '';
}

describe('REST API', () => {
  it('takes usage-plan keys from the authorizer', () => {
    api.hasResourceProperties('AWS::ApiGateway::RestApi', { ApiKeySourceType: 'AUTHORIZER' });
  });

  it('deploys stage v1 with access logs and error logging, without per-method metrics or X-Ray tracing', () => {
    // Per-method (detailed) metrics bill a custom metric per method and status series that nothing reads; the
    // stage's own metrics (Count, 4XX, 5XX, Latency by API name), which the alarms and dashboard use, stay.
    api.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'v1',
      TracingEnabled: false,
      AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('\\$context\\.requestId') },
      // The public methods' own throttles repeat these settings: test/infra/public-isolation.test.ts.
      MethodSettings: Match.arrayWith([
        Match.objectLike({
          HttpMethod: '*',
          ResourcePath: '/*',
          LoggingLevel: 'ERROR',
          MetricsEnabled: false,
          DataTraceEnabled: false,
        }),
      ]),
    });
  });

  it('never writes the Authorization header to the access log', () => {
    const stage = only(api, 'AWS::ApiGateway::Stage').properties;
    expect((stage.AccessLogSetting as { Format: string }).Format).not.toMatch(/authorization/i);
  });
});

describe('routes', () => {
  const authorized = routes.filter((route) => route.access !== 'public');
  const open = routes.filter((route) => route.access === 'public');

  it.each(authorized.map((route) => [route.method, route.path, route]))(
    '%s %s is its own method behind the authorizer with an API key required',
    (_method, _path, route) => {
      const method = allMethods.find((m) => m.path === route.path && m.httpMethod === route.method);
      expect(method).toBeDefined();
      expect(method?.properties).toMatchObject({
        AuthorizationType: 'CUSTOM',
        AuthorizerId: { Ref: authorizerId },
        ApiKeyRequired: true,
        OperationName: route.id,
        Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' },
      });
      expect(integrationTarget(method as MethodView)).toBe(apiFunctionId);
    },
  );

  it.each(open.map((route) => [route.method, route.path, route]))(
    '%s %s (public) is its own method without authorizer or API key, on the public function',
    (_method, _path, route) => {
      const method = allMethods.find((m) => m.path === route.path && m.httpMethod === route.method);
      expect(method?.properties).toMatchObject({
        AuthorizationType: 'NONE',
        ApiKeyRequired: false,
        OperationName: route.id,
        Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' },
      });
      expect(method?.properties.AuthorizerId).toBeUndefined();
      expect(integrationTarget(method as MethodView)).toBe(publicFunctionId);
    },
  );

  it('GET /event-types (the event catalog, any valid key) is a resource with its method behind the authorizer', () => {
    const method = allMethods.find((m) => m.path === '/event-types' && m.httpMethod === 'GET');
    expect(method?.properties).toMatchObject({
      AuthorizationType: 'CUSTOM',
      AuthorizerId: { Ref: authorizerId },
      ApiKeyRequired: true,
      OperationName: 'listEventTypes',
    });
    expect(integrationTarget(method as MethodView)).toBe(apiFunctionId);
    api.hasResourceProperties('AWS::ApiGateway::Resource', { PathPart: 'event-types' });
  });

  it('declares no other authorized methods than the non-public manifest routes', () => {
    const declared = allMethods.filter((m) => m.properties.AuthorizationType !== 'NONE');
    expect(declared.map((m) => `${m.httpMethod} ${m.path}`).sort()).toEqual(
      authorized.map((r) => `${r.method} ${r.path}`).sort(),
    );
  });
});

describe('404/405 fallbacks', () => {
  const resourcesWithRoutes = () => {
    const paths = new Set<string>(['/']);
    for (const route of routes) {
      const segments = route.path.split('/').filter(Boolean);
      for (let i = 1; i <= segments.length; i++) paths.add(`/${segments.slice(0, i).join('/')}`);
    }
    return [...paths];
  };

  it('has an open ANY on the root, on every route resource and its parents, and on /{proxy+}', () => {
    const anyPaths = allMethods.filter((m) => m.httpMethod === 'ANY').map((m) => m.path);
    expect(anyPaths.sort()).toEqual([...resourcesWithRoutes(), '/{proxy+}'].sort());
  });

  it('sends fallbacks to the public function (the API code) without authorizer or API key', () => {
    for (const method of allMethods.filter((m) => m.httpMethod === 'ANY')) {
      expect(method.properties).toMatchObject({ AuthorizationType: 'NONE', ApiKeyRequired: false });
      expect(method.properties.AuthorizerId).toBeUndefined();
      expect(integrationTarget(method)).toBe(publicFunctionId);
    }
  });

  it('grants API Gateway one API-wide invoke permission per function instead of one per method', () => {
    for (const fn of [apiFunctionId, publicFunctionId]) {
      const permissions = Object.values(api.findResources('AWS::Lambda::Permission')).filter(
        (p) => invokedFunction(api, p.Properties.FunctionName) === fn,
      );
      expect(permissions).toHaveLength(1);
      expect(JSON.stringify(permissions[0]?.Properties.SourceArn)).toContain('/*/*/*');
    }
  });
});

describe('authorizer', () => {
  it('is a REQUEST authorizer keyed on the Authorization header with a 60 s cache by default', () => {
    api.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'REQUEST',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: 60,
    });
    expect(invokedFunction(api, only(api, 'AWS::ApiGateway::Authorizer').properties.AuthorizerUri)).toBe(
      authorizerFunctionId,
    );
  });

  it('takes the cache TTL from the sendflow:authorizerCacheTtlSeconds context', () => {
    // Act
    const { api: custom } = synthSendflow({ 'sendflow:authorizerCacheTtlSeconds': '300' });

    // Assert
    custom.hasResourceProperties('AWS::ApiGateway::Authorizer', { AuthorizerResultTtlInSeconds: 300 });
    custom.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ SF_AUTH_CACHE_TTL: '300' }) },
    });
  });
});

describe('usage plans', () => {
  it.each([
    ['free', 10, 20],
    ['starter', 50, 100],
    ['growth', 100, 200],
    ['scale', 500, 1000],
  ] as const)('%s throttles at %i rps with burst %i on stage v1', (name, rate, burst) => {
    expect(PLANS[name]).toMatchObject({ requestsPerSecond: rate, burst });
    const stage = only(api, 'AWS::ApiGateway::Stage').id;
    api.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
      UsagePlanName: `Sendflow-prod-Api-${name}`,
      Throttle: { RateLimit: rate, BurstLimit: burst },
      ApiStages: [Match.objectLike({ Stage: { Ref: stage } })],
    });
  });

  it('has exactly four plans and no request quota', () => {
    const plans = Object.values(api.findResources('AWS::ApiGateway::UsagePlan'));
    expect(plans).toHaveLength(4);
    for (const plan of plans) expect(plan.Properties.Quota).toBeUndefined();
  });
});

describe('gateway responses', () => {
  const responses = () =>
    new Map(
      Object.values(api.findResources('AWS::ApiGateway::GatewayResponse')).map((r) => [
        r.Properties.ResponseType as string,
        r.Properties as {
          StatusCode: string;
          ResponseParameters: Record<string, string>;
          ResponseTemplates: Record<string, string>;
        },
      ]),
    );

  it.each([
    ['UNAUTHORIZED', '401', 'unauthorized', 'missing_api_key'],
    ['ACCESS_DENIED', '401', 'unauthorized', 'invalid_api_key'],
    ['INVALID_API_KEY', '403', 'forbidden', 'forbidden'],
    ['MISSING_AUTHENTICATION_TOKEN', '404', 'not_found', 'not_found'],
    ['RESOURCE_NOT_FOUND', '404', 'not_found', 'not_found'],
    ['THROTTLED', '429', 'rate_limited', 'rate_limit_exceeded'],
    ['QUOTA_EXCEEDED', '429', 'rate_limited', 'rate_limit_exceeded'],
    ['REQUEST_TOO_LARGE', '413', 'payload_too_large', 'payload_too_large'],
    ['WAF_FILTERED', '403', 'forbidden', 'security_error'],
    ['DEFAULT_4XX', '400', 'bad_request', 'bad_request'],
    ['DEFAULT_5XX', '500', 'internal_error', 'internal_server_error'],
  ])('%s answers %s with code %s (Resend name %s) in the JSON error shape', (type, status, code, name) => {
    const response = responses().get(type);
    expect(response?.StatusCode).toBe(status);
    expect(response?.ResponseParameters['gatewayresponse.header.Content-Type']).toBe("'application/json'");
    const body = JSON.parse(response?.ResponseTemplates['application/json'] ?? '{}');
    expect(body).toMatchObject({ status: Number(status), code, name, statusCode: Number(status) });
    expect(typeof body.error).toBe('string');
    expect(body.message).toBe(body.error);
  });

  it('THROTTLED carries Retry-After: 1, X-RateLimit-Remaining: 0 and retry_after 1', () => {
    const throttled = responses().get('THROTTLED');
    expect(throttled?.ResponseParameters).toMatchObject({
      'gatewayresponse.header.Retry-After': "'1'",
      'gatewayresponse.header.X-RateLimit-Remaining': "'0'",
    });
    expect(JSON.parse(throttled?.ResponseTemplates['application/json'] ?? '{}')).toEqual({
      error: expect.any(String),
      status: 429,
      code: 'rate_limited',
      name: 'rate_limit_exceeded',
      message: expect.any(String),
      statusCode: 429,
      retry_after: 1,
    });
  });

  it('every 429 has a Retry-After header equal to its retry_after', () => {
    for (const [, response] of responses()) {
      if (response.StatusCode !== '429') continue;
      const body = JSON.parse(response.ResponseTemplates['application/json'] ?? '{}');
      expect(response.ResponseParameters['gatewayresponse.header.Retry-After']).toBe(`'${body.retry_after}'`);
    }
  });

  it('the 5xx body reveals nothing but the generic message', () => {
    const body = JSON.parse(responses().get('DEFAULT_5XX')?.ResponseTemplates['application/json'] ?? '{}');
    expect(body).toEqual({
      error: 'Internal server error.',
      status: 500,
      code: 'internal_error',
      name: 'internal_server_error',
      message: 'Internal server error.',
      statusCode: 500,
    });
  });

  it('declares one response per configured type', () => {
    expect([...responses().keys()].sort()).toEqual(gatewayErrors.map((e) => e.type.responseType).sort());
  });
});

describe('functions', () => {
  /** Ours: built by NodeFunction, each with its service name (not CDK's own LogRetention function). */
  const ourFunctions = () =>
    Object.values(api.findResources('AWS::Lambda::Function')).filter(
      (fn) => fn.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME,
    );

  it('run Node 22 on arm64 with the project bundling conventions', () => {
    const functions = ourFunctions();
    const services = functions.map((fn) => fn.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME).sort();
    expect(services).toEqual(
      ['api', 'authorizer', 'dispatcher', 'delivery', 'public', 'reconciler', 'sender', 'ses-events']
        .map((n) => `sendflow-${n}`)
        .sort(),
    );
    for (const fn of functions) {
      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
      });
    }
  });

  it('give the API function every table, the cache TTL and its service name', () => {
    const fn = api.findResources('AWS::Lambda::Function')[apiFunctionId];
    const variables = fn?.Properties.Environment.Variables as Record<string, unknown>;
    for (const table of tableNames) expect(variables[tableEnvVar(table)]).toBeDefined();
    expect(variables).toMatchObject({ SF_AUTH_CACHE_TTL: '60', POWERTOOLS_SERVICE_NAME: 'sendflow-api' });
  });

  it('log to their own log groups with a retention', () => {
    const groups = Object.values(api.findResources('AWS::Logs::LogGroup'));
    expect(groups.length).toBeGreaterThanOrEqual(3);
    for (const group of groups) expect(group.Properties.RetentionInDays).toBe(30);
    for (const fn of ourFunctions()) {
      // Format and levels, and every other function and log group: test/infra/logging.test.ts.
      expect(fn.Properties.LoggingConfig).toEqual(
        expect.objectContaining({ LogGroup: { Ref: expect.stringMatching(/Logs/) } }),
      );
    }
  });

  it('use roles without AWS managed policies (but the service roles API Gateway and CodeDeploy document)', () => {
    for (const [id, role] of Object.entries(api.findResources('AWS::IAM::Role'))) {
      if (id.includes('CloudWatchRole')) continue;
      // CodeDeploy's role for Lambda deployments: the Limited variant (it may invoke only CodeDeployHook_* hooks).
      if (id.startsWith('Deployments')) {
        expect(JSON.stringify(role.Properties.ManagedPolicyArns)).toMatch(
          /^\[\{"Fn::Join":\["",\["arn:",\{"Ref":"AWS::Partition"\},":iam::aws:policy\/service-role\/AWSCodeDeployRoleForLambdaLimited"\]\]\}\]$/,
        );
        continue;
      }
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });
});

describe('least privilege', () => {
  /** Actions each function may perform on each table, by the SSM parameter naming the table. */
  function tableActions(functionId: string): Record<string, string[]> {
    const fn = api.findResources('AWS::Lambda::Function')[functionId] ?? {};
    const role = (fn.Properties.Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
    const policy = Object.values(api.findResources('AWS::IAM::Policy')).find((p) =>
      (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === role),
    );
    const result: Record<string, string[]> = {};
    for (const statement of policy?.Properties.PolicyDocument.Statement ?? []) {
      for (const resource of [statement.Resource].flat()) {
        const table = /tables(\w+?)[0-9A-F]{8,}/.exec(JSON.stringify(resource))?.[1];
        if (!table) continue;
        result[table] = [...new Set([...(result[table] ?? []), ...[statement.Action].flat()])].sort();
      }
    }
    return result;
  }
  const writes = ['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'];

  it('lets the authorizer GetItem on accounts and API keys, and nothing else', () => {
    expect(tableActions(authorizerFunctionId)).toEqual({
      accounts: ['dynamodb:GetItem'],
      apiKeys: ['dynamodb:GetItem'],
    });
  });

  it('grants no function Scan, DescribeTable or ConditionCheckItem (none calls them: test/iam)', () => {
    const policies = JSON.stringify(api.findResources('AWS::IAM::Policy'));
    for (const action of ['dynamodb:Scan', 'dynamodb:DescribeTable', 'dynamodb:ConditionCheckItem']) {
      expect(policies).not.toContain(action);
    }
  });

  it('gives the API exactly the table actions its routes issue (test/iam proves each is called)', () => {
    const [get, batchGet, query, put, update, del, batchWrite] = [
      'dynamodb:GetItem',
      'dynamodb:BatchGetItem',
      'dynamodb:Query',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:BatchWriteItem',
    ];
    const sorted = (...actions: string[]) => actions.sort();
    expect(tableActions(apiFunctionId)).toEqual({
      // The settings page's address for notices: an UpdateItem of that attribute only (next test).
      accounts: sorted(get, update),
      apiKeys: sorted(get, put, query, update),
      // A scale plan's window is counted on 4 items: one UpdateItem, the others' counts read in one BatchGetItem.
      rateLimits: sorted(batchGet, get, update),
      webhooks: sorted(del, get, put, query, update),
      deliveries: sorted(batchGet, get, put, query, update),
      emails: sorted(batchGet, batchWrite, get, put, query, update),
      // Bodies and links written once at accept, read with their states; never a recipient's change.
      emailParts: sorted(batchWrite, get, query),
      // The history read (table and byTime), the status page (byStatus), a cancel's note (rank read, then written).
      emailEvents: sorted(get, query, update),
      idempotency: sorted(del, get, put, update),
      // /v1/suppressions: read by key, listed, added, removed; one-click unsubscribe's writes.
      suppressions: sorted(batchGet, del, put, query, update),
      domains: sorted(del, get, put, query, update),
      contacts: sorted(del, get, query, update),
      sessions: sorted(del, get, put, update),
      apiRequests: sorted(get, put, query),
      // Listen sessions: opened (the cap's Query first), kept alive by polls, read, ended; their events queried.
      listenSessions: sorted(del, put, query, update),
      // Received emails: listed per tenant and read by key; never written by the API.
      inboundEmails: sorted(get, query),
      // Templates: records, alias claims and versions read by key, put, deleted; listed and counted (Query).
      templates: sorted(del, get, put, query),
      // Reputation: a send's standing check and the metrics route's ranges (Query); never written by the API.
      reputation: [query],
    });
  });

  it("lets the API update an account's address for notices and external id and no other attribute (plans stay the admin CLI's)", () => {
    const fn = api.findResources('AWS::Lambda::Function')[apiFunctionId] ?? {};
    const role = (fn.Properties.Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
    const policy = Object.values(api.findResources('AWS::IAM::Policy')).find((p) =>
      (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === role),
    );
    const onAccounts = (policy?.Properties.PolicyDocument.Statement ?? []).filter(
      (statement: { Resource: unknown }) =>
        /tables(\w+?)[0-9A-F]{8,}/.exec(JSON.stringify(statement.Resource))?.[1] === 'accounts',
    );
    const writing = onAccounts.filter((statement: { Action: string | string[] }) =>
      [statement.Action].flat().some((action) => writes.includes(action)),
    );
    expect(writing).toEqual([
      expect.objectContaining({
        Action: 'dynamodb:UpdateItem',
        Condition: {
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['id', 'noticeEmail', 'awsExternalId'] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE', 'UPDATED_OLD', 'UPDATED_NEW'] },
        },
      }),
    ]);
  });

  it('lets the API manage suppressions item by item (/v1/suppressions, one-click unsubscribe), never in bulk', () => {
    const actions = tableActions(apiFunctionId).suppressions ?? [];
    expect(actions).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:DeleteItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
    for (const bulk of ['dynamodb:BatchWriteItem', 'dynamodb:Scan']) expect(actions).not.toContain(bulk);
  });

  it('lets the dispatcher add history items and note statuses (rank read, conditional writes) and never touch the email items', () => {
    const actions = tableActions(dispatcherFunctionId);
    expect(actions.emailEvents).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    expect(actions.emails).toBeUndefined();
  });

  it("lets the dispatcher read an account's listen sessions and put events on them, nothing more (no delete, no batch)", () => {
    expect(tableActions(dispatcherFunctionId).listenSessions).toEqual(['dynamodb:PutItem', 'dynamodb:Query']);
    for (const id of [authorizerFunctionId]) expect(tableActions(id).listenSessions).toBeUndefined();
  });

  it('lets the API query the history (table, byTime) and the status index (byStatus), and read and update status items only', () => {
    const policies = JSON.stringify(api.findResources('AWS::IAM::Policy'));
    expect(policies).toContain('/index/byTime');
    expect(policies).toContain('/index/byStatus');
    expect(tableActions(apiFunctionId).emailEvents).toEqual([
      'dynamodb:GetItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
  });

  it("lets the delivery worker take a paced webhook's start on the rate-limits table (UpdateItem only, no read)", () => {
    expect(tableActions(deliveryFunctionId).rateLimits).toEqual(['dynamodb:UpdateItem']);
  });

  it('names the indexes it queries instead of index/*', () => {
    const policies = JSON.stringify(api.findResources('AWS::IAM::Policy'));
    expect(policies).not.toContain('/index/*');
    for (const index of ['byAccount', 'byTenant', 'byStatusKey', 'byDueShard'])
      expect(policies).toContain(`/index/${index}`);
  });
});

describe('WAF', () => {
  it('associates a regional web ACL with the v1 stage', () => {
    const acl = only(api, 'AWS::WAFv2::WebACL').id;
    const stage = only(api, 'AWS::ApiGateway::Stage').id;
    api.hasResourceProperties('AWS::WAFv2::WebACL', { Scope: 'REGIONAL', DefaultAction: { Allow: {} } });
    const association = only(api, 'AWS::WAFv2::WebACLAssociation').properties;
    expect(association.WebACLArn).toEqual({ 'Fn::GetAtt': [acl, 'Arn'] });
    expect(JSON.stringify(association.ResourceArn)).toContain(`{"Ref":"${stage}"}`);
  });

  it('limits requests that reach no authorizer per client IP and answers 429 in our shape', () => {
    const acl = only(api, 'AWS::WAFv2::WebACL').properties as {
      Rules: { Name: string; Action?: unknown; Statement: { RateBasedStatement?: Record<string, unknown> } }[];
      CustomResponseBodies: Record<string, { ContentType: string; Content: string }>;
    };
    const anonymous = acl.Rules.find((r) => r.Name === 'AnonymousPerIp');
    expect(anonymous?.Statement.RateBasedStatement).toMatchObject({
      AggregateKeyType: 'IP',
      EvaluationWindowSec: 60,
      Limit: 20 * 60,
      ScopeDownStatement: {
        AndStatement: {
          // Anything but a well-formed key on a method behind the authorizer (test/infra/firewall.test.ts
          // evaluates the statement for every method of the API).
          Statements: expect.arrayContaining([
            {
              NotStatement: {
                Statement: {
                  AndStatement: {
                    Statements: expect.arrayContaining([
                      {
                        RegexMatchStatement: {
                          FieldToMatch: { SingleHeader: { Name: 'authorization' } },
                          RegexString: WELL_FORMED_BEARER,
                          TextTransformations: [{ Priority: 0, Type: 'NONE' }],
                        },
                      },
                    ]),
                  },
                },
              },
            },
          ]),
        },
      },
    });
    expect(anonymous?.Action).toEqual({
      Block: {
        CustomResponse: {
          ResponseCode: 429,
          CustomResponseBodyKey: 'rate_limited',
          ResponseHeaders: [{ Name: 'Retry-After', Value: '60' }],
        },
      },
    });
    const body = acl.CustomResponseBodies.rate_limited;
    expect(body?.ContentType).toBe('APPLICATION_JSON');
    expect(JSON.parse(body?.Content ?? '{}')).toEqual({
      error: expect.any(String),
      status: 429,
      code: 'rate_limited',
      name: 'rate_limit_exceeded',
      message: expect.any(String),
      statusCode: 429,
      retry_after: 60,
    });
  });
});

describe('WAF key pattern', () => {
  // The pattern is PCRE for WAF; this subset means the same in JavaScript.
  const wellFormed = new RegExp(WELL_FORMED_BEARER);

  it('recognizes every key the app issues, in both modes and any Bearer casing', () => {
    for (const mode of ['live', 'test'] as const) {
      const key = generateApiKey(mode, randomBytes);
      expect(wellFormed.test(`Bearer ${key}`)).toBe(true);
      expect(wellFormed.test(`bearer ${key}`)).toBe(true);
    }
  });

  it('treats missing, foreign and malformed credentials as anonymous', () => {
    for (const header of [
      '',
      'Basic dXNlcjpwYXNz',
      'Bearer sf_test_short',
      'Bearer sk_live_0123456789012345678901234567890123',
    ]) {
      expect(wellFormed.test(header)).toBe(false);
    }
  });
});

describe('outputs', () => {
  it('publishes the URL, every table, every usage plan and the queues under the names the admin CLI reads', () => {
    const outputs = api.findOutputs('*');
    const expected = [
      outputNames.apiUrl,
      outputNames.restApiId,
      ...Object.values(outputNames.tables),
      ...Object.values(outputNames.usagePlans),
      ...Object.values(outputNames.queues),
      ...Object.values(outputNames.deadLetterQueues),
      outputNames.sesConfigurationSet,
      outputNames.alarmTopic,
      outputNames.notifyTopic,
    ];
    expect(Object.keys(outputs).sort()).toEqual(expected.sort());
    expect(Object.keys(outputNames.tables).sort()).toEqual([...tableNames].sort());
    expect(outputNames.tables).toMatchObject({
      accounts: 'TableAccounts',
      apiKeys: 'TableApiKeys',
      rateLimits: 'TableRateLimits',
      webhooks: 'TableWebhooks',
      deliveries: 'TableDeliveries',
      emails: 'TableEmails',
      idempotency: 'TableIdempotency',
      suppressions: 'TableSuppressions',
    });
    expect(outputNames.queues).toEqual({
      events: 'EventsQueueUrl',
      deliveries: 'DeliveriesQueueUrl',
      sends: 'SendsQueueUrl',
      providerEvents: 'ProviderEventsQueueUrl',
    });
    expect(outputNames.deadLetterQueues).toEqual({
      events: 'EventsDlqUrl',
      deliveries: 'DeliveriesDlqUrl',
      retrySchedules: 'RetryScheduleDlqUrl',
      reconcileSchedule: 'ReconcileScheduleDlqUrl',
      sends: 'SendsDlqUrl',
      sendSchedules: 'SendScheduleDlqUrl',
      providerEvents: 'ProviderEventsDlqUrl',
      slowDeliveries: 'SlowDeliveriesDlqUrl',
    });
    expect(outputNames.alarmTopic).toBe('AlarmTopicArn');
    expect(outputNames.notifyTopic).toBe('NotifyTopicArn');
    expect(outputs[outputNames.sesConfigurationSet]?.Value).toBe('Sendflow-prod-Api-email-events');
  });

  it('points each queue output at its queue', () => {
    const queues = api.findResources('AWS::SQS::Queue');
    const outputs = api.findOutputs('*');
    const target = (name: string) => outputs[name]?.Value.Ref as string;
    expect(queues[target(outputNames.queues.events)]?.Properties.RedrivePolicy).toBeDefined();
    expect(queues[target(outputNames.queues.deliveries)]?.Properties.RedrivePolicy).toBeDefined();
    expect(target(outputNames.queues.events)).toMatch(/EventsQueue/);
    expect(target(outputNames.queues.deliveries)).toMatch(/DeliveriesQueue/);
    expect(target(outputNames.deadLetterQueues.events)).toMatch(/EventsDlq/);
    expect(target(outputNames.deadLetterQueues.deliveries)).toMatch(/DeliveriesDlq/);
    expect(target(outputNames.deadLetterQueues.retrySchedules)).toMatch(/RetryScheduleDlq/);
    expect(target(outputNames.deadLetterQueues.reconcileSchedule)).toMatch(/ReconcileScheduleDlq/);
    expect(queues[target(outputNames.queues.sends)]?.Properties.RedrivePolicy).toBeDefined();
    expect(target(outputNames.queues.sends)).toMatch(/SendsQueue/);
    expect(target(outputNames.deadLetterQueues.sends)).toMatch(/SendsDlq/);
    expect(target(outputNames.deadLetterQueues.sendSchedules)).toMatch(/SendScheduleDlq/);
    expect(target(outputNames.queues.providerEvents)).toMatch(/ProviderEventsQueue/);
    expect(target(outputNames.deadLetterQueues.providerEvents)).toMatch(/ProviderEventsDlq/);
    expect(target(outputNames.deadLetterQueues.slowDeliveries)).toMatch(/SlowDeliveriesDlq/);
  });

  it('points each usage-plan output at its plan', () => {
    const plans = api.findResources('AWS::ApiGateway::UsagePlan');
    const outputs = api.findOutputs('*');
    for (const [plan, output] of Object.entries(outputNames.usagePlans)) {
      const ref: string = outputs[output]?.Value.Ref;
      expect(plans[ref]?.Properties.UsagePlanName).toBe(`Sendflow-prod-Api-${plan}`);
    }
  });

  it('exports nothing, so no other stack can pin a value', () => {
    for (const output of Object.values(api.findOutputs('*'))) expect(output.Export).toBeUndefined();
  });
});

describe('authorizer cache flush', () => {
  it('lets the API flush only its own stage authorizer cache, and tells it the REST API id', async () => {
    const { api } = await synthSendflow();
    // A role's statements past the inline policy's 10 KB go to its overflow managed policy (CDK): both count.
    const policies = JSON.stringify([
      api.findResources('AWS::IAM::Policy'),
      api.findResources('AWS::IAM::ManagedPolicy'),
    ]);
    expect(policies).toContain('"apigateway:DELETE"');
    expect(policies).toMatch(/\/stages\/v1\/cache\/authorizers/);
    expect(policies.match(/apigateway:DELETE/g)).toHaveLength(1);
    const fns = Object.values(api.findResources('AWS::Lambda::Function')) as {
      Properties: { Environment?: { Variables?: Record<string, unknown> } };
    }[];
    // The API function and the public function (the dashboard revokes keys too), which share one role.
    expect(fns.filter((f) => f.Properties.Environment?.Variables?.SF_REST_API_ID)).toHaveLength(2);
  });
});

// AWS destinations (docs/webhooks.md): the delivery function and the API (test sends, manual retries) may call
// sts:AssumeRole on roles only with an external id present, no other function may, and the principal customers'
// trust policies name reaches the functions that show or use it (test/iam/assume-role.test.ts simulates it).
type StsResources = Record<string, { Properties: Record<string, unknown> }>;

/** Service name (POWERTOOLS_SERVICE_NAME) → its statements naming sts:AssumeRole, and its environment. */
function stsGrantsByService() {
  const functions = api.findResources('AWS::Lambda::Function') as StsResources;
  // A role's statements past the inline policy's 10 KB go to its overflow managed policy (CDK): both count.
  const policies = {
    ...api.findResources('AWS::IAM::Policy'),
    ...api.findResources('AWS::IAM::ManagedPolicy'),
  } as StsResources;
  return Object.values(functions).flatMap((fn) => {
    const env = (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    const service = String(env.POWERTOOLS_SERVICE_NAME ?? '');
    if (!service.startsWith('sendflow-')) return [];
    const role = (fn.Properties.Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
    const statements = Object.values(policies)
      .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === role))
      .flatMap((p) => (p.Properties.PolicyDocument as { Statement: { Action: unknown }[] }).Statement)
      .filter((s) => JSON.stringify(s.Action).includes('sts:'));
    return [{ service, statements, env }];
  });
}

describe('AWS destinations: sts:AssumeRole', () => {
  it('is granted to the delivery function and the API on any role, only with sts:ExternalId present', () => {
    const granted = stsGrantsByService().filter((f) => f.statements.length);
    expect(granted.map((f) => f.service).sort()).toEqual(['sendflow-api', 'sendflow-delivery', 'sendflow-public']);
    for (const { statements } of granted) {
      expect(statements).toEqual([
        {
          Effect: 'Allow',
          Action: 'sts:AssumeRole',
          Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::*:role/*']] },
          Condition: { Null: { 'sts:ExternalId': 'false' } },
        },
      ]);
    }
  });

  it("tells them the principal customers' trust policies name: this account", () => {
    for (const { service, env } of stsGrantsByService().filter((f) => f.statements.length)) {
      expect([service, env.SF_AWS_TRUST_PRINCIPAL]).toEqual([
        service,
        { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':root']] },
      ]);
    }
  });
});

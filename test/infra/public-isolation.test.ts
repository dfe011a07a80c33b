// Public routes cannot starve the API (issue 29, item 7). Every method without the authorizer (the manifest's public
// routes: dashboard, one-click unsubscribe, contact confirmation, the API reference; and the 404/405 fallbacks)
// runs on the public function, whose reserved concurrency is also its ceiling, so a flood of them takes at most
// that share; the API function runs only for requests the authorizer let through, on its own reservation. The
// stage throttles every method by default, and the public methods tighter.
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../lambdas/manifest';
import { DEFAULT_API_THROTTLE } from '../../lib/api-throttle';
import { CONTEXT_API_THROTTLE, CONTEXT_LAMBDA_CONCURRENCY } from '../../lib/app';
import { DEFAULT_LAMBDA_CONCURRENCY } from '../../lib/concurrency';
import { invokedFunction, type MethodView, methods, only, synthSendflow } from './synth';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

let api: Template;

beforeAll(() => {
  ({ api } = synthSendflow());
});

function functionOf(template: Template, service: string): { id: string; properties: Record<string, unknown> } {
  const functions = template.findResources('AWS::Lambda::Function') as Resources;
  const found = Object.entries(functions).find(
    ([, fn]) =>
      (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables
        ?.POWERTOOLS_SERVICE_NAME === service,
  );
  if (!found) throw new Error(`no function ${service}`);
  return { id: found[0], properties: found[1].Properties };
}

/** The function an AWS_PROXY integration URI points at. */
/** The function a method's integration invokes (through its `live` alias). */
function integrationTarget(method: MethodView): string {
  return invokedFunction(api, (method.properties.Integration as { Uri: unknown }).Uri) ?? '';
}

/** The stage's method settings, by `<resource path> <HTTP method>` as API Gateway writes them. */
function methodSettings(template: Template): Map<string, Record<string, unknown>> {
  const stage = only(template, 'AWS::ApiGateway::Stage').properties;
  const settings = (stage.MethodSettings ?? []) as Record<string, unknown>[];
  return new Map(settings.map((s) => [`${String(s.ResourcePath)} ${String(s.HttpMethod)}`, s]));
}

/** API Gateway's escaping of a resource path in a method setting: `/a/{b}` → `/~1a~1{b}`. */
const settingPath = (path: string) => `/${path.replace(/\//g, '~1')}`;

describe('the public function', () => {
  it('serves every method without the authorizer (public routes and fallbacks); the API function only keyed ones', () => {
    // Arrange
    const publicFn = functionOf(api, 'sendflow-public').id;
    const apiFn = functionOf(api, 'sendflow-api').id;
    const all = methods(api);

    // Act
    const open = all.filter((m) => m.properties.AuthorizationType === 'NONE');
    const keyed = all.filter((m) => m.properties.AuthorizationType !== 'NONE');

    // Assert: the public routes and the ANY fallbacks are all open, and none of them reaches the API function.
    const publicRoutes = routes.filter((r) => r.access === 'public').map((r) => `${r.method} ${r.path}`);
    expect(open.map((m) => `${m.httpMethod} ${m.path}`)).toEqual(expect.arrayContaining(publicRoutes));
    expect(open.filter((m) => m.httpMethod === 'ANY').length).toBeGreaterThan(10);
    for (const method of open)
      expect(`${method.httpMethod} ${method.path} → ${integrationTarget(method)}`).toBe(
        `${method.httpMethod} ${method.path} → ${publicFn}`,
      );
    expect(keyed.length).toBeGreaterThan(30);
    for (const method of keyed) expect(integrationTarget(method), method.path).toBe(apiFn);
  });

  it('has its own reservation (its ceiling too), apart from the API and the authorizer', () => {
    const reserved = (template: Template, service: string) =>
      functionOf(template, service).properties.ReservedConcurrentExecutions;
    expect(reserved(api, 'sendflow-public')).toBe(DEFAULT_LAMBDA_CONCURRENCY.public);
    expect(DEFAULT_LAMBDA_CONCURRENCY.public).toBeGreaterThan(0);
    expect(reserved(api, 'sendflow-api')).toBe(DEFAULT_LAMBDA_CONCURRENCY.api);
    const custom = synthSendflow({ [CONTEXT_LAMBDA_CONCURRENCY]: { public: 40 } }).api;
    expect(reserved(custom, 'sendflow-public')).toBe(40);
    expect(reserved(custom, 'sendflow-api')).toBe(DEFAULT_LAMBDA_CONCURRENCY.api);
  });

  it('runs the API code with the API role: the dashboard is the API, in process', () => {
    const publicFn = functionOf(api, 'sendflow-public').properties;
    const apiFn = functionOf(api, 'sendflow-api').properties;
    expect(publicFn.Role).toEqual(apiFn.Role);
    expect(publicFn.Handler).toBe(apiFn.Handler);
    expect(publicFn.Code).toEqual(apiFn.Code);
    const variables = (fn: Record<string, unknown>) => {
      const { POWERTOOLS_SERVICE_NAME: _service, ...rest } = (fn.Environment as { Variables: Record<string, unknown> })
        .Variables;
      return rest;
    };
    expect(variables(publicFn)).toEqual(variables(apiFn));
  });

  it('counts in the concurrency check: reservations must leave Lambda its 100 unreserved', () => {
    expect(() =>
      synthSendflow({ [CONTEXT_LAMBDA_CONCURRENCY]: { accountQuota: 300, api: 100, authorizer: 50, public: 60 } }),
    ).toThrow(/100 \(api\) \+ 50 \(authorizer\) \+ 60 \(public\) of an account quota of 300 leaves 90 unreserved/);
  });
});

describe('stage throttling', () => {
  it('throttles every method of the stage by default (the account-wide limit is shared by every API of the region)', () => {
    const defaults = methodSettings(api).get('/* *');
    expect(defaults).toMatchObject({
      ThrottlingRateLimit: DEFAULT_API_THROTTLE.rateLimit,
      ThrottlingBurstLimit: DEFAULT_API_THROTTLE.burstLimit,
      LoggingLevel: 'ERROR',
    });
    // One scale-plan tenant alone can still use its whole plan on one method.
    expect(DEFAULT_API_THROTTLE.rateLimit).toBeGreaterThanOrEqual(500);
    expect(DEFAULT_API_THROTTLE.burstLimit).toBeGreaterThanOrEqual(1_000);
  });

  it.each(routes.filter((r) => r.access === 'public').map((r) => [r.method, r.path]))(
    '%s %s (public) has its own, tighter throttle',
    (method, path) => {
      const setting = methodSettings(api).get(`${settingPath(path)} ${method}`);
      expect(setting).toMatchObject({
        ThrottlingRateLimit: DEFAULT_API_THROTTLE.publicRateLimit,
        ThrottlingBurstLimit: DEFAULT_API_THROTTLE.publicBurstLimit,
        LoggingLevel: 'ERROR',
        MetricsEnabled: false,
        DataTraceEnabled: false,
      });
      expect(DEFAULT_API_THROTTLE.publicRateLimit).toBeLessThan(DEFAULT_API_THROTTLE.rateLimit);
    },
  );

  it('takes the limits from sendflow:apiThrottle (cdk.json or -c), and refuses a bad one naming it', () => {
    const custom = synthSendflow({
      [CONTEXT_API_THROTTLE]: JSON.stringify({ rateLimit: 3000, burstLimit: 4000, publicRateLimit: 50 }),
    }).api;
    expect(methodSettings(custom).get('/* *')).toMatchObject({ ThrottlingRateLimit: 3000, ThrottlingBurstLimit: 4000 });
    expect(methodSettings(custom).get(`${settingPath('/unsubscribe/{token}')} POST`)).toMatchObject({
      ThrottlingRateLimit: 50,
      ThrottlingBurstLimit: DEFAULT_API_THROTTLE.publicBurstLimit,
    });
    expect(() => synthSendflow({ [CONTEXT_API_THROTTLE]: { rateLimit: 0 } })).toThrow(/sendflow:apiThrottle/);
    expect(() => synthSendflow({ [CONTEXT_API_THROTTLE]: { rate: 10 } })).toThrow(/sendflow:apiThrottle.*unknown/);
  });
});

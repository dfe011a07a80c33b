// Public routes (access 'public': one-click unsubscribe, contact confirmation) get neither the authorizer nor
// an API key, keep their 405 fallbacks, and pass cdk-nag with their acknowledgement.
import { App, Validations } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../lambdas/manifest';
import { buildSendflow } from '../../lib/app';
import { methods, SKIP_BUNDLING, synthSendflow } from './synth';

const publicRoutes = routes.filter((route) => route.access === 'public');
let api: Template;

beforeAll(() => {
  ({ api } = synthSendflow());
});

describe('public routes', () => {
  it('include one-click unsubscribe, GET (a page) and POST (RFC 8058)', () => {
    expect(publicRoutes.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining(['GET /unsubscribe/{token}', 'POST /unsubscribe/{token}']),
    );
  });

  it.each(publicRoutes.map((r) => [r.method, r.path, r]))('%s %s has no authorizer and no API key', (_m, _p, route) => {
    const method = methods(api).find((m) => m.path === route.path && m.httpMethod === route.method);
    expect(method?.properties).toMatchObject({
      AuthorizationType: 'NONE',
      ApiKeyRequired: false,
      OperationName: route.id,
    });
    expect(method?.properties.AuthorizerId).toBeUndefined();
  });

  it('include the API reference: GET /reference (the HTML page) and GET /openapi.json, neither behind the authorizer', () => {
    for (const path of ['/reference', '/openapi.json']) {
      const method = methods(api).find((m) => m.path === path && m.httpMethod === 'GET');
      expect(method?.properties, path).toMatchObject({ AuthorizationType: 'NONE', ApiKeyRequired: false });
      expect(method?.properties.AuthorizerId, path).toBeUndefined();
    }
  });

  it('keep the 405 fallback on their resources', () => {
    const anyPaths = methods(api)
      .filter((m) => m.httpMethod === 'ANY')
      .map((m) => m.path);
    expect(anyPaths).toEqual(expect.arrayContaining(['/unsubscribe', '/unsubscribe/{token}']));
  });

  it('pass cdk-nag with their acknowledgement', () => {
    const app = new App({ context: SKIP_BUNDLING, builtinCloudFormationValidation: false });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    buildSendflow(app, { authorizerCacheTtlSeconds: 60, unmonitored: true });
    expect(() => app.synth()).not.toThrow();
  });
});

// Public routes (access 'public', e.g. one-click unsubscribe) get neither the authorizer nor an API key.
// The manifest has none yet, so this suite adds one to a mocked manifest.
import { App, Validations } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { buildSendflow } from '../../lib/app';
import { methods, SKIP_BUNDLING, synthSendflow } from './synth';

vi.mock('../../lambdas/manifest', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../lambdas/manifest')>();
  return {
    ...original,
    routes: [
      ...original.routes,
      {
        id: 'unsubscribe',
        method: 'POST',
        path: '/unsubscribe/{token}',
        access: 'public',
        summary: 'One-click unsubscribe',
      },
    ],
  };
});

let api: Template;

beforeAll(() => {
  ({ api } = synthSendflow());
});

describe('a public route', () => {
  it('is declared without authorizer and without API key', () => {
    const method = methods(api).find((m) => m.path === '/unsubscribe/{token}' && m.httpMethod === 'POST');
    expect(method?.properties).toMatchObject({
      AuthorizationType: 'NONE',
      ApiKeyRequired: false,
      OperationName: 'unsubscribe',
    });
    expect(method?.properties.AuthorizerId).toBeUndefined();
  });

  it('still gets the 405 fallback on its resources', () => {
    const anyPaths = methods(api)
      .filter((m) => m.httpMethod === 'ANY')
      .map((m) => m.path);
    expect(anyPaths).toEqual(expect.arrayContaining(['/unsubscribe', '/unsubscribe/{token}']));
  });

  it('passes cdk-nag with its acknowledgement', () => {
    const app = new App({ context: SKIP_BUNDLING, builtinCloudFormationValidation: false });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    buildSendflow(app, { authorizerCacheTtlSeconds: 60 });
    expect(() => app.synth()).not.toThrow();
  });
});

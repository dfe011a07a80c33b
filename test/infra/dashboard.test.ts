// The dashboard on AWS: its routes are methods of the REST API without the authorizer or an API key (the
// session cookie is checked by the API code), served by the public function (the API code, with the API role);
// the sessions table has TTL, is not retained, and only the API role may touch it.
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { tableEnvVar } from '../../lambdas/manifest';
import { methods, synthSendflow } from './synth';

let api: Template;
let data: Template;

beforeAll(() => {
  ({ api, data } = synthSendflow());
});

describe('dashboard routes', () => {
  it.each([
    ['GET', '/dashboard', 'dashboardHome'],
    ['GET', '/dashboard/{proxy+}', 'dashboardPage'],
    ['POST', '/dashboard/{proxy+}', 'dashboardAction'],
  ])('%s %s is its own method, with no authorizer and no API key, proxied to the public function', (verb, path, id) => {
    const method = methods(api).find((m) => m.path === path && m.httpMethod === verb);
    expect(method?.properties).toMatchObject({
      AuthorizationType: 'NONE',
      ApiKeyRequired: false,
      OperationName: id,
      Integration: { Type: 'AWS_PROXY' },
    });
    const target = JSON.stringify((method?.properties.Integration as { Uri?: unknown } | undefined)?.Uri);
    expect(target).toMatch(/PublicFunction/);
  });
});

describe('sessions table', () => {
  const sessionsTable = () => {
    const tables = data.findResources('AWS::DynamoDB::GlobalTable');
    const entry = Object.entries(tables).find(([id]) => id.startsWith('Sessions'));
    if (!entry) throw new Error('no Sessions table');
    return { id: entry[0], table: entry[1] };
  };

  it('is keyed by hash, expires items by expiresAt, and is not retained', () => {
    const { table } = sessionsTable();
    expect(table.Properties.KeySchema).toEqual([{ AttributeName: 'hash', KeyType: 'HASH' }]);
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    expect(table.DeletionPolicy).toBe('Delete');
  });

  it('may be touched by the API role only (the API and public functions): item actions by key, nothing else', () => {
    const functions = Object.values(api.findResources('AWS::Lambda::Function'));
    const apiFunction = functions.find(
      (fn) => fn.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME === 'sendflow-api',
    );
    expect(apiFunction?.Properties.Environment.Variables).toHaveProperty(tableEnvVar('sessions'));
    const apiRole = (apiFunction?.Properties.Role as { 'Fn::GetAtt': [string] } | undefined)?.['Fn::GetAtt'][0];
    const policies = Object.values(api.findResources('AWS::IAM::Policy')).filter((policy) =>
      /tablessessions[0-9A-F]{8}/.test(JSON.stringify(policy.Properties.PolicyDocument)),
    );
    expect(policies.map((p) => (p.Properties.Roles as { Ref: string }[]).map((r) => r.Ref))).toEqual([[apiRole]]);
    const actions = (
      (policies[0]?.Properties.PolicyDocument.Statement ?? []) as { Action: string[]; Resource: unknown }[]
    )
      .filter((s) => /tablessessions[0-9A-F]{8}/.test(JSON.stringify(s.Resource)))
      .flatMap((s) => [s.Action].flat())
      .sort();
    expect(actions).toEqual(['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
  });
});

// AWS destinations in the template: the delivery function and the API (test sends, manual retries) may call
// sts:AssumeRole on roles only with an external id present, no other function may, and the principal customers'
// trust policies name reaches the functions that show or use it.
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { synthSendflow } from './synth';

let api: Template;
beforeAll(() => {
  ({ api } = synthSendflow());
});

type Resources = Record<string, { Properties: Record<string, unknown> }>;

/** Service name (POWERTOOLS_SERVICE_NAME) → its statements naming sts:AssumeRole, and its environment. */
function byService() {
  const functions = api.findResources('AWS::Lambda::Function') as Resources;
  // A role's statements past the inline policy's 10 KB go to its overflow managed policy (CDK): both count.
  const policies = {
    ...api.findResources('AWS::IAM::Policy'),
    ...api.findResources('AWS::IAM::ManagedPolicy'),
  } as Resources;
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
    const granted = byService().filter((f) => f.statements.length);
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
    for (const { service, env } of byService().filter((f) => f.statements.length)) {
      expect([service, env.SF_AWS_TRUST_PRINCIPAL]).toEqual([
        service,
        { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':root']] },
      ]);
    }
  });
});

// The IAM tier's own parts on small inputs: what a DynamoDB request is authorized as, token resolution, and
// that the policy check names the function, action, resource and reason of a denial.
import { describe, expect, it } from 'vitest';
import { deniedCalls, unusedGrants } from './support/policy-check';
import { dynamoCalls } from './support/stand-ins';
import { ACCOUNT, type BundledFunction, type CfnTemplate, REGION, Resolver } from './support/template';

const table = (name: string) => `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${name}`;

function fn(statements: BundledFunction['policies'][number]['document']['Statement']): BundledFunction {
  return {
    logicalId: 'Fn',
    service: 'sendflow-example',
    entry: '',
    handlerExport: 'handler',
    environment: {},
    roleArn: `arn:aws:iam::${ACCOUNT}:role/FnRole`,
    policies: [{ name: 'Policy', document: { Version: '2012-10-17', Statement: statements } }],
    consumes: [],
    destinations: [],
  };
}

describe('dynamoCalls', () => {
  it('authorizes a transaction item by item, and an index query on the index', () => {
    expect(
      dynamoCalls('TransactWriteItems', {
        TransactItems: [{ ConditionCheck: { TableName: 'a' } }, { Put: { TableName: 'b' } }],
      }),
    ).toEqual([
      { action: 'dynamodb:ConditionCheckItem', resource: table('a') },
      { action: 'dynamodb:PutItem', resource: table('b') },
    ]);
    expect(dynamoCalls('Query', { TableName: 'a', IndexName: 'byX' })).toEqual([
      { action: 'dynamodb:Query', resource: `${table('a')}/index/byX` },
    ]);
    expect(dynamoCalls('BatchGetItem', { RequestItems: { a: {}, b: {} } }).map((c) => c.resource)).toEqual([
      table('a'),
      table('b'),
    ]);
  });
});

describe('deniedCalls', () => {
  const policy = fn([{ Effect: 'Allow', Action: ['dynamodb:GetItem'], Resource: [table('a')] }]);

  it('allows a granted call and names function, action, resource and reason of a denied one', async () => {
    const calls = [
      { caller: 'k', operation: 'GetItem', action: 'dynamodb:GetItem', resource: table('a') },
      { caller: 'k', operation: 'PutItem', action: 'dynamodb:PutItem', resource: table('a') },
      { caller: 'k', operation: 'GetItem', action: 'dynamodb:GetItem', resource: table('b') },
    ];
    expect(await deniedCalls(policy, calls)).toEqual([
      `sendflow-example: dynamodb:PutItem on ${table('a')} (PutItem): ImplicitlyDenied by its role's identity policies`,
      `sendflow-example: dynamodb:GetItem on ${table('b')} (GetItem): ImplicitlyDenied by its role's identity policies`,
    ]);
  });

  it('evaluates a grant limited to some partitions (dynamodb:LeadingKeys) with the key the call wrote', async () => {
    const lanesOnly = fn([
      {
        Effect: 'Allow',
        Action: 'dynamodb:UpdateItem',
        Resource: table('deliveries'),
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['ord#*'] } },
      },
    ]);
    const update = (pk: string) => ({
      caller: 'k',
      operation: 'UpdateItem',
      ...(dynamoCalls(
        'UpdateItem',
        { TableName: 'deliveries', Key: { webhookId: { S: pk }, id: { S: 'x' } } },
        () => 'webhookId',
      )[0] as { action: string; resource: string }),
    });

    expect(await deniedCalls(lanesOnly, [update('ord#wh_1#email_1')])).toEqual([]);
    expect(await deniedCalls(lanesOnly, [update('wh_1')])).toEqual([
      `sendflow-example: dynamodb:UpdateItem on ${table('deliveries')} (UpdateItem) with {"dynamodb:LeadingKeys":["wh_1"]}: ImplicitlyDenied by its role's identity policies`,
    ]);
  });

  it('evaluates conditions with the recorded context (resource tags)', async () => {
    const tagged = fn([
      {
        Effect: 'Allow',
        Action: 'ses:GetEmailIdentity',
        Resource: `arn:aws:ses:${REGION}:${ACCOUNT}:identity/*`,
        Condition: { StringEquals: { 'aws:ResourceTag/owner': 'us' } },
      },
    ]);
    const call = (owner: string) => ({
      caller: 'k',
      operation: 'GetEmailIdentity',
      action: 'ses:GetEmailIdentity',
      resource: `arn:aws:ses:${REGION}:${ACCOUNT}:identity/example.com`,
      context: { 'aws:ResourceTag/owner': owner },
    });
    expect(await deniedCalls(tagged, [call('us')])).toEqual([]);
    expect(await deniedCalls(tagged, [call('them')])).toHaveLength(1);
  });

  it('reports a grant no call used', () => {
    expect(unusedGrants(policy, [])).toEqual([
      `sendflow-example: dynamodb:GetItem on ${table('a')} is granted but no call used it`,
    ]);
  });
});

describe('unusedGrants and async-invoke destinations', () => {
  it('does not report SendMessage on the function’s own destination (Lambda sends there), but on another queue', () => {
    // Arrange
    const queue = (name: string) => `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`;
    const withDestination = {
      ...fn([{ Effect: 'Allow', Action: 'sqs:SendMessage', Resource: [queue('Failures'), queue('Other')] }]),
      destinations: [queue('Failures')],
    };

    // Act & Assert
    expect(unusedGrants(withDestination, [])).toEqual([
      `sendflow-example: sqs:SendMessage on ${queue('Other')} is granted but no call used it`,
    ]);
  });
});

describe('Resolver', () => {
  it('resolves SSM parameters, queue URLs and ARNs, joins and pseudo parameters to stand-ins', () => {
    const template: CfnTemplate = {
      Parameters: {
        Tbl: { Type: 'AWS::SSM::Parameter::Value<String>', Default: '/Stack/tables/emails' },
        Sec: { Type: 'AWS::SSM::Parameter::Value<String>', Default: '/Stack/signing-secret' },
      },
      Resources: { Q: { Type: 'AWS::SQS::Queue' }, InboundBucket: { Type: 'AWS::S3::Bucket' } },
    };
    const r = new Resolver(template, { sqsBaseUrl: 'http://127.0.0.1:1' });
    expect(r.resolve({ Ref: 'Tbl' })).toBe('Stack.tables.emails');
    expect(r.resolve({ Ref: 'Sec' })).toBe(
      `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:Stack.signing-secret-AbCdEf`,
    );
    expect(r.resolve({ Ref: 'Q' })).toBe(`http://127.0.0.1:1/${ACCOUNT}/Q`);
    expect(r.resolve({ 'Fn::GetAtt': ['Q', 'Arn'] })).toBe(`arn:aws:sqs:${REGION}:${ACCOUNT}:Q`);
    // A bucket's name is lower case, its ARN has no region or account.
    expect(r.resolve({ Ref: 'InboundBucket' })).toBe('inboundbucket');
    expect(r.resolve({ 'Fn::GetAtt': ['InboundBucket', 'Arn'] })).toBe('arn:aws:s3:::inboundbucket');
    expect(r.resolve({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':x:', { Ref: 'AWS::Region' }]] })).toBe(
      `arn:aws:x:${REGION}`,
    );
  });
});

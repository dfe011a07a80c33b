// Unit tests for the admin CLI's AWS target (bin/admin-aws.ts): the stack is found with DescribeStacks, its
// outputs name the tables and usage plans the session works on, and a missing stack or missing outputs
// stop it with a message that says what to do. CloudFormation, DynamoDB and API Gateway are mocked.
import { createHash } from 'node:crypto';
import { APIGatewayClient, CreateApiKeyCommand, CreateUsagePlanKeyCommand } from '@aws-sdk/client-api-gateway';
import {
  CloudFormationClient,
  CloudFormationServiceException,
  DescribeStacksCommand,
} from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { awsAdminDeps, StackLookupError } from '../../bin/admin-aws';
import { decodeBody } from '../../lambdas/adapters/email-body-object';
import { createAccount, listAccountKeys, listAccounts } from '../../lambdas/app/accounts';
import { createSignInLink } from '../../lambdas/app/dashboard/sign-in';
import { PLAN_NAMES } from '../../lambdas/domain/plans';
import { tableNames } from '../../lambdas/manifest';
import { outputNames, stackNames } from '../../lib/outputs';

/** The default stage's api stack, as `--aws` without --stage or --stack targets it. */
const PROD_API = stackNames().api;

const cloudFormation = mockClient(CloudFormationClient);
const dynamo = mockClient(DynamoDBDocumentClient);
const gateway = mockClient(APIGatewayClient);

/** Every output the api stack publishes, with recognisable values. */
function stackOutputs() {
  return [
    { OutputKey: outputNames.apiUrl, OutputValue: 'https://abc.execute-api.eu-west-1.amazonaws.com/v1/' },
    { OutputKey: outputNames.restApiId, OutputValue: 'abc' },
    ...tableNames.map((table) => ({ OutputKey: outputNames.tables[table], OutputValue: `prod-${table}` })),
    ...PLAN_NAMES.map((plan) => ({ OutputKey: outputNames.usagePlans[plan], OutputValue: `up-${plan}` })),
  ];
}

function clients() {
  return {
    cloudFormation: new CloudFormationClient({ region: 'eu-west-1' }),
    dynamo: new DynamoDBClient({ region: 'eu-west-1' }),
    apiGateway: new APIGatewayClient({ region: 'eu-west-1' }),
  };
}

const notFound = (name: string) =>
  new CloudFormationServiceException({
    name: 'ValidationError',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message: `Stack with id ${name} does not exist`,
  });

beforeEach(() => {
  cloudFormation.reset();
  dynamo.reset();
  gateway.reset();
});

describe('awsAdminDeps', () => {
  it('reads the named api stack and works on the tables and plans its outputs name', async () => {
    // Arrange
    cloudFormation.on(DescribeStacksCommand, { StackName: PROD_API }).resolves({
      Stacks: [
        {
          StackName: PROD_API,
          StackStatus: 'UPDATE_COMPLETE',
          CreationTime: new Date(),
          Outputs: stackOutputs(),
        },
      ],
    });
    gateway.on(CreateApiKeyCommand).resolves({ id: 'apikey-1' });
    gateway.on(CreateUsagePlanKeyCommand).resolves({});
    dynamo.on(PutCommand).resolves({});

    // Act
    const session = await awsAdminDeps(PROD_API, clients());
    const account = await createAccount(session.deps, 'growth');
    await session.close();

    // Assert
    expect(cloudFormation).toHaveReceivedCommandWith(DescribeStacksCommand, { StackName: 'Sendflow-prod-Api' });
    expect(gateway).toHaveReceivedCommandWith(CreateUsagePlanKeyCommand, {
      usagePlanId: 'up-growth',
      keyId: 'apikey-1',
    });
    expect(dynamo).toHaveReceivedCommandWith(PutCommand, {
      TableName: 'prod-accounts',
      Item: expect.objectContaining({ id: account.id, plan: 'growth', usageKeyId: 'apikey-1' }),
    });
  });

  it('makes dashboard sign-in links on the stage URL, stored as a hash in the sessions table', async () => {
    // Arrange
    cloudFormation.on(DescribeStacksCommand).resolves({
      Stacks: [
        { StackName: PROD_API, StackStatus: 'UPDATE_COMPLETE', CreationTime: new Date(), Outputs: stackOutputs() },
      ],
    });
    dynamo.on(GetCommand, { TableName: 'prod-accounts' }).resolves({
      Item: { id: 'acct_1', plan: 'free', createdAt: '2026-01-01T00:00:00.000Z' },
    });
    dynamo.on(PutCommand).resolves({});

    // Act
    const session = await awsAdminDeps(PROD_API, clients());
    const link = await createSignInLink(session.dashboard, {
      accountId: 'acct_1',
      mode: 'live',
      baseUrl: session.dashboard.baseUrl,
    });
    await session.close();

    // Assert
    expect(link.url).toMatch(
      /^https:\/\/abc\.execute-api\.eu-west-1\.amazonaws\.com\/v1\/dashboard\/sign-in\?token=[A-Za-z0-9_-]{43}$/,
    );
    const token = new URL(link.url).searchParams.get('token') ?? '';
    expect(dynamo).toHaveReceivedCommandWith(PutCommand, {
      TableName: 'prod-sessions',
      Item: expect.objectContaining({
        kind: 'sign-in',
        hash: createHash('sha256').update(token).digest('hex'),
        accountId: 'acct_1',
        mode: 'live',
      }),
    });
  });

  it('lists every account with a paginated Scan of the accounts table, oldest first', async () => {
    // Arrange
    cloudFormation.on(DescribeStacksCommand).resolves({
      Stacks: [
        { StackName: PROD_API, StackStatus: 'UPDATE_COMPLETE', CreationTime: new Date(), Outputs: stackOutputs() },
      ],
    });
    const account = (id: string, createdAt: string) => ({ id, plan: 'free', createdAt });
    dynamo
      .on(ScanCommand, { TableName: 'prod-accounts', ExclusiveStartKey: undefined })
      .resolves({ Items: [account('acct_b', '2026-02-01T00:00:00.000Z')], LastEvaluatedKey: { id: 'acct_b' } })
      .on(ScanCommand, { TableName: 'prod-accounts', ExclusiveStartKey: { id: 'acct_b' } })
      .resolves({ Items: [{ ...account('acct_a', '2026-01-01T00:00:00.000Z'), plan: 'growth' }] });

    // Act
    const session = await awsAdminDeps(PROD_API, clients());
    const accounts = await listAccounts(session.deps);
    await session.close();

    // Assert
    expect(accounts).toEqual([
      { id: 'acct_a', plan: 'growth', createdAt: '2026-01-01T00:00:00.000Z' },
      { id: 'acct_b', plan: 'free', createdAt: '2026-02-01T00:00:00.000Z' },
    ]);
    expect(dynamo).toHaveReceivedCommandTimes(ScanCommand, 2);
  });

  it("upgrade-emails gives the stage's emails from before byTenant their tenant, moves bodies and states out of the email item, and notes every email's status", async () => {
    // Arrange
    cloudFormation.on(DescribeStacksCommand).resolves({
      Stacks: [
        { StackName: PROD_API, StackStatus: 'UPDATE_COMPLETE', CreationTime: new Date(), Outputs: stackOutputs() },
      ],
    });
    const tenantless = 'attribute_exists(accountId) AND attribute_exists(#mode) AND attribute_not_exists(tenant)';
    const legacy = {
      id: 'email_c',
      accountId: 'acct_1',
      mode: 'live',
      tenant: 'acct_1#live',
      from: 'a@acme.example',
      to: ['b@example.com'],
      cc: [],
      bcc: [],
      replyTo: [],
      subject: 'Hi',
      tags: [],
      createdAt: '2026-11-20T00:00:00.000Z',
      html: '<p>Hi</p>',
      headers: [['X-A', '1']],
      unsubscribeUrls: { 'b@example.com': 'https://x.example/u' },
      recipientStates: { '0': { state: 'sent', tries: 1 } },
    };
    dynamo
      .on(ScanCommand, { TableName: 'prod-emails', FilterExpression: tenantless, ExclusiveStartKey: undefined })
      .resolves({ Items: [{ id: 'email_a', accountId: 'acct_1', mode: 'live' }], LastEvaluatedKey: { id: 'email_a' } })
      .on(ScanCommand, { TableName: 'prod-emails', FilterExpression: tenantless, ExclusiveStartKey: { id: 'email_a' } })
      .resolves({ Items: [{ id: 'email_b', accountId: 'acct_2', mode: 'test' }] })
      .on(ScanCommand, {
        TableName: 'prod-emails',
        FilterExpression: 'attribute_exists(headers) OR attribute_not_exists(expiresAt)',
      })
      .resolves({ Items: [legacy] })
      .on(ScanCommand, { TableName: 'prod-emailEvents' })
      .resolves({ Items: [] })
      .on(UpdateCommand)
      .resolves({})
      .on(PutCommand)
      .resolves({})
      .on(BatchWriteCommand)
      .resolves({})
      .on(ScanCommand, {
        TableName: 'prod-emails',
        FilterExpression: 'attribute_exists(accountId) AND attribute_exists(#mode)',
      })
      .resolves({
        Items: [
          { id: 'email_a', accountId: 'acct_1', mode: 'live' },
          { id: 'email_b', accountId: 'acct_2', mode: 'test', canceledAt: '2026-01-02T00:00:00.000Z' },
        ],
      })
      // No status noted yet (the note is read before it is raised).
      .on(GetCommand, { TableName: 'prod-emailEvents' })
      .resolves({})
      // The history's newest events: none without `at` on the table, these two through byTime.
      .on(QueryCommand, { TableName: 'prod-emailEvents' })
      .resolves({ Items: [] })
      .on(QueryCommand, { TableName: 'prod-emailEvents', IndexName: 'byTime' })
      .resolves({
        Items: [
          { eventId: 'evt_2', type: 'email.bounced', timestamp: '2026-01-01T00:00:02.000Z' },
          { eventId: 'evt_1', type: 'email.sent', timestamp: '2026-01-01T00:00:01.000Z' },
        ],
      });

    // Act
    const session = await awsAdminDeps(PROD_API, clients());
    const changed = await session.upgradeEmails();
    await session.close();

    // Assert
    expect(changed).toEqual({ tenants: 2, emails: 1, events: 0, statuses: 2 });
    for (const [id, key] of [
      ['email_a', /^acct_1#live#bounced#\d$/],
      ['email_b', /^acct_2#test#canceled#\d$/],
    ] as const) {
      expect(dynamo).toHaveReceivedCommandWith(UpdateCommand, {
        TableName: 'prod-emailEvents',
        Key: { emailId: id, eventId: '#status' },
        ConditionExpression: 'attribute_not_exists(#rank) OR #rank < :r',
        ExpressionAttributeValues: expect.objectContaining({ ':k': expect.stringMatching(key) }),
      });
    }
    // The body once, the links, the recipient's state (unless the send worker wrote a newer one), then the item
    // loses what moved and gets its expiresAt.
    expect(dynamo).toHaveReceivedCommandWith(BatchWriteCommand, {
      RequestItems: {
        'prod-emailParts': [{ PutRequest: { Item: expect.objectContaining({ emailId: 'email_c', part: 'body' }) } }],
      },
    });
    const bodyPut = dynamo
      .commandCalls(BatchWriteCommand)
      .flatMap((c) => c.args[0].input.RequestItems?.['prod-emailParts'] ?? [])
      .find((w) => w.PutRequest?.Item?.part === 'body');
    expect(decodeBody(bodyPut?.PutRequest?.Item?.object as Uint8Array, 0)).toEqual({
      html: '<p>Hi</p>',
      headers: { 'X-A': '1' },
    });
    expect(dynamo).toHaveReceivedCommandWith(PutCommand, {
      TableName: 'prod-emailParts',
      Item: expect.objectContaining({ emailId: 'email_c', part: 'r#000', recipientState: { state: 'sent', tries: 1 } }),
      ConditionExpression: 'attribute_not_exists(part)',
    });
    expect(dynamo).toHaveReceivedCommandWith(UpdateCommand, {
      TableName: 'prod-emails',
      Key: { id: 'email_c' },
      UpdateExpression: expect.stringMatching(/^SET expiresAt = if_not_exists\(expiresAt, :expiresAt\) REMOVE /),
      ExpressionAttributeValues: { ':expiresAt': Date.parse('2026-11-20T00:00:00.000Z') / 1000 + 30 * 86_400 },
    });
    expect(dynamo).toHaveReceivedCommandWith(ScanCommand, {
      TableName: 'prod-emails',
      FilterExpression: expect.stringContaining('attribute_not_exists(tenant)'),
    });
    // Each email's byTenant key: its tenant and one of its 4 shards.
    for (const [id, tenant] of [
      ['email_a', /^acct_1#live#[0-3]$/],
      ['email_b', /^acct_2#test#[0-3]$/],
    ] as const) {
      expect(dynamo).toHaveReceivedCommandWith(UpdateCommand, {
        TableName: 'prod-emails',
        Key: { id },
        UpdateExpression: 'SET tenant = :t',
        ConditionExpression: 'attribute_exists(id) AND attribute_not_exists(tenant)',
        ExpressionAttributeValues: { ':t': expect.stringMatching(tenant) },
      });
    }
  });

  it("lists an account's keys through the api keys table's byAccount index", async () => {
    // Arrange
    cloudFormation.on(DescribeStacksCommand).resolves({
      Stacks: [
        { StackName: PROD_API, StackStatus: 'UPDATE_COMPLETE', CreationTime: new Date(), Outputs: stackOutputs() },
      ],
    });
    dynamo.on(GetCommand).resolves({});
    dynamo.on(GetCommand, { TableName: 'prod-accounts', Key: { id: 'acct_a' } }).resolves({
      Item: { id: 'acct_a', plan: 'free', createdAt: '2026-01-01T00:00:00.000Z' },
    });
    const key = {
      id: 'key_1',
      hash: 'a'.repeat(64),
      accountId: 'acct_a',
      mode: 'test',
      scopes: ['email:send'],
      name: 'ci',
      hint: 'sf_test_…wxyz',
      createdAt: '2026-01-02T00:00:00.000Z',
    };
    dynamo.on(QueryCommand).resolves({ Items: [key] });

    // Act
    const session = await awsAdminDeps(PROD_API, clients());
    const keys = await listAccountKeys(session.deps, 'acct_a');
    const unknown = listAccountKeys(session.deps, 'acct_missing');
    await expect(unknown).rejects.toThrow('No account with id acct_missing.');
    await session.close();

    // Assert
    expect(keys).toEqual([key]);
    expect(dynamo).toHaveReceivedCommandWith(QueryCommand, {
      TableName: 'prod-apiKeys',
      IndexName: 'byAccount',
      ExpressionAttributeValues: { ':a': 'acct_a' },
    });
  });

  it("finds another stage's api stack by its stage-qualified name", async () => {
    cloudFormation.on(DescribeStacksCommand).resolves({
      Stacks: [
        {
          StackName: 'Sendflow-staging-Api',
          StackStatus: 'CREATE_COMPLETE',
          CreationTime: new Date(),
          Outputs: stackOutputs(),
        },
      ],
    });
    await (await awsAdminDeps(stackNames('staging').api, clients())).close();
    expect(cloudFormation).toHaveReceivedCommandWith(DescribeStacksCommand, { StackName: 'Sendflow-staging-Api' });
  });

  it('says a missing stack does not exist, and how to fix it', async () => {
    // Arrange
    cloudFormation.on(DescribeStacksCommand).rejects(notFound(PROD_API));

    // Act
    const opening = awsAdminDeps(PROD_API, clients());

    // Assert
    await expect(opening).rejects.toThrow(StackLookupError);
    await expect(opening).rejects.toThrow(
      /Stack Sendflow-prod-Api does not exist .*cdk deploy --all.*--stage.*--stack/,
    );
  });

  it('names every output a stack lacks (another stack, or one deployed from an older version)', async () => {
    // Arrange
    const outputs = stackOutputs().filter(
      (o) => o.OutputKey !== outputNames.tables.apiKeys && o.OutputKey !== outputNames.usagePlans.scale,
    );
    cloudFormation.on(DescribeStacksCommand).resolves({
      Stacks: [{ StackName: 'Other', StackStatus: 'UPDATE_COMPLETE', CreationTime: new Date(), Outputs: outputs }],
    });

    // Act
    const opening = awsAdminDeps('Other', clients());

    // Assert
    await expect(opening).rejects.toThrow(StackLookupError);
    await expect(opening).rejects.toThrow(
      'Stack Other (UPDATE_COMPLETE) lacks the outputs TableApiKeys, UsagePlanScale. Is it a Sendflow api stack (Sendflow-<stage>-Api)',
    );
  });

  it('treats a stack without outputs (e.g. still creating) the same way', async () => {
    cloudFormation.on(DescribeStacksCommand).resolves({
      Stacks: [{ StackName: PROD_API, StackStatus: 'CREATE_IN_PROGRESS', CreationTime: new Date() }],
    });
    await expect(awsAdminDeps(PROD_API, clients())).rejects.toThrow(/\(CREATE_IN_PROGRESS\) lacks the outputs/);
  });

  it('lets other CloudFormation errors (credentials, throttling) through and closes the clients', async () => {
    // Arrange
    const denied = new CloudFormationServiceException({
      name: 'AccessDenied',
      $fault: 'client',
      $metadata: {},
      message: 'not authorized to perform: cloudformation:DescribeStacks',
    });
    cloudFormation.on(DescribeStacksCommand).rejects(denied);
    const given = clients();
    const destroyed = vi.spyOn(given.dynamo, 'destroy');

    // Act & Assert
    await expect(awsAdminDeps(PROD_API, given)).rejects.toBe(denied);
    expect(destroyed).toHaveBeenCalled();
  });
});

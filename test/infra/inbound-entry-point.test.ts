// The inbound function's entry point (lambdas/runtime/aws/inbound.ts) as Lambda loads it: with exactly the
// environment the synthesized api stack gives it when `sendflow:inbound` names the stage (tokens replaced by
// stand-ins), S3 and DynamoDB mocked. It reads the message SES stored with one GetObject on the stack's bucket
// and hands it to receiveEmail, which asks who receives at each recipient's domain (a GetItem of the name's
// claim in the domains table): here nobody, so nothing is stored. A cold start without the bucket variable fails
// at import, naming it. (The IAM tier runs the same bundle end to end, a receiving domain included.)
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeAll, beforeEach, expect, it, type MockInstance, vi } from 'vitest';
import { CONTEXT_INBOUND } from '../../lib/inbound-settings';
import { synthSendflow } from './synth';

const s3 = mockClient(S3Client);
const dynamo = mockClient(DynamoDBDocumentClient);
const FIXTURE = JSON.parse(
  readFileSync(new URL('../fixtures/ses-receiving/inbound-lambda-action.json', import.meta.url), 'utf8'),
);
const MESSAGE_ID = 'o3vrnil0e2ic28trm7dfhrc2v0cnbeccl4nbp0g1';
const clean = { ...process.env };
let environment: Record<string, string> = {};
let stdout: MockInstance;

function lambdaContext(awsRequestId: string): Context {
  return {
    awsRequestId,
    functionName: 'sendflow-inbound',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:sendflow-inbound',
    memoryLimitInMB: '1024',
    logGroupName: '/aws/lambda/sendflow-inbound',
    logStreamName: 'stream',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => 10_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** The entry point's module, loaded afresh (a cold start) with `env` as the whole process environment. */
async function coldStart(env: Record<string, string>) {
  vi.resetModules();
  process.env = { ...clean, AWS_REGION: 'eu-west-1', ...env };
  try {
    return (await import('../../lambdas/runtime/aws/inbound')) as {
      handler: (event: unknown, context: Context) => Promise<void>;
    };
  } finally {
    process.env = clean;
  }
}

beforeAll(() => {
  const { api } = synthSendflow({ [CONTEXT_INBOUND]: { prod: { region: 'eu-west-1' } } });
  const fn = Object.values(api.findResources('AWS::Lambda::Function')).find(
    (f) => f.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME === 'sendflow-inbound',
  );
  const variables = fn?.Properties.Environment.Variables as Record<string, unknown>;
  // Deploy-time values (SSM parameters, the bucket's Ref) become readable stand-ins.
  environment = Object.fromEntries(
    Object.entries(variables).map(([name, value]) => [
      name,
      typeof value === 'string' ? value : `${name.toLowerCase().replaceAll('_', '-')}-value`,
    ]),
  );
});

beforeEach(() => {
  s3.reset();
  dynamo.reset();
  dynamo.on(GetCommand).resolves({});
  stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
});
afterEach(() => stdout.mockRestore());

it('reads the stored message from the stack’s bucket with one GetObject and drops mail no account receives', async () => {
  // Arrange
  s3.on(GetObjectCommand).resolves({ Body: Readable.from([Buffer.from('Subject: hi\r\n\r\nHello\r\n')]) as never });
  const { handler } = await coldStart(environment);

  // Act (the SDK clients resolve their region on the first call, as in the Lambda's environment)
  process.env = { ...clean, AWS_REGION: 'eu-west-1' };
  try {
    await handler(FIXTURE, lambdaContext('req-inbound-1'));
  } finally {
    process.env = clean;
  }

  // Assert
  expect(s3.commandCalls(GetObjectCommand).map((call) => call.args[0].input)).toEqual([
    { Bucket: 'sf-inbound-bucket-value', Key: `inbound/${MESSAGE_ID}` },
  ]);
  // acme.example (both recipients, the domain lower-cased) has no holder: one claim read, nothing stored.
  const reads = dynamo.commandCalls(GetCommand).map((call) => call.args[0].input);
  expect(reads).toHaveLength(1);
  expect(reads[0]?.TableName).toBe(environment.SF_TABLE_DOMAINS);
  expect(s3.commandCalls(PutObjectCommand)).toHaveLength(0);
});

it('refuses a cold start without SF_INBOUND_BUCKET, naming it', async () => {
  // Arrange
  const { SF_INBOUND_BUCKET: _missing, ...without } = environment;

  // Act & Assert
  await expect(coldStart(without)).rejects.toThrow(/SF_INBOUND_BUCKET: required by sendflow-inbound/);
});

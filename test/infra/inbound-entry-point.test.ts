// The inbound function's entry point (lambdas/runtime/aws/inbound.ts) as Lambda loads it: with exactly the
// environment the synthesized api stack gives it when `sendflow:inbound` names the stage (tokens replaced by
// stand-ins), S3 mocked. It reads the message SES stored with one GetObject on the stack's bucket, and fails
// the invocation while receiveEmail is not wired (Lambda then retries and dead-letters it: nothing is dropped).
// A cold start without the bucket variable fails at import, naming it.
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeAll, beforeEach, expect, it, type MockInstance, vi } from 'vitest';
import { CONTEXT_INBOUND } from '../../lib/inbound-settings';
import { synthSendflow } from './synth';

const s3 = mockClient(S3Client);
const FIXTURE = JSON.parse(
  readFileSync(new URL('../fixtures/ses/inbound-lambda-action.json', import.meta.url), 'utf8'),
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
  stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
});
afterEach(() => stdout.mockRestore());

it('reads the stored message from the stack’s bucket with one GetObject, then fails while receiveEmail is unwired', async () => {
  // Arrange
  s3.on(GetObjectCommand).resolves({ Body: Readable.from([Buffer.from('Subject: hi\r\n\r\nHello\r\n')]) as never });
  const { handler } = await coldStart(environment);

  // Act
  const invocation = handler(FIXTURE, lambdaContext('req-inbound-1'));

  // Assert
  await expect(invocation).rejects.toThrow(`receiveEmail is not wired into sendflow-inbound yet: ${MESSAGE_ID}`);
  expect(s3.commandCalls(GetObjectCommand).map((call) => call.args[0].input)).toEqual([
    { Bucket: 'sf-inbound-bucket-value', Key: `inbound/${MESSAGE_ID}` },
  ]);
});

it('refuses a cold start without SF_INBOUND_BUCKET, naming it', async () => {
  // Arrange
  const { SF_INBOUND_BUCKET: _missing, ...without } = environment;

  // Act & Assert
  await expect(coldStart(without)).rejects.toThrow(/SF_INBOUND_BUCKET: required by sendflow-inbound/);
});

// Unit tests for the AWS wiring (lambdas/runtime/aws/services.ts and its plugs): each function gets the
// adapters its plugs build, on the clients given; a missing SF_* variable stops the cold start with every name
// listed; the signing secret is read on first use, not at cold start, and cached; a port a function was not
// given refuses to work instead of doing something else.
import { randomBytes } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CreateEmailIdentityCommand, SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { BatchWriteCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { AwsRetryScheduler, QueueRetryScheduler } from '../../lambdas/adapters/aws/retry-scheduler';
import { SigningSecretError } from '../../lambdas/adapters/aws/secrets';
import { AwsSendScheduler, QueueSendScheduler } from '../../lambdas/adapters/aws/send-scheduler';
import { SqsDeliveryQueue, SqsEventPublisher } from '../../lambdas/adapters/aws/sqs';
import type { DynamoEmailRepository } from '../../lambdas/adapters/dynamodb/emails';
import { encodeBody } from '../../lambdas/adapters/email-body-object';
import { TokenBucketPacer } from '../../lambdas/adapters/in-process/send-pacer';
import { SesDomainProvider } from '../../lambdas/adapters/ses/ses-domains';
import { SesEmailProvider } from '../../lambdas/adapters/ses/ses-provider';
import { SimulatedDomainProvider } from '../../lambdas/adapters/simulator/simulated-domains';
import { SimulatedEmailProvider } from '../../lambdas/adapters/simulator/simulated-provider';
import { domainId } from '../../lambdas/app/domains/domains';
import { tableEnvVar, tableNames } from '../../lambdas/manifest';
import { authorizerCache } from '../../lambdas/runtime/aws/plugs/authorizer-cache';
import { emailBodies } from '../../lambdas/runtime/aws/plugs/bodies';
import { signedLinks } from '../../lambdas/runtime/aws/plugs/links';
import {
  deadLetters,
  deliveriesQueue,
  eventsQueue,
  queuedRetries,
  queuedSends,
  slowLane,
} from '../../lambdas/runtime/aws/plugs/queues';
import { scheduledRetries, scheduledSends } from '../../lambdas/runtime/aws/plugs/schedules';
import { sesDomains, sesEmail } from '../../lambdas/runtime/aws/plugs/ses';
import { createAwsServices, missingAwsVariables } from '../../lambdas/runtime/aws/services';
import { type Config, ConfigError, loadConfig } from '../../lambdas/runtime/config';

const sqs = mockClient(SQSClient);
const scheduler = mockClient(SchedulerClient);
const secrets = mockClient(SecretsManagerClient);
const ses = mockClient(SESv2Client);
const SECRET = 's'.repeat(64);

const tablesEnv = Object.fromEntries(tableNames.map((table) => [tableEnvVar(table), `${table}-table`]));
const awsEnv = {
  SF_EVENTS_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/events',
  SF_DELIVERIES_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries',
  SF_DELIVERIES_QUEUE_ARN: 'arn:aws:sqs:eu-west-1:123456789012:deliveries',
  SF_SCHEDULE_GROUP: 'SendflowApi-retries',
  SF_SCHEDULER_ROLE_ARN: 'arn:aws:iam::123456789012:role/scheduler',
  SF_SCHEDULER_DLQ_ARN: 'arn:aws:sqs:eu-west-1:123456789012:retry-dlq',
  SF_SENDS_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/sends',
  SF_SENDS_QUEUE_ARN: 'arn:aws:sqs:eu-west-1:123456789012:sends',
  SF_SENDS_SCHEDULE_GROUP: 'SendflowApi-sends',
  SF_SENDS_SCHEDULER_ROLE_ARN: 'arn:aws:iam::123456789012:role/send-scheduler',
  SF_SENDS_SCHEDULER_DLQ_ARN: 'arn:aws:sqs:eu-west-1:123456789012:send-schedule-dlq',
  SF_SIGNING_SECRET_ID: 'SendflowData/signing-secret',
  SF_PUBLIC_URL: 'https://abc123.execute-api.eu-west-1.amazonaws.com/v1',
  SF_SES_CONFIGURATION_SET: 'SendflowApi-email-events',
  SF_SES_IDENTITY_OWNER: 'SendflowApi',
};
const clients = () => [
  new DynamoDBClient({ region: 'eu-west-1' }),
  new SQSClient({ region: 'eu-west-1' }),
  new SchedulerClient({ region: 'eu-west-1' }),
  new SecretsManagerClient({ region: 'eu-west-1' }),
  new SESv2Client({ region: 'eu-west-1' }),
];
const job = { deliveryId: 'dlv_1', webhookId: 'wh_1', attempt: 2 };

beforeEach(() => {
  sqs.reset();
  scheduler.reset();
  secrets.reset();
  ses.reset();
  ses.on(SendEmailCommand).resolves({ MessageId: 'ses-1' });
  sqs.on(SendMessageBatchCommand).resolves({ Failed: [] });
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });
  scheduler.on(CreateScheduleCommand).resolves({ ScheduleArn: 'arn' });
  secrets.on(GetSecretValueCommand).resolves({ SecretString: SECRET });
});

describe('createAwsServices', () => {
  it('gives the delivery worker the Scheduler-backed retries on the configured queue and group', async () => {
    // Arrange
    const services = createAwsServices('sendflow-delivery', [scheduledRetries], {
      env: { ...tablesEnv, ...awsEnv },
      clients: clients(),
    });

    // Act: up to 15 minutes through SQS, beyond through Scheduler.
    await services.retries.schedule(job, 300);
    await services.retries.schedule(job, 1800);

    // Assert
    expect(services.retries).toBeInstanceOf(AwsRetryScheduler);
    expect(sqs).toHaveReceivedCommandWith(SendMessageBatchCommand, { QueueUrl: awsEnv.SF_DELIVERIES_QUEUE_URL });
    expect(scheduler).toHaveReceivedCommandWith(CreateScheduleCommand, {
      GroupName: awsEnv.SF_SCHEDULE_GROUP,
      Target: expect.objectContaining({
        Arn: awsEnv.SF_DELIVERIES_QUEUE_ARN,
        RoleArn: awsEnv.SF_SCHEDULER_ROLE_ARN,
        DeadLetterConfig: { Arn: awsEnv.SF_SCHEDULER_DLQ_ARN },
      }),
    });
  });

  it("waits for a slow attempt's retry in the slow lane as SQS DelaySeconds up to 15 minutes, beyond through Scheduler", async () => {
    // Arrange
    const slowUrl = 'https://sqs.eu-west-1.amazonaws.com/123456789012/slow';
    const services = createAwsServices('sendflow-delivery', [scheduledRetries, slowLane], {
      env: {
        ...tablesEnv,
        ...awsEnv,
        SF_SLOW_DELIVERIES_QUEUE_URL: slowUrl,
        SF_SLOW_DELIVERIES_QUEUE_ARN: 'arn:aws:sqs:eu-west-1:123456789012:slow',
      },
      clients: clients(),
    });

    // Act
    await services.lanes?.slowRetries.schedule(job, 900);
    await services.lanes?.slowRetries.schedule(job, 1800);

    // Assert
    expect(sqs).toHaveReceivedCommandTimes(SendMessageBatchCommand, 1);
    expect(sqs).toHaveReceivedCommandWith(SendMessageBatchCommand, {
      QueueUrl: slowUrl,
      Entries: [{ Id: 'm0', MessageBody: JSON.stringify(job), DelaySeconds: 900 }],
    });
    expect(scheduler).toHaveReceivedCommandTimes(CreateScheduleCommand, 1);
    expect(scheduler).toHaveReceivedCommandWith(CreateScheduleCommand, {
      Target: expect.objectContaining({ Arn: awsEnv.SF_DELIVERIES_QUEUE_ARN }),
    });
  });

  it('tells the delivery worker a record of either deliveries DLQ from a job of its lanes', () => {
    // Arrange
    const dlqs = ['arn:aws:sqs:eu-west-1:123456789012:Dlq1', 'arn:aws:sqs:eu-west-1:123456789012:Dlq2'];
    const services = createAwsServices('sendflow-delivery', [deadLetters], {
      env: { ...tablesEnv, ...awsEnv, SF_DELIVERY_DLQ_ARNS: dlqs.join(',') },
      clients: clients(),
    });
    const from = (eventSourceARN: string) => ({ eventSourceARN }) as SQSRecord;

    // Act / Assert
    expect(services.isDeadLetter?.(from(dlqs[0] as string))).toBe(true);
    expect(services.isDeadLetter?.(from(dlqs[1] as string))).toBe(true);
    expect(services.isDeadLetter?.(from(awsEnv.SF_DELIVERIES_QUEUE_ARN))).toBe(false);
  });

  it('gives the dispatcher the deliveries queue, the API the events queue, the reconciler queue-only retries', () => {
    const env = { ...tablesEnv, ...awsEnv };
    const build = (plugs: Parameters<typeof createAwsServices>[1]) =>
      createAwsServices('f', plugs, { env, clients: clients() });
    expect(build([deliveriesQueue]).deliveryQueue).toBeInstanceOf(SqsDeliveryQueue);
    expect(build([eventsQueue]).events).toBeInstanceOf(SqsEventPublisher);
    expect(build([queuedRetries]).retries).toBeInstanceOf(QueueRetryScheduler);
    expect(build([scheduledSends]).sendScheduler).toBeInstanceOf(AwsSendScheduler);
    expect(build([queuedSends]).sendScheduler).toBeInstanceOf(QueueSendScheduler);
  });

  it('gives the API the send scheduler on the configured sends queue and group', async () => {
    // Arrange
    const services = createAwsServices('sendflow-api', [scheduledSends], {
      env: { ...tablesEnv, ...awsEnv },
      clients: clients(),
    });

    // Act
    await services.sendScheduler.schedule('email_1', Date.now() - 1000);
    await services.sendScheduler.schedule('email_2', Date.now() + 3_600_000);

    // Assert
    expect(sqs).toHaveReceivedCommandWith(SendMessageCommand, {
      QueueUrl: awsEnv.SF_SENDS_QUEUE_URL,
      MessageBody: JSON.stringify({ emailId: 'email_1' }),
    });
    expect(scheduler).toHaveReceivedCommandWith(CreateScheduleCommand, {
      Name: 'send-email_2',
      GroupName: awsEnv.SF_SENDS_SCHEDULE_GROUP,
      Target: expect.objectContaining({
        Arn: awsEnv.SF_SENDS_QUEUE_ARN,
        RoleArn: awsEnv.SF_SENDS_SCHEDULER_ROLE_ARN,
        DeadLetterConfig: { Arn: awsEnv.SF_SENDS_SCHEDULER_DLQ_ARN },
      }),
    });
  });

  it('reads the signing secret named by the stack on first use, not at cold start, then from its cache', async () => {
    // Act
    const services = createAwsServices('sendflow-api', [signedLinks], {
      env: { ...tablesEnv, ...awsEnv },
      clients: clients(),
    });
    const atColdStart = secrets.commandCalls(GetSecretValueCommand).length;

    // Assert
    expect(atColdStart).toBe(0);
    expect(await services.links.secret()).toBe(SECRET);
    expect(await services.links.secret()).toBe(SECRET);
    expect(services.links.baseUrl()).toBe(awsEnv.SF_PUBLIC_URL);
    expect(secrets).toHaveReceivedCommandTimes(GetSecretValueCommand, 1);
    expect(secrets).toHaveReceivedCommandWith(GetSecretValueCommand, { SecretId: awsEnv.SF_SIGNING_SECRET_ID });
  });

  it('sends live-mode email through SES with the configuration set of its domain’s tracking; test mode stays simulated', async () => {
    // Arrange: the sender domain turned open and click tracking on (the repositories read through the
    // DocumentClient, mocked for this test only).
    const table = mockClient(DynamoDBDocumentClient);
    table.on(GetCommand).resolves({
      Item: {
        tenant: 'acct_1#live',
        id: domainId({ accountId: 'acct_1', mode: 'live' }, 'acme.example'),
        accountId: 'acct_1',
        mode: 'live',
        name: 'acme.example',
        status: 'verified',
        records: [],
        openTracking: true,
        clickTracking: true,
        createdAt: '2026-01-01T00:00:00.000Z',
        updatedAt: '2026-01-01T00:00:00.000Z',
      },
    });
    onTestFinished(() => table.restore());
    const services = createAwsServices('sendflow-sender', [sesEmail], {
      env: { ...tablesEnv, ...awsEnv },
      clients: clients(),
    });
    const email = {
      id: 'email_1',
      accountId: 'acct_1',
      mode: 'live' as const,
      from: 'a@acme.example',
      to: ['b@example.com'],
      cc: [],
      bcc: [],
      replyTo: [],
      subject: 'S',
      html: '<p>x</p>',
      headers: {},
      tags: [],
      createdAt: new Date().toISOString(),
    };

    // Act
    await services.providerFor('live').send(email, [{ to: 'b@example.com', headers: {} }]);

    // Assert
    expect(services.providerFor('live')).toBeInstanceOf(SesEmailProvider);
    expect(services.providerFor('test')).toBeInstanceOf(SimulatedEmailProvider);
    expect(ses).toHaveReceivedCommandWith(SendEmailCommand, {
      ConfigurationSetName: `${awsEnv.SF_SES_CONFIGURATION_SET}-open-click`,
      Destination: { ToAddresses: ['b@example.com'] },
    });
    expect(table.commandCalls(GetCommand).map((call) => call.args[0].input.TableName)).toEqual(['domains-table']);
  });

  it('paces the send worker at the SF_SES_MAX_SEND_RATE its template sets, and nothing without it', () => {
    // Act
    const paced = createAwsServices('sendflow-sender', [sesEmail], {
      env: { ...tablesEnv, ...awsEnv, SF_SES_MAX_SEND_RATE: '1.4' },
      clients: clients(),
    });
    const unpaced = createAwsServices('sendflow-sender', [sesEmail], {
      env: { ...tablesEnv, ...awsEnv },
      clients: clients(),
    });

    // Assert
    expect(paced.livePacer).toBeInstanceOf(TokenBucketPacer);
    expect(unpaced.livePacer).toBeUndefined();
  });

  it('gives functions that manage domains SES identities, and the others the simulator', () => {
    const env = { ...tablesEnv, ...awsEnv };
    const withDomains = createAwsServices('sendflow-api', [sesDomains], { env, clients: clients() });
    const without = createAwsServices('sendflow-sender', [sesEmail], { env, clients: clients() });
    expect(withDomains.domainProviderFor('live')).toBeInstanceOf(SesDomainProvider);
    // Test-mode domains never create real SES identities.
    expect(withDomains.domainProviderFor('test')).toBeInstanceOf(SimulatedDomainProvider);
    expect(without.domainProviderFor('live')).toBeInstanceOf(SimulatedDomainProvider);
  });

  it('tags the SES identities it creates with SF_SES_IDENTITY_OWNER and the account', async () => {
    // Arrange
    const env = { ...tablesEnv, ...awsEnv };
    const services = createAwsServices('sendflow-api', [sesDomains], { env, clients: clients() });
    ses.on(CreateEmailIdentityCommand).resolves({ DkimAttributes: { Tokens: ['t1', 't2', 't3'] } });

    // Act
    await services.domainProviderFor('live').register('acme.example', 'acct_1');

    // Assert
    expect(ses).toHaveReceivedCommandWith(CreateEmailIdentityCommand, {
      EmailIdentity: 'acme.example',
      Tags: [
        { Key: 'sendflow:managed', Value: 'SendflowApi' },
        { Key: 'sendflow:account', Value: 'acct_1' },
      ],
    });
  });

  it('keeps live mode simulated in functions that do not send through SES', () => {
    const env = { ...tablesEnv, ...awsEnv };
    const services = createAwsServices('sendflow-dispatcher', [deliveriesQueue], { env, clients: clients() });
    expect(services.providerFor('live')).toBeInstanceOf(SimulatedEmailProvider);
  });

  it('prefers SF_SIGNING_SECRET when it is set, without calling Secrets Manager', async () => {
    const env = { ...tablesEnv, ...awsEnv, SF_SIGNING_SECRET: 'e'.repeat(40) };
    const services = createAwsServices('sendflow-api', [signedLinks], { env, clients: clients() });
    expect(await services.links.secret()).toBe('e'.repeat(40));
    expect(secrets).not.toHaveReceivedCommand(GetSecretValueCommand);
  });

  it.each([
    ['a short secret', { SecretString: 'too-short' }],
    ['a binary secret', { SecretBinary: new Uint8Array(64) }],
  ])('refuses to sign with %s: a 503 for the request, the cold start unharmed', async (_name, answer) => {
    secrets.on(GetSecretValueCommand).resolves(answer);
    const services = createAwsServices('sendflow-api', [signedLinks], {
      env: { ...tablesEnv, ...awsEnv },
      clients: clients(),
    });
    await expect(services.links.secret()).rejects.toThrow(SigningSecretError);
    await expect(services.links.secret()).rejects.toMatchObject({ status: 503, code: 'service_unavailable' });
  });

  it('names the secret in the error cause when Secrets Manager refuses, and not in the message', async () => {
    secrets.on(GetSecretValueCommand).rejects(new Error('AccessDeniedException'));
    const services = createAwsServices('sendflow-api', [signedLinks], {
      env: { ...tablesEnv, ...awsEnv },
      clients: clients(),
    });
    const error = (await services.links.secret().catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(SigningSecretError);
    expect(error.message).not.toContain('signing-secret');
    expect((error.cause as Error).message).toBe('Could not read the signing secret SendflowData/signing-secret');
    expect(((error.cause as Error).cause as Error).message).toBe('AccessDeniedException');
  });

  it('fails the cold start naming every missing variable the function needs', async () => {
    // Arrange
    const { SF_SCHEDULE_GROUP: _group, SF_SCHEDULER_DLQ_ARN: _dlq, ...partial } = awsEnv;

    // Act
    const start = () =>
      createAwsServices('sendflow-delivery', [scheduledRetries], { env: { ...tablesEnv, ...partial } });

    // Assert
    expect(start).toThrow(ConfigError);
    expect(start).toThrow(/SF_SCHEDULE_GROUP: required by sendflow-delivery, not set/);
    expect(start).toThrow(/SF_SCHEDULER_DLQ_ARN: required by sendflow-delivery, not set/);
  });

  it('asks each function only for what its plugs use', () => {
    const config: Config = loadConfig(tablesEnv);
    const missing = (...plugs: Parameters<typeof missingAwsVariables>[0]) => missingAwsVariables(plugs, config);
    expect(missing()).toEqual([]);
    expect(missing(eventsQueue)).toEqual(['SF_EVENTS_QUEUE_URL']);
    expect(missing(deliveriesQueue)).toEqual(['SF_DELIVERIES_QUEUE_URL']);
    expect(missing(queuedRetries)).toEqual(['SF_DELIVERIES_QUEUE_URL']);
    expect(missing(scheduledRetries)).toEqual([
      'SF_DELIVERIES_QUEUE_URL',
      'SF_DELIVERIES_QUEUE_ARN',
      'SF_SCHEDULE_GROUP',
      'SF_SCHEDULER_ROLE_ARN',
      'SF_SCHEDULER_DLQ_ARN',
    ]);
    expect(missing(queuedSends)).toEqual(['SF_SENDS_QUEUE_URL']);
    expect(missing(scheduledSends)).toEqual([
      'SF_SENDS_QUEUE_URL',
      'SF_SENDS_QUEUE_ARN',
      'SF_SENDS_SCHEDULE_GROUP',
      'SF_SENDS_SCHEDULER_ROLE_ARN',
      'SF_SENDS_SCHEDULER_DLQ_ARN',
    ]);
    expect(missing(signedLinks)).toEqual(['SF_SIGNING_SECRET_ID', 'SF_PUBLIC_URL']);
    expect(missing(sesEmail, eventsQueue)).toEqual(['SF_SES_CONFIGURATION_SET', 'SF_EVENTS_QUEUE_URL']);
    expect(missing(slowLane)).toEqual(['SF_SLOW_DELIVERIES_QUEUE_URL', 'SF_SLOW_DELIVERIES_QUEUE_ARN']);
    expect(missing(deadLetters)).toEqual(['SF_DELIVERY_DLQ_ARNS']);
    expect(missing(authorizerCache)).toEqual(['SF_REST_API_ID']);
    // Two plugs on one queue ask for it once.
    expect(missing(deliveriesQueue, scheduledRetries)).toHaveLength(5);
    expect(missing(sesDomains)).toEqual(['SF_SES_IDENTITY_OWNER']);
    expect(missing(emailBodies)).toEqual(['SF_EMAIL_BODIES_BUCKET']);
  });

  it('keeps a small body in emailParts and puts a large one in the stage bucket (one untagged PutObject under retention/), read back with one GetObject', async () => {
    // Arrange
    const s3 = mockClient(S3Client);
    const doc = mockClient(DynamoDBDocumentClient);
    onTestFinished(() => {
      s3.restore();
      doc.restore();
    });
    s3.on(PutObjectCommand).resolves({});
    doc.on(BatchWriteCommand).resolves({ UnprocessedItems: {} });
    doc.on(GetCommand).resolves({});
    const bucket = 'sendflow-prod-data-emailbodies-abc';
    const services = createAwsServices('sendflow-api', [emailBodies], {
      env: { ...tablesEnv, ...awsEnv, SF_EMAIL_BODIES_BUCKET: bucket, SF_EMAIL_RETENTION_DAYS: '30' },
      clients: [...clients(), new S3Client({ region: 'eu-west-1' })],
    });
    const bodies = (services.emails as DynamoEmailRepository).bodies;
    const expiresAt = Math.floor(Date.now() / 1000) + 30 * 86_400;
    // Random text: past the inline limit compressed too.
    const large = { html: `<p>${randomBytes(150 * 1024).toString('base64')}</p>`, headers: {} };
    s3.on(GetObjectCommand).resolves({
      Body: { transformToByteArray: async () => encodeBody(large, expiresAt) } as never,
    });

    // Act
    await bodies.putMany([
      { emailId: 'email_small', body: { text: 'Hi', headers: {} }, expiresAt },
      { emailId: 'email_large', body: large, expiresAt },
    ]);
    const read = await bodies.get('email_large');

    // Assert
    expect(s3).toHaveReceivedCommandTimes(PutObjectCommand, 1);
    expect(s3).toHaveReceivedCommandWith(PutObjectCommand, {
      Bucket: bucket,
      Key: 'retention/emails/email_large/body.json',
      ContentType: 'application/json',
    });
    expect(s3.commandCalls(PutObjectCommand)[0]?.args[0].input).not.toHaveProperty('Tagging');
    const written = doc
      .commandCalls(BatchWriteCommand)
      .flatMap((c) => c.args[0].input.RequestItems?.['emailParts-table'] ?? []);
    expect(written.map((w) => w.PutRequest?.Item?.emailId)).toEqual(['email_small']);
    expect(s3.commandCalls(GetObjectCommand).map((c) => c.args[0].input)).toEqual([
      { Bucket: bucket, Key: 'retention/emails/email_large/body.json' },
    ]);
    expect(read).toEqual(large);
  });

  it('gives the API and the send worker the file store on the stage bucket (attachments), the others none', async () => {
    // Arrange
    const s3 = mockClient(S3Client);
    onTestFinished(() => s3.restore());
    s3.on(PutObjectCommand).resolves({});
    s3.on(HeadObjectCommand).resolves({});
    const bucket = 'sendflow-prod-data-emailbodies-abc';
    const env = { ...tablesEnv, ...awsEnv, SF_EMAIL_BODIES_BUCKET: bucket, SF_EMAIL_RETENTION_DAYS: '30' };
    const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };
    const api = createAwsServices('sendflow-api', [emailBodies], {
      env,
      clients: [...clients(), new S3Client({ region: 'eu-west-1', credentials })],
    });
    const dispatcher = createAwsServices('sendflow-dispatcher', [], { env: tablesEnv, clients: clients() });
    const expiresAt = Math.floor(Date.now() / 1000) + 86_400;

    // Act
    await api.files.put('emails/email_1/attachments/att_1', new Uint8Array([1]), {
      contentType: 'image/png',
      expiresAt,
    });
    const link = await api.files.downloadUrl('emails/email_1/attachments/att_1', {
      filename: 'a.png',
      contentType: 'image/png',
    });

    // Assert
    expect(s3).toHaveReceivedCommandWith(PutObjectCommand, {
      Bucket: bucket,
      Key: 'retention/emails/email_1/attachments/att_1',
      ContentType: 'image/png',
    });
    expect(s3.commandCalls(PutObjectCommand)[0]?.args[0].input).not.toHaveProperty('Tagging');
    expect(s3).toHaveReceivedCommandWith(HeadObjectCommand, {
      Bucket: bucket,
      Key: 'retention/emails/email_1/attachments/att_1',
    });
    expect(new URL(link.url).pathname).toBe('/retention/emails/email_1/attachments/att_1');
    expect(new URL(link.url).hostname).toBe(`${bucket}.s3.eu-west-1.amazonaws.com`);
    await expect(dispatcher.files.get('emails/x/attachments/y')).rejects.toThrow(/No file store is wired/);
  });

  it('still reports missing table variables as configuration errors', () => {
    expect(() => createAwsServices('sendflow-api', [], { env: {} })).toThrow(/SF_TABLE_WEBHOOKS/);
  });

  it('makes a port the function was not given refuse to work, naming the function', async () => {
    // Arrange
    const services = createAwsServices('sendflow-dispatcher', [deliveriesQueue], {
      env: { ...tablesEnv, SF_DELIVERIES_QUEUE_URL: awsEnv.SF_DELIVERIES_QUEUE_URL },
      clients: clients(),
    });

    // Act & Assert
    await expect(services.retries.schedule(job, 1)).rejects.toThrow(
      'The retry scheduler is not wired into sendflow-dispatcher',
    );
    await expect(services.events.publish([])).rejects.toThrow('The events queue is not wired into sendflow-dispatcher');
    await expect(services.sendScheduler.schedule('email_1', 0)).rejects.toThrow(
      'The send scheduler is not wired into sendflow-dispatcher',
    );
    await expect(services.links.secret()).rejects.toThrow('The link signer is not wired into sendflow-dispatcher');
    await expect(services.authorizerCache.flush()).rejects.toThrow(
      'The authorizer cache is not wired into sendflow-dispatcher',
    );
    expect(sqs).not.toHaveReceivedCommand(SendMessageBatchCommand);
  });
});

// AWS destinations (docs/webhooks.md, "AWS destinations"): the destination rules (shapes, regions, 422 paths),
// the external id made once per account, and the real AWS SDK sending through AwsDestinationSender to a loopback
// stand-in that speaks EventBridge's and SQS's JSON protocols and recomputes each request's SigV4 signature from
// the assumed role's credentials (STS through aws-sdk-client-mock). End to end through attemptDelivery: the event
// and its sequence arrive; a failing stand-in gives retries and log entries with AWS's code and request id; a
// per-email webhook's later event waits for the earlier one; manual retry and recovery use the same seam.
import { AssumeRoleCommand, STSClient, STSServiceException } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  AwsDestinationSender,
  EVENTBRIDGE_SOURCE,
  SESSION_RENEW_MS,
} from '../../lambdas/adapters/aws/destination-sender';
import { DestinationSender } from '../../lambdas/adapters/destination-sender';
import { type AttemptDeps, attemptDelivery, outboundOf, retryDelivery } from '../../lambdas/app/webhooks/attempts';
import { dispatchEvent } from '../../lambdas/app/webhooks/dispatch-event';
import { createWebhook, getWebhook, updateWebhook } from '../../lambdas/app/webhooks/manage-webhooks';
import type { Delivery, DeliveryJob, OutboundRequest, Webhook } from '../../lambdas/app/webhooks/ports';
import { eventSequence } from '../../lambdas/domain/email/sequence';
import { ValidationError } from '../../lambdas/domain/errors';
import type { SendflowEvent } from '../../lambdas/domain/events';
import { checkWebhookUrl } from '../../lambdas/domain/webhooks/address-guard';
import {
  type AwsDestination,
  activeDestination,
  destinationProblems,
  errorClassOfAws,
  isAwsStoredUrl,
  storedUrlOf,
  trustPolicyOf,
} from '../../lambdas/domain/webhooks/destination';
import type { WebhookItem } from '../../lambdas/handlers/dashboard/pages/views';
import { answerText, destinationSection } from '../../lambdas/handlers/dashboard/pages/webhook-destination';
import { AwsStandIn, type StandInCredentials } from '../support/aws-stand-in';
import {
  FakeClock,
  InMemoryAccountRepository,
  InMemoryDeliveryRepository,
  InMemoryOrderLanes,
  InMemoryWebhookRepository,
  RecordingDeliveryQueue,
  RecordingRetryScheduler,
  ScriptedSender,
  seededRandom,
} from '../support/fakes';
import { EMAIL_A, EMAIL_B, eventOf, T0, TENANT, webhookOf } from '../support/ordering-fixtures';

const BUS = 'arn:aws:events:eu-west-1:111122223333:event-bus/sendflow-events';
const ROLE = 'arn:aws:iam::111122223333:role/sendflow-delivery';
const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/111122223333/sendflow-events.fifo';
const EXTERNAL_ID = 'sfx_abcdefghijklmnopqrstuvwxyz234567';

describe('destination rules', () => {
  it('accepts an event bus and a queue with a role of their partition', () => {
    expect(destinationProblems({ type: 'aws_eventbridge', event_bus_arn: BUS, role_arn: ROLE })).toEqual([]);
    expect(destinationProblems({ type: 'aws_sqs', queue_url: QUEUE, role_arn: ROLE })).toEqual([]);
    expect(destinationProblems({ type: 'http' })).toEqual([]);
  });

  it('names the path of every mistake: shapes, missing fields, fields of the other type, regions, partitions', () => {
    expect(destinationProblems({ type: 'aws_eventbridge', event_bus_arn: 'my-bus', role_arn: 'role' })).toEqual([
      { path: ['role_arn'], message: expect.stringContaining('IAM role ARN') },
      { path: ['event_bus_arn'], message: expect.stringContaining('event bus ARN') },
    ]);
    expect(destinationProblems({ type: 'aws_sqs', role_arn: ROLE, event_bus_arn: BUS })).toEqual([
      { path: ['event_bus_arn'], message: 'is only for type aws_eventbridge.' },
      { path: ['queue_url'], message: expect.stringContaining('is required') },
    ]);
    expect(
      destinationProblems({
        type: 'aws_eventbridge',
        event_bus_arn: 'arn:aws:events:cn-north-1:111122223333:event-bus/b',
        role_arn: ROLE,
      }).map((p) => p.path[0]),
    ).toEqual(['event_bus_arn']);
    expect(
      destinationProblems({
        type: 'aws_eventbridge',
        event_bus_arn: 'arn:aws-cn:events:cn-north-1:111122223333:event-bus/b',
        role_arn: ROLE,
      }),
    ).toEqual([{ path: ['role_arn'], message: 'is in partition aws, the bus in aws-cn.' }]);
    expect(destinationProblems({ type: 'http', role_arn: ROLE })[0]?.path).toEqual(['role_arn']);
    expect(
      destinationProblems({
        type: 'aws_sqs',
        queue_url: 'https://sqs.nowhere.amazonaws.com/111122223333/q',
        role_arn: ROLE,
      })[0]?.message,
    ).toContain('names no AWS region');
  });

  it("stores a url every release's HTTP sender refuses (a rollback fails visibly, sends nowhere)", () => {
    const bus: AwsDestination = { type: 'aws_eventbridge', eventBusArn: BUS, roleArn: ROLE, externalId: EXTERNAL_ID };
    const queue: AwsDestination = { type: 'aws_sqs', queueUrl: QUEUE, roleArn: ROLE, externalId: EXTERNAL_ID };
    for (const stored of [storedUrlOf(bus), storedUrlOf(queue)]) {
      expect(isAwsStoredUrl(stored)).toBe(true);
      expect(checkWebhookUrl(stored, { allowPrivate: true })).toEqual({ ok: false, reason: 'must use http or https' });
      expect(checkWebhookUrl(stored, { allowPrivate: false })).toEqual({ ok: false, reason: 'must use https' });
    }
  });

  it('delivers to the AWS destination only while url is its stand-in (a URL set during a rollback wins)', () => {
    const bus: AwsDestination = { type: 'aws_eventbridge', eventBusArn: BUS, roleArn: ROLE, externalId: EXTERNAL_ID };
    expect(activeDestination({ url: storedUrlOf(bus), destination: bus })).toEqual(bus);
    expect(activeDestination({ url: 'https://example.com/hook', destination: bus })).toBeNull();
    const webhook = { ...webhookOf(), url: 'https://example.com/hook', destination: bus };
    const delivery = { accountId: 'a', eventId: 'evt_1', event: 'email.sent', id: 'dlv_1', payload: '{}' };
    const request = { url: webhook.url, body: '{}', headers: {} };
    expect(outboundOf(webhook, delivery, request)).toEqual({
      url: 'https://example.com/hook',
      body: '{}',
      headers: {},
    });
  });

  it('classes AWS failures as the HTTP ones: 5xx, else 4xx (AccessDenied, throttling), no answer a network error', () => {
    expect(errorClassOfAws('InternalFailure', 500)).toBe('http_5xx');
    expect(errorClassOfAws('ServiceUnavailable', 503)).toBe('http_5xx');
    expect(errorClassOfAws('AccessDenied', 403)).toBe('http_4xx');
    expect(errorClassOfAws('ThrottlingException', 400)).toBe('http_4xx');
    expect(errorClassOfAws('ECONNREFUSED', undefined)).toBe('network_error');
  });

  it('gives a trust policy that requires the external id', () => {
    expect(trustPolicyOf({ principalArn: 'arn:aws:iam::999988887777:role/x' }, EXTERNAL_ID)).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Principal: { AWS: 'arn:aws:iam::999988887777:role/x' },
          Action: 'sts:AssumeRole',
          Condition: { StringEquals: { 'sts:ExternalId': EXTERNAL_ID } },
        },
      ],
    });
  });
});

describe('creating a webhook with an AWS destination', () => {
  function manageDeps() {
    const accounts = new InMemoryAccountRepository();
    accounts.items.set(TENANT.accountId, { id: TENANT.accountId, plan: 'free', createdAt: new Date(T0).toISOString() });
    const deps = {
      webhooks: new InMemoryWebhookRepository(),
      urlVerifier: { problem: async () => null },
      clock: new FakeClock(T0),
      random: seededRandom('create'),
      externalIds: accounts,
    };
    return { deps, accounts };
  }

  it('stores the destination with the account external id, made once and the same for every AWS webhook', async () => {
    const { deps, accounts } = manageDeps();

    const bus = await createWebhook(deps, TENANT, {
      events: ['email.sent'],
      destination: { type: 'aws_eventbridge', event_bus_arn: BUS, role_arn: ROLE },
    });
    const queue = await createWebhook(
      deps,
      { ...TENANT, mode: 'live' },
      {
        events: ['email.sent'],
        destination: { type: 'aws_sqs', queue_url: QUEUE, role_arn: ROLE },
      },
    );

    const externalId = accounts.items.get(TENANT.accountId)?.awsExternalId as string;
    expect(externalId).toMatch(/^sfx_[a-z2-7]{32}$/);
    expect(bus.destination).toEqual({ type: 'aws_eventbridge', eventBusArn: BUS, roleArn: ROLE, externalId });
    expect(queue.destination).toMatchObject({ type: 'aws_sqs', queueUrl: QUEUE, externalId });
    expect(bus.url).toBe(`aws-eventbridge:${BUS}`);
    expect(bus.format).toBe('standard');
    expect(await getWebhook(deps, TENANT, bus.id)).toEqual(bus);
  });

  it('answers 422 with the path under destination, and changes nothing', async () => {
    const { deps, accounts } = manageDeps();

    const made = createWebhook(deps, TENANT, {
      url: 'https://example.com/hook',
      events: ['email.sent'],
      destination: { type: 'aws_sqs', queue_url: 'https://example.com/q', role_arn: ROLE },
    });

    await expect(made).rejects.toBeInstanceOf(ValidationError);
    await expect(made).rejects.toMatchObject({
      details: [
        { path: 'destination.queue_url', message: expect.stringContaining('must be an SQS queue URL') },
        { path: 'url', message: expect.stringContaining('not given with an AWS destination') },
      ],
    });
    expect(deps.webhooks.items.size).toBe(0);
    expect(accounts.items.get(TENANT.accountId)?.awsExternalId).toBeUndefined();
  });

  it("refuses a url change on an AWS webhook (its url is the destination's stand-in)", async () => {
    const { deps } = manageDeps();
    const bus = await createWebhook(deps, TENANT, {
      events: ['email.sent'],
      destination: { type: 'aws_eventbridge', event_bus_arn: BUS, role_arn: ROLE },
    });

    await expect(updateWebhook(deps, TENANT, bus.id, { url: 'https://example.com/x' })).rejects.toMatchObject({
      details: [{ path: 'url' }],
    });
  });
});

describe('the dashboard', () => {
  it("shows an AWS destination's external id and trust policy, and an attempt's AWS code and request id", () => {
    const trust = trustPolicyOf({ principalArn: 'arn:aws:iam::999988887777:root' }, EXTERNAL_ID);
    const section = String(
      destinationSection({
        ...({} as WebhookItem),
        destination: {
          type: 'aws_sqs',
          queue_url: QUEUE,
          role_arn: ROLE,
          external_id: EXTERNAL_ID,
          trust_policy: trust,
        },
      }),
    );
    expect(section).toContain(`id="external-id">${EXTERNAL_ID}<`);
    expect(section).toContain('&quot;sts:ExternalId&quot;');
    expect(String(destinationSection({ ...({} as WebhookItem), destination: { type: 'http' } }))).toBe('');
    const answer = answerText({
      at: '',
      status_code: 0,
      duration_ms: 1,
      error: 'x',
      aws_error_code: 'AccessDenied',
      aws_request_id: 'req-1',
    });
    expect(String(answer)).toContain('AccessDenied');
    expect(String(answer)).toContain('request req-1');
  });
});

const sts = mockClient(STSClient);
let credentialsIssued = 0;
function issue(expiresInMs = 900_000): StandInCredentials & { expiration: Date } {
  credentialsIssued += 1;
  return {
    accessKeyId: `ASIATESTKEY${credentialsIssued}`,
    secretAccessKey: `secret-${credentialsIssued}-${'x'.repeat(20)}`,
    sessionToken: `token-${credentialsIssued}`,
    expiration: new Date(clockNow + expiresInMs),
  };
}
let clockNow = T0;
const standIn = new AwsStandIn({ accessKeyId: '-', secretAccessKey: '-', sessionToken: '-' });
let endpoint = '';

beforeAll(async () => {
  endpoint = await standIn.start();
});
afterAll(async () => {
  await standIn.stop();
  sts.restore();
});

/** STS answers every AssumeRole with new credentials, which the stand-in then expects. */
function stsIssues(expiresInMs?: number) {
  sts.reset();
  sts.on(AssumeRoleCommand).callsFake(async () => {
    const c = issue(expiresInMs);
    standIn.expect(c);
    return {
      Credentials: {
        AccessKeyId: c.accessKeyId,
        SecretAccessKey: c.secretAccessKey,
        SessionToken: c.sessionToken,
        Expiration: c.expiration,
      },
    };
  });
}

function awsSender(clock: FakeClock) {
  return new AwsDestinationSender({
    timeoutMs: 5_000,
    region: 'us-east-1',
    endpoint,
    now: () => clock.now(),
    sts: new STSClient({ region: 'us-east-1', credentials: { accessKeyId: 'sendflow', secretAccessKey: 'sendflow' } }),
  });
}

const busDestination: AwsDestination = {
  type: 'aws_eventbridge',
  eventBusArn: BUS,
  roleArn: ROLE,
  externalId: EXTERNAL_ID,
};
const queueDestination: AwsDestination = { type: 'aws_sqs', queueUrl: QUEUE, roleArn: ROLE, externalId: EXTERNAL_ID };

function requestTo(
  destination: AwsDestination,
  body = '{"id":"evt_1","type":"email.sent","data":{}}',
): OutboundRequest {
  return {
    url: storedUrlOf(destination),
    body,
    headers: { 'Content-Type': 'application/json' },
    destination,
    context: {
      accountId: 'acct_main',
      eventId: 'evt_1',
      eventType: 'email.sent',
      deliveryId: 'dlv_1',
      orderingKey: 'email_1',
    },
  };
}

describe('AwsDestinationSender against the stand-in', () => {
  let clock: FakeClock;
  beforeEach(() => {
    clock = new FakeClock(T0);
    clockNow = T0;
    standIn.calls.length = 0;
    standIn.failWith(null);
    stsIssues();
  });

  it('assumes the role with the external id, then puts the event on the bus, signed with the session', async () => {
    const sender = awsSender(clock);

    const outcome = await sender.send(requestTo(busDestination));

    expect(sts.commandCalls(AssumeRoleCommand).map((c) => c.args[0].input)).toEqual([
      { RoleArn: ROLE, ExternalId: EXTERNAL_ID, RoleSessionName: 'sendflow-acct_main', DurationSeconds: 900 },
    ]);
    const [call] = standIn.calls;
    expect(call).toMatchObject({ action: 'PutEvents', service: 'events', region: 'eu-west-1', signatureValid: true });
    expect(call?.headers['x-amz-target']).toBe('AWSEvents.PutEvents');
    expect(call?.body).toEqual({
      Entries: [
        {
          EventBusName: BUS,
          Source: EVENTBRIDGE_SOURCE,
          DetailType: 'email.sent',
          Detail: '{"id":"evt_1","type":"email.sent","data":{}}',
          Resources: [],
        },
      ],
    });
    expect(outcome).toMatchObject({ statusCode: 200, error: null, errorClass: null, awsRequestId: call?.requestId });
    expect(JSON.parse(outcome.response)).toHaveProperty('EventId');
    await sender.close();
  });

  it('keeps the session until shortly before it expires, then assumes the role again', async () => {
    const sender = awsSender(clock);
    await sender.send(requestTo(busDestination));
    await sender.send(requestTo(queueDestination));
    expect(sts.commandCalls(AssumeRoleCommand)).toHaveLength(1);

    clock.advance(900_000 - SESSION_RENEW_MS + 1);
    const outcome = await sender.send(requestTo(busDestination));

    expect(sts.commandCalls(AssumeRoleCommand)).toHaveLength(2);
    expect(outcome.errorClass).toBeNull();
    expect(standIn.calls.every((c) => c.signatureValid)).toBe(true);
    await sender.close();
  });

  it('sends to a FIFO queue with the email as group, the delivery as dedup id, and the event as attributes', async () => {
    const sender = awsSender(clock);

    const outcome = await sender.send(requestTo(queueDestination));

    const [call] = standIn.calls;
    expect(call).toMatchObject({ action: 'SendMessage', service: 'sqs', signatureValid: true });
    expect(call?.headers['x-amz-target']).toBe('AmazonSQS.SendMessage');
    expect(call?.body).toMatchObject({
      QueueUrl: QUEUE,
      MessageBody: '{"id":"evt_1","type":"email.sent","data":{}}',
      MessageGroupId: 'email_1',
      MessageDeduplicationId: 'dlv_1',
      MessageAttributes: {
        'sendflow-event-type': { DataType: 'String', StringValue: 'email.sent' },
        'sendflow-event-id': { DataType: 'String', StringValue: 'evt_1' },
      },
    });
    expect(outcome).toMatchObject({ statusCode: 200, errorClass: null, awsRequestId: call?.requestId });
    await sender.close();
  });

  it('records a failed PutEvents entry (a 200 answer) as a failure with its code and the request id', async () => {
    const sender = awsSender(clock);
    standIn.failWith({ kind: 'entry', code: 'InternalFailure', message: 'try again' });

    const outcome = await sender.send(requestTo(busDestination));

    expect(outcome).toMatchObject({
      statusCode: null,
      errorClass: 'http_5xx',
      awsErrorCode: 'InternalFailure',
      awsRequestId: standIn.calls[0]?.requestId,
      error: 'AWS refused the event (InternalFailure): try again',
    });
    await sender.close();
  });

  it('records an SQS error with its code, class and request id', async () => {
    const sender = awsSender(clock);
    standIn.failWith({ kind: 'error', status: 400, code: 'QueueDoesNotExist', message: 'no such queue' });

    const outcome = await sender.send(requestTo(queueDestination));

    expect(outcome).toMatchObject({
      statusCode: null,
      errorClass: 'http_4xx',
      awsErrorCode: 'QueueDoesNotExist',
      awsRequestId: standIn.calls[0]?.requestId,
    });
  });

  it('records a role it cannot assume (AccessDenied) without calling the bus, and does not cache the failure', async () => {
    const sender = awsSender(clock);
    sts.reset();
    sts.on(AssumeRoleCommand).rejectsOnce(
      new STSServiceException({
        name: 'AccessDenied',
        $fault: 'client',
        message: 'not authorized to perform sts:AssumeRole',
        $metadata: { httpStatusCode: 403, requestId: 'sts-request-1' },
      }),
    );

    const outcome = await sender.send(requestTo(busDestination));

    expect(outcome).toMatchObject({
      statusCode: null,
      errorClass: 'http_4xx',
      awsErrorCode: 'AccessDenied',
      awsRequestId: 'sts-request-1',
      error: 'assuming the role failed (AccessDenied): not authorized to perform sts:AssumeRole',
    });
    expect(standIn.calls).toHaveLength(0);
    stsIssues();
    expect((await sender.send(requestTo(busDestination))).errorClass).toBeNull();
  });

  it('is refused by the stand-in when signed with other credentials (the check is real)', async () => {
    const sender = awsSender(clock);
    await sender.send(requestTo(busDestination));
    standIn.expect({ accessKeyId: 'ASIAOTHER', secretAccessKey: 'other', sessionToken: 'other' });

    const outcome = await sender.send(requestTo(busDestination));

    expect(standIn.calls.at(-1)?.signatureValid).toBe(false);
    expect(outcome).toMatchObject({ errorClass: 'http_4xx', awsErrorCode: 'SignatureDoesNotMatch' });
  });
});

describe('deliveries to AWS destinations (attemptDelivery, the one seam)', () => {
  function setup(delaysSeconds: readonly number[] = [1, 30]) {
    const clock = new FakeClock(T0 + 5_000);
    const webhooks = new InMemoryWebhookRepository();
    const deliveries = new InMemoryDeliveryRepository();
    const retries = new RecordingRetryScheduler();
    const queue = new RecordingDeliveryQueue();
    const orderLanes = new InMemoryOrderLanes();
    const http = new ScriptedSender(clock);
    const deps: AttemptDeps = {
      webhooks,
      deliveries,
      sender: new DestinationSender(http, awsSender(clock)),
      retries,
      clock,
      random: seededRandom(),
      policy: { delaysSeconds },
      claimMs: 60_000,
      retentionSeconds: 30 * 86_400,
      orderLanes,
    };
    const dispatch = async (event: SendflowEvent): Promise<DeliveryJob> => {
      await dispatchEvent({ webhooks, deliveryQueue: queue, clock, orderLanes, retentionSeconds: 30 * 86_400 }, event);
      return queue.sent.at(-1)?.jobs[0] as DeliveryJob;
    };
    const row = (job: DeliveryJob) => deliveries.items.get(`${job.webhookId}#${job.deliveryId}`) as Delivery;
    return { clock, webhooks, deps, dispatch, row, retries, http };
  }
  const awsWebhook = (destination: AwsDestination, ordering?: Webhook['ordering']): Webhook => ({
    ...webhookOf(ordering),
    url: storedUrlOf(destination),
    destination,
  });

  beforeEach(() => {
    clockNow = T0;
    standIn.calls.length = 0;
    standIn.failWith(null);
    stsIssues();
  });

  it('puts the event with its sequence on the bus, signed; the HTTP sender is never asked', async () => {
    const t = setup();
    await t.webhooks.create(awsWebhook(busDestination, 'per_email'));
    const event = eventOf(EMAIL_A, 'email.sent', 10, 1);
    const job = await t.dispatch(event);

    await attemptDelivery(t.deps, job);

    const [call] = standIn.calls;
    expect(call?.signatureValid).toBe(true);
    const entry = (call?.body.Entries as { DetailType: string; Detail: string }[] | undefined)?.[0];
    expect(entry?.DetailType).toBe('email.sent');
    expect(JSON.parse(entry?.Detail ?? '{}')).toMatchObject({
      id: event.id,
      type: 'email.sent',
      sequence: eventSequence(event),
      data: { email_id: EMAIL_A },
    });
    expect(t.row(job)).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(t.row(job).attemptLog[0]).toMatchObject({ statusCode: 200, awsRequestId: call?.requestId });
    expect(t.http.requests).toHaveLength(0);
  });

  it('retries a failing queue and logs AWS code and request id per attempt; a manual retry delivers it', async () => {
    const t = setup();
    await t.webhooks.create(awsWebhook(queueDestination));
    standIn.failWith({ kind: 'error', status: 400, code: 'ThrottlingException', message: 'Rate exceeded' });
    const job = await t.dispatch(eventOf(EMAIL_A, 'email.sent', 10, 1));

    await attemptDelivery(t.deps, job);
    t.clock.advance(1_000);
    await attemptDelivery(t.deps, t.retries.scheduled[0]?.job as DeliveryJob);

    const row = t.row(job);
    expect(t.retries.scheduled.map((s) => s.delaySeconds)).toEqual([1, 30]);
    expect(row.attemptLog.map((e) => [e.statusCode, e.errorClass, e.awsErrorCode, e.awsRequestId])).toEqual(
      standIn.calls.map((c) => [null, 'http_4xx', 'ThrottlingException', c.requestId]),
    );
    expect(row.attemptLog[0]?.error).toBe('AWS throttled the event (ThrottlingException): Rate exceeded');

    // Act: the queue recovers; a manual retry goes through the same seam.
    standIn.failWith(null);
    t.clock.advance(5_000);
    const third = await attemptDelivery(t.deps, t.retries.scheduled[1]?.job as DeliveryJob);
    expect(third).toBe('attempted');
    expect(t.row(job).status).toBe('succeeded');
    const retried = await retryDelivery(t.deps, TENANT, job.webhookId, job.deliveryId, t.clock.now() + 10_000);
    expect(retried.attemptLog.at(-1)).toMatchObject({ kind: 'manual', statusCode: 200 });
    expect(standIn.calls.at(-1)?.body).toMatchObject({ MessageDeduplicationId: job.deliveryId });
  });

  it("keeps one email's order: a later event waits while the earlier one retries, other emails flow", async () => {
    const t = setup();
    await t.webhooks.create(awsWebhook(queueDestination, 'per_email'));
    const sent = await t.dispatch(eventOf(EMAIL_A, 'email.sent', 10, 1));
    const delivered = await t.dispatch(eventOf(EMAIL_A, 'email.delivered', 900, 2));
    const other = await t.dispatch(eventOf(EMAIL_B, 'email.sent', 20, 3));
    standIn.failWith({ kind: 'error', status: 500, code: 'InternalError' }, 1);

    await attemptDelivery(t.deps, sent);
    const held = await attemptDelivery(t.deps, delivered);
    await attemptDelivery(t.deps, other);

    expect(held).toBe('held');
    expect(standIn.calls.map((c) => c.body.MessageGroupId)).toEqual([EMAIL_A, EMAIL_B]);
    // The earlier one's retry succeeds and wakes the later one, which then goes.
    t.clock.advance(1_000);
    await attemptDelivery(t.deps, t.retries.scheduled[0]?.job as DeliveryJob);
    for (const scheduled of t.retries.scheduled.slice(1)) await attemptDelivery(t.deps, scheduled.job);
    expect(t.row(delivered).status).toBe('succeeded');
    const groupA = standIn.calls.filter((c) => c.body.MessageGroupId === EMAIL_A);
    expect(groupA.map((c) => JSON.parse(String(c.body.MessageBody)).type)).toEqual([
      'email.sent',
      'email.sent',
      'email.delivered',
    ]);
  });
});

afterEach(() => {
  standIn.failWith(null);
});

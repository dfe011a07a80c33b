// AWS destinations end to end on the local runtime (docs/webhooks.md, "AWS destinations"): SF_AWS_ENDPOINT_URL
// points the runtime's real AWS SDK at a loopback stand-in of EventBridge and SQS that recomputes SigV4 from the
// assumed role's credentials (STS through aws-sdk-client-mock, in this process). Over real HTTP: a webhook made
// with a destination shows its external id and trust policy; an email's events reach the bus and the queue, signed;
// a failing queue leaves AWS's code and request id in the delivery log (with retries); a bad ARN is a 422 naming it.
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsStandIn } from '../support/aws-stand-in';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

const BUS = 'arn:aws:events:eu-west-1:111122223333:event-bus/sendflow';
const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/111122223333/sendflow-events.fifo';
const ROLE = 'arn:aws:iam::111122223333:role/sendflow-delivery';
const SESSION = { accessKeyId: 'ASIASESSION1', secretAccessKey: 'session-secret-1', sessionToken: 'session-token-1' };

const sts = mockClient(STSClient);
const standIn = new AwsStandIn(SESSION);
let rt: TestRuntime;

beforeAll(async () => {
  sts.on(AssumeRoleCommand).resolves({
    Credentials: {
      AccessKeyId: SESSION.accessKeyId,
      SecretAccessKey: SESSION.secretAccessKey,
      SessionToken: SESSION.sessionToken,
      Expiration: new Date(Date.now() + 900_000),
    },
  });
  const endpoint = await standIn.start();
  rt = await startTestRuntime({
    SF_AWS_ENDPOINT_URL: endpoint,
    SF_AWS_TRUST_PRINCIPAL: 'arn:aws:iam::999988887777:root',
  });
});
afterAll(async () => {
  await rt?.stop();
  await standIn.stop();
  sts.restore();
});

// biome-ignore lint/suspicious/noExplicitAny: an API answer read field by field in the assertions
type Body = Record<string, any>;
const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as Body });
const post = (path: string, key: string, body: unknown) =>
  rt.call(path, { method: 'POST', key, body: JSON.stringify(body) });

describe('AWS destinations on the local runtime', () => {
  it("delivers an email's events to the bus and the FIFO queue, signed with the assumed role", async () => {
    const { key, accountId } = await rt.newKey();
    const events = ['email.sent', 'email.delivered'];
    const bus = await json(
      await post('/webhooks', key, {
        events,
        destination: { type: 'aws_eventbridge', event_bus_arn: BUS, role_arn: ROLE },
      }),
    );
    const queue = await json(
      await post('/webhooks', key, {
        events,
        ordering: 'per_email',
        destination: { type: 'aws_sqs', queue_url: QUEUE, role_arn: ROLE },
      }),
    );
    expect(bus.status).toBe(201);
    const externalId = bus.body.destination.external_id as string;
    expect(externalId).toMatch(/^sfx_[a-z2-7]{32}$/);
    expect(bus.body).toMatchObject({
      url: `aws-eventbridge:${BUS}`,
      destination: {
        type: 'aws_eventbridge',
        event_bus_arn: BUS,
        role_arn: ROLE,
        trust_policy: {
          Statement: [
            {
              Principal: { AWS: 'arn:aws:iam::999988887777:root' },
              Action: 'sts:AssumeRole',
              Condition: { StringEquals: { 'sts:ExternalId': externalId } },
            },
          ],
        },
      },
    });
    expect(queue.body.destination).toMatchObject({ type: 'aws_sqs', queue_url: QUEUE, external_id: externalId });
    expect((await json(await rt.call(`/webhooks/${bus.body.id}`, { key }))).body.destination.external_id).toBe(
      externalId,
    );

    const sent = await json(
      await post('/emails', key, { from: 'a@acme.test', to: 'b@example.com', subject: 's', text: 't' }),
    );
    await rt.settle();

    const puts = standIn.calls.filter((c) => c.action === 'PutEvents');
    const messages = standIn.calls.filter((c) => c.action === 'SendMessage');
    expect([...puts, ...messages].every((c) => c.signatureValid)).toBe(true);
    const entries = puts.map((c) => (c.body.Entries as { Source: string; DetailType: string; Detail: string }[])[0]);
    expect(entries.map((e) => e?.DetailType).sort()).toEqual(['email.delivered', 'email.sent']);
    for (const entry of entries) {
      expect(entry?.Source).toBe('sendflow');
      expect(JSON.parse(entry?.Detail ?? '{}')).toMatchObject({
        type: entry?.DetailType,
        sequence: expect.any(Number),
      });
    }
    expect(messages.map((c) => JSON.parse(String(c.body.MessageBody)).type)).toEqual(['email.sent', 'email.delivered']);
    expect(messages.every((c) => c.body.MessageGroupId === sent.body.id)).toBe(true);
    expect(sts.commandCalls(AssumeRoleCommand)[0]?.args[0].input).toMatchObject({
      RoleArn: ROLE,
      ExternalId: externalId,
      RoleSessionName: `sendflow-${accountId}`,
    });
  });

  it("retries a failing queue and shows AWS's code and request id in the delivery log", async () => {
    const { key } = await rt.newKey();
    const hook = await json(
      await post('/webhooks', key, {
        events: ['email.sent'],
        destination: { type: 'aws_sqs', queue_url: QUEUE, role_arn: ROLE },
      }),
    );
    standIn.failWith({ kind: 'error', status: 403, code: 'AccessDenied', message: 'not authorized' });
    const before = standIn.calls.length;

    await post('/emails', key, { from: 'a@acme.test', to: 'b@example.com', subject: 's', text: 't' });
    await rt.settle();
    standIn.failWith(null);

    const tried = standIn.calls.slice(before);
    const log = await json(await rt.call(`/webhooks/${hook.body.id}/deliveries`, { key }));
    const [delivery] = log.body.data as { status: string; attempt_log: Record<string, unknown>[] }[];
    expect(delivery?.status).toBe('failed');
    expect(delivery?.attempt_log.length).toBeGreaterThan(1);
    expect(
      delivery?.attempt_log.map((a) => [a.status_code, a.error_class, a.aws_error_code, a.aws_request_id]),
    ).toEqual(tried.map((c) => [0, 'http_4xx', 'AccessDenied', c.requestId]));
  });

  it('answers 422 naming the field of a bad destination, and makes nothing', async () => {
    const { key } = await rt.newKey();
    const bad = await json(
      await post('/webhooks', key, {
        events: ['email.sent'],
        destination: { type: 'aws_eventbridge', event_bus_arn: 'arn:aws:events:mars-1:1:event-bus/x', role_arn: ROLE },
      }),
    );
    expect(bad.status).toBe(422);
    expect(bad.body.details.map((d: { path: string }) => d.path)).toEqual(['destination.event_bus_arn']);
    expect((await json(await rt.call('/webhooks', { key }))).body.data).toEqual([]);
  });
});

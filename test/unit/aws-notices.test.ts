// The accounts' notices on AWS (issue 29 item 5), through the Lambda entry points as they deploy: with the
// stage's SF_NOTICE_FROM, the delivery worker mails the account when it auto-disables a webhook (a 410), and the
// dispatcher, the SES mapper and the API mail it when a pause is noted: one exact SES SendEmail each (From, To,
// subject), asserted with aws-sdk-client-mock. Without SF_NOTICE_FROM none is sent and each is a log line.
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Webhook } from '../../lambdas/app/webhooks/ports';
import { tableEnvVar, tableNames } from '../../lambdas/manifest';
import { createRepositories } from '../../lambdas/runtime/repositories';
import type { Services } from '../../lambdas/runtime/services';
import { dynaliteInMemory, useDynamoTables } from '../support/dynamo';

const ses = mockClient(SESv2Client);
const sqs = mockClient(SQSClient);
const FROM = 'notices@mail.example.com';
const TO = 'ops@customer.example';

const tables = useDynamoTables(dynaliteInMemory);
const figures = { sent: 1000, bounced: 90, complained: 0, bounceRate: 0.09, complaintRate: 0, breaches: [] };

/** What the stack sets on the function (lib/api-stack.ts), the tables and endpoint of this test's DynamoDB. */
function environment(withSender: boolean): Record<string, string> {
  const { tables: names, endpoint } = tables();
  return {
    ...Object.fromEntries(tableNames.map((t) => [tableEnvVar(t), names[t]])),
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
    SF_EVENTS_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/events',
    SF_DELIVERIES_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries',
    SF_DELIVERIES_QUEUE_ARN: 'arn:aws:sqs:eu-west-1:123456789012:deliveries',
    SF_SLOW_DELIVERIES_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/slow',
    SF_SLOW_DELIVERIES_QUEUE_ARN: 'arn:aws:sqs:eu-west-1:123456789012:slow',
    SF_DELIVERY_DLQ_ARNS: 'arn:aws:sqs:eu-west-1:123456789012:deliveries-dlq',
    SF_SCHEDULE_GROUP: 'SendflowApi-retries',
    SF_SCHEDULER_ROLE_ARN: 'arn:aws:iam::123456789012:role/scheduler',
    SF_SCHEDULER_DLQ_ARN: 'arn:aws:sqs:eu-west-1:123456789012:retry-dlq',
    SF_SENDS_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/sends',
    SF_SENDS_QUEUE_ARN: 'arn:aws:sqs:eu-west-1:123456789012:sends',
    SF_SENDS_SCHEDULE_GROUP: 'SendflowApi-sends',
    SF_SENDS_SCHEDULER_ROLE_ARN: 'arn:aws:iam::123456789012:role/send-scheduler',
    SF_SENDS_SCHEDULER_DLQ_ARN: 'arn:aws:sqs:eu-west-1:123456789012:send-schedule-dlq',
    SF_SIGNING_SECRET: 's'.repeat(64),
    SF_SIGNING_SECRET_ID: 'SendflowData/signing-secret',
    SF_PUBLIC_URL: 'https://abc123.execute-api.eu-west-1.amazonaws.com/v1',
    SF_REST_API_ID: 'abc123',
    SF_SES_IDENTITY_OWNER: 'SendflowApi',
    SF_EMAIL_BODIES_BUCKET: 'bodies',
    POWERTOOLS_LOG_LEVEL: 'ERROR',
    ...(withSender ? { SF_NOTICE_FROM: FROM } : {}),
  };
}

/** The services an entry point built at its cold start, with this environment. */
async function coldStart(entry: string, withSender = true): Promise<Services> {
  vi.resetModules();
  for (const [name, value] of Object.entries(environment(withSender))) vi.stubEnv(name, value);
  const module = (await import(`../../lambdas/runtime/aws/${entry}.ts`)) as { services?: Services };
  if (!module.services) throw new Error(`lambdas/runtime/aws/${entry}.ts exports no services`);
  return module.services;
}

let accountId = '';

beforeEach(async () => {
  ses.reset();
  sqs.reset();
  ses.on(SendEmailCommand).resolves({ MessageId: 'notice-1' });
  sqs.resolves({});
  const repositories = createRepositories(tables().client, tables().tables);
  accountId = `acct_${Math.random().toString(36).slice(2, 10)}`;
  await repositories.accounts.create({ id: accountId, plan: 'starter', createdAt: '2026-01-01T00:00:00.000Z' });
  await repositories.accounts.setNoticeEmail(accountId, TO);
});

afterEach(() => {
  vi.unstubAllEnvs();
});

const sentNotices = () =>
  ses.commandCalls(SendEmailCommand).map((call) => {
    const input = call.args[0].input;
    return {
      from: input.FromEmailAddress,
      to: input.Destination?.ToAddresses,
      subject: input.Content?.Simple?.Subject?.Data,
      configurationSet: input.ConfigurationSetName,
    };
  });

describe('notices on AWS through the entry points', { timeout: 30_000 }, () => {
  it('the delivery worker mails the account once when a 410 auto-disables its webhook', async () => {
    const services = await coldStart('delivery');
    const now = Date.now();
    const webhook: Webhook = {
      id: `wh_${accountId.slice(5)}`,
      accountId,
      mode: 'live',
      url: 'https://hooks.customer.example/sendflow',
      events: ['email.delivered'],
      format: 'standard',
      secret: `whsec_${Buffer.alloc(24, 1).toString('base64')}`,
      active: true,
      createdAt: new Date(now).toISOString(),
      updatedAt: new Date(now).toISOString(),
    };
    await services.webhooks.create(webhook);

    await services.watch({
      webhook,
      kind: 'automatic',
      attempt: 2,
      outcome: {
        at: now,
        statusCode: 410,
        durationMs: 12,
        error: 'HTTP 410',
        errorClass: 'http_4xx',
        timings: { dnsMs: null, connectMs: null, tlsMs: null, ttfbMs: 10, totalMs: 12 },
        response: 'gone',
      },
    } as never);

    expect((await services.webhooks.get(webhook, webhook.id))?.active).toBe(false);
    expect(sentNotices()).toEqual([
      { from: FROM, to: [TO], subject: 'Sendflow: a webhook was disabled', configurationSet: undefined },
    ]);
    const text = ses.commandCalls(SendEmailCommand)[0]?.args[0].input.Content?.Simple?.Body?.Text?.Data;
    expect(text).toContain(webhook.id);
  });

  it.each(['dispatcher', 'ses-events', 'api'])('the %s mails the account when it pauses its sending', async (entry) => {
    const services = await coldStart(entry);

    await services.reputation.noted?.({ accountId, mode: 'live' }, { kind: 'account' }, 'paused', figures);

    expect(sentNotices()).toEqual([
      { from: FROM, to: [TO], subject: 'Sendflow: live sending paused', configurationSet: undefined },
    ]);
  });

  it('sends nothing where the stage has no sender (the notice is a log line and a metric instead)', async () => {
    const services = await coldStart('dispatcher', false);

    await services.reputation.noted?.({ accountId, mode: 'live' }, { kind: 'account' }, 'paused', figures);

    expect(sentNotices()).toEqual([]);
  });
});

// POST /v1/emails/batch is all or nothing, over real HTTP with a real receiver: 30 live-mode emails whose
// second DynamoDB BatchWriteItem (emails 26 to 30) fails answer 500 having stored 25, and yet nothing is sent
// (not by the send worker, not by the reconciler), no event arrives and no quota is counted; the retry with
// the same Idempotency-Key stores, sends and counts the 30 once.
import { BatchWriteCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { reconcile } from '../../lambdas/app/webhooks/reconcile';
import { quotaWindow } from '../../lambdas/domain/email/quota';
import { localDynamoClient } from '../../lambdas/runtime/local/dynamo';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let receiver: Receiver;
let doc: DynamoDBDocumentClient;
beforeAll(async () => {
  rt = await startTestRuntime();
  receiver = await startReceiver();
  doc = DynamoDBDocumentClient.from(localDynamoClient(rt.dynamoEndpoint));
});
afterAll(async () => {
  doc.destroy();
  await receiver.close();
  await rt.stop();
});

/** The emails repository's DynamoDB client fails its `n`th BatchWriteItem (once). */
function failNthBatchWrite(n: number): void {
  const emailsDoc = (rt.services.emails as unknown as { doc: DynamoDBDocumentClient }).doc;
  const send = emailsDoc.send.bind(emailsDoc) as (command: unknown) => Promise<unknown>;
  let writes = 0;
  (emailsDoc as unknown as { send: (command: unknown) => Promise<unknown> }).send = async (command) => {
    if (command instanceof BatchWriteCommand && ++writes === n) {
      throw Object.assign(new Error('Internal server error (injected)'), { name: 'InternalServerError' });
    }
    return send(command);
  };
}

it('a batch that fails after storing 25 of 30 sends nothing and counts nothing; its retry sends 30 once', async () => {
  // Arrange: a live account with a verified domain and a webhook for email.sent.
  const { key, accountId } = await rt.newKey({ plan: 'free', mode: 'live' });
  const domain = (await (await rt.call('/domains', { method: 'POST', key, body: '{"name":"acme.test"}' })).json()) as {
    id: string;
  };
  await rt.call(`/domains/${domain.id}/verify`, { method: 'POST', key });
  await rt.call('/webhooks', {
    method: 'POST',
    key,
    body: JSON.stringify({ url: `${receiver.url}/batch`, events: ['email.sent', 'email.failed'] }),
  });
  const batch = JSON.stringify(
    Array.from({ length: 30 }, (_, i) => ({
      from: 'news@acme.test',
      to: `r${i}@example.com`,
      subject: `Issue ${i}`,
      text: 'x',
    })),
  );
  const post = () =>
    rt.call('/emails/batch', { method: 'POST', key, headers: { 'Idempotency-Key': 'batch-1' }, body: batch });
  const quota = async () =>
    (
      await doc.send(
        new GetCommand({
          TableName: 'sendflow-rateLimits',
          Key: { key: `quota#${accountId}#${quotaWindow(Date.now()).month}` },
        }),
      )
    ).Item?.n ?? 0;
  failNthBatchWrite(2);

  // Act
  const failed = await post();
  await rt.settle();
  await reconcile(rt.services, { graceMs: 0 });
  await rt.settle();
  const sentAfterFailure = receiver.received.length;
  const quotaAfterFailure = await quota();
  const retried = await post();
  await rt.settle();
  await receiver.waitFor(30);
  await reconcile(rt.services, { graceMs: 0 });
  await rt.settle();

  // Assert
  expect(failed.status).toBe(500);
  expect(sentAfterFailure).toBe(0);
  expect(quotaAfterFailure).toBe(0);
  expect(retried.status).toBe(200);
  const { data } = (await retried.json()) as { data: { id: string }[] };
  expect(data).toHaveLength(30);
  const sent = receiver.received.map((r) => JSON.parse(r.body) as { type: string; email_id: string });
  expect(sent.every((event) => event.type === 'email.sent')).toBe(true);
  expect(sent.map((event) => event.email_id).sort()).toEqual(data.map((email) => email.id).sort());
  expect(await quota()).toBe(30);
});

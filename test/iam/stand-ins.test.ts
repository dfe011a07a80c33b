// The recording stand-ins speak enough of each protocol for the real SDK clients, and record what IAM sees.
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StandIns, startStandIns } from './support/stand-ins';
import { ACCOUNT, REGION } from './support/template';

describe('recording stand-ins', () => {
  let standIns: StandIns;
  beforeAll(async () => {
    standIns = await startStandIns(() => 'http://127.0.0.1:9');
  });
  afterAll(() => standIns.stop());

  const credentials = { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'x' };

  it('SQS: the SDK accepts the answers (body MD5s) and each send is recorded as sqs:SendMessage on the queue', async () => {
    const sqs = new SQSClient({ region: REGION, credentials, endpoint: standIns.endpoints.AWS_ENDPOINT_URL_SQS });
    const QueueUrl = `${standIns.endpoints.AWS_ENDPOINT_URL_SQS}/${ACCOUNT}/Jobs`;
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: '{"a":1}' }));
    await sqs.send(
      new SendMessageBatchCommand({ QueueUrl, Entries: [{ Id: '1', MessageBody: 'x', DelaySeconds: 5 }] }),
    );
    sqs.destroy();
    const arn = `arn:aws:sqs:${REGION}:${ACCOUNT}:Jobs`;
    expect(standIns.calls.map((c) => [c.caller, c.action, c.resource])).toEqual([
      ['AKIAEXAMPLE', 'sqs:SendMessage', arn],
      ['AKIAEXAMPLE', 'sqs:SendMessage', arn],
    ]);
    expect(standIns.messages).toEqual([
      { queueArn: arn, body: '{"a":1}' },
      { queueArn: arn, body: 'x', delaySeconds: 5 },
    ]);
  });

  it('records a call to a service without a stand-in as unknown, naming the service', async () => {
    const res = await fetch(`${standIns.endpoints.AWS_ENDPOINT_URL}/`, {
      method: 'POST',
      headers: { authorization: 'AWS4-HMAC-SHA256 Credential=AKIAOTHER/20260101/us-east-1/monitoring/aws4_request' },
      body: 'Action=PutMetricData',
    });
    expect(res.status).toBe(400);
    expect(standIns.calls.at(-1)).toMatchObject({ caller: 'AKIAOTHER', action: 'monitoring:UNKNOWN' });
  });
});

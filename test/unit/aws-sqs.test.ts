// Unit tests for the SQS adapters (lambdas/adapters/aws/sqs.ts): the exact SendMessageBatch requests sent
// through aws-sdk-client-mock — bodies, chunking, DelaySeconds rounding and clamping — and refused entries
// turning into an error that names them.
import { SendMessageBatchCommand, SQSClient, SQSServiceException } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { QueueSendError, SqsDeliveryQueue, SqsEventPublisher, sqsDelaySeconds } from '../../lambdas/adapters/aws/sqs';
import type { DeliveryJob } from '../../lambdas/app/webhooks/ports';
import type { SendflowEvent } from '../../lambdas/domain/events';
import { deliveryJobMessage, eventMessage } from '../../lambdas/handlers/queue/messages';

const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries';
const EVENTS_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/events';
const sqs = mockClient(SQSClient);
const client = new SQSClient({ region: 'eu-west-1' });

function job(n: number, extra: Partial<DeliveryJob> = {}): DeliveryJob {
  return { deliveryId: `dlv_${String(n).padStart(36, '0')}`, webhookId: `wh_${n}`, attempt: 1, ...extra };
}

function event(n: number): SendflowEvent {
  return {
    id: `evt_${n}`,
    type: 'email.delivered',
    accountId: 'acct_1',
    mode: 'live',
    timestamp: '2026-11-22T10:00:00.000Z',
    emailId: 'em_1',
    data: { n },
  };
}

/** Inputs of every SendMessageBatch sent, in order. */
function batches() {
  return sqs.commandCalls(SendMessageBatchCommand).map((call) => call.args[0].input);
}

beforeEach(() => {
  sqs.reset();
  sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
});

describe('SqsDeliveryQueue', () => {
  it('sends each job as its JSON body with the delay, one entry id per message, its account as MessageGroupId (a fair queue)', async () => {
    // Arrange
    const seeded = job(1, {
      seed: {
        accountId: 'acct_1',
        mode: 'test',
        eventId: 'evt_1',
        event: 'email.sent',
        format: 'standard',
        payload: '{"type":"email.sent"}',
        createdAt: 1_700_000_000_000,
      },
    });

    // Act
    await new SqsDeliveryQueue(client, QUEUE_URL).send([seeded, job(2, { attempt: 3 })], 30);

    // Assert
    expect(sqs).toHaveReceivedCommandTimes(SendMessageBatchCommand, 1);
    expect(sqs).toHaveReceivedCommandWith(SendMessageBatchCommand, {
      QueueUrl: QUEUE_URL,
      Entries: [
        { Id: 'm0', MessageBody: JSON.stringify(seeded), DelaySeconds: 30, MessageGroupId: 'acct_1' },
        { Id: 'm1', MessageBody: JSON.stringify(job(2, { attempt: 3 })), DelaySeconds: 30 },
      ],
    });
    expect(batches()[0]?.Entries?.map((entry) => entry.MessageGroupId)).toEqual(['acct_1', undefined]);
    // What the delivery worker parses back is the job itself.
    const [first] = batches()[0]?.Entries ?? [];
    expect(deliveryJobMessage.parse(JSON.parse(first?.MessageBody ?? ''))).toEqual(seeded);
  });

  it('splits 23 jobs into requests of 10, 10 and 3, in order, with ids unique per request', async () => {
    // Act
    await new SqsDeliveryQueue(client, QUEUE_URL).send(Array.from({ length: 23 }, (_, i) => job(i)));

    // Assert
    const sent = batches();
    expect(sent.map((b) => b.Entries?.length)).toEqual([10, 10, 3]);
    const bodies = sent.flatMap((b) => b.Entries ?? []).map((e) => JSON.parse(e.MessageBody ?? '').deliveryId);
    expect(bodies).toEqual(Array.from({ length: 23 }, (_, i) => job(i).deliveryId));
    for (const b of sent) {
      const ids = (b.Entries ?? []).map((e) => e.Id);
      expect(new Set(ids).size).toBe(ids.length);
      for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{1,80}$/);
    }
  });

  it('sends nothing for no jobs', async () => {
    await new SqsDeliveryQueue(client, QUEUE_URL).send([]);
    expect(sqs).not.toHaveReceivedCommand(SendMessageBatchCommand);
  });

  it('starts a new request before the batch would pass 256 KiB', async () => {
    // Arrange: three 100 KB payloads cannot share one request.
    const big = (n: number) => job(n, { seed: { ...seedOf('x'.repeat(100_000)) } });

    // Act
    await new SqsDeliveryQueue(client, QUEUE_URL).send([big(1), big(2), big(3)]);

    // Assert
    expect(batches().map((b) => b.Entries?.length)).toEqual([2, 1]);
  });

  it('refuses a single job over the SQS size limit without sending anything', async () => {
    const huge = job(1, { seed: seedOf('x'.repeat(300_000)) });
    await expect(new SqsDeliveryQueue(client, QUEUE_URL).send([huge])).rejects.toThrow(
      /dlv_0+1 attempt 1 is \d+ bytes/,
    );
    expect(sqs).not.toHaveReceivedCommand(SendMessageBatchCommand);
  });

  it.each([
    [undefined, 0],
    [0, 0],
    [-5, 0],
    [0.2, 1],
    [1, 1],
    [29.001, 30],
    [59.5, 60],
    [900, 900],
    [1800, 900],
    [Number.NaN, 0],
  ])('delay %s s becomes DelaySeconds %i (whole seconds, rounded up, 0..900)', async (delay, expected) => {
    // Act
    await new SqsDeliveryQueue(client, QUEUE_URL).send([job(1)], delay);

    // Assert
    expect(batches()[0]?.Entries?.[0]?.DelaySeconds).toBe(expected);
    expect(sqsDelaySeconds(delay)).toBe(expected);
  });

  it('throws an error naming every refused entry, so the caller record is retried', async () => {
    // Arrange
    sqs.on(SendMessageBatchCommand).resolves({
      Successful: [{ Id: 'm0', MessageId: 'x', MD5OfMessageBody: 'y' }],
      Failed: [
        { Id: 'm1', Code: 'InternalError', SenderFault: false, Message: 'try again' },
        { Id: 'm2', Code: 'InvalidMessageContents', SenderFault: true, Message: 'bad char' },
      ],
    });

    // Act
    const sending = new SqsDeliveryQueue(client, QUEUE_URL).send([job(0), job(1, { attempt: 2 }), job(2)]);

    // Assert
    await expect(sending).rejects.toThrow(QueueSendError);
    await expect(sending).rejects.toThrow(
      /refused 2 of 3 messages to .*deliveries: dlv_0+1 attempt 2 \(InternalError: try again\); dlv_0+2 attempt 1 \(InvalidMessageContents, sender fault: bad char\)/,
    );
    const error = (await sending.catch((e: unknown) => e)) as QueueSendError;
    expect(error.failed.map((f) => f.Id)).toEqual(['m1', 'm2']);
  });

  it('stops at the first refused request: later chunks are not sent', async () => {
    // Arrange
    sqs.on(SendMessageBatchCommand).resolvesOnce({ Failed: [{ Id: 'm3', Code: 'InternalError', SenderFault: false }] });

    // Act & Assert
    await expect(
      new SqsDeliveryQueue(client, QUEUE_URL).send(Array.from({ length: 15 }, (_, i) => job(i))),
    ).rejects.toThrow(/dlv_0+3 attempt 1/);
    expect(sqs).toHaveReceivedCommandTimes(SendMessageBatchCommand, 1);
  });

  it('lets an SQS API error through unchanged', async () => {
    const throttled = new SQSServiceException({ name: 'ThrottlingException', $fault: 'client', $metadata: {} });
    sqs.on(SendMessageBatchCommand).rejects(throttled);
    await expect(new SqsDeliveryQueue(client, QUEUE_URL).send([job(1)])).rejects.toBe(throttled);
  });
});

describe('SqsEventPublisher', () => {
  it('publishes each event as its JSON body on the events queue, its account as MessageGroupId', async () => {
    // Act
    await new SqsEventPublisher(client, EVENTS_URL).publish([event(1), event(2)]);

    // Assert
    expect(sqs).toHaveReceivedCommandWith(SendMessageBatchCommand, {
      QueueUrl: EVENTS_URL,
      Entries: [
        { Id: 'm0', MessageBody: JSON.stringify(event(1)), DelaySeconds: 0, MessageGroupId: 'acct_1' },
        { Id: 'm1', MessageBody: JSON.stringify(event(2)), DelaySeconds: 0, MessageGroupId: 'acct_1' },
      ],
    });
    expect(batches()[0]?.Entries?.map((entry) => entry.MessageGroupId)).toEqual(['acct_1', 'acct_1']);
    const body = batches()[0]?.Entries?.[1]?.MessageBody ?? '';
    expect(eventMessage.parse(JSON.parse(body))).toEqual(event(2));
  });

  it('spaces events with a rounded-up delay and chunks by ten', async () => {
    // Act
    await new SqsEventPublisher(client, EVENTS_URL).publish(
      Array.from({ length: 12 }, (_, i) => event(i)),
      1.5,
    );

    // Assert
    const sent = batches();
    expect(sent.map((b) => b.Entries?.length)).toEqual([10, 2]);
    for (const entry of sent.flatMap((b) => b.Entries ?? [])) expect(entry.DelaySeconds).toBe(2);
  });

  it('names refused events by id', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Failed: [{ Id: 'm0', Code: 'InternalError', SenderFault: false }] });
    await expect(new SqsEventPublisher(client, EVENTS_URL).publish([event(7)])).rejects.toThrow(/event evt_7/);
  });
});

function seedOf(payload: string): NonNullable<DeliveryJob['seed']> {
  return {
    accountId: 'acct_1',
    mode: 'live',
    eventId: 'evt_1',
    event: 'email.sent',
    format: 'standard',
    payload,
    createdAt: 1,
  };
}

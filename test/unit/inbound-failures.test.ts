// The inbound function's failures queue (issue 28): an SES arrival Lambda gave up on reaches the function again as
// Lambda's invocation record (its on-failure destination is an SQS queue the function consumes). It is received
// once more; if that fails too, every receiving account is shown a `failed` email; if even that fails, the record
// is reported failed (it comes back, and the queue's alarm keeps paging). Never silent, never lost.
import { readFileSync } from 'node:fs';
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import type { InboundMessage } from '../../lambdas/app/inbound/receive-email';
import { createInboundFunctionHandler } from '../../lambdas/handlers/queue/inbound-mail';

const SES_EVENT = JSON.parse(
  readFileSync(new URL('../fixtures/ses-receiving/inbound-lambda-action.json', import.meta.url), 'utf8'),
) as unknown;
const SES_MESSAGE_ID = 'o3vrnil0e2ic28trm7dfhrc2v0cnbeccl4nbp0g1';
const RAW = new TextEncoder().encode('From: ada@sender.example\r\nSubject: Hi\r\n\r\nHi\r\n');

/** Lambda's on-failure invocation record for the SES event, as the failures queue holds it. */
function failedRecord(messageId: string, condition = 'RetriesExhausted') {
  return {
    messageId,
    receiptHandle: `rh-${messageId}`,
    body: JSON.stringify({
      version: '1.0',
      timestamp: '2026-11-26T07:47:13.114Z',
      requestContext: {
        requestId: 'c4f3a3b6-9b1b-4c8e-9f7e-0d2c5a1e8b11',
        functionArn: 'arn:aws:lambda:eu-west-1:111122223333:function:Sendflow-prod-Api-InboundMailFunction:live',
        condition,
        approximateInvokeCount: 3,
      },
      requestPayload: SES_EVENT,
      responseContext: { statusCode: 200, executedVersion: '7', functionError: 'Unhandled' },
      responsePayload: { errorType: 'ValidationException', errorMessage: 'Item size has exceeded the maximum' },
    }),
    attributes: {},
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:eu-west-1:111122223333:Sendflow-prod-Api-InboundMailFailures',
    awsRegion: 'eu-west-1',
  };
}
const sqsEvent = (...records: ReturnType<typeof failedRecord>[]) => ({ Records: records }) as unknown as SQSEvent;

function world(options: { receive?: 'ok' | 'throws'; record?: 'ok' | 'throws'; raw?: 'ok' | 'gone' } = {}) {
  const received: InboundMessage[] = [];
  const recorded: { message: InboundMessage; attempts: number }[] = [];
  const kept: [string, unknown][] = [];
  const logger = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
  const handler = createInboundFunctionHandler({
    source: {
      read: async () => {
        if (options.raw === 'gone') throw new Error('NoSuchKey');
        return RAW;
      },
      discard: async () => {},
      keepFailure: async (id, sesEvent) => {
        kept.push([id, JSON.parse(sesEvent)]);
      },
    },
    receive: async (message) => {
      received.push(message);
      if (options.receive === 'throws') throw new Error('ValidationException: Item size has exceeded the maximum');
      return { stored: [{ status: 'received' }] };
    },
    recordFailed: async (message, attempts) => {
      if (options.record === 'throws') throw new Error('the table is down');
      recorded.push({ message, attempts });
      return { stored: [{ status: 'failed' }] };
    },
    logger,
  });
  return { handler, received, recorded, logger, kept };
}

describe('inbound failures queue', () => {
  it('receives the arrival once more, and stores it when what failed has passed', async () => {
    const w = world();
    const result = await w.handler(sqsEvent(failedRecord('m-1', 'EventAgeExceeded')));
    expect(result).toEqual({ batchItemFailures: [] });
    expect(w.received.map((m) => [m.sourceId, m.raw])).toEqual([[SES_MESSAGE_ID, RAW]]);
    expect(w.recorded).toEqual([]);
    expect(w.kept).toEqual([]);
  });

  it('shows a message that fails every time to its accounts as failed, with the tries it had', async () => {
    const w = world({ receive: 'throws' });
    const result = await w.handler(sqsEvent(failedRecord('m-1')));
    expect(result).toEqual({ batchItemFailures: [] });
    expect(w.recorded).toHaveLength(1);
    expect(w.recorded[0]).toMatchObject({
      attempts: 4,
      message: {
        sourceId: SES_MESSAGE_ID,
        mailFrom: 'prvs=144d0cba7=ada@sender.example',
        recipients: ['support@acme.example', 'billing@acme.example'],
        raw: RAW,
      },
    });
    // The SES event as SES sent it is kept for the runbook's replay, before the accounts are told.
    expect(w.kept).toEqual([[SES_MESSAGE_ID, SES_EVENT]]);
    expect(w.logger.info).toHaveBeenCalledWith(
      'Failed inbound arrival handled',
      expect.objectContaining({ recovered: false, failed: 1 }),
    );
  });

  it('records the envelope when the stored message cannot be read', async () => {
    const w = world({ raw: 'gone' });
    await w.handler(sqsEvent(failedRecord('m-1')));
    expect(w.received).toEqual([]);
    expect(w.recorded.map((r) => r.message.raw.length)).toEqual([0]);
  });

  it('reports a record it could not record failed, and only that one (it comes back; the alarm keeps paging)', async () => {
    const w = world({ receive: 'throws', record: 'throws' });
    const result = await w.handler(sqsEvent(failedRecord('m-1'), failedRecord('m-2')));
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-1' }, { itemIdentifier: 'm-2' }] });
    expect(w.logger.error).toHaveBeenCalledTimes(2);
  });

  it('reports a body that is not a failed SES invocation failed, and handles the rest of the batch', async () => {
    const w = world();
    const bad = { ...failedRecord('m-bad'), body: '{"requestPayload":{"Records":[]}}' };
    const result = await w.handler(sqsEvent(bad, failedRecord('m-2')));
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-bad' }] });
    expect(w.received).toHaveLength(1);
  });

  it('still takes SES receipt events as they come (one handler for both sources)', async () => {
    const w = world();
    expect(await w.handler(SES_EVENT)).toBeUndefined();
    expect(w.received.map((m) => m.sourceId)).toEqual([SES_MESSAGE_ID]);
  });
});

// SQS handler of the events queue: each record is one event, fanned out to its webhooks. A record that
// fails (a DynamoDB or SQS error) is reported back alone and retried by SQS, then redriven to the DLQ.
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { type DispatchDeps, dispatchEvent } from '../../app/webhooks/dispatch-event';
import { eventMessage } from './messages';

export function createDispatcherHandler(deps: DispatchDeps) {
  const processor = new BatchProcessor(EventType.SQS);
  const record = async (message: SQSRecord) => dispatchEvent(deps, eventMessage.parse(JSON.parse(message.body)));
  return (event: SQSEvent) => processPartialResponse(event, record, processor, { throwOnFullBatchFailure: false });
}

// SQS handler of the events queue: each record is one event, recorded on its email and fanned out to its
// webhooks. A record that fails (a DynamoDB or SQS error) is reported back alone and retried by SQS, then
// redriven to the DLQ.
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { type ProcessEventDeps, processEvent } from '../../app/events/process-event';
import { eventMessage } from './messages';

export function createDispatcherHandler(deps: ProcessEventDeps) {
  const processor = new BatchProcessor(EventType.SQS);
  const record = async (message: SQSRecord) => processEvent(deps, eventMessage.parse(JSON.parse(message.body)));
  return (event: SQSEvent) => processPartialResponse(event, record, processor, { throwOnFullBatchFailure: false });
}

// SQS handler of the events queue: each record is one event, recorded on its email and fanned out to its
// webhooks. A record that fails (a DynamoDB or SQS error) is reported back alone and retried by SQS, then
// redriven to the DLQ. A tenant's webhooks are listed once per batch, and the batch's delivery jobs go out
// together in sends of 10 (GatheredDeliveryQueue), not one send per event; the events webhook filters kept back
// are counted once per webhook at the end of the batch.
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { batchScoped, endBatch, type ProcessEventDeps, processEvent } from '../../app/events/process-event';
import { GatheredDeliveryQueue } from '../../app/webhooks/gathered-delivery-queue';
import { eventMessage } from './messages';

export function createDispatcherHandler(deps: ProcessEventDeps) {
  return async (event: SQSEvent) => {
    const batchDeps = batchScoped(deps);
    const gathered = new GatheredDeliveryQueue(deps.deliveryQueue, event.Records.length);
    const processor = new BatchProcessor(EventType.SQS);
    const record = async (message: SQSRecord) => {
      const member = gathered.member();
      try {
        const parsed = eventMessage.parse(JSON.parse(message.body));
        return await processEvent({ ...batchDeps, deliveryQueue: member.queue }, parsed);
      } finally {
        member.done();
      }
    };
    // In parallel (the default, stated because the gathering needs it: every record must reach its send).
    const response = await processPartialResponse(event, record, processor, {
      throwOnFullBatchFailure: false,
      processInParallel: true,
    });
    // The batch's filtered events counted (filtered_24h), one write per webhook.
    await endBatch(batchDeps);
    return response;
  };
}

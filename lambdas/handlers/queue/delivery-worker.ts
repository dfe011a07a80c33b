// SQS handler of the deliveries queue: one attempt per record, records of a batch in parallel. The
// endpoint's failures are outcomes (recorded, retried on schedule), not batch failures; only our own
// errors make SQS redeliver. Webhooks are read once per batch.
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { type AttemptDeps, attemptDelivery, type WebhookLookup } from '../../app/webhooks/attempts';
import type { Webhook } from '../../app/webhooks/ports';
import { deliveryJobMessage } from './messages';

export function createDeliveryWorkerHandler(deps: AttemptDeps) {
  return (event: SQSEvent) => {
    const lookup = batchLookup(deps);
    const processor = new BatchProcessor(EventType.SQS);
    const record = async (message: SQSRecord) =>
      attemptDelivery(deps, deliveryJobMessage.parse(JSON.parse(message.body)), lookup);
    return processPartialResponse(event, record, processor, { throwOnFullBatchFailure: false });
  };
}

/** One read per webhook per batch, shared by the batch's parallel attempts. */
function batchLookup(deps: Pick<AttemptDeps, 'webhooks'>): WebhookLookup {
  const seen = new Map<string, Promise<Webhook | null>>();
  return (tenant, id) => {
    const key = `${tenant.accountId}#${tenant.mode}#${id}`;
    let found = seen.get(key);
    if (!found) {
      found = deps.webhooks.get(tenant, id);
      seen.set(key, found);
    }
    return found;
  };
}

// SQS handler of the events queue: each record is one event, recorded on its email and fanned out to its
// webhooks. A record that fails (a DynamoDB or SQS error) is reported back alone and retried by SQS, then
// redriven to the DLQ. A tenant's webhooks are listed once per batch, and the batch's delivery jobs go out
// together in sends of 10 (GatheredDeliveryQueue), not one send per event.
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { type ProcessEventDeps, processEvent } from '../../app/events/process-event';
import { GatheredDeliveryQueue } from '../../app/webhooks/gathered-delivery-queue';
import type { Tenant, Webhook } from '../../app/webhooks/ports';
import { eventMessage } from './messages';

export function createDispatcherHandler(deps: ProcessEventDeps) {
  return (event: SQSEvent) => {
    const batchDeps = { ...deps, webhooks: { list: batchList(deps) }, ...batchListeners(deps) };
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
    return processPartialResponse(event, record, processor, {
      throwOnFullBatchFailure: false,
      processInParallel: true,
    });
  };
}

/** One listing per tenant per batch, shared by the batch's events (if it fails, they fail and SQS retries them). */
function batchList(deps: Pick<ProcessEventDeps, 'webhooks'>): (tenant: Tenant) => Promise<Webhook[]> {
  const listed = new Map<string, Promise<Webhook[]>>();
  return (tenant) => {
    const key = `${tenant.accountId}#${tenant.mode}`;
    let webhooks = listed.get(key);
    if (!webhooks) {
      webhooks = deps.webhooks.list(tenant);
      listed.set(key, webhooks);
    }
    return webhooks;
  };
}

/** The account's live listen sessions, read once per batch like its webhooks (absent when none are wired). */
function batchListeners(deps: Pick<ProcessEventDeps, 'listenSessions'>): Pick<ProcessEventDeps, 'listenSessions'> {
  const sessions = deps.listenSessions;
  if (!sessions) return {};
  const listed = new Map<string, ReturnType<typeof sessions.listLive>>();
  return {
    listenSessions: {
      putEvents: (events) => sessions.putEvents(events),
      listLive: (accountId, nowMs) => {
        let live = listed.get(accountId);
        if (!live) {
          live = sessions.listLive(accountId, nowMs);
          listed.set(accountId, live);
        }
        return live;
      },
    },
  };
}

// SQS handler of the provider-events queue (EventBridge rule on our SES configuration set → SQS): each record
// is one SES event in its EventBridge envelope, mapped to our events and published on the events queue. A
// record that fails (a malformed body, the events queue refusing) is reported back alone, retried by SQS,
// then dead-lettered; an SES event that is not ours or not mapped is skipped with a log line.
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import type { EventPublisher } from '../../app/webhooks/ports';
import { mapSesEvent } from './map-ses-event';
import { sesEventBridgeEnvelope } from './ses-event';

export interface SesEventsDeps {
  readonly events: EventPublisher;
  readonly logger: Pick<Logger, 'info' | 'warn'>;
}

export function createSesEventsHandler(deps: SesEventsDeps) {
  const processor = new BatchProcessor(EventType.SQS);
  const record = async (message: SQSRecord) => {
    const envelope = sesEventBridgeEnvelope.parse(JSON.parse(message.body));
    const mapping = mapSesEvent(envelope.detail);
    const context = { eventBridgeId: envelope.id, sesMessageId: envelope.detail.mail.messageId };
    if (mapping.kind === 'skipped') {
      deps.logger.warn('SES event skipped', { ...context, why: mapping.why });
      return;
    }
    await deps.events.publish(mapping.events);
    deps.logger.info('SES event mapped', { ...context, events: mapping.events.map((e) => `${e.type} ${e.id}`) });
  };
  return (event: SQSEvent) => processPartialResponse(event, record, processor, { throwOnFullBatchFailure: false });
}

// SQS handler of the provider-events queue (EventBridge rule on our SES configuration sets → SQS): each record
// is one SES event in its EventBridge envelope, mapped to our events, which are processed here, where they
// arrive (history, suppression, webhook fan-out: app/events/process-event), the batch's together, with no trip
// through the events queue. A record that fails (a malformed body, an event not processed) is reported back
// alone, retried by SQS (its ids are derived from the SES event, so processing it again repeats nothing), then
// dead-lettered; an SES event that is not ours or not mapped is skipped with a log line.
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import type { EmailRecord } from '../../app/emails/ports';
import { type SendflowEvent, tagMap } from '../../domain/events';
import { mapSesEvent, type SesMapping } from './map-ses-event';
import { sesEventBridgeEnvelope } from './ses-event';

export interface SesEventsDeps {
  /** Processes events as the events queue's consumer would; returns those it could not finish. */
  readonly processEvents: (events: readonly SendflowEvent[]) => Promise<readonly SendflowEvent[]>;
  /**
   * The stored emails, for the tags of an SES event that did not bring them (mapping.tagsFromEmail): one item
   * read (metadataOnly) per email of the batch. Absent: such events go without tags.
   */
  readonly emails?: { get(id: string, options?: { readonly metadataOnly?: boolean }): Promise<EmailRecord | null> };
  readonly logger: Pick<Logger, 'debug' | 'warn'>;
}

interface Mapped {
  readonly context: { readonly eventBridgeId: string; readonly sesMessageId: string };
  readonly mapping: SesMapping;
}

/** A record's mapping, or why it has none (a malformed body: the record fails). */
function mapRecord(message: SQSRecord): Mapped | Error {
  try {
    const envelope = sesEventBridgeEnvelope.parse(JSON.parse(message.body));
    const context = { eventBridgeId: envelope.id, sesMessageId: envelope.detail.mail.messageId };
    return { context, mapping: mapSesEvent(envelope.detail) };
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * The email's own tags on the events of mappings that did not bring them, from the stored email: only one of the
 * event's own account and mode (an id is no proof of ownership); none when it is gone (past its retention). A
 * mapping whose email cannot be read becomes that read's error: its record fails and SQS retries it.
 */
async function withStoredTags(
  mapped: Map<string, Mapped | Error>,
  emails: NonNullable<SesEventsDeps['emails']>,
): Promise<void> {
  const waiting = [...mapped].filter(
    (entry): entry is [string, Mapped & { mapping: { kind: 'events' } }] =>
      !(entry[1] instanceof Error) && entry[1].mapping.kind === 'events' && entry[1].mapping.tagsFromEmail,
  );
  const ids = [...new Set(waiting.flatMap(([, m]) => m.mapping.events.map((e) => e.emailId ?? '')).filter(Boolean))];
  const reads = new Map<string, EmailRecord | null | Error>(
    await Promise.all(
      ids.map(async (id): Promise<[string, EmailRecord | null | Error]> => {
        try {
          return [id, await emails.get(id, { metadataOnly: true })];
        } catch (error) {
          return [id, error instanceof Error ? error : new Error(String(error))];
        }
      }),
    ),
  );
  for (const [messageId, m] of waiting) {
    const failed = m.mapping.events.map((e) => reads.get(e.emailId ?? '')).find((r) => r instanceof Error);
    if (failed instanceof Error) {
      mapped.set(messageId, failed);
      continue;
    }
    const events = m.mapping.events.map((event) => {
      const email = reads.get(event.emailId ?? '');
      const own =
        email && !(email instanceof Error) && email.accountId === event.accountId && email.mode === event.mode;
      return own && email.tags?.length ? { ...event, tags: tagMap(email.tags) } : event;
    });
    mapped.set(messageId, { ...m, mapping: { ...m.mapping, events, tagsFromEmail: false } });
  }
}

export function createSesEventsHandler(deps: SesEventsDeps) {
  const processor = new BatchProcessor(EventType.SQS);
  return async (event: SQSEvent) => {
    const mapped = new Map(event.Records.map((message) => [message.messageId, mapRecord(message)]));
    if (deps.emails) await withStoredTags(mapped, deps.emails);
    const events = [...mapped.values()].flatMap((m) =>
      m instanceof Error || m.mapping.kind === 'skipped' ? [] : m.mapping.events,
    );
    let unprocessed: ReadonlySet<string>;
    try {
      unprocessed = new Set((events.length ? await deps.processEvents(events) : []).map((e) => e.id));
    } catch {
      unprocessed = new Set(events.map((e) => e.id));
    }
    const record = async (message: SQSRecord) => {
      const m = mapped.get(message.messageId) as Mapped | Error;
      if (m instanceof Error) throw m;
      if (m.mapping.kind === 'skipped') {
        deps.logger.warn('SES event skipped', { ...m.context, why: m.mapping.why });
        return;
      }
      const left = m.mapping.events.filter((e) => unprocessed.has(e.id));
      if (left.length) throw new Error(`${left.length} of the SES event's events were not processed`);
      // The events are in their emails' histories and deliveries' logs: a line each would be paid twice.
      deps.logger.debug('SES event processed', {
        ...m.context,
        events: m.mapping.events.map((e) => `${e.type} ${e.id}`),
      });
    };
    return processPartialResponse(event, record, processor, { throwOnFullBatchFailure: false });
  };
}

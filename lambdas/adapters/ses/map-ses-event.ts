// SES event → Sendflow events (DESIGN §6, research/email.md §2), pure. One event per recipient the SES event
// names; the email, account and mode come from the message tags we put on SendEmail, and so do the email's own
// tags (each event's `tags`, for webhook filters) when they fit SES's limits (adapters/ses/tags). Ids are derived
// from the SES event itself (message id, event type, recipient, time), so an EventBridge redelivery maps to the
// same ids and the pipeline, which dedupes on event id, records and delivers it once.
//
//   Send → skipped (email.sent is the send worker's own) · Delivery → email.delivered (smtp_response)
//   DeliveryDelay → email.delivery_delayed
//   Bounce → email.bounced (bounce_type, bounce_sub_type, refused_by_account_suppression_list, diagnostic_code),
//     plus email.failed when SES refused it from the account-level suppression list (OnAccountSuppressionList)
//   Complaint → email.complained (plus email.failed for the OnAccountSuppressionList sub-type)
//   Open / Click → email.opened / email.clicked · Reject, Rendering Failure → email.failed
import { createHash } from 'node:crypto';
import { MODES, type Mode } from '../../domain/api-keys';
import { bareAddress } from '../../domain/email/email';
import type { EventType, SendflowEvent } from '../../domain/events';
import { timeOrderedId } from '../../domain/ids';
import { expandTrace } from '../../domain/trace-context';
import { decodeMimeWords } from './addresses';
import { SES_EVENT_TYPES, type SesEventRecord, sesEventRecord } from './ses-event';
import { customerTagsOf, SES_TAGS } from './tags';

/** SES's bounce sub-type for an address on the account-level suppression list (never attempted). */
export const ACCOUNT_SUPPRESSION = 'OnAccountSuppressionList';
/** email.failed's reason when SES refused to send because of its account-level suppression list. */
export const SUPPRESSED_BY_PROVIDER = 'suppressed_by_provider';

export type SesMapping =
  | {
      readonly kind: 'events';
      readonly events: SendflowEvent[];
      /**
       * The email's own tags did not come with the SES event (they did not fit SES's limits, or the email was
       * sent before they rode along): the events have none yet; the handler gives them the stored email's.
       */
      readonly tagsFromEmail: boolean;
    }
  /** Not an SES event we map (Subscription, a type SES adds later), or not one of our emails (no tags). */
  | { readonly kind: 'skipped'; readonly why: string };

interface Origin {
  readonly emailId: string;
  readonly accountId: string;
  readonly mode: Mode;
  /** The template the email was sent by (its tag), when it was. */
  readonly templateId?: string;
  /** The trace the email was sent in (its tag), when it was traced. */
  readonly trace?: string;
}

/** Why SES's Send is skipped: the send worker tells email.sent itself when SES takes a copy (app/emails/send-emails). */
export const SEND_IS_THE_WORKERS = 'email.sent is the send worker’s own event (told when SES took the copy)';

/** Maps the `detail` of an SES EventBridge event; a known event type with a malformed body throws. */
export function mapSesEvent(detail: unknown): SesMapping {
  const eventType = (detail as { eventType?: unknown } | null)?.eventType;
  if (typeof eventType !== 'string' || !SES_EVENT_TYPES.includes(eventType)) {
    return { kind: 'skipped', why: `SES event type ${String(eventType)} is not mapped` };
  }
  const record = sesEventRecord.parse(detail);
  const origin = originOf(record);
  if (!origin) return { kind: 'skipped', why: `SES message ${record.mail.messageId} carries no Sendflow tags` };
  // The configuration sets no longer ask for Send; one still on its way when that changed is not told twice.
  if (record.eventType === 'Send') return { kind: 'skipped', why: SEND_IS_THE_WORKERS };
  const customer = customerTagsOf(record.mail.tags);
  const events = eventsOf(record, origin);
  if (customer.mark === 'stored') return { kind: 'events', events, tagsFromEmail: true };
  const { tags } = customer;
  return { kind: 'events', events: tags ? events.map((event) => ({ ...event, tags })) : events, tagsFromEmail: false };
}

function originOf(record: SesEventRecord): Origin | null {
  const tag = (name: string) => record.mail.tags?.[name]?.[0];
  const emailId = tag(SES_TAGS.emailId);
  const accountId = tag(SES_TAGS.accountId);
  const mode = tag(SES_TAGS.mode);
  if (!emailId || !accountId || !(MODES as readonly string[]).includes(mode ?? '')) return null;
  const templateId = tag(SES_TAGS.templateId);
  const trace = tag(SES_TAGS.trace);
  return {
    emailId,
    accountId,
    mode: mode as Mode,
    ...(templateId ? { templateId } : {}),
    ...(trace && expandTrace(trace) ? { trace } : {}),
  };
}

/** One of our events, before the common fields: for whom, when, what. */
interface Mapped {
  readonly type: EventType;
  readonly to: string;
  readonly at: string;
  readonly data: Record<string, unknown>;
}

function eventsOf(record: Exclude<SesEventRecord, { eventType: 'Send' }>, origin: Origin): SendflowEvent[] {
  const { mail } = record;
  const everyone = (type: EventType, at: string, data: Record<string, unknown> = {}): Mapped[] =>
    mail.destination.map((to) => ({ type, to, at, data }));
  let mapped: Mapped[];
  switch (record.eventType) {
    case 'Delivery': {
      const { delivery } = record;
      mapped = delivery.recipients.map((to) => ({
        type: 'email.delivered',
        to,
        at: delivery.timestamp,
        data: optional({ smtp_response: delivery.smtpResponse }),
      }));
      break;
    }
    case 'DeliveryDelay': {
      const { deliveryDelay: delay } = record;
      mapped = delay.delayedRecipients.map((r) => ({
        type: 'email.delivery_delayed',
        to: r.emailAddress,
        at: delay.timestamp,
        data: optional({
          delay_type: delay.delayType,
          expires_at: delay.expirationTime && iso(delay.expirationTime),
          diagnostic_code: r.diagnosticCode,
        }),
      }));
      break;
    }
    case 'Bounce': {
      const { bounce } = record;
      const refused = bounce.bounceSubType === ACCOUNT_SUPPRESSION;
      mapped = bounce.bouncedRecipients.flatMap((r): Mapped[] => [
        {
          type: 'email.bounced',
          to: r.emailAddress,
          at: bounce.timestamp,
          data: optional({
            bounce_type: bounce.bounceType,
            bounce_sub_type: bounce.bounceSubType,
            refused_by_account_suppression_list: refused,
            diagnostic_code: r.diagnosticCode,
          }),
        },
        ...(refused ? [suppressedFailure(r.emailAddress, bounce.timestamp)] : []),
      ]);
      break;
    }
    case 'Complaint': {
      const { complaint } = record;
      const refused = complaint.complaintSubType === ACCOUNT_SUPPRESSION;
      mapped = complaint.complainedRecipients.flatMap((r): Mapped[] => [
        {
          type: 'email.complained',
          to: r.emailAddress,
          at: complaint.timestamp,
          data: optional({
            feedback_type: complaint.complaintFeedbackType,
            complaint_sub_type: complaint.complaintSubType ?? undefined,
          }),
        },
        ...(refused ? [suppressedFailure(r.emailAddress, complaint.timestamp)] : []),
      ]);
      break;
    }
    case 'Open':
      mapped = everyone(
        'email.opened',
        record.open.timestamp,
        optional({ ip_address: record.open.ipAddress, user_agent: record.open.userAgent }),
      );
      break;
    case 'Click': {
      const { click } = record;
      mapped = everyone(
        'email.clicked',
        click.timestamp,
        optional({
          link: click.link,
          ip_address: click.ipAddress,
          user_agent: click.userAgent,
          link_tags: click.linkTags && Object.keys(click.linkTags).length ? click.linkTags : undefined,
        }),
      );
      break;
    }
    case 'Reject':
      mapped = everyone('email.failed', mail.timestamp, { reason: record.reject.reason });
      break;
    case 'Rendering Failure':
      mapped = everyone(
        'email.failed',
        mail.timestamp,
        optional({ reason: record.failure.errorMessage, template: record.failure.templateName }),
      );
      break;
  }
  const common = {
    from: decodeMimeWords(mail.commonHeaders?.from?.[0] ?? mail.source),
    subject: decodeMimeWords(mail.commonHeaders?.subject ?? ''),
    ...(origin.templateId ? { template_id: origin.templateId } : {}),
  };
  return mapped.map((m) => {
    const to = bareAddress(m.to);
    const at = iso(m.at);
    // The link is part of a click's identity: two links clicked in the same millisecond are two events.
    const link = m.type === 'email.clicked' ? `\n${String(m.data.link)}` : '';
    const seed = createHash('sha256')
      .update(`ses\n${mail.messageId}\n${record.eventType}\n${m.type}\n${to}\n${at}${link}`)
      .digest();
    return {
      id: timeOrderedId('evt', Date.parse(at), (n) => seed.subarray(0, n)),
      type: m.type,
      accountId: origin.accountId,
      mode: origin.mode,
      timestamp: at,
      emailId: origin.emailId,
      to,
      data: { ...common, ...m.data },
      ...(origin.trace ? { trace: origin.trace } : {}),
    };
  });
}

function suppressedFailure(to: string, at: string): Mapped {
  return { type: 'email.failed', to, at, data: { reason: SUPPRESSED_BY_PROVIDER } };
}

/** Drops absent fields, so a webhook never shows `null` for something SES did not say. */
function optional(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([, value]) => value !== undefined && value !== null));
}

function iso(timestamp: string): string {
  return new Date(Date.parse(timestamp)).toISOString();
}

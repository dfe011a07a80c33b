// The event catalog: every event type with its description and the JSON Schema (2020-12) of its `standard`
// payload as delivered (spec §2.3, §6.1, §6.3). Written once, in zod: GET /v1/event-types and the OpenAPI
// document's `webhooks` section both publish these schemas, and tests validate real payloads against them.
import * as z from 'zod';
import { CONTACT_STATUSES } from '../../app/contacts/contacts';
import { DOMAIN_STATUSES } from '../../app/domains/ports';
import type { SuppressionReason } from '../../app/emails/ports';
import { EVENT_TYPES, type EventType } from '../../domain/events';
import { SUPPRESSION_ORIGINS, SUPPRESSION_REASONS as SUPPRESSION_REASON_LIST } from '../../domain/suppressions';
import { DISABLED_REASONS } from '../../domain/webhooks/auto-disable';
import { ERROR_CLASSES } from '../../domain/webhooks/error-class';
import { receivedStatusFields } from './received-fields';

const time = (description: string) => z.string().meta({ format: 'date-time', description });
const prefixed = (prefix: string, description: string) =>
  z
    .string()
    .regex(new RegExp(`^${prefix}_[0-9a-z]+$`))
    .meta({ description });

// Exhaustive by type: a new suppression reason fails to compile until it is listed here.
const SUPPRESSION_REASONS: Record<SuppressionReason, true> = {
  hard_bounce: true,
  complaint: true,
  unsubscribe: true,
  manual: true,
};

const eventId = prefixed('evt', 'The event id: the same on every attempt and in `webhook-id`; de-duplicate on it.');

/** What every email event's `data` carries besides its own fields: Sendflow's and Resend's. */
const emailCommon = {
  from: z.string().meta({ description: 'The sender, as the email gave it (may be `Name <address>`).' }),
  subject: z.string().meta({ description: 'The subject of the email.' }),
  email_id: prefixed('email', "The email (Resend's field; the same as the top-level `email_id`)."),
  created_at: time("When the email was accepted (Resend's field)."),
  to: z
    .array(z.string())
    .length(1)
    .meta({ description: "The recipient this event is about, as a list (Resend's field; the top-level `to`)." }),
  template_id: prefixed(
    'tpl',
    'The template the email was rendered from; only on emails sent with `template`.',
  ).optional(),
};

/** Resend's name for `timestamp`, on every event. */
const createdAt = time("The same as `timestamp` (Resend's name).");

/** An email event: one recipient of one email (`email_id`, `to`), in the order its events happened (`sequence`). */
function emailPayload(type: EventType, data: z.ZodRawShape) {
  return z.strictObject({
    id: eventId,
    type: z.literal(type),
    email_id: prefixed('email', 'The email the event belongs to.'),
    to: z.string().min(1).meta({ description: 'The recipient this event is about: its bare address, lower-cased.' }),
    sequence: z.number().int().min(1).meta({
      description:
        'Increases with each event of one email (all its recipients), in the order the events happened: compare it between events of the same email_id.',
    }),
    timestamp: time('When it happened (ISO 8601, UTC).'),
    created_at: createdAt,
    data: z.strictObject({ ...emailCommon, ...data }),
  });
}

/** An account event (a domain, a contact, a webhook, a suppression): no `email_id` or `to`. */
function accountPayload(type: EventType, data: z.ZodRawShape) {
  return z.strictObject({
    id: eventId,
    type: z.literal(type),
    timestamp: time('When it happened (ISO 8601, UTC).'),
    created_at: createdAt,
    data: z.strictObject(data),
  });
}

const optionalText = (description: string) => z.string().optional().meta({ description });

const domainData = {
  id: prefixed('dom', 'The domain id.'),
  name: z.string().meta({ description: 'The domain name.' }),
  status: z.enum(DOMAIN_STATUSES).meta({ description: 'Its verification state after the change.' }),
  created_at: time('When the domain was added.'),
};

const addressList = (description: string) => z.array(z.string()).meta({ description });

/** email.received's data: Resend's fields, metadata only. */
const receivedData = {
  email_id: prefixed('rcv', 'The received email: GET /v1/emails/receiving/{email_id}.'),
  created_at: time('When it arrived (ISO 8601, UTC).'),
  from: z
    .string()
    .meta({ description: 'The From header, e.g. `Ada <ada@example.com>` (the envelope sender if none).' }),
  to: addressList('The To header’s addresses.'),
  cc: addressList('The Cc header’s addresses.'),
  bcc: addressList('The Bcc header’s addresses (rarely present).'),
  received_for: addressList('The envelope recipients at the account’s domains this email was received for.'),
  subject: z.string().meta({ description: 'The subject, decoded; data only, never a header.' }),
  message_id: z.string().meta({ description: 'The Message-ID header (empty if none).' }),
  attachments: z.array(
    z.strictObject({
      id: prefixed('att', 'The attachment: GET /v1/emails/receiving/{email_id}/attachments/{id}.'),
      filename: z.string().nullable(),
      content_type: z.string(),
      content_disposition: z.enum(['inline', 'attachment']),
      content_id: z.string().nullable(),
      size: z.number().int().min(0).meta({ description: 'Bytes.' }),
    }),
  ),
  ...receivedStatusFields,
};

const contactData = {
  id: prefixed('ct', 'The contact id.'),
  email: z.string().meta({ description: 'The contact’s address, lower-cased.' }),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  status: z.enum(CONTACT_STATUSES).meta({ description: '`pending` until the contact confirms (double opt-in).' }),
  created_at: time('When the contact was created.'),
  updated_at: time('When it last changed.'),
  unsubscribed: z
    .literal(false)
    .meta({ description: "Resend's field: always false (an opt-out is a suppression: suppression.added)." }),
};

const suppressionData = {
  id: z.string().meta({ description: 'The suppression: GET /v1/suppressions/{id}.' }),
  email: z.string().meta({ description: 'The address, lower-cased.' }),
  origin: z.enum(SUPPRESSION_ORIGINS).meta({ description: "Resend's origin: bounce, complaint or manual." }),
  reason: z
    .enum(SUPPRESSION_REASON_LIST)
    .meta({ description: "Sendflow's reason: hard_bounce, complaint, unsubscribe or manual (the API)." }),
  source_id: z.string().nullable().meta({ description: 'The email that caused it; null when added by hand.' }),
  created_at: time('When the address was suppressed.'),
};

const webhookData = {
  webhook_id: prefixed('wh', 'The webhook this event is about.'),
  url: z.string().meta({
    description:
      'Its URL, cut to its origin and first path segment: the rest (a chat hook’s token, a query) may be a secret.',
  }),
  last_error_class: z
    .enum(ERROR_CLASSES)
    .nullable()
    .meta({ description: 'Why its latest failed attempt failed (the delivery log’s `error_class`).' }),
  last_status_code: z
    .number()
    .int()
    .nullable()
    .meta({ description: 'The HTTP status of that attempt; null when it got no answer.' }),
};

const rateField = (formula: string) =>
  z
    .number()
    .min(0)
    .max(1)
    .nullable()
    .meta({ description: `${formula}, a fraction (0.05 is 5%); null when nothing was sent.` });

const thresholdPair = z.strictObject({
  bounce_rate: z.number().meta({ description: 'A fraction (0.04 is 4%).' }),
  complaint_rate: z.number().meta({ description: 'A fraction (0.0008 is 0.08%).' }),
});

interface Entry {
  readonly description: string;
  readonly payload: z.ZodType;
}

const entries: Record<EventType, Entry> = {
  'email.scheduled': {
    description: 'Accepted for a future send time.',
    payload: emailPayload('email.scheduled', { scheduled_at: time('When the email is to be sent.') }),
  },
  'email.sent': { description: 'Accepted by the sending provider.', payload: emailPayload('email.sent', {}) },
  'email.delivered': {
    description: "Accepted by the recipient's mail server.",
    payload: emailPayload('email.delivered', {
      smtp_response: optionalText("The receiving server's answer, e.g. `250 2.6.0 Message received`."),
    }),
  },
  'email.delivery_delayed': {
    description: 'A delivery attempt failed temporarily; the service will retry.',
    payload: emailPayload('email.delivery_delayed', {
      delay_type: z.string().meta({ description: "SES's delay type, e.g. `TransientCommunicationFailure`." }),
      expires_at: time('When the provider stops retrying.').optional(),
      diagnostic_code: optionalText("The receiving server's diagnostic, when it gave one."),
    }),
  },
  'email.bounced': {
    description:
      'Hard or soft bounce. `refused_by_account_suppression_list` is true when the provider refused the send ' +
      'because the address is on its account-level suppression list (that case also fires email.failed).',
    payload: emailPayload('email.bounced', {
      bounce_type: z.string().meta({ description: "SES's bounce type: `Permanent`, `Transient` or `Undetermined`." }),
      bounce_sub_type: z.string().meta({ description: "SES's bounce sub-type, e.g. `General`, `MailboxFull`." }),
      refused_by_account_suppression_list: z.boolean(),
      diagnostic_code: optionalText("The receiving server's diagnostic, when it gave one."),
      bounce: z
        .strictObject({ message: z.string(), subType: z.string(), type: z.string() })
        .meta({ description: "Resend's field: the diagnostic ('' if none), sub-type and type." }),
    }),
  },
  'email.complained': {
    description: 'Recipient marked the email as spam.',
    payload: emailPayload('email.complained', {
      feedback_type: optionalText('The feedback report type, e.g. `abuse`.'),
      complaint_sub_type: optionalText("SES's complaint sub-type, when it gave one."),
    }),
  },
  'email.opened': {
    description: 'Recipient opened the email (tracking pixel).',
    payload: emailPayload('email.opened', {
      ip_address: optionalText('Where the open came from.'),
      user_agent: optionalText('The client that opened it.'),
    }),
  },
  'email.clicked': {
    description: 'Recipient clicked a tracked link.',
    payload: emailPayload('email.clicked', {
      link: z.string().meta({ description: 'The link clicked.' }),
      ip_address: optionalText('Where the click came from.'),
      user_agent: optionalText('The client that clicked.'),
      link_tags: z
        .record(z.string(), z.array(z.string()))
        .optional()
        .meta({ description: "The link's tags, when it had any." }),
      click: z
        .strictObject({ ipAddress: z.string(), link: z.string(), timestamp: z.string(), userAgent: z.string() })
        .meta({ description: "Resend's field: the same facts ('' where unknown)." }),
    }),
  },
  'email.failed': {
    description: 'Failed after the final send attempt.',
    payload: emailPayload('email.failed', {
      reason: z.string().meta({ description: 'Why, e.g. `suppressed_by_provider` or the provider’s rejection.' }),
      template: optionalText('The template that failed to render, for a rendering failure.'),
      failed: z.strictObject({ reason: z.string() }).meta({ description: "Resend's field: the same reason." }),
    }),
  },
  'email.suppressed': {
    description: 'Not sent because the recipient is on the account’s suppression list.',
    payload: emailPayload('email.suppressed', {
      reason: z
        .enum(Object.keys(SUPPRESSION_REASONS) as [SuppressionReason, ...SuppressionReason[]])
        .meta({ description: 'Why the address is suppressed.' }),
      suppressed: z
        .strictObject({ message: z.string(), type: z.string() })
        .meta({ description: "Resend's field: a sentence, and the reason as `type`." }),
    }),
  },
  'email.unsubscribed': {
    description: 'Recipient opted out by one-click List-Unsubscribe (RFC 8058).',
    payload: emailPayload('email.unsubscribed', { source: z.literal('list-unsubscribe') }),
  },
  'email.received': {
    description:
      'An email arrived at a verified domain of the account with receiving enabled (docs/inbound.md): its metadata ' +
      'only; GET /v1/emails/receiving/{email_id} has the body, headers and download links.',
    payload: accountPayload('email.received', receivedData),
  },
  'domain.created': {
    description: 'A sending domain was added.',
    payload: accountPayload('domain.created', domainData),
  },
  'domain.updated': {
    description: "A domain's verification state, tracking settings or capabilities changed.",
    payload: accountPayload('domain.updated', domainData),
  },
  'domain.deleted': {
    description: 'A sending domain was deleted.',
    payload: accountPayload('domain.deleted', domainData),
  },
  'contact.created': {
    description: 'Created through the single-contact API.',
    payload: accountPayload('contact.created', contactData),
  },
  'contact.updated': {
    description: 'Updated through the API.',
    payload: accountPayload('contact.updated', contactData),
  },
  'contact.deleted': {
    description: 'A contact was deleted.',
    payload: accountPayload('contact.deleted', contactData),
  },
  'contact.subscribed': {
    description: 'Subscribed through a hosted form or confirmation flow.',
    payload: accountPayload('contact.subscribed', contactData),
  },
  'suppression.added': {
    description:
      'An address was suppressed: a hard bounce, a complaint, a one-click unsubscribe, or by hand (POST ' +
      '/v1/suppressions). Not on a stage that turned the suppressionEvents stored format off.',
    payload: accountPayload('suppression.added', suppressionData),
  },
  'suppression.removed': {
    description:
      'A suppression was removed (DELETE /v1/suppressions/{id}): the address gets email again. Not on a stage ' +
      'that turned the suppressionEvents stored format off.',
    payload: accountPayload('suppression.removed', suppressionData),
  },
  'webhook.disabled': {
    description:
      'A webhook was disabled: it failed without a success for the disable window (`failing`), or its ' +
      'endpoint answered 410 Gone (`gone`). Sent to the account’s other webhooks that subscribe to it.',
    payload: accountPayload('webhook.disabled', {
      ...webhookData,
      reason: z.enum(DISABLED_REASONS).meta({ description: 'Why it was disabled.' }),
      disabled_at: time('When it was disabled.'),
      failing_since: time('Its first failure since its last success; null when disabled by a 410.').nullable(),
    }),
  },
  'webhook.failing': {
    description: 'A webhook has failed without a success for a day (it is not disabled yet).',
    payload: accountPayload('webhook.failing', {
      ...webhookData,
      failing_since: time('Its first failure since its last success.'),
      disable_at: time('When it will be disabled if nothing succeeds before.'),
    }),
  },
  'account.reputation_warning': {
    description:
      'The account’s (or one sending domain’s) bounce or complaint rate over the rolling window passed the ' +
      'warning threshold (`level: warning`, told once until the rates fall back under it), or the pause ' +
      'threshold (`level: paused`: sending from it is refused with 403 `sending_paused` until support lifts the ' +
      'pause). Rates are SES’s: hard bounces and complaints over copies sent.',
    payload: accountPayload('account.reputation_warning', {
      message: z.string().meta({ description: 'What happened and what to do, for a person.' }),
      level: z.enum(['warning', 'paused']).meta({ description: 'Which threshold was passed.' }),
      scope: z.enum(['account', 'domain']).meta({ description: 'The whole account, or one sending domain of it.' }),
      domain: z.string().nullable().meta({ description: 'The sending domain when `scope` is `domain`, else null.' }),
      sending_paused: z.boolean().meta({ description: 'True when sending from it is now paused.' }),
      breaches: z
        .array(z.enum(['bounce_rate', 'complaint_rate']))
        .meta({ description: 'The rates past the threshold of `level`.' }),
      window_days: z.number().int().min(1).meta({ description: 'The rolling window: the last N UTC days.' }),
      sent: z.number().int().min(0).meta({ description: 'Copies sent in the window.' }),
      bounced: z.number().int().min(0).meta({ description: 'Hard (permanent) bounces in the window.' }),
      complained: z.number().int().min(0).meta({ description: 'Complaints in the window.' }),
      bounce_rate: rateField('bounced / sent'),
      complaint_rate: rateField('complained / sent'),
      thresholds: z.strictObject({
        warning: thresholdPair,
        pause: thresholdPair,
      }),
    }),
  },
};

/** One type of the catalog as GET /v1/event-types publishes it. */
export interface CatalogEntry {
  readonly type: EventType;
  readonly description: string;
  /** JSON Schema, draft 2020-12 (`$schema` set), of the payload exactly as a `standard` webhook receives it. */
  readonly schema: Readonly<Record<string, unknown>>;
}

let built: readonly CatalogEntry[] | undefined;

/** The catalog, built once per process (it never changes while the code runs). */
export function eventCatalog(): readonly CatalogEntry[] {
  built ??= EVENT_TYPES.map((type) => {
    const { description, payload } = entries[type];
    const schema = z.toJSONSchema(payload.meta({ title: type, description }), { target: 'draft-2020-12' });
    return { type, description, schema: tidy(schema) as Record<string, unknown> };
  });
  return built;
}

/** zod's bounds on every `.int()` say nothing a reader needs (Number.MAX_SAFE_INTEGER): left out. */
function tidy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(tidy);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key, inner]) => !(key === 'maximum' && inner === Number.MAX_SAFE_INTEGER))
      .map(([key, inner]) => [key, tidy(inner)]),
  );
}

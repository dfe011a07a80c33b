// zod at the SES boundary: the EventBridge envelope of a configuration-set event (source aws.ses) and the SES
// event record in its `detail` (research/email.md §1.2), one schema per event type. Unknown fields pass;
// fields we read are checked, so a malformed record fails loudly instead of becoming a wrong webhook.
import * as z from 'zod';

const timestamp = z.string().refine((value) => !Number.isNaN(Date.parse(value)), 'not a timestamp');

export const sesMail = z.looseObject({
  timestamp,
  messageId: z.string().min(1),
  source: z.string(),
  destination: z.array(z.string()),
  commonHeaders: z.looseObject({ from: z.array(z.string()).optional(), subject: z.string().optional() }).optional(),
  /** name → values; SES's own (ses:configuration-set, …) and the message tags we sent. */
  tags: z.record(z.string(), z.array(z.string())).optional(),
});

const recipient = z.looseObject({
  emailAddress: z.string().min(1),
  status: z.string().optional(),
  diagnosticCode: z.string().optional(),
});

const send = z.looseObject({ eventType: z.literal('Send'), mail: sesMail });

const delivery = z.looseObject({
  eventType: z.literal('Delivery'),
  mail: sesMail,
  delivery: z.looseObject({
    timestamp,
    recipients: z.array(z.string()),
    smtpResponse: z.string().optional(),
    processingTimeMillis: z.number().optional(),
    reportingMTA: z.string().optional(),
  }),
});

const deliveryDelay = z.looseObject({
  eventType: z.literal('DeliveryDelay'),
  mail: sesMail,
  deliveryDelay: z.looseObject({
    timestamp,
    delayType: z.string(),
    delayedRecipients: z.array(recipient),
    expirationTime: timestamp.optional(),
  }),
});

const bounce = z.looseObject({
  eventType: z.literal('Bounce'),
  mail: sesMail,
  bounce: z.looseObject({
    timestamp,
    bounceType: z.string(),
    bounceSubType: z.string(),
    bouncedRecipients: z.array(recipient),
    feedbackId: z.string().optional(),
  }),
});

const complaint = z.looseObject({
  eventType: z.literal('Complaint'),
  mail: sesMail,
  complaint: z.looseObject({
    timestamp,
    complainedRecipients: z.array(z.looseObject({ emailAddress: z.string().min(1) })),
    complaintSubType: z.string().nullable().optional(),
    complaintFeedbackType: z.string().optional(),
    feedbackId: z.string().optional(),
  }),
});

const open = z.looseObject({
  eventType: z.literal('Open'),
  mail: sesMail,
  open: z.looseObject({ timestamp, ipAddress: z.string().optional(), userAgent: z.string().optional() }),
});

const click = z.looseObject({
  eventType: z.literal('Click'),
  mail: sesMail,
  click: z.looseObject({
    timestamp,
    link: z.string(),
    ipAddress: z.string().optional(),
    userAgent: z.string().optional(),
    linkTags: z.record(z.string(), z.array(z.string())).optional(),
  }),
});

const reject = z.looseObject({
  eventType: z.literal('Reject'),
  mail: sesMail,
  reject: z.looseObject({ reason: z.string() }),
});

const renderingFailure = z.looseObject({
  eventType: z.literal('Rendering Failure'),
  mail: sesMail,
  failure: z.looseObject({ errorMessage: z.string(), templateName: z.string().optional() }),
});

/** The SES event types Sendflow maps; Subscription (SES list management) is not used. */
export const sesEventRecord = z.discriminatedUnion('eventType', [
  send,
  delivery,
  deliveryDelay,
  bounce,
  complaint,
  open,
  click,
  reject,
  renderingFailure,
]);
export type SesEventRecord = z.infer<typeof sesEventRecord>;
export type SesEventType = SesEventRecord['eventType'];
export const SES_EVENT_TYPES: readonly string[] = sesEventRecord.options.map((option) => option.shape.eventType.value);

/**
 * The provider-events queue message: EventBridge's envelope around the record. The detail is checked in two
 * steps: any `eventType` passes here, and a known one must then match its schema (mapSesEvent); an event
 * type SES adds later is skipped, not dead-lettered.
 */
export const sesEventBridgeEnvelope = z.looseObject({
  id: z.string().min(1),
  'detail-type': z.string(),
  source: z.literal('aws.ses'),
  time: z.string(),
  detail: z.looseObject({ eventType: z.string(), mail: sesMail }),
});
export type SesEventBridgeEnvelope = z.infer<typeof sesEventBridgeEnvelope>;

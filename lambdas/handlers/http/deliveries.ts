// HTTP handlers for the delivery log (spec §2.2, §4.1): list with status, error-class, event-type and time filters
// and cursor, one
// delivery with its payload, manual retry; and one email's deliveries to every webhook (GET /v1/emails/:id/deliveries).
import * as z from 'zod';
import { type AttemptDeps, retryDelivery } from '../../app/webhooks/attempts';
import { type EmailDeliveriesDeps, listEmailDeliveries } from '../../app/webhooks/email-deliveries';
import { getWebhook } from '../../app/webhooks/manage-webhooks';
import type { Delivery } from '../../app/webhooks/ports';
import { NotFoundError } from '../../domain/errors';
import { EVENT_TYPES, TEST_EVENT } from '../../domain/events';
import {
  type AttemptTimings,
  DELIVERY_STATUSES,
  type DeliveryStatus,
  NO_TIMINGS,
} from '../../domain/webhooks/delivery';
import { ERROR_CLASSES, errorClassOf } from '../../domain/webhooks/error-class';
import { type RequestSchemas, type ResponseSchemas, type RouteHandler, tenantOf } from './context';
import { checkWindow, eventTypeField, idWindow, windowFields } from './list-filters';
import { type Body, integer, isoTime, named, pageSchema, reply, success } from './response';
import { validate } from './validate';

const pageQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: z
    .string()
    .regex(/^dlv_[0-9a-z]{20,60}$/, 'must be a delivery id')
    .optional(),
};

/** What a delivery's `event` can be: an event type, or `test` for a test send. */
const DELIVERY_EVENTS = [...EVENT_TYPES, TEST_EVENT];
const WHAT = 'deliveries whose event happened';

const listQuery = z
  .strictObject({
    status: z.enum(DELIVERY_STATUSES as [DeliveryStatus, ...DeliveryStatus[]]).optional(),
    /** Deliveries whose latest attempt failed with this class. */
    error_class: z.enum(ERROR_CLASSES).optional(),
    event_type: eventTypeField(DELIVERY_EVENTS),
    ...windowFields(WHAT),
    ...pageQuery,
  })
  .superRefine(checkWindow);

/** An email's deliveries, a page at a time (each can carry 50 attempts: all of them could pass 6 MB). */
const emailDeliveriesQuery = z
  .strictObject({ event_type: eventTypeField(EVENT_TYPES), ...windowFields(WHAT), ...pageQuery })
  .superRefine(checkWindow);

const deliveryStatus = z.enum(DELIVERY_STATUSES as [DeliveryStatus, ...DeliveryStatus[]]);
const milliseconds = integer.nullable();

const attemptSchema = z.strictObject({
  at: isoTime,
  status_code: integer.meta({ description: '0 = no HTTP answer.' }),
  duration_ms: integer,
  error: z.string().meta({ description: "'' = none." }),
  error_class: z
    .enum(ERROR_CLASSES)
    .nullable()
    .meta({ description: 'Why the attempt failed; null when it succeeded.' }),
  kind: z
    .enum(['automatic', 'manual', 'test'])
    .nullable()
    .meta({ description: 'What made it: the retry schedule, POST …/retry, or a test send; null when not recorded.' }),
  request_headers: z.record(z.string(), z.string()).nullable().meta({
    description:
      'The headers sent (signature headers included; the signing secret is never sent). Latest attempt only; null on earlier ones.',
  }),
  response_headers: z.record(z.string(), z.string()).nullable().meta({
    description:
      "The answer's headers: at most 20, each value at most 200 characters, 1 KB in all, lower-case names. Latest attempt only; null on earlier ones and without an answer.",
  }),
  retry_after_seconds: integer.nullable().meta({
    description:
      'Seconds the endpoint asked to wait (a 429 or 503 with Retry-After, capped at 3600): the next automatic attempt was no earlier than that. Null when it did not ask.',
  }),
  aws_error_code: z.string().nullable().meta({
    description:
      "AWS destinations: the error code AWS answered (AccessDenied, ThrottlingException, a PutEvents entry's ErrorCode…), in place of an HTTP status; null otherwise.",
  }),
  aws_request_id: z.string().nullable().meta({
    description: "AWS destinations: the request id of AWS's answer (x-amzn-RequestId), failed or not; null otherwise.",
  }),
  timings: z.strictObject({
    dns_ms: milliseconds,
    connect_ms: milliseconds,
    tls_ms: milliseconds,
    ttfb_ms: milliseconds,
  }),
});

export const deliverySchema = named(
  'Delivery',
  z.strictObject({
    object: z.literal('webhook_delivery'),
    id: z.string(),
    webhook_id: z.string(),
    event: z.string().meta({ description: 'The event type, or `test` for a test send.' }),
    status: deliveryStatus,
    attempts: integer,
    max_attempts: integer,
    status_code: integer.nullable().meta({ description: "The latest attempt's HTTP status; null before any." }),
    duration_ms: integer,
    error: z.string().nullable(),
    response: z.string().meta({ description: "First 500 characters of the latest attempt's response body." }),
    attempt_log: z.array(attemptSchema),
    next_attempt_at: isoTime.nullable(),
    delivered_at: isoTime.nullable(),
    created_at: isoTime,
  }),
);

const deliveryWithPayload = named(
  'DeliveryWithPayload',
  z.strictObject({
    ...deliverySchema.shape,
    payload: z.string().meta({
      description:
        'The exact body sent (stored once); a webhook with a transformation sends what its handler makes of it, signed over that body.',
    }),
  }),
);

const deliveryList = pageSchema('DeliveryList', deliverySchema, 'rows examined');

const retryResult = named(
  'DeliveryRetryResult',
  z.strictObject({
    success: z.boolean(),
    message: z.string(),
    delivery: z.strictObject({
      id: z.string(),
      status: deliveryStatus,
      attempts: integer,
      status_code: integer.nullable(),
    }),
  }),
);

const responses = {
  listDeliveries: success(200, deliveryList, 'A page of the delivery log, newest first'),
  getDelivery: success(200, deliveryWithPayload, 'The delivery, with the body it sends'),
  retryDelivery: success(200, retryResult, 'How the new attempt went'),
  listEmailDeliveries: success(200, deliveryList, "The email's deliveries to every webhook, newest first"),
} as const;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A delivery as the API shows it (spec §2.2). `payload` only on the single-delivery response. */
export function deliveryView(delivery: Delivery): Body<typeof deliverySchema> {
  const latest = delivery.attemptLog.at(-1);
  return {
    object: 'webhook_delivery',
    id: delivery.id,
    webhook_id: delivery.webhookId,
    event: delivery.event,
    status: delivery.status,
    attempts: delivery.attempts,
    max_attempts: delivery.maxAttempts,
    status_code: latest?.statusCode ?? null,
    duration_ms: latest?.durationMs ?? 0,
    error: latest?.error ?? null,
    response: delivery.response,
    // Spec types: status_code integer (0 = no HTTP answer), error string ('' = none).
    attempt_log: delivery.attemptLog.map((entry) => ({
      at: new Date(entry.at).toISOString(),
      status_code: entry.statusCode ?? 0,
      duration_ms: entry.durationMs,
      error: entry.error ?? '',
      error_class: errorClassOf(entry),
      kind: entry.kind ?? null,
      request_headers: entry.requestHeaders ? { ...entry.requestHeaders } : null,
      response_headers: entry.responseHeaders ? { ...entry.responseHeaders } : null,
      retry_after_seconds: entry.retryAfterSeconds ?? null,
      aws_error_code: entry.awsErrorCode ?? null,
      aws_request_id: entry.awsRequestId ?? null,
      timings: timingsView(entry.timings ?? NO_TIMINGS),
    })),
    next_attempt_at: delivery.status === 'pending' ? iso(delivery.nextAttemptAt) : null,
    delivered_at: iso(delivery.deliveredAt),
    created_at: new Date(delivery.createdAt).toISOString(),
  };
}

function timingsView(timings: AttemptTimings) {
  return {
    dns_ms: timings.dnsMs,
    connect_ms: timings.connectMs,
    tls_ms: timings.tlsMs,
    ttfb_ms: timings.ttfbMs,
  };
}

/** One line on how the latest attempt went, for the test and retry responses. */
export function attemptSummary(delivery: Delivery): string {
  const latest = delivery.attemptLog.at(-1);
  if (!latest) return 'No attempt was made.';
  if (delivery.status === 'succeeded') return `Delivered: the endpoint answered HTTP ${latest.statusCode}.`;
  return `Not delivered: ${latest.error ?? `HTTP ${latest.statusCode}`}.`;
}

export function deliveryHandlers(deps: AttemptDeps & EmailDeliveriesDeps) {
  const list: RouteHandler = async ({ caller, params, query }) => {
    const webhook = await getWebhook(deps, tenantOf(caller), params.id ?? '');
    const {
      status,
      error_class: errorClass,
      event_type: eventTypes,
      limit,
      ...rest
    } = validate(listQuery, query, 'query');
    const page = await deps.deliveries.list(
      webhook.id,
      {
        limit,
        ...(status ? { status } : {}),
        ...(errorClass ? { errorClass } : {}),
        ...(eventTypes ? { eventTypes } : {}),
        ...idWindow('dlv', rest),
      },
      deps.clock.now(),
    );
    return reply(responses.listDeliveries, {
      object: 'list',
      has_more: page.hasMore,
      next_after: page.hasMore ? (page.resumeAfter ?? page.items.at(-1)?.id ?? null) : null,
      data: page.items.map(deliveryView),
    });
  };
  const get: RouteHandler = async ({ caller, params }) => {
    const webhook = await getWebhook(deps, tenantOf(caller), params.id ?? '');
    const delivery = await deps.deliveries.get(webhook.id, params.deliveryId ?? '', deps.clock.now());
    if (!delivery) throw new NotFoundError(`No delivery with id ${params.deliveryId}.`);
    return reply(responses.getDelivery, { ...deliveryView(delivery), payload: delivery.payload });
  };
  const retry: RouteHandler = async ({ caller, params, receivedAt }) => {
    const delivery = await retryDelivery(deps, tenantOf(caller), params.id ?? '', params.deliveryId ?? '', receivedAt);
    const view = deliveryView(delivery);
    return reply(responses.retryDelivery, {
      success: delivery.status === 'succeeded',
      message: attemptSummary(delivery),
      delivery: { id: view.id, status: view.status, attempts: view.attempts, status_code: view.status_code },
    });
  };
  const ofEmail: RouteHandler = async ({ caller, params, query }) => {
    const { limit, event_type: eventTypes, ...rest } = validate(emailDeliveriesQuery, query, 'query');
    const found = await listEmailDeliveries(deps, tenantOf(caller), params.id ?? '', {
      limit,
      ...(eventTypes ? { eventTypes } : {}),
      ...idWindow('dlv', rest),
    });
    return reply(responses.listEmailDeliveries, {
      object: 'list',
      has_more: found.hasMore,
      next_after: found.nextAfter,
      data: found.items.map(deliveryView),
    });
  };
  return { listDeliveries: list, getDelivery: get, retryDelivery: retry, listEmailDeliveries: ofEmail };
}

export const requestSchemas: RequestSchemas = {
  listDeliveries: { query: listQuery },
  listEmailDeliveries: { query: emailDeliveriesQuery },
};
export const responseSchemas: ResponseSchemas = responses;

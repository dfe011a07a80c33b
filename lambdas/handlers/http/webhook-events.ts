// HTTP handlers for a webhook's deliveries as Resend's SDK reads them, "webhook events" (docs/resend.md,
// "Webhooks, suppressions and logs"): GET /v1/webhooks/:id/events[/:event_id[/attempts]] and POST …/:event_id/replay (the manual retry,
// spec §4.1 rule 1 and 2: one attempt now, 409 while one is scheduled). An event's id is its delivery's id.
import * as z from 'zod';
import { type AttemptDeps, retryDelivery } from '../../app/webhooks/attempts';
import { getWebhook } from '../../app/webhooks/manage-webhooks';
import type { Delivery } from '../../app/webhooks/ports';
import { NotFoundError } from '../../domain/errors';
import { invalidRequest, problem } from '../../domain/field-problems';
import {
  attemptPage,
  WEBHOOK_EVENT_STATUSES,
  webhookEventAttempts,
  webhookEventStatus,
} from '../../domain/webhooks/resend-view';
import { type RequestSchemas, type ResponseSchemas, type RouteHandler, tenantOf } from './context';
import { integer, isoTime, named, reply, success } from './response';
import { validate } from './validate';

const deliveryId = z.string().regex(/^dlv_[0-9a-z]{20,60}$/, 'must be an event id (dlv_…)');

const eventsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: deliveryId.optional().meta({ description: 'An event id: the page continues with older events.' }),
});

const attemptsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: z.string().max(100).optional().meta({ description: 'An attempt id: the page continues with earlier ones.' }),
});

const status = z.enum(WEBHOOK_EVENT_STATUSES).meta({
  description:
    '`success` (delivered), `failed` (no attempt left), `attempting` (an attempt in flight), `pending` (waiting for its next attempt).',
});

const eventType = z.string().meta({ description: 'The event type, or `test` for a test send.' });

const eventSummary = named(
  'WebhookEventSummary',
  z.strictObject({
    id: z.string().meta({ description: "The delivery's id (GET /v1/webhooks/:id/deliveries/:id is the same one)." }),
    type: eventType,
    created_at: isoTime,
    status,
  }),
);

const eventSchema = named(
  'WebhookEvent',
  z.strictObject({
    object: z.literal('webhook_event'),
    ...eventSummary.shape,
    next_attempt_at: isoTime.nullable().meta({ description: 'When the next automatic attempt is due; null if none.' }),
    payload: z
      .record(z.string(), z.unknown())
      .meta({ description: 'The body sent, parsed (the delivery log has it as the exact text).' }),
  }),
);

const attemptSchema = named(
  'WebhookEventAttempt',
  z.strictObject({
    id: z.string(),
    http_status_code: integer.meta({ description: '0 = no HTTP answer.' }),
    response: z.string().meta({
      description: "The latest attempt: the first 500 characters of the answer's body; earlier ones: their error.",
    }),
    sent_at: isoTime,
  }),
);

const list = <S extends z.ZodType>(id: string, item: S) =>
  named(id, z.strictObject({ object: z.literal('list'), has_more: z.boolean(), data: z.array(item) }));

const responses = {
  listWebhookEvents: success(
    200,
    list('WebhookEventList', eventSummary),
    "A page of the webhook's events, newest first",
  ),
  getWebhookEvent: success(200, eventSchema, 'The event, with its payload'),
  listWebhookEventAttempts: success(
    200,
    list('WebhookEventAttemptList', attemptSchema),
    "The event's attempts, newest first",
  ),
  replayWebhookEvent: success(
    200,
    named(
      'WebhookEventReplayed',
      z.strictObject({
        object: z.literal('webhook_event'),
        id: z.string(),
        status,
        http_status_code: integer.nullable().meta({ description: "The replay's HTTP status; 0 = no answer." }),
      }),
    ),
    'The event after its new attempt',
  ),
} as const;

export function webhookEventHandlers(deps: AttemptDeps) {
  const found = async (tenant: ReturnType<typeof tenantOf>, webhookId: string, eventId: string) => {
    const webhook = await getWebhook(deps, tenant, webhookId);
    const delivery = await deps.deliveries.get(webhook.id, eventId, deps.clock.now());
    if (!delivery) throw new NotFoundError(`No event with id ${eventId} for webhook ${webhook.id}.`);
    return delivery;
  };
  const listEvents: RouteHandler = async ({ caller, params, query }) => {
    const webhook = await getWebhook(deps, tenantOf(caller), params.id ?? '');
    const { limit, after } = validate(eventsQuery, query, 'query');
    const now = deps.clock.now();
    const page = await deps.deliveries.list(webhook.id, { limit, ...(after ? { after } : {}) }, now);
    return reply(responses.listWebhookEvents, {
      object: 'list',
      has_more: page.hasMore,
      data: page.items.map((delivery) => summary(delivery, now)),
    });
  };
  const getEvent: RouteHandler = async ({ caller, params }) => {
    const delivery = await found(tenantOf(caller), params.id ?? '', params.eventId ?? '');
    const now = deps.clock.now();
    return reply(responses.getWebhookEvent, {
      object: 'webhook_event',
      ...summary(delivery, now),
      next_attempt_at:
        delivery.status === 'pending' && delivery.nextAttemptAt !== null
          ? new Date(delivery.nextAttemptAt).toISOString()
          : null,
      payload: parsedPayload(delivery.payload),
    });
  };
  const listAttempts: RouteHandler = async ({ caller, params, query }) => {
    const delivery = await found(tenantOf(caller), params.id ?? '', params.eventId ?? '');
    const { limit, after } = validate(attemptsQuery, query, 'query');
    const page = attemptPage(delivery.id, webhookEventAttempts(delivery), limit, after);
    if (!page) {
      throw invalidRequest([problem(['after'], `is not an attempt of event ${delivery.id}.`, 'query')]);
    }
    return reply(responses.listWebhookEventAttempts, { object: 'list', has_more: page.hasMore, data: page.data });
  };
  const replay: RouteHandler = async ({ caller, params, receivedAt }) => {
    const delivery = await retryDelivery(deps, tenantOf(caller), params.id ?? '', params.eventId ?? '', receivedAt);
    return reply(responses.replayWebhookEvent, {
      object: 'webhook_event',
      id: delivery.id,
      status: webhookEventStatus(delivery, deps.clock.now()),
      http_status_code: delivery.attemptLog.at(-1)?.statusCode ?? null,
    });
  };
  return {
    listWebhookEvents: listEvents,
    getWebhookEvent: getEvent,
    listWebhookEventAttempts: listAttempts,
    replayWebhookEvent: replay,
  };
}

function summary(delivery: Delivery, nowMs: number) {
  return {
    id: delivery.id,
    type: delivery.event,
    created_at: new Date(delivery.createdAt).toISOString(),
    status: webhookEventStatus(delivery, nowMs),
  };
}

/** The body sent, as JSON (every format Sendflow sends is a JSON object). */
function parsedPayload(payload: string): Record<string, unknown> {
  try {
    const value = JSON.parse(payload) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : { body: payload };
  } catch {
    return { body: payload };
  }
}

export const requestSchemas: RequestSchemas = {
  listWebhookEvents: { query: eventsQuery },
  listWebhookEventAttempts: { query: attemptsQuery },
};
export const responseSchemas: ResponseSchemas = responses;

// HTTP handlers for /v1/webhooks (spec §4.1): parse → use case → the spec's field sets, nothing more.
import * as z from 'zod';
import { type AttemptDeps, testWebhook } from '../../app/webhooks/attempts';
import { testFilter } from '../../app/webhooks/filter-test';
import { hourOf } from '../../app/webhooks/filtered-tally';
import {
  createWebhook,
  DEFAULT_GRACE_SECONDS,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  MAX_GRACE_SECONDS,
  type ManageWebhookDeps,
  rotateSecret,
  updateWebhook,
} from '../../app/webhooks/manage-webhooks';
import type { FilteredCounts, Webhook } from '../../app/webhooks/ports';
import { checkWebhookSignature } from '../../app/webhooks/signature-check';
import { simulateTransformation } from '../../app/webhooks/simulate-transformation';
import { withHealth } from '../../app/webhooks/webhook-health-view';
import { EVENT_TYPES } from '../../domain/events';
import { invalidRequest, problem } from '../../domain/field-problems';
import { DISABLED_REASONS } from '../../domain/webhooks/auto-disable';
import { type DeliveryHealth, HEALTH_STATES } from '../../domain/webhooks/delivery-health';
import { activeDestination, DESTINATION_TYPES, rolePolicyOf, trustPolicyOf } from '../../domain/webhooks/destination';
import { EVENT_FIELDS, FILTER_LIMITS, FILTER_OPERATORS } from '../../domain/webhooks/filter';
import { FORMATS } from '../../domain/webhooks/format';
import { ORDERINGS } from '../../domain/webhooks/ordering';
import { MAX_RATE_LIMIT_PER_SECOND, MIN_RATE_LIMIT_PER_SECOND } from '../../domain/webhooks/pace';
import { oneOf, WEBHOOK_STATUSES, webhookStatus } from '../../domain/webhooks/resend-view';
import { MAX_CHECKED_SIGNATURES } from '../../domain/webhooks/signature-check';
import { TRANSFORMATION_LIMITS } from '../../domain/webhooks/transformation';
import { type RequestSchemas, type ResponseSchemas, type RouteHandler, tenantOf } from './context';
import { attemptSummary, deliverySchema, deliveryView } from './deliveries';
import { type Body, integer, isoTime, named, reply, success } from './response';
import { validate } from './validate';

const url = z.string().trim().min(1).max(2048);
/** The legacy unprefixed names a request may still use (`delivered` is stored as `email.delivered`). */
const LEGACY_EVENT_NAMES = EVENT_TYPES.filter((type) => type.startsWith('email.')).map((type) => type.slice(6));

// Names are checked (and normalized) by the use case, which lists every unknown one; the document states the
// accepted names as an enum.
const events = z
  .array(
    z.string().meta({
      enum: [...EVENT_TYPES, ...LEGACY_EVENT_NAMES],
      description: 'An event type; a legacy unprefixed name (delivered) is stored as email.delivered.',
    }),
  )
  .min(1, 'Subscribe to at least one event.')
  .max(50);

export const eventTypeSchema = named('EventType', z.enum(EVENT_TYPES), 'An event type of the catalog.');

const format = z.enum(FORMATS);

const ordering = z.enum(ORDERINGS).meta({
  description:
    'per_email: an event of an email is attempted only after every earlier event of that email to this webhook has ' +
    'succeeded or finally failed; other emails flow meanwhile. none (the default): no waiting.',
});
/** rate_limit_per_second, as shown: null when the webhook is unpaced (docs/webhooks.md, "Rate limit per endpoint"). */
const rateLimitShown = z
  .number()
  .int()
  .nullable()
  .meta({ description: 'Requests started per second at most (1–1000); null: unpaced.' });
/** As given: an integer 1–1000, or null (on update: unpaced again). */
const rateLimitGiven = z
  .number()
  .int()
  .min(MIN_RATE_LIMIT_PER_SECOND)
  .max(MAX_RATE_LIMIT_PER_SECOND)
  .nullable()
  .optional()
  .meta({ description: 'Requests started per second at most (1–1000); null or absent: unpaced.' });
// A filter is checked by the use case (domain/webhooks/filter.ts), which names each problem's path; here it is any
// JSON (never copied by zod, so keys such as `__proto__` reach the check as given).
const filterGiven = z.unknown().meta({
  type: ['object', 'null'],
  description:
    `Payload filter (docs/webhooks.md, "Filters"): only events it matches are delivered. Hookdeck Outpost's syntax: ` +
    `fields of the event (${EVENT_FIELDS.join(', ')}) with values to equal (a list field: to contain), nested ` +
    `objects, and operators ${FILTER_OPERATORS.join(' ')}. At most ${FILTER_LIMITS.bytes} bytes of JSON and ` +
    `${FILTER_LIMITS.depth} levels deep. null or {}: no filter (on update: removes it).`,
});
const transformationGiven = z
  .string()
  .nullable()
  .optional()
  .meta({
    description:
      `JavaScript defining \`function handler(webhook)\` (docs/webhooks.md, "Transformations"; Svix's transformations): it ` +
      'gets {eventType, payload, url, method, headers} and returns it changed (payload, url, method, headers) or sets ' +
      `cancel = true. Runs in a WebAssembly sandbox (QuickJS) per attempt: ${TRANSFORMATION_LIMITS.cpuMs} ms, ` +
      `${TRANSFORMATION_LIMITS.memoryBytes / 1024 / 1024} MB, no I/O. At most ${TRANSFORMATION_LIMITS.sourceChars} ` +
      'characters; checked on save (a 422 names a syntax error or a missing handler). null: removes it.',
  });
const transformationShown = z
  .string()
  .nullable()
  .meta({ description: "The transformation's source; null without one (the stored body is sent as it is)." });
const filterShown = z
  .record(z.string(), z.unknown())
  .nullable()
  .meta({ description: 'The payload filter; null without one (every subscribed event is delivered).' });

// An AWS destination is checked by the use case (domain/webhooks/destination.ts: shapes, regions, partitions),
// which names each problem's path under `destination`; here only its fields and their types.
const destinationGiven = z
  .strictObject({
    type: z.enum(DESTINATION_TYPES),
    event_bus_arn: z.string().max(1600).optional().meta({ description: 'aws_eventbridge: the ARN of your event bus.' }),
    queue_url: z.string().max(1024).optional().meta({ description: 'aws_sqs: the URL of your queue (FIFO too).' }),
    role_arn: z
      .string()
      .max(2048)
      .optional()
      .meta({ description: "AWS destinations: the role Sendflow assumes, with your account's external id." }),
  })
  .meta({
    description:
      'Where events go (docs/webhooks.md, "AWS destinations"): `http` (the default) to `url`; `aws_eventbridge` (event_bus_arn, role_arn) or `aws_sqs` (queue_url, role_arn), without `url`. Set when the webhook is made.',
  });

const policyDocument = z.record(z.string(), z.unknown());
const destinationShown = named(
  'WebhookDestination',
  z.strictObject({
    type: z.enum(DESTINATION_TYPES),
    event_bus_arn: z.string().optional(),
    queue_url: z.string().optional(),
    role_arn: z.string().optional(),
    external_id: z.string().optional().meta({
      description:
        "AWS destinations: your account's external id (the same for all its AWS destinations): Sendflow passes it to sts:AssumeRole, and your role's trust policy requires it. Not a secret; never guessable.",
    }),
    trust_policy: policyDocument.optional().meta({
      description: "AWS destinations: the trust policy to attach to role_arn (Sendflow's principal, your external id).",
    }),
    role_policy: policyDocument.optional().meta({
      description:
        'AWS destinations: the permission role_arn needs (events:PutEvents or sqs:SendMessage on the target).',
    }),
  }),
);

/** Why Sendflow disabled a webhook, and when: null while active or when its owner paused it. */
const disabledFields = {
  disabled_reason: z.enum(DISABLED_REASONS).nullable().meta({
    description:
      'Why Sendflow disabled it: `failing` (no successful delivery for the stage window, 5 days by default, and at least 10 failed deliveries) or `gone` (the endpoint answered 410). Null while active or when paused by its owner; a resume (PUT active: true) clears it.',
  }),
  disabled_at: isoTime.nullable().meta({ description: 'When Sendflow disabled it; null otherwise.' }),
};

/** Resend's names for `url` and `active`, shown beside them (docs/resend.md, "Webhooks, suppressions and logs"). */
const resendFields = {
  endpoint: z.string().meta({ description: "The same as `url` (Resend's name)." }),
  status: z
    .enum(WEBHOOK_STATUSES)
    .meta({ description: "The same as `active` (Resend's name): `enabled` while active, else `disabled`." }),
};

const summarySchema = named(
  'WebhookSummary',
  z.strictObject({
    object: z.literal('webhook'),
    id: z.string(),
    url: z.string(),
    ...resendFields,
    events: z.array(eventTypeSchema),
    active: z.boolean(),
    created_at: isoTime,
    ...disabledFields,
    success_rate_24h: z.number().min(0).max(1).nullable().meta({
      description:
        'Succeeded attempts over all attempts of the last 24 h (0..1), read from the newest 100 deliveries; null without an attempt.',
    }),
    last_failure_at: isoTime.nullable().meta({
      description: 'When the newest failed attempt among the newest 100 deliveries was made; null without one.',
    }),
    health: z.enum(HEALTH_STATES).meta({
      description:
        '`disabled` while Sendflow has the webhook disabled (see disabled_reason: a 410, or failing for days); otherwise from the same newest 100 deliveries: `failing` when none of the attempts of the last 24 h succeeded or the newest 5 all failed, `quiet` without an attempt in the last 24 h, `healthy` otherwise. Kept while paused by its owner (see active).',
    }),
  }),
);

const webhookSchema = named(
  'Webhook',
  z.strictObject({
    ...summarySchema.shape,
    format,
    description: z.string().nullable(),
    ordering,
    rate_limit_per_second: rateLimitShown,
    filter: filterShown,
    destination: destinationShown,
    transformation: transformationShown,
    filtered_24h: integer.meta({
      description:
        'Subscribed events its filter kept from it in the last 24 hours (hourly counters: this hour and the 23 before); 0 without a filter.',
    }),
    updated_at: isoTime,
  }),
);

const createdSchema = named(
  'WebhookCreated',
  z.strictObject({
    object: z.literal('webhook'),
    id: z.string(),
    url: z.string(),
    ...resendFields,
    events: z.array(eventTypeSchema),
    format,
    description: z.string().nullable(),
    signing_secret: z.string().meta({ description: 'whsec_…: shown here and on rotation only.' }),
    active: z.boolean(),
    ordering,
    rate_limit_per_second: rateLimitShown,
    filter: filterShown,
    destination: destinationShown,
    transformation: transformationShown,
    created_at: isoTime,
  }),
);

const updatedSchema = named(
  'WebhookUpdated',
  z.strictObject({
    object: z.literal('webhook'),
    id: z.string(),
    url: z.string(),
    ...resendFields,
    events: z.array(eventTypeSchema),
    active: z.boolean(),
    ordering,
    rate_limit_per_second: rateLimitShown,
    filter: filterShown,
    transformation: transformationShown,
    updated_at: isoTime,
    ...disabledFields,
  }),
);

const responses = {
  createWebhook: success(201, createdSchema, 'The webhook, with its signing secret'),
  listWebhooks: success(
    200,
    named(
      'WebhookList',
      z.strictObject({
        object: z.literal('list'),
        has_more: z.literal(false).meta({ description: 'Always false: every webhook is listed (10 at most).' }),
        data: z.array(summarySchema),
      }),
    ),
    'Every webhook',
  ),
  getWebhook: success(200, webhookSchema, 'The webhook'),
  updateWebhook: success(200, updatedSchema, 'The webhook as changed'),
  patchWebhook: success(200, updatedSchema, 'The webhook as changed'),
  deleteWebhook: success(
    200,
    named('WebhookDeleted', z.strictObject({ object: z.literal('webhook'), id: z.string(), deleted: z.literal(true) })),
    'Deleted',
  ),
  testWebhook: success(
    200,
    named(
      'WebhookTestResult',
      z.strictObject({
        success: z.boolean(),
        status: integer.meta({ description: 'The HTTP status the endpoint answered; 0 = no answer.' }),
        message: z.string(),
        delivery: deliverySchema.pick({
          id: true,
          event: true,
          status: true,
          attempts: true,
          status_code: true,
          duration_ms: true,
        }),
      }),
    ),
    'How the endpoint answered the test event',
  ),
  testWebhookFilter: success(
    200,
    named(
      'FilterTestResult',
      z.strictObject({
        matches: z.boolean().meta({
          description: 'Whether the event passes the filter: a webhook with this filter would receive it.',
          example: false,
        }),
        reason: z.string().nullable().meta({
          description: 'Which clause failed and why (its event field, the value found); null when it matches.',
          example: 'tags.plan is "pro", not "free"',
        }),
      }),
    ),
    'Whether the event matches the filter',
  ),
  simulateWebhookTransformation: success(
    200,
    named(
      'TransformationSimulation',
      z.strictObject({
        object: z.literal('transformation_simulation'),
        outcome: z.enum(['request', 'canceled', 'error']).meta({
          description:
            'request: the attempt would make `request`; canceled: the handler set cancel (no request, the delivery ends succeeded); error: the attempt would fail with error class transformation_error (or blocked_address for a refused URL) and `error`.',
        }),
        request: z
          .strictObject({
            url: z.string(),
            method: z.string(),
            headers: z
              .record(z.string(), z.string())
              .meta({ description: 'As sent: the signature over `body` included.' }),
            body: z.string(),
          })
          .nullable()
          .meta({ description: 'The request the attempt would make (outcome `request`); null otherwise.' }),
        error: z
          .string()
          .nullable()
          .meta({ description: 'Why the attempt would fail (outcome `error`); null otherwise.' }),
      }),
    ),
    'The request an attempt would make, or why it would make none',
  ),
  checkWebhookSignature: success(
    200,
    named('SignatureCheckResult', z.strictObject({ valid: z.boolean(), diagnosis: z.string() })),
    'The verdict, and the first problem found',
  ),
  rotateWebhookSecret: success(
    200,
    named(
      'WebhookSecretRotated',
      z.strictObject({
        object: z.literal('webhook'),
        id: z.string(),
        signing_secret: z.string(),
        previous_secret_expires_at: isoTime
          .nullable()
          .meta({ description: 'Until then the previous secret signs too; null without a grace period.' }),
      }),
    ),
    'The new signing secret',
  ),
} as const;

/** POST …/signing-secret/rotate (Resend's path) answers as POST …/rotate-secret does. */
const rotateResponses = { ...responses, rotateWebhookSigningSecret: responses.rotateWebhookSecret } as const;

const endpoint = url.meta({ description: "Resend's name for `url`: give either (both only if they are equal)." });

const createBody = z.strictObject({
  url: url
    .optional()
    .meta({ description: 'The endpoint receiving events (required, or `endpoint`, unless the destination is AWS).' }),
  endpoint: endpoint.optional(),
  events,
  format: z.enum(FORMATS).optional(),
  description: z.string().max(500).optional(),
  ordering: ordering.optional(),
  rate_limit_per_second: rateLimitGiven,
  filter: filterGiven.optional(),
  destination: destinationGiven.optional(),
  transformation: transformationGiven,
});

const updateBody = z
  .strictObject({
    url: url.optional(),
    endpoint: endpoint.optional(),
    events: events.optional(),
    active: z.boolean().optional(),
    status: z
      .enum(WEBHOOK_STATUSES)
      .optional()
      .meta({ description: "Resend's name for `active`: `enabled` is active: true, `disabled` active: false." }),
    ordering: ordering.optional(),
    rate_limit_per_second: rateLimitGiven,
    filter: filterGiven.optional(),
    transformation: transformationGiven,
  })
  .refine(
    (body) => Object.keys(body).length > 0,
    'Give at least one of url, events, active, ordering, rate_limit_per_second, filter, transformation (or endpoint, status).',
  );

const simulateBody = z
  .strictObject({
    event: z.record(z.string(), z.unknown()).optional().meta({
      description: 'An event as the webhook receives it (its `type` is the event type; the whole is the payload).',
    }),
    event_type: z
      .string()
      .max(100)
      .optional()
      .meta({ description: 'The event type, with `payload` (instead of `event`).' }),
    payload: z.unknown().optional().meta({ description: 'The payload, with `event_type`; at most 64 KB of JSON.' }),
    transformation: z
      .string()
      .optional()
      .meta({ description: "Source to try instead of the webhook's own (not saved)." }),
  })
  .refine(
    (body) => (body.event !== undefined) !== (body.event_type !== undefined || body.payload !== undefined),
    'Give either event, or event_type and payload.',
  )
  .refine(
    (body) => body.event !== undefined || (body.event_type !== undefined && body.payload !== undefined),
    'event_type and payload go together.',
  );

const filterTestBody = z.strictObject({
  filter: filterGiven,
  event: z.unknown().meta({
    type: 'object',
    description:
      'An event as a filter sees it: a `standard` payload (e.g. one from the delivery log), with the email tags as `tags` ({"plan": "pro"}); at most 64 KB of JSON.',
  }),
});

const rotateBody = z.strictObject({
  grace_period_seconds: z.number().int().min(0).max(MAX_GRACE_SECONDS).default(DEFAULT_GRACE_SECONDS),
});

/** What an endpoint received: its headers (any casing) and the raw body, as text. */
const signatureCheckBody = z.strictObject({
  headers: z
    .record(z.string().min(1).max(256), z.string().max(8192))
    .refine((headers) => Object.keys(headers).length <= 100, 'Give at most 100 headers.')
    // Refused rather than silently cut: a receiver never gets more than two from Sendflow (the domain checks
    // the first MAX_CHECKED_SIGNATURES whatever arrives, so the work stays bounded either way).
    .refine(
      (headers) =>
        Object.entries(headers).every(
          ([name, value]) =>
            name.toLowerCase() !== 'webhook-signature' ||
            value.split(' ').filter(Boolean).length <= MAX_CHECKED_SIGNATURES,
        ),
      `Give at most ${MAX_CHECKED_SIGNATURES} signatures in webhook-signature.`,
    ),
  body: z.string().max(256 * 1024),
});

export function webhookHandlers(deps: ManageWebhookDeps & AttemptDeps & { readonly filteredCounts?: FilteredCounts }) {
  const create: RouteHandler = async ({ caller, body }) => {
    const { rate_limit_per_second, url: given, endpoint: alias, ...input } = validate(createBody, body ?? {});
    const url = theUrl(given, alias, false);
    const webhook = await createWebhook(deps, tenantOf(caller), {
      ...input,
      ...(url !== undefined ? { url } : {}),
      ...(rate_limit_per_second !== undefined ? { rateLimitPerSecond: rate_limit_per_second } : {}),
    });
    return reply(responses.createWebhook, {
      object: 'webhook',
      id: webhook.id,
      url: webhook.url,
      endpoint: webhook.url,
      status: webhookStatus(webhook.active),
      events: webhook.events,
      format: webhook.format,
      description: webhook.description ?? null,
      signing_secret: webhook.secret,
      active: webhook.active,
      ordering: webhook.ordering ?? 'none',
      rate_limit_per_second: webhook.rateLimitPerSecond ?? null,
      filter: webhook.filter ?? null,
      destination: destinationView(webhook),
      transformation: webhook.transformation ?? null,
      created_at: webhook.createdAt,
    });
  };
  const list: RouteHandler = async ({ caller }) =>
    reply(responses.listWebhooks, {
      object: 'list',
      has_more: false,
      data: (await withHealth(deps, await listWebhooks(deps, tenantOf(caller)))).map(listItem),
    });
  const get: RouteHandler = async ({ caller, params }) => {
    const webhook = await getWebhook(deps, tenantOf(caller), params.id ?? '');
    const [[seen], filtered] = await Promise.all([withHealth(deps, [webhook]), filteredOf(webhook)]);
    return reply(responses.getWebhook, {
      ...listItem(seen ?? { webhook, health: null }),
      format: webhook.format,
      description: webhook.description ?? null,
      ordering: webhook.ordering ?? 'none',
      rate_limit_per_second: webhook.rateLimitPerSecond ?? null,
      filter: webhook.filter ?? null,
      destination: destinationView(webhook),
      transformation: webhook.transformation ?? null,
      filtered_24h: filtered,
      updated_at: webhook.updatedAt,
    });
  };
  const update: RouteHandler = async ({ caller, params, body }) => {
    const {
      rate_limit_per_second,
      url: given,
      endpoint: alias,
      active,
      status,
      ...input
    } = validate(updateBody, body ?? {});
    const url = theUrl(given, alias, false);
    const activeNow = oneOf(active, status === undefined ? undefined : status === 'enabled');
    if (!activeNow) throw conflicting('active', 'status');
    const webhook = await updateWebhook(deps, tenantOf(caller), params.id ?? '', {
      ...input,
      ...(url !== undefined ? { url } : {}),
      ...(activeNow.value !== undefined ? { active: activeNow.value } : {}),
      ...(rate_limit_per_second !== undefined ? { rateLimitPerSecond: rate_limit_per_second } : {}),
    });
    return reply(responses.updateWebhook, {
      object: 'webhook',
      id: webhook.id,
      url: webhook.url,
      endpoint: webhook.url,
      status: webhookStatus(webhook.active),
      events: webhook.events,
      active: webhook.active,
      ordering: webhook.ordering ?? 'none',
      rate_limit_per_second: webhook.rateLimitPerSecond ?? null,
      filter: webhook.filter ?? null,
      transformation: webhook.transformation ?? null,
      updated_at: webhook.updatedAt,
      ...disabledView(webhook),
    });
  };
  // Counted while a filter keeps events back, and for a day after it is removed: read whenever counters are wired.
  const filteredOf = (webhook: Webhook): Promise<number> =>
    deps.filteredCounts ? deps.filteredCounts.last24h(webhook.id, hourOf(deps.clock.now())) : Promise.resolve(0);
  /** The destination as shown: for AWS, with the external id and the two policies the customer attaches. */
  const destinationView = (webhook: Webhook): Body<typeof destinationShown> => {
    const d = activeDestination(webhook);
    if (!d) return { type: 'http' };
    const principalArn = deps.awsTrustPrincipal ?? 'arn:aws:iam::<Sendflow account id>:root';
    return {
      type: d.type,
      ...(d.type === 'aws_eventbridge' ? { event_bus_arn: d.eventBusArn } : { queue_url: d.queueUrl }),
      role_arn: d.roleArn,
      external_id: d.externalId,
      trust_policy: trustPolicyOf({ principalArn }, d.externalId),
      role_policy: rolePolicyOf(d),
    };
  };
  const filterTest: RouteHandler = async ({ body }) => {
    const { filter, event } = validate(filterTestBody, body ?? {});
    return reply(responses.testWebhookFilter, testFilter(filter, event));
  };
  const simulate: RouteHandler = async ({ caller, params, body }) => {
    const given = validate(simulateBody, body ?? {});
    const result = await simulateTransformation(deps, tenantOf(caller), params.id ?? '', {
      eventType: given.event ? String(given.event.type ?? '') : (given.event_type ?? ''),
      payload: given.event ?? given.payload,
      ...(given.transformation !== undefined ? { transformation: given.transformation } : {}),
    });
    return reply(responses.simulateWebhookTransformation, {
      object: 'transformation_simulation',
      outcome: result.outcome,
      request: result.outcome === 'request' ? result.request : null,
      error: result.outcome === 'error' ? result.error : null,
    });
  };
  const remove: RouteHandler = async ({ caller, params }) => {
    const id = params.id ?? '';
    await deleteWebhook(deps, tenantOf(caller), id);
    return reply(responses.deleteWebhook, { object: 'webhook', id, deleted: true });
  };
  const test: RouteHandler = async ({ caller, params }) => {
    const delivery = await testWebhook(deps, tenantOf(caller), params.id ?? '');
    const view = deliveryView(delivery);
    return reply(responses.testWebhook, {
      success: delivery.status === 'succeeded',
      status: view.status_code ?? 0,
      message: attemptSummary(delivery),
      delivery: {
        id: view.id,
        event: view.event,
        status: view.status,
        attempts: view.attempts,
        status_code: view.status_code,
        duration_ms: view.duration_ms,
      },
    });
  };
  const signatureCheck: RouteHandler = async ({ caller, params, body }) =>
    reply(
      responses.checkWebhookSignature,
      await checkWebhookSignature(deps, tenantOf(caller), params.id ?? '', validate(signatureCheckBody, body ?? {})),
    );
  const rotate: RouteHandler = async ({ caller, params, body }) => {
    const { grace_period_seconds } = validate(rotateBody, body ?? {});
    const rotated = await rotateSecret(deps, tenantOf(caller), params.id ?? '', grace_period_seconds);
    return reply(rotateResponses.rotateWebhookSecret, {
      object: 'webhook',
      id: rotated.webhook.id,
      signing_secret: rotated.webhook.secret,
      previous_secret_expires_at: rotated.previousSecretExpiresAt,
    });
  };
  return {
    rotateWebhookSecret: rotate,
    rotateWebhookSigningSecret: rotate,
    patchWebhook: update,
    checkWebhookSignature: signatureCheck,
    testWebhookFilter: filterTest,
    simulateWebhookTransformation: simulate,
    createWebhook: create,
    listWebhooks: list,
    getWebhook: get,
    updateWebhook: update,
    deleteWebhook: remove,
    testWebhook: test,
  };
}

function listItem({
  webhook,
  health,
}: {
  webhook: Webhook;
  health: DeliveryHealth | null;
}): Body<typeof summarySchema> {
  return {
    object: 'webhook',
    id: webhook.id,
    url: webhook.url,
    endpoint: webhook.url,
    status: webhookStatus(webhook.active),
    events: webhook.events,
    active: webhook.active,
    created_at: webhook.createdAt,
    ...disabledView(webhook),
    success_rate_24h: health?.successRate24h ?? null,
    last_failure_at: health?.lastFailureAt ? new Date(health.lastFailureAt).toISOString() : null,
    health: health?.state ?? 'quiet',
  };
}

/** The URL given as `url` or as Resend's `endpoint` (both: equal); `required` on create. */
function theUrl(given: string | undefined, alias: string | undefined, required: boolean): string | undefined {
  const url = oneOf(given, alias);
  if (!url) throw conflicting('url', 'endpoint');
  if (required && url.value === undefined) {
    throw invalidRequest(
      [problem(['url'], "is required: the endpoint's URL, as `url` (or Resend's `endpoint`).")],
      'missing_required_field',
    );
  }
  return url.value;
}

const conflicting = (spec: string, resend: string) =>
  invalidRequest([
    problem([resend], `is Resend's name for \`${spec}\`: give one of them, or both with the same value.`),
  ]);

function disabledView(webhook: Webhook) {
  return { disabled_reason: webhook.disabledReason ?? null, disabled_at: webhook.disabledAt ?? null };
}

export const requestSchemas: RequestSchemas = {
  createWebhook: { body: createBody },
  updateWebhook: { body: updateBody },
  patchWebhook: { body: updateBody },
  checkWebhookSignature: { body: signatureCheckBody },
  testWebhookFilter: { body: filterTestBody },
  simulateWebhookTransformation: { body: simulateBody },
  rotateWebhookSecret: { body: rotateBody },
  rotateWebhookSigningSecret: { body: rotateBody },
};
export const responseSchemas: ResponseSchemas = rotateResponses;

// HTTP handlers for /v1/webhooks (spec §4.1): parse → use case → the spec's field sets, nothing more.
import * as z from 'zod';
import { type AttemptDeps, testWebhook } from '../../app/webhooks/attempts';
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
import type { Webhook } from '../../app/webhooks/ports';
import { checkWebhookSignature } from '../../app/webhooks/signature-check';
import { FORMATS } from '../../domain/webhooks/format';
import { type RequestSchemas, type RouteHandler, tenantOf } from './context';
import { attemptSummary, deliveryView } from './deliveries';
import { json } from './response';
import { validate } from './validate';

const url = z.string().trim().min(1).max(2048);
const events = z.array(z.string()).min(1, 'Subscribe to at least one event.').max(50);

const createBody = z.strictObject({
  url,
  events,
  format: z.enum(FORMATS).optional(),
  description: z.string().max(500).optional(),
});

const updateBody = z
  .strictObject({ url: url.optional(), events: events.optional(), active: z.boolean().optional() })
  .refine((body) => Object.keys(body).length > 0, 'Give at least one of url, events, active.');

const rotateBody = z.strictObject({
  grace_period_seconds: z.number().int().min(0).max(MAX_GRACE_SECONDS).default(DEFAULT_GRACE_SECONDS),
});

/** What an endpoint received: its headers (any casing) and the raw body, as text. */
const signatureCheckBody = z.strictObject({
  headers: z
    .record(z.string().min(1).max(256), z.string().max(8192))
    .refine((headers) => Object.keys(headers).length <= 100, 'Give at most 100 headers.'),
  body: z.string().max(256 * 1024),
});

export function webhookHandlers(deps: ManageWebhookDeps & AttemptDeps) {
  const create: RouteHandler = async ({ caller, body }) => {
    const webhook = await createWebhook(deps, tenantOf(caller), validate(createBody, body ?? {}));
    return json(201, {
      id: webhook.id,
      url: webhook.url,
      events: webhook.events,
      format: webhook.format,
      description: webhook.description ?? null,
      signing_secret: webhook.secret,
      active: webhook.active,
      created_at: webhook.createdAt,
    });
  };
  const list: RouteHandler = async ({ caller }) =>
    json(200, { data: (await listWebhooks(deps, tenantOf(caller))).map(listItem) });
  const get: RouteHandler = async ({ caller, params }) => {
    const webhook = await getWebhook(deps, tenantOf(caller), params.id ?? '');
    return json(200, {
      ...listItem(webhook),
      format: webhook.format,
      description: webhook.description ?? null,
      updated_at: webhook.updatedAt,
    });
  };
  const update: RouteHandler = async ({ caller, params, body }) => {
    const webhook = await updateWebhook(deps, tenantOf(caller), params.id ?? '', validate(updateBody, body ?? {}));
    return json(200, {
      id: webhook.id,
      url: webhook.url,
      events: webhook.events,
      active: webhook.active,
      updated_at: webhook.updatedAt,
    });
  };
  const remove: RouteHandler = async ({ caller, params }) => {
    await deleteWebhook(deps, tenantOf(caller), params.id ?? '');
    return json(200, { id: params.id, deleted: true });
  };
  const test: RouteHandler = async ({ caller, params }) => {
    const delivery = await testWebhook(deps, tenantOf(caller), params.id ?? '');
    const view = deliveryView(delivery);
    return json(200, {
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
    json(
      200,
      await checkWebhookSignature(deps, tenantOf(caller), params.id ?? '', validate(signatureCheckBody, body ?? {})),
    );
  const rotate: RouteHandler = async ({ caller, params, body }) => {
    const { grace_period_seconds } = validate(rotateBody, body ?? {});
    const rotated = await rotateSecret(deps, tenantOf(caller), params.id ?? '', grace_period_seconds);
    return json(200, {
      id: rotated.webhook.id,
      signing_secret: rotated.webhook.secret,
      previous_secret_expires_at: rotated.previousSecretExpiresAt,
    });
  };
  return {
    rotateWebhookSecret: rotate,
    checkWebhookSignature: signatureCheck,
    createWebhook: create,
    listWebhooks: list,
    getWebhook: get,
    updateWebhook: update,
    deleteWebhook: remove,
    testWebhook: test,
  };
}

function listItem(webhook: Webhook) {
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.events,
    active: webhook.active,
    created_at: webhook.createdAt,
  };
}

export const requestSchemas: RequestSchemas = {
  createWebhook: { body: createBody },
  updateWebhook: { body: updateBody },
  checkWebhookSignature: { body: signatureCheckBody },
  rotateWebhookSecret: { body: rotateBody },
};

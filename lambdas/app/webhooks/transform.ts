// Use case: the request one attempt makes (issue 32, transformations). Without a transformation, the stored body
// to the webhook's URL; with one, whatever its `handler` made of it in the sandbox, checked, then signed (the
// signature covers the transformed body). The attempt path's single call into transformations (attempts.ts), and
// the simulate endpoint's (POST /v1/webhooks/:id/transformation/simulate).
import { type AttemptOutcome, NO_TIMINGS } from '../../domain/webhooks/delivery';
import { ATTEMPT_ERRORS } from '../../domain/webhooks/error-class';
import { attemptHeaders } from '../../domain/webhooks/render';
import { liveSecrets } from '../../domain/webhooks/signature';
import {
  checkOutput,
  TransformationError,
  type TransformedRequest,
  type TransformInput,
} from '../../domain/webhooks/transformation';
import type { Delivery, OutboundRequest, TransformRunner, Webhook } from './ports';

export interface TransformDeps {
  /** The sandbox; without one a webhook's transformation fails every attempt (never an untransformed send). */
  readonly transforms?: TransformRunner;
  /** Told of each run's sandbox time (the delivery telemetry's transformation CPU); nothing when absent. */
  readonly transformRan?: (run: { readonly webhookId: string; readonly cpuMs: number; readonly ok: boolean }) => void;
}

/** What an attempt does: send `request`, or record `outcome` without a request (a failed or canceled run). */
export type PreparedAttempt =
  | { readonly kind: 'send'; readonly request: OutboundRequest }
  | { readonly kind: 'failed'; readonly outcome: AttemptOutcome }
  | { readonly kind: 'canceled'; readonly outcome: AttemptOutcome };

/** The response text a canceled delivery keeps: no request was made (its status is `succeeded`, docs/webhooks.md). */
export const CANCELED_RESPONSE = 'canceled by the transformation: no request was made';

/**
 * The request attempt-making sends for `delivery` to `webhook` at `now`: the stored body to the webhook's URL,
 * signed with the secrets live now; through its transformation first when it has one.
 */
export async function prepareAttempt(
  deps: TransformDeps,
  webhook: Webhook,
  delivery: Pick<Delivery, 'format' | 'eventId' | 'event' | 'payload' | 'createdAt'>,
  now: number,
): Promise<PreparedAttempt> {
  const sign = (body: string) =>
    attemptHeaders(delivery.format, liveSecrets(webhook, now), delivery.eventId, body, now);
  if (!webhook.transformation) {
    return { kind: 'send', request: { url: webhook.url, body: delivery.payload, headers: sign(delivery.payload) } };
  }
  const started = performance.now();
  const result = await runTransformation(deps, webhook, webhook.transformation, delivery);
  const durationMs = Math.round(performance.now() - started);
  const noRequest = (fields: Pick<AttemptOutcome, 'error' | 'errorClass' | 'response'>): AttemptOutcome => ({
    at: now,
    statusCode: null,
    durationMs,
    timings: NO_TIMINGS,
    ...fields,
  });
  if ('error' in result)
    return {
      kind: 'failed',
      outcome: noRequest({
        error: ATTEMPT_ERRORS.transformation(result.error),
        errorClass: 'transformation_error',
        response: '',
      }),
    };
  if (result.request.cancel)
    return { kind: 'canceled', outcome: noRequest({ error: null, errorClass: null, response: CANCELED_RESPONSE }) };
  const { url, method, headers, body } = result.request;
  // Sendflow's own headers and the signature over the new body come last: a transformation cannot replace them.
  return { kind: 'send', request: { url, method, body, headers: { ...headers, ...sign(body) } } };
}

/** The input a handler gets for a delivery: Svix's object (eventType, payload, url, method, headers). */
export function transformInput(webhook: Pick<Webhook, 'url'>, eventType: string, payload: string): TransformInput {
  return { eventType, payload: JSON.parse(payload) as unknown, url: webhook.url, method: 'POST', headers: {} };
}

/**
 * Runs `source` on a delivery's request: what it made of it, checked (domain/webhooks/transformation.ts), or
 * the text of why it made nothing (a throw, a limit, a refused output). The clock inside reads the delivery's
 * creation time (the event's), so every attempt of a delivery transforms alike.
 */
export async function runTransformation(
  deps: TransformDeps,
  webhook: Pick<Webhook, 'id' | 'url'>,
  source: string,
  delivery: Pick<Delivery, 'event' | 'payload' | 'createdAt'>,
): Promise<{ readonly request: TransformedRequest } | { readonly error: string }> {
  if (!deps.transforms) return { error: 'no sandbox in this runtime' };
  const run = await deps.transforms.run(
    source,
    transformInput(webhook, delivery.event, delivery.payload),
    delivery.createdAt,
  );
  deps.transformRan?.({ webhookId: webhook.id, cpuMs: run.cpuMs, ok: run.ok });
  if (!run.ok) return { error: run.error };
  try {
    return { request: checkOutput(JSON.parse(run.output) as unknown, Buffer.byteLength(run.output)) };
  } catch (error) {
    if (error instanceof TransformationError) return { error: error.message };
    throw error;
  }
}

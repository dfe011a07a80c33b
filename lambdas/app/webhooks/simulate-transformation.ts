// Use case: POST /v1/webhooks/:id/transformation/simulate: the request an attempt would make for an event (its
// URL, method, headers and body, signed as it would be), through the webhook's transformation or one given to try,
// or the error that attempt would fail with. Sends nothing and stores nothing.
import { problem as fieldProblem, invalidRequest } from '../../domain/field-problems';
import { sourceProblem } from '../../domain/webhooks/transformation';
import { getWebhook, type ManageWebhookDeps } from './manage-webhooks';
import type { Tenant, UrlVerifier } from './ports';
import { prepareAttempt, type TransformDeps } from './transform';

/** The largest payload tried (its JSON), as for a filter test: a webhook payload is far smaller. */
export const MAX_SIMULATED_PAYLOAD_BYTES = 64 * 1024;

export interface SimulateInput {
  readonly eventType: string;
  readonly payload: unknown;
  /** Source to try instead of the stored one (not saved); absent: the webhook's own. */
  readonly transformation?: string;
}

export type Simulation =
  | {
      readonly outcome: 'request';
      readonly request: {
        readonly url: string;
        readonly method: string;
        readonly headers: Readonly<Record<string, string>>;
        readonly body: string;
      };
    }
  | { readonly outcome: 'canceled' }
  | { readonly outcome: 'error'; readonly error: string };

export async function simulateTransformation(
  deps: ManageWebhookDeps & TransformDeps & { readonly urlVerifier: UrlVerifier },
  tenant: Tenant,
  webhookId: string,
  input: SimulateInput,
): Promise<Simulation> {
  const webhook = await getWebhook(deps, tenant, webhookId);
  if (input.transformation !== undefined) {
    const problem = sourceProblem(input.transformation);
    if (problem) throw invalidRequest([fieldProblem(['transformation'], problem)]);
  }
  const payload = JSON.stringify(input.payload) ?? 'null';
  const bytes = Buffer.byteLength(payload);
  if (bytes > MAX_SIMULATED_PAYLOAD_BYTES)
    throw invalidRequest([
      fieldProblem(['payload'], `must be at most ${MAX_SIMULATED_PAYLOAD_BYTES} bytes of JSON; this one is ${bytes}.`),
    ]);
  const now = deps.clock.now();
  const tried = input.transformation === undefined ? webhook : { ...webhook, transformation: input.transformation };
  const prepared = await prepareAttempt(
    deps,
    tried,
    { format: webhook.format, eventId: 'msg_simulated', event: input.eventType, payload, createdAt: now },
    now,
  );
  if (prepared.kind === 'canceled') return { outcome: 'canceled' };
  if (prepared.kind === 'failed') return { outcome: 'error', error: prepared.outcome.error ?? 'failed' };
  const { url, method = 'POST', headers, body } = prepared.request;
  // The guard the sender applies (scheme, host, what the name resolves to), told now rather than at the attempt.
  if (url !== webhook.url) {
    const refused = await deps.urlVerifier.problem(url);
    if (refused) return { outcome: 'error', error: `URL ${refused} (the attempt fails as blocked_address)` };
  }
  return { outcome: 'request', request: { url, method, headers, body } };
}

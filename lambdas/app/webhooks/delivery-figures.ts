// Use cases of the delivery figures (domain/webhooks/delivery-figures.ts): counting each recorded attempt into its
// webhook's hourly aggregate as it happens (best effort: a lost count never fails a delivery), and reading a
// window's hours back for one webhook or every webhook of a tenant (GET /v1/webhooks/metrics and
// /v1/webhooks/:id/metrics, which the dashboard's charts draw), without reading the delivery log.

import { NotFoundError } from '../../domain/errors';
import {
  type AttemptFigure,
  alignHours,
  FIGURE_WINDOWS,
  type FigureWindow,
  type HourFigures,
  hourOf,
  hourOfAttempt,
  hoursOf,
} from '../../domain/webhooks/delivery-figures';
import { mapWithLimit } from '../pool';
import type { Clock } from '../ports';
import type { Tenant, Webhook, WebhookRepository } from './ports';

/** Port: the hourly aggregates, per webhook. */
export interface DeliveryFigureStore {
  /**
   * Adds figures (one attempt's, or several added up) to its webhook's figures of `hour` (one ADD-only write:
   * concurrent workers never lose each other's counts). `spread` picks where, so a busy webhook's writes spread out.
   */
  add(webhookId: string, hour: string, figures: HourFigures, spread: string): Promise<void>;
  /** The webhook's figures of the hours from `from` to `to` (both included, `YYYY-MM-DDTHH`), any order. */
  read(webhookId: string, from: string, to: string): Promise<HourFigures[]>;
}

export interface CountAttemptDeps {
  readonly figures: Pick<DeliveryFigureStore, 'add'>;
}

/** Counts one recorded attempt (made at `at`, epoch ms). Throws what the store throws: the caller decides. */
export function countAttempt(
  deps: CountAttemptDeps,
  attempt: { readonly webhookId: string; readonly deliveryId: string; readonly attempt: number; readonly at: number },
  figure: AttemptFigure,
): Promise<void> {
  const hour = hourOf(attempt.at);
  return deps.figures.add(
    attempt.webhookId,
    hour,
    hourOfAttempt(hour, figure),
    `${attempt.deliveryId}#${attempt.attempt}`,
  );
}

/** Like countAttempt, but a failed write is only reported (`onError`): a figure is never worth a delivery. */
export async function countAttemptSafely(
  deps: CountAttemptDeps,
  attempt: Parameters<typeof countAttempt>[1],
  figure: AttemptFigure,
  onError: (error: unknown) => void,
): Promise<void> {
  try {
    await countAttempt(deps, attempt, figure);
  } catch (error) {
    onError(error);
  }
}

export interface ReadFiguresDeps {
  readonly webhooks: Pick<WebhookRepository, 'get' | 'list'>;
  readonly figures: Pick<DeliveryFigureStore, 'read'>;
  readonly clock: Clock;
}

export interface WebhookFigures {
  readonly webhook: Webhook;
  /** Every hour of the window, oldest first (zeros where nothing was attempted). */
  readonly hours: readonly HourFigures[];
}

export interface WindowFigures {
  readonly window: FigureWindow;
  /** Every hour of the window, oldest first, added over `webhooks`. */
  readonly hours: readonly HourFigures[];
  readonly webhooks: readonly WebhookFigures[];
}

/** Webhooks read at once (a tenant has at most WEBHOOKS_PER_MODE; each read is one Query per shard). */
const READS_AT_ONCE = 4;

/**
 * A window's figures: of one webhook of the tenant (404 when it is not theirs), or of every webhook the tenant
 * has now, added up (a deleted webhook's figures are no longer counted).
 */
export async function readFigures(
  deps: ReadFiguresDeps,
  tenant: Tenant,
  window: FigureWindow,
  webhookId?: string,
): Promise<WindowFigures> {
  const hooks = webhookId ? [await oneWebhook(deps, tenant, webhookId)] : await deps.webhooks.list(tenant);
  const hours = hoursOf(window, deps.clock.now());
  const from = hours[0] as string;
  const to = hours.at(-1) as string;
  const webhooks = await mapWithLimit(hooks, READS_AT_ONCE, async (webhook) => ({
    webhook,
    hours: alignHours(await deps.figures.read(webhook.id, from, to), hours),
  }));
  return {
    window,
    hours: alignHours(
      webhooks.flatMap((w) => w.hours),
      hours,
    ),
    webhooks,
  };
}

async function oneWebhook(deps: ReadFiguresDeps, tenant: Tenant, id: string): Promise<Webhook> {
  const webhook = await deps.webhooks.get(tenant, id);
  if (!webhook) throw new NotFoundError(`No webhook with id ${id}.`);
  return webhook;
}

export const isFigureWindow = (value: string): value is FigureWindow => Object.hasOwn(FIGURE_WINDOWS, value);

// What one webhook receives for one event: the body for its format, deterministic ids, request headers.
import { createHash } from 'node:crypto';
import { type SendflowEvent, standardPayload } from '../events';
import { discordMessage, slackMessage } from './chat';
import type { WebhookFormat } from './format';
import { signatureHeaders } from './signature';

export function renderPayload(event: SendflowEvent, format: WebhookFormat): string {
  if (format === 'discord') return discordMessage(event);
  if (format === 'slack') return slackMessage(event);
  return standardPayload(event);
}

/**
 * One delivery per (event, webhook): the id is derived from both, so a re-dispatched event maps onto the same
 * row. It starts with the event id's time-ordered part, so ids sort by event time (newest-first listing).
 */
export function deliveryIdFor(eventId: string, webhookId: string): string {
  const eventPart = eventId.slice(eventId.indexOf('_') + 1);
  const webhookPart = createHash('sha256').update(webhookId).digest('hex').slice(0, 10);
  return `dlv_${eventPart}${webhookPart}`;
}

export const USER_AGENT = 'Sendflow-Webhooks/1.0 (+https://sendflow.dev/docs/webhooks)';

/** Headers of one attempt: standard deliveries are signed with a fresh timestamp; chat ones are not. */
export function attemptHeaders(
  format: WebhookFormat,
  secrets: readonly string[],
  eventId: string,
  body: string,
  nowMs: number,
): Record<string, string> {
  const base = { 'Content-Type': 'application/json', 'User-Agent': USER_AGENT };
  return format === 'standard' ? { ...base, ...signatureHeaders(secrets, eventId, body, nowMs) } : base;
}

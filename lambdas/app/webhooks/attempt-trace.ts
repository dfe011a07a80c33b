// One delivery attempt's span and the trace headers of its request (docs/webhooks.md#traces): a child of the
// event's span that the delivery row carries (`trace`), so the receiver's own tracing joins the trace of the API
// call that caused the event. A delivery whose event was untraced gets neither a span nor headers. With tracing
// off, the carried context is sent as it is (a caller's trace passes through Sendflow unchanged).
import { expandTrace, traceHeaders } from '../../domain/trace-context';
import type { AttemptKind, AttemptOutcome, DeliveryStatus } from '../../domain/webhooks/delivery';
import { noTracing, type Tracing } from '../tracing';
import type { Delivery } from './ports';

export interface AttemptTrace {
  /** `traceparent` (and `tracestate`) for the request; empty when the delivery is untraced. */
  readonly headers: Readonly<Record<string, string>>;
  /** Ends the span with the attempt's outcome. */
  end(outcome: AttemptOutcome, status: DeliveryStatus): void;
}

const UNTRACED: AttemptTrace = { headers: {}, end: () => {} };

/** Starts the span of attempt `attempt` of `delivery` to `url` (only its host is recorded: a path may hold a token). */
export function traceAttempt(
  tracing: Tracing | undefined,
  delivery: Pick<Delivery, 'id' | 'webhookId' | 'eventId' | 'event' | 'accountId' | 'trace' | 'emailId'>,
  url: string,
  attempt: number,
  kind: AttemptKind,
): AttemptTrace {
  if (delivery.trace === undefined) return UNTRACED;
  const span = (tracing ?? noTracing).start('POST', delivery.trace, 'client', {
    'http.request.method': 'POST',
    'server.address': hostOf(url),
    'sendflow.delivery.id': delivery.id,
    'sendflow.webhook.id': delivery.webhookId,
    'sendflow.event.id': delivery.eventId,
    'sendflow.event.type': delivery.event,
    'sendflow.account.id': delivery.accountId,
    'sendflow.attempt': attempt,
    'sendflow.attempt.kind': kind,
    // Rows keep their email only for a `per_email` webhook; the event's span (the parent) always names it.
    ...(delivery.emailId !== undefined ? { 'sendflow.email.id': delivery.emailId } : {}),
  });
  return {
    headers: traceHeaders(expandTrace(span.trace)),
    end: (outcome, status) => {
      span.setAttributes({
        ...(outcome.statusCode !== null ? { 'http.response.status_code': outcome.statusCode } : {}),
        ...(outcome.errorClass ? { 'error.type': outcome.errorClass } : {}),
        'sendflow.delivery.status': status,
        'sendflow.attempt.duration_ms': outcome.durationMs,
      });
      span.end(outcome.errorClass ?? undefined);
    },
  };
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}

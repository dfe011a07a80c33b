// Unit tests of deliveryView (lambdas/handlers/http/deliveries.ts): each attempt_log entry shows its recorded
// error_class and timings; an entry stored before those were recorded still answers, its class derived from its
// text and its timings all null. The top-level fields are unchanged.
import { describe, expect, it } from 'vitest';
import type { Delivery } from '../../lambdas/app/webhooks/ports';
import { deliveryView } from '../../lambdas/handlers/http/deliveries';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

function delivery(attemptLog: Delivery['attemptLog']): Delivery {
  return {
    id: 'dlv_0000000000000000000000000',
    webhookId: 'wh_1',
    accountId: 'acct_1',
    mode: 'test',
    eventId: 'evt_1',
    event: 'email.sent',
    format: 'standard',
    payload: '{}',
    status: 'failed',
    attempts: attemptLog.length,
    maxAttempts: 5,
    attemptLog,
    response: '',
    nextAttemptAt: null,
    deliveredAt: null,
    createdAt: T0,
  };
}

describe('deliveryView attempt_log', () => {
  it('shows the recorded class and timings in snake case', () => {
    // Arrange
    const row = delivery([
      {
        at: T0,
        statusCode: null,
        durationMs: 40,
        error: 'TLS handshake failed: the certificate has expired',
        errorClass: 'tls_error',
        timings: { dnsMs: 2, connectMs: 11, tlsMs: null, ttfbMs: null },
      },
    ]);

    // Act
    const view = deliveryView(row);

    // Assert
    expect(view.attempt_log).toEqual([
      {
        at: new Date(T0).toISOString(),
        status_code: 0,
        duration_ms: 40,
        error: 'TLS handshake failed: the certificate has expired',
        error_class: 'tls_error',
        kind: null,
        request_headers: null,
        response_headers: null,
        retry_after_seconds: null,
        // AWS destinations only.
        aws_error_code: null,
        aws_request_id: null,
        timings: { dns_ms: 2, connect_ms: 11, tls_ms: null, ttfb_ms: null },
      },
    ]);
  });

  it.each([
    [{ statusCode: 503, error: 'HTTP 503' }, 'http_5xx'],
    [{ statusCode: null, error: 'timed out after 10000 ms' }, 'timeout'],
    [{ statusCode: null, error: 'connection refused' }, 'connection_refused'],
    [{ statusCode: null, error: 'self-signed certificate' }, 'tls_error'],
    [{ statusCode: null, error: 'webhook deleted' }, 'webhook_paused'],
    [{ statusCode: 200, error: null }, null],
  ])('answers for an entry stored before classes (%o): %s, timings all null', (stored, errorClass) => {
    // Act
    const [entry] = deliveryView(delivery([{ at: T0, durationMs: 5, ...stored }])).attempt_log;

    // Assert
    expect(entry).toMatchObject({
      error_class: errorClass,
      timings: { dns_ms: null, connect_ms: null, tls_ms: null, ttfb_ms: null },
    });
  });

  it('adds nothing at the top level', () => {
    const view = deliveryView(delivery([]));
    expect(Object.keys(view).sort()).toEqual(
      [
        'object',
        'id',
        'webhook_id',
        'event',
        'status',
        'attempts',
        'max_attempts',
        'status_code',
        'duration_ms',
        'error',
        'response',
        'attempt_log',
        'next_attempt_at',
        'delivered_at',
        'created_at',
      ].sort(),
    );
  });
});

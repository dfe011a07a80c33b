// Unit tests of the Powertools telemetry adapter (lambdas/adapters/telemetry/powertools-telemetry.ts): the log
// line of an attempt (success and failure) and of an API request (its level by status and duration), and the EMF
// lines flush() writes, read as CloudWatch reads them: namespace Sendflow, the metric names of METRIC_NAMES, the
// `service` dimension, the errorClass and route/status breakdowns beside their totals, as few lines as EMF allows.
import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PowertoolsTelemetry, safeError } from '../../lambdas/adapters/telemetry/powertools-telemetry';
import type { AttemptReport } from '../../lambdas/app/telemetry';
import { type CapturedStdout, captureStdout, emfSeries, emfSummary } from '../support/stdout';

const succeeded: AttemptReport = {
  deliveryId: 'dlv_1',
  webhookId: 'wh_1',
  accountId: 'acct_1',
  mode: 'live',
  eventType: 'email.delivered',
  attempt: 1,
  kind: 'automatic',
  requested: true,
  statusCode: 200,
  durationMs: 42,
  error: null,
  errorClass: null,
  deliveryStatus: 'succeeded',
  recorded: true,
  firstAttemptLagMs: 1_500,
};

const timedOut: AttemptReport = {
  ...succeeded,
  deliveryId: 'dlv_2',
  attempt: 2,
  statusCode: null,
  durationMs: 10_000,
  error: 'timed out after 10000 ms',
  errorClass: 'timeout',
  deliveryStatus: 'pending',
  firstAttemptLagMs: undefined as never,
};
delete (timedOut as { firstAttemptLagMs?: number }).firstAttemptLagMs;

let stdout: CapturedStdout;
beforeEach(() => {
  stdout = captureStdout();
});
afterEach(() => stdout.restore());

function telemetry(metricsService: string | null = 'sendflow-test', logLevel: 'INFO' | 'DEBUG' = 'INFO') {
  return new PowertoolsTelemetry({
    logger: new Logger({ serviceName: 'sendflow-delivery', logLevel }),
    metricsService,
  });
}

const logLines = () => stdout.lines().filter((line) => !('_aws' in line));

describe('PowertoolsTelemetry: attempts', () => {
  it('writes no line at INFO for an attempt that succeeded and was recorded: the delivery row is its record', () => {
    // Act
    telemetry().attempted(succeeded);

    // Assert
    expect(logLines()).toEqual([]);
  });

  it('logs a succeeded attempt at DEBUG with its delivery, webhook, account, outcome, status and duration', () => {
    // Act
    telemetry(null, 'DEBUG').attempted(succeeded);

    // Assert
    expect(logLines()).toEqual([
      expect.objectContaining({
        level: 'DEBUG',
        message: 'webhook attempt',
        service: 'sendflow-delivery',
        delivery_id: 'dlv_1',
        webhook_id: 'wh_1',
        account_id: 'acct_1',
        mode: 'live',
        event_type: 'email.delivered',
        attempt: 1,
        kind: 'automatic',
        outcome: 'succeeded',
        status_code: 200,
        duration_ms: 42,
        delivery_status: 'succeeded',
        recorded: true,
        first_attempt_lag_ms: 1_500,
      }),
    ]);
    // Powertools leaves null fields out: no error, no class.
    expect(logLines()[0]).not.toHaveProperty('error');
    expect(logLines()[0]).not.toHaveProperty('error_class');
  });

  it('logs a succeeded attempt at INFO when it was slow enough to mark its endpoint slow (2 s)', () => {
    // Act
    telemetry().attempted({ ...succeeded, durationMs: 2_000 });
    telemetry().attempted({ ...succeeded, durationMs: 1_999 });

    // Assert
    expect(logLines()).toEqual([
      expect.objectContaining({ level: 'INFO', message: 'webhook attempt', outcome: 'succeeded', duration_ms: 2_000 }),
    ]);
  });

  it('logs a succeeded attempt whose result was not recorded (its claim lapsed) at INFO', () => {
    // Act
    telemetry().attempted({ ...succeeded, recorded: false });

    // Assert
    expect(logLines()).toEqual([
      expect.objectContaining({ level: 'INFO', message: 'webhook attempt', outcome: 'succeeded', recorded: false }),
    ]);
  });

  it('logs a failed attempt with its error and error class', () => {
    // Act
    telemetry().attempted(timedOut);

    // Assert
    expect(logLines()).toEqual([
      expect.objectContaining({
        level: 'INFO',
        message: 'webhook attempt',
        delivery_id: 'dlv_2',
        attempt: 2,
        outcome: 'failed',
        error_class: 'timeout',
        duration_ms: 10_000,
        error: 'timed out after 10000 ms',
        delivery_status: 'pending',
      }),
    ]);
    expect(logLines()[0]).not.toHaveProperty('first_attempt_lag_ms');
    expect(logLines()[0]).not.toHaveProperty('status_code');
  });

  it('writes nothing to EMF before flush, then the attempts folded in: a line per error class, the totals in the first', () => {
    // Arrange
    const t = telemetry();
    t.attempted(succeeded);
    t.attempted(timedOut);
    t.attempted({
      ...timedOut,
      deliveryId: 'dlv_3',
      statusCode: 503,
      error: 'HTTP 503',
      errorClass: 'http_5xx',
      durationMs: 80,
    });
    expect(stdout.emf()).toEqual([]);

    // Act
    t.flush();

    // Assert: two lines (one value per name and per dimension a line), each series as CloudWatch reads them.
    const lines = stdout.emf();
    expect(lines).toHaveLength(2);
    expect(emfSeries(lines)).toEqual({
      'Sendflow/DeliveriesAttempted{service=sendflow-test}': { unit: 'Count', values: [1, 1, 1] },
      'Sendflow/DeliveriesSucceeded{service=sendflow-test}': { unit: 'Count', values: [1] },
      'Sendflow/DeliveriesFailed{service=sendflow-test}': { unit: 'Count', values: [1, 1] },
      'Sendflow/DeliveriesFailed{service=sendflow-test,errorClass=timeout}': { unit: 'Count', values: [1] },
      'Sendflow/DeliveriesFailed{service=sendflow-test,errorClass=http_5xx}': { unit: 'Count', values: [1] },
      'Sendflow/AttemptDuration{service=sendflow-test}': { unit: 'Milliseconds', values: [42, 10_000, 80] },
      'Sendflow/FirstAttemptLag{service=sendflow-test}': { unit: 'Milliseconds', values: [1_500] },
    });
    expect(lines[1]).toEqual({
      _aws: {
        Timestamp: expect.any(Number),
        CloudWatchMetrics: [
          {
            Namespace: 'Sendflow',
            Dimensions: [['service'], ['service', 'errorClass']],
            Metrics: [{ Name: 'DeliveriesFailed', Unit: 'Count' }],
          },
        ],
      },
      service: 'sendflow-test',
      errorClass: 'http_5xx',
      DeliveriesFailed: 1,
    });
  });

  it('counts a paused webhook as attempted and failed (webhook_paused) but times no request', () => {
    // Arrange
    const t = telemetry();

    // Act
    t.attempted({
      ...timedOut,
      requested: false,
      durationMs: 0,
      error: 'webhook paused',
      errorClass: 'webhook_paused',
      deliveryStatus: 'failed',
    });
    t.flush();

    // Assert
    expect(stdout.emf()).toHaveLength(1);
    expect(emfSeries(stdout.emf())).toEqual({
      'Sendflow/DeliveriesAttempted{service=sendflow-test}': { unit: 'Count', values: [1] },
      'Sendflow/DeliveriesFailed{service=sendflow-test}': { unit: 'Count', values: [1] },
      'Sendflow/DeliveriesFailed{service=sendflow-test,errorClass=webhook_paused}': { unit: 'Count', values: [1] },
    });
  });

  it('keeps a metric to 100 values a line (the EMF limit): a batch of 150 attempts writes two lines', () => {
    // Arrange
    const t = telemetry();
    for (let i = 0; i < 150; i++) t.attempted({ ...succeeded, durationMs: i });

    // Act
    t.flush();

    // Assert
    const lines = stdout.emf();
    expect(lines).toHaveLength(2);
    expect(lines.map((line) => (line.AttemptDuration as number[]).length)).toEqual([100, 50]);
    const series = emfSeries(lines);
    expect(series['Sendflow/AttemptDuration{service=sendflow-test}']?.values).toEqual(
      Array.from({ length: 150 }, (_, i) => i),
    );
    expect(series['Sendflow/DeliveriesAttempted{service=sendflow-test}']?.values).toHaveLength(150);
  });

  it('writes nothing a second time: flush empties the buffers', () => {
    const t = telemetry();
    t.attempted(succeeded);
    t.flush();
    const first = stdout.emf().length;
    t.flush();
    expect(stdout.emf()).toHaveLength(first);
  });
});

describe('PowertoolsTelemetry: API requests and emails', () => {
  const answered = { route: 'sendEmail', method: 'POST', durationMs: 17, requestId: 'req-1', accountId: 'acct_1' };

  it('writes no line at INFO for a request answered 2xx or 3xx under 2 s: the access log and request log have it', () => {
    // Act
    const t = telemetry();
    t.requested({ ...answered, status: 200 });
    t.requested({ ...answered, status: 202 });
    t.requested({ ...answered, status: 304, durationMs: 1_999 });

    // Assert
    expect(logLines()).toEqual([]);
  });

  it('logs a quiet request at DEBUG with route, method, status, duration, request id and account, never a path', () => {
    // Act
    telemetry(null, 'DEBUG').requested({ ...answered, status: 200 });

    // Assert
    expect(logLines()).toEqual([
      expect.objectContaining({
        level: 'DEBUG',
        message: 'api request',
        route: 'sendEmail',
        method: 'POST',
        status: 200,
        duration_ms: 17,
        request_id: 'req-1',
        account_id: 'acct_1',
      }),
    ]);
    expect(logLines()[0]).not.toHaveProperty('path');
  });

  it('logs at INFO a request that failed (5xx, 4xx) or took 2 s or more', () => {
    // Act
    const t = telemetry();
    for (const status of [500, 502, 503, 400, 401, 404, 409, 422]) t.requested({ ...answered, status });
    t.requested({ ...answered, status: 200, durationMs: 2_000 });

    // Assert
    expect(
      logLines().map(({ level, message, status, duration_ms }) => ({ level, message, status, duration_ms })),
    ).toEqual([
      ...[500, 502, 503, 400, 401, 404, 409, 422].map((status) => ({
        level: 'INFO',
        message: 'api request',
        status,
        duration_ms: 17,
      })),
      { level: 'INFO', message: 'api request', status: 200, duration_ms: 2_000 },
    ]);
  });

  it('logs a 429 at DEBUG: the limiter answers a storm at the rate the client retries, and each is counted', () => {
    // Arrange
    const t = telemetry();

    // Act
    t.requested({ ...answered, status: 429 });
    t.requested({ ...answered, status: 429, durationMs: 2_500 });
    t.flush();

    // Assert: only the slow one at INFO; both counted by route and status.
    expect(logLines()).toEqual([expect.objectContaining({ level: 'INFO', status: 429, duration_ms: 2_500 })]);
    expect(emfSeries(stdout.emf())['Sendflow/ApiRequests{service=sendflow-test,route=sendEmail,status=429}']).toEqual({
      unit: 'Count',
      values: [1, 1],
    });
  });

  it('writes one EMF line for a request with its accepted emails: two directives, each series as before', () => {
    // Arrange
    const t = telemetry();

    // Act: what POST /v1/emails/batch of three emails reports in one invocation (the use case, then the middleware).
    t.emails('accepted', 3);
    t.requested({ ...answered, route: 'sendBatch', status: 200 });
    t.flush();

    // Assert: one line; CloudWatch reads the total and the route/status breakdown of ApiRequests and the total of
    // EmailsAccepted, and no EmailsAccepted by route (that would be a new billed series).
    const lines = stdout.emf();
    expect(lines).toHaveLength(1);
    expect(emfSeries(lines)).toEqual({
      'Sendflow/ApiRequests{service=sendflow-test}': { unit: 'Count', values: [1] },
      'Sendflow/ApiRequests{service=sendflow-test,route=sendBatch,status=200}': { unit: 'Count', values: [1] },
      'Sendflow/EmailsAccepted{service=sendflow-test}': { unit: 'Count', values: [3] },
    });
    const [line] = lines as [Record<string, unknown>];
    expect(line).toEqual({
      _aws: {
        Timestamp: expect.any(Number),
        CloudWatchMetrics: [
          { Namespace: 'Sendflow', Dimensions: [['service']], Metrics: [{ Name: 'EmailsAccepted', Unit: 'Count' }] },
          {
            Namespace: 'Sendflow',
            Dimensions: [['service'], ['service', 'route', 'status']],
            Metrics: [{ Name: 'ApiRequests', Unit: 'Count' }],
          },
        ],
      },
      service: 'sendflow-test',
      route: 'sendBatch',
      status: '200',
      ApiRequests: 1,
      EmailsAccepted: 3,
    });
    expect(Math.abs((line._aws as { Timestamp: number }).Timestamp - Date.now())).toBeLessThan(60_000);
  });

  it('counts requests in total and by route and status', () => {
    // Arrange
    const t = telemetry();
    const request = { route: 'listWebhooks', method: 'GET', durationMs: 3, requestId: 'r' };

    // Act
    t.requested({ ...request, status: 200 });
    t.requested({ ...request, status: 200 });
    t.requested({ ...request, status: 429 });
    t.flush();

    // Assert: one line per route and status (a line has one value per name), the total across them.
    expect(stdout.emf()).toHaveLength(2);
    expect(emfSeries(stdout.emf())).toEqual({
      'Sendflow/ApiRequests{service=sendflow-test}': { unit: 'Count', values: [1, 1, 1] },
      'Sendflow/ApiRequests{service=sendflow-test,route=listWebhooks,status=200}': { unit: 'Count', values: [1, 1] },
      'Sendflow/ApiRequests{service=sendflow-test,route=listWebhooks,status=429}': { unit: 'Count', values: [1] },
    });
  });

  it('puts a failed attempt and a request of one flush in one line, each breakdown in its own directive only', () => {
    // Arrange: the local runtime's one telemetry serves every function, so a flush may hold both.
    const t = telemetry();
    t.attempted(timedOut);
    t.requested({ ...answered, status: 202 });

    // Act
    t.flush();

    // Assert: the root holds errorClass, route and status; no series crosses them.
    expect(stdout.emf()).toHaveLength(1);
    expect(Object.keys(emfSeries(stdout.emf())).sort()).toEqual([
      'Sendflow/ApiRequests{service=sendflow-test,route=sendEmail,status=202}',
      'Sendflow/ApiRequests{service=sendflow-test}',
      'Sendflow/AttemptDuration{service=sendflow-test}',
      'Sendflow/DeliveriesAttempted{service=sendflow-test}',
      'Sendflow/DeliveriesFailed{service=sendflow-test,errorClass=timeout}',
      'Sendflow/DeliveriesFailed{service=sendflow-test}',
    ]);
  });

  it('counts emails accepted, sent and failed', () => {
    // Arrange
    const t = telemetry();

    // Act
    t.emails('accepted', 3);
    t.emails('sent', 1);
    t.emails('sent', 1);
    t.emails('failed', 1);
    t.emails('failed', 0);
    t.flush();

    // Assert
    expect(stdout.emf().map(emfSummary)).toEqual([
      expect.objectContaining({
        metrics: {
          EmailsAccepted: { unit: 'Count', value: 3 },
          EmailsSent: { unit: 'Count', value: [1, 1] },
          EmailsFailed: { unit: 'Count', value: 1 },
        },
      }),
    ]);
  });

  it('times each send’s start after its due time (SendLag, ms) in the line of the sent emails', () => {
    // Arrange
    const t = telemetry();

    // Act
    t.sendStarted(1_250);
    t.sendStarted(-3);
    t.emails('sent', 1);
    t.flush();

    // Assert: one line; a clock behind the API's gives 0, never a negative lag.
    expect(stdout.emf().map(emfSummary)).toEqual([
      expect.objectContaining({
        metrics: {
          SendLag: { unit: 'Milliseconds', value: [1_250, 0] },
          EmailsSent: { unit: 'Count', value: 1 },
        },
      }),
    ]);
  });

  it('writes log lines but no EMF when metrics are off', () => {
    // Arrange
    const t = telemetry(null);

    // Act
    t.attempted(timedOut);
    t.emails('accepted', 1);
    t.flush();

    // Assert
    expect(stdout.emf()).toEqual([]);
    expect(logLines()).toHaveLength(1);
  });

  it('writes nothing below the logger level: a SILENT logger keeps tests quiet', () => {
    // Arrange
    const t = new PowertoolsTelemetry({ logger: new Logger({ logLevel: 'SILENT' }), metricsService: null });

    // Act
    t.attempted(succeeded);
    t.requested({ route: 'getEmail', method: 'GET', status: 200, durationMs: 1, requestId: 'r' });

    // Assert
    expect(stdout.lines()).toEqual([]);
  });
});

describe('safeError', () => {
  it('cuts URLs out of an error (a redirect target may carry a token) and bounds its length', () => {
    expect(safeError('redirect not followed (HTTP 302 to https://hooks.example/t/SECRET?x=1)')).toBe(
      'redirect not followed (HTTP 302 to <url>)',
    );
    expect(safeError('fetch https://hooks.example/t/SECRET failed')).toBe('fetch <url> failed');
    expect(safeError('redirect not followed (HTTP 307 to /callback?token=SECRET)')).toBe(
      'redirect not followed (HTTP 307 to <url>)',
    );
    expect(safeError('redirect not followed (HTTP 301 to cb?token=SECRET)')).toBe(
      'redirect not followed (HTTP 301 to <url>)',
    );
    expect(safeError('connect ECONNREFUSED 127.0.0.1:443')).toBe('connect ECONNREFUSED 127.0.0.1:443');
    expect(safeError(null)).toBeNull();
    expect(safeError('x'.repeat(1000))?.length).toBe(301);
  });
});

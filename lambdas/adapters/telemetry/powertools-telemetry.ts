// Telemetry on Powertools: one structured log line per attempt and per API request (the runtime's logger; at DEBUG
// when it succeeded and is recorded elsewhere), and metrics in CloudWatch embedded metric format (EMF, namespace
// Sendflow) on stdout, where Lambda's log stream carries them to CloudWatch Metrics. Metrics are buffered and
// written by flush() at the end of each invocation, so a batch of attempts costs one EMF line, not one per value;
// a metric counted in total and by a breakdown shares that line (emf-lines.ts).
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { AttemptReport, EmailOutcome, RequestReport, Telemetry } from '../../app/telemetry';
import { METRIC_DIMENSIONS as D, METRIC_NAMES as M, METRICS_NAMESPACE } from '../../domain/metric-names';
import { isSlowOutcome, LANE_POLICY } from '../../domain/webhooks/endpoint-health';
import { EmfBuffer, type EmfUnit } from './emf-lines';

export interface PowertoolsTelemetryOptions {
  readonly logger: Logger;
  /** The `service` dimension of every metric; null turns metrics off (the log lines stay). */
  readonly metricsService: string | null;
  /**
   * The level of the lines for work recorded elsewhere (a request answered below 400 or with 429, fast; an
   * attempt that succeeded and was recorded): `debug` (the default, on AWS, where CloudWatch bills every line);
   * `info` on a terminal, where `npm start` shows one line per request and per attempt.
   */
  readonly routineLevel?: 'debug' | 'info';
}

const EMAIL_METRICS: Record<EmailOutcome, string> = {
  accepted: M.emailsAccepted,
  sent: M.emailsSent,
  failed: M.emailsFailed,
};

/** Longest error text logged; the delivery log keeps the whole of it. */
const MAX_LOGGED_ERROR = 300;

/**
 * A request that took this long logs its line at INFO whatever its status: the 2 s that marks a webhook endpoint
 * slow, far above the API's usual tens of milliseconds and under the 5 s of the API latency alarm.
 */
export const SLOW_REQUEST_MS = 2_000;

export class PowertoolsTelemetry implements Telemetry {
  private readonly logger: Logger;
  /** Null when metrics are off. */
  private readonly metrics: EmfBuffer | null;
  private readonly routine: 'debug' | 'info';

  constructor(options: PowertoolsTelemetryOptions) {
    this.logger = options.logger;
    this.routine = options.routineLevel ?? 'debug';
    const service = options.metricsService;
    this.metrics = service === null ? null : new EmfBuffer(METRICS_NAMESPACE, { [D.service]: service });
  }

  attempted(report: AttemptReport): void {
    const { errorClass } = report;
    // A success that was recorded is in the delivery log already (its row, read by the API): a line for it at
    // INFO would pay CloudWatch for every delivery twice. Failures, slow answers (they mark the endpoint slow),
    // and results a lapsed claim kept from being recorded are what an operator looks for: INFO.
    const quiet = !errorClass && report.recorded && !isSlowOutcome(report, LANE_POLICY);
    this.logger[quiet ? this.routine : 'info']('webhook attempt', {
      delivery_id: report.deliveryId,
      webhook_id: report.webhookId,
      account_id: report.accountId,
      mode: report.mode,
      event_type: report.eventType,
      attempt: report.attempt,
      kind: report.kind,
      outcome: errorClass ? 'failed' : 'succeeded',
      error_class: errorClass,
      status_code: report.statusCode,
      duration_ms: report.durationMs,
      error: safeError(report.error),
      delivery_status: report.deliveryStatus,
      recorded: report.recorded,
      ...(report.firstAttemptLagMs !== undefined ? { first_attempt_lag_ms: report.firstAttemptLagMs } : {}),
    });
    this.count(M.deliveriesAttempted);
    if (errorClass) this.count(M.deliveriesFailed, { [D.errorClass]: errorClass });
    else this.count(M.deliveriesSucceeded);
    if (report.requested) this.record(M.attemptDuration, MetricUnit.Milliseconds, report.durationMs);
    if (report.firstAttemptLagMs !== undefined) {
      this.record(M.firstAttemptLag, MetricUnit.Milliseconds, report.firstAttemptLagMs);
    }
  }

  requested(report: RequestReport): void {
    // API Gateway's access log has every request (request id, status, resource, latency, account) and the
    // account's request log (GET /v1/logs) every authenticated one: a line at INFO for each would pay CloudWatch
    // again for every email sent. Failures (5xx, and 4xx: what support is asked about) and slow requests are
    // what an operator looks for: INFO. A 429 is the limiter working, answered as fast as a client retries, so
    // a storm of them stays quiet; ApiRequests counts them by route and status.
    const quiet = (report.status < 400 || report.status === 429) && report.durationMs < SLOW_REQUEST_MS;
    this.logger[quiet ? this.routine : 'info']('api request', {
      route: report.route,
      method: report.method,
      status: report.status,
      duration_ms: report.durationMs,
      request_id: report.requestId,
      ...(report.accountId ? { account_id: report.accountId } : {}),
    });
    this.count(M.apiRequests, { [D.route]: report.route, [D.status]: String(report.status) });
  }

  emails(outcome: EmailOutcome, count: number): void {
    if (count > 0) this.record(EMAIL_METRICS[outcome], MetricUnit.Count, count);
  }

  sendStarted(lagMs: number): void {
    this.record(M.sendLag, MetricUnit.Milliseconds, Math.max(0, lagMs));
  }

  flush(): void {
    if (!this.metrics || this.metrics.isEmpty()) return;
    try {
      // Straight to stdout, as Powertools Metrics writes (its own Console on process.stdout): Lambda's JSON log
      // format reformats the global console's lines, and an EMF line must reach CloudWatch as the JSON it is.
      for (const line of this.metrics.drain(Date.now())) process.stdout.write(`${line}\n`);
    } catch (error) {
      // Telemetry never fails the work it describes.
      this.logger.warn('could not publish metrics', error as Error);
    }
  }

  /** One in the total and, given a breakdown, in the series of that breakdown too. */
  private count(name: string, breakdown?: Record<string, string>): void {
    this.metrics?.add(name, MetricUnit.Count, 1, breakdown);
  }

  private record(name: string, unit: EmfUnit, value: number): void {
    this.metrics?.add(name, unit, value);
  }
}

/** The error text for a log line: URLs (a redirect's Location may carry a token) cut out, length bounded. */
export function safeError(error: string | null): string | null {
  if (error === null) return null;
  // URLs may carry tokens: a redirect's target, absolute or relative (`(HTTP 302 to cb?token=…)`), and any other.
  const redacted = error.replace(/(\(HTTP \d{3} to ).*$/, '$1<url>)').replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '<url>');
  return redacted.length > MAX_LOGGED_ERROR ? `${redacted.slice(0, MAX_LOGGED_ERROR)}…` : redacted;
}

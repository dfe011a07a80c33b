// Telemetry on Powertools: one structured log line per attempt (at DEBUG when it succeeded and was recorded)
// and per API request (the runtime's logger), and Powertools Metrics in CloudWatch embedded metric format (EMF,
// namespace Sendflow) on stdout, where Lambda's log stream carries it to CloudWatch Metrics. Metrics are
// buffered per dimension set and written by flush() at the end of each invocation, so a batch of attempts
// costs one EMF line per set, not per value.
import type { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { AttemptReport, EmailOutcome, RequestReport, Telemetry } from '../../app/telemetry';
import { METRIC_DIMENSIONS as D, METRIC_NAMES as M, METRICS_NAMESPACE } from '../../domain/metric-names';
import { isSlowOutcome, LANE_POLICY } from '../../domain/webhooks/endpoint-health';

export interface PowertoolsTelemetryOptions {
  readonly logger: Logger;
  /** The `service` dimension of every metric; null turns metrics off (the log lines stay). */
  readonly metricsService: string | null;
}

const EMAIL_METRICS: Record<EmailOutcome, string> = {
  accepted: M.emailsAccepted,
  sent: M.emailsSent,
  failed: M.emailsFailed,
};

/** Longest error text logged; the delivery log keeps the whole of it. */
const MAX_LOGGED_ERROR = 300;

export class PowertoolsTelemetry implements Telemetry {
  private readonly logger: Logger;
  private readonly service: string | null;
  /** One Powertools Metrics per dimension set (EMF gives all metrics of one line the same dimensions). */
  private readonly sets = new Map<string, Metrics>();

  constructor(options: PowertoolsTelemetryOptions) {
    this.logger = options.logger;
    this.service = options.metricsService;
  }

  attempted(report: AttemptReport): void {
    const { errorClass } = report;
    // A success that was recorded is in the delivery log already (its row, read by the API): a line for it at
    // INFO would pay CloudWatch for every delivery twice. Failures, slow answers (they mark the endpoint slow),
    // and results a lapsed claim kept from being recorded are what an operator looks for: INFO.
    const quiet = !errorClass && report.recorded && !isSlowOutcome(report, LANE_POLICY);
    (quiet ? this.logger.debug : this.logger.info).call(this.logger, 'webhook attempt', {
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
    if (errorClass) {
      this.count(M.deliveriesFailed);
      this.count(M.deliveriesFailed, { [D.errorClass]: errorClass });
    } else this.count(M.deliveriesSucceeded);
    if (report.requested) this.record(M.attemptDuration, MetricUnit.Milliseconds, report.durationMs);
    if (report.firstAttemptLagMs !== undefined) {
      this.record(M.firstAttemptLag, MetricUnit.Milliseconds, report.firstAttemptLagMs);
    }
  }

  requested(report: RequestReport): void {
    this.logger.info('api request', {
      route: report.route,
      method: report.method,
      status: report.status,
      duration_ms: report.durationMs,
      request_id: report.requestId,
      ...(report.accountId ? { account_id: report.accountId } : {}),
    });
    this.count(M.apiRequests);
    this.count(M.apiRequests, { [D.route]: report.route, [D.status]: String(report.status) });
  }

  emails(outcome: EmailOutcome, count: number): void {
    if (count > 0) this.record(EMAIL_METRICS[outcome], MetricUnit.Count, count);
  }

  flush(): void {
    for (const metrics of this.sets.values()) {
      if (!metrics.hasStoredMetrics()) continue;
      try {
        metrics.publishStoredMetrics();
      } catch (error) {
        // Telemetry never fails the work it describes.
        this.logger.warn('could not publish metrics', error as Error);
      }
    }
  }

  private count(name: string, dimensions: Record<string, string> = {}): void {
    this.record(name, MetricUnit.Count, 1, dimensions);
  }

  private record(
    name: string,
    unit: (typeof MetricUnit)[keyof typeof MetricUnit],
    value: number,
    dimensions: Record<string, string> = {},
  ): void {
    const metrics = this.metricsFor(dimensions);
    if (!metrics) return;
    try {
      metrics.addMetric(name, unit, value);
    } catch (error) {
      this.logger.warn('could not record a metric', { metric: name, error: String(error) });
    }
  }

  private metricsFor(dimensions: Record<string, string>): Metrics | null {
    if (this.service === null) return null;
    const key = JSON.stringify(dimensions);
    let metrics = this.sets.get(key);
    if (!metrics) {
      metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: this.service, defaultDimensions: dimensions });
      this.sets.set(key, metrics);
    }
    return metrics;
  }
}

/** The error text for a log line: URLs (a redirect's Location may carry a token) cut out, length bounded. */
export function safeError(error: string | null): string | null {
  if (error === null) return null;
  // URLs may carry tokens: a redirect's target, absolute or relative (`(HTTP 302 to cb?token=…)`), and any other.
  const redacted = error.replace(/(\(HTTP \d{3} to ).*$/, '$1<url>)').replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '<url>');
  return redacted.length > MAX_LOGGED_ERROR ? `${redacted.slice(0, MAX_LOGGED_ERROR)}…` : redacted;
}

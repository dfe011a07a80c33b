// The CloudWatch namespace and metric names Sendflow publishes (EMF): the dashboard and alarms are built on
// these exact strings, so they live in one place and are never spelled elsewhere.

export const METRICS_NAMESPACE = 'Sendflow';

export const METRIC_NAMES = {
  /** Count, every attempt recorded on a delivery (a paused or deleted webhook's end included). */
  deliveriesAttempted: 'DeliveriesAttempted',
  deliveriesSucceeded: 'DeliveriesSucceeded',
  /** Count; published twice: without dimension (the total) and by `errorClass`. */
  deliveriesFailed: 'DeliveriesFailed',
  /** Milliseconds, one value per HTTP request made to an endpoint. */
  attemptDuration: 'AttemptDuration',
  /** Milliseconds from the event's time to the start of its first automatic attempt. */
  firstAttemptLag: 'FirstAttemptLag',
  /** Count of emails stored by POST /v1/emails and /v1/emails/batch (each email of a batch). */
  emailsAccepted: 'EmailsAccepted',
  /** Count of recipients the provider took. */
  emailsSent: 'EmailsSent',
  /** Count of recipients that ended email.failed (refused, retries exhausted, outcome unknown). */
  emailsFailed: 'EmailsFailed',
  /** Milliseconds from when an email was due (accepted, or scheduled for) to its send's start (first receives). */
  sendLag: 'SendLag',
  /** Count; published twice: without dimension (the total) and by `route` (operation id) and `status`. */
  apiRequests: 'ApiRequests',
} as const;

export type MetricName = (typeof METRIC_NAMES)[keyof typeof METRIC_NAMES];

/** Dimension names (low cardinality only: never an account, webhook, delivery or email id). */
export const METRIC_DIMENSIONS = {
  /** Every metric: the deployment it comes from (SF_METRICS_SERVICE, `sendflow` unless the stack sets it). */
  service: 'service',
  errorClass: 'errorClass',
  route: 'route',
  status: 'status',
} as const;

/**
 * The WARN log lines of sending reputation (app/reputation/track-reputation's `noted`): a CloudWatch Logs metric
 * filter on the paused line counts pauses (`ReputationPauses`), whose alarm e-mails the stage's non-paging
 * subscribers (lib/constructs/monitoring.ts).
 */
export const REPUTATION_LOG_LINES = {
  warning: 'reputation warning',
  paused: 'sending paused for reputation',
} as const;
/** The metric the paused line's filter publishes (one per stage: the stack name is in it). */
export const REPUTATION_PAUSES_METRIC = 'ReputationPauses';

/**
 * The WARN log lines of an account notice that was not sent (runtime/services' notify): the stage has no sender
 * (SF_NOTICE_FROM), or SES refused or failed the send. Both begin with the same words, which a CloudWatch Logs
 * metric filter on every notifying function counts (`NoticesNotSent`, lib/constructs/monitoring.ts). Neither names
 * the recipient nor carries the notice's text: the account id and the kind only.
 */
export const NOTICE_LOG_LINES = {
  noSender: 'account notice not sent: no sender configured (SF_NOTICE_FROM)',
  failed: 'account notice not sent: the send failed',
} as const;
/** What the filters match: the words both lines begin with. */
export const NOTICE_NOT_SENT_PREFIX = 'account notice not sent';
/** The metric the filters publish (one per stage: the stack name is in it). */
export const NOTICES_NOT_SENT_METRIC = 'NoticesNotSent';

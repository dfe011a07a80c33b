// Where a webhook's events go (docs/webhooks.md, "AWS destinations"): an HTTP endpoint (the default), or the
// customer's own EventBridge bus or SQS queue, reached through a role of theirs that Sendflow assumes with the
// account's external id. Pure rules: the shapes accepted, the stored stand-in URL, the trust policy the customer
// pastes, and which failure class an AWS error code is.
import type { ErrorClass } from './error-class';

export const DESTINATION_TYPES = ['http', 'aws_eventbridge', 'aws_sqs'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];

export interface EventBridgeDestination {
  readonly type: 'aws_eventbridge';
  readonly eventBusArn: string;
  readonly roleArn: string;
  /** The account's external id, copied when the webhook was made (it never changes): the worker reads no account. */
  readonly externalId: string;
}

export interface SqsDestination {
  readonly type: 'aws_sqs';
  readonly queueUrl: string;
  readonly roleArn: string;
  readonly externalId: string;
}

export type AwsDestination = EventBridgeDestination | SqsDestination;

/** Partitions and their region prefixes: an ARN's partition must agree with its region. */
const PARTITION_OF = (region: string): string =>
  region.startsWith('cn-') ? 'aws-cn' : region.startsWith('us-gov-') ? 'aws-us-gov' : 'aws';
const REGION = /^(?:[a-z]{2}(?:-gov)?-[a-z]+-\d)$/;
/** arn:<partition>:events:<region>:<account>:event-bus/<name> (names: letters, digits, . _ - /). */
const EVENT_BUS_ARN = /^arn:(aws|aws-cn|aws-us-gov):events:([a-z0-9-]+):(\d{12}):event-bus\/([A-Za-z0-9._\-/]{1,256})$/;
/** arn:<partition>:iam::<account>:role/<path/>name. */
const ROLE_ARN = /^arn:(aws|aws-cn|aws-us-gov):iam::(\d{12}):role\/(?:[\x21-\x7e]+\/)?[\w+=,.@-]{1,64}$/;
/** https://sqs.<region>.amazonaws.com[.cn]/<account>/<name>[.fifo] (the current form). */
const QUEUE_URL = /^https:\/\/sqs\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?\/(\d{12})\/([A-Za-z0-9_-]{1,80}(?:\.fifo)?)$/;

export interface DestinationProblem {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** A destination as given over the API (snake_case), before it is checked. */
export interface DestinationInput {
  readonly type: DestinationType;
  readonly event_bus_arn?: string;
  readonly queue_url?: string;
  readonly role_arn?: string;
}

/** Where an AWS destination lives: its region and AWS account (for the region rule and the docs' examples). */
export function targetOf(
  destination: AwsDestination,
): { partition: string; region: string; account: string; name?: string } | null {
  if (destination.type === 'aws_eventbridge') {
    const m = EVENT_BUS_ARN.exec(destination.eventBusArn);
    return m ? { partition: m[1] ?? '', region: m[2] ?? '', account: m[3] ?? '' } : null;
  }
  const m = QUEUE_URL.exec(destination.queueUrl);
  return m ? { partition: m[2] ? 'aws-cn' : 'aws', region: m[1] ?? '', account: m[3] ?? '', name: m[4] ?? '' } : null;
}

/**
 * The problems of a destination as given (path under `destination`); none for a valid one. An ARN or URL must
 * have its documented shape, name a real-looking region of its partition, and the role must be in the same
 * partition. A role in another AWS account than the bus or queue is allowed (AWS allows cross-account targets).
 */
export function destinationProblems(input: DestinationInput): DestinationProblem[] {
  const problems: DestinationProblem[] = [];
  const at = (field: string, message: string) => problems.push({ path: [field], message });
  if (input.type === 'http') {
    for (const field of ['event_bus_arn', 'queue_url', 'role_arn'] as const)
      if (input[field] !== undefined) at(field, 'is only for AWS destinations (type aws_eventbridge or aws_sqs).');
    return problems;
  }
  const role = ROLE_ARN.exec(input.role_arn ?? '');
  if (input.role_arn === undefined) at('role_arn', 'is required: the ARN of the role Sendflow assumes.');
  else if (!role) at('role_arn', 'must be an IAM role ARN: arn:aws:iam::<12-digit account>:role/<name>.');
  let target: { partition: string; region: string } | null = null;
  if (input.type === 'aws_eventbridge') {
    if (input.queue_url !== undefined) at('queue_url', 'is only for type aws_sqs.');
    const m = EVENT_BUS_ARN.exec(input.event_bus_arn ?? '');
    if (input.event_bus_arn === undefined) at('event_bus_arn', 'is required: the ARN of your event bus.');
    else if (!m)
      at('event_bus_arn', 'must be an event bus ARN: arn:aws:events:<region>:<12-digit account>:event-bus/<name>.');
    else target = { partition: m[1] ?? '', region: m[2] ?? '' };
    if (target) checkRegion('event_bus_arn', target, at);
  } else {
    if (input.event_bus_arn !== undefined) at('event_bus_arn', 'is only for type aws_eventbridge.');
    const m = QUEUE_URL.exec(input.queue_url ?? '');
    if (input.queue_url === undefined) at('queue_url', 'is required: the URL of your queue.');
    else if (!m)
      at('queue_url', 'must be an SQS queue URL: https://sqs.<region>.amazonaws.com/<12-digit account>/<queue name>.');
    else target = { partition: m[2] ? 'aws-cn' : 'aws', region: m[1] ?? '' };
    if (target) checkRegion('queue_url', target, at);
  }
  if (role && target && role[1] !== target.partition) {
    at(
      'role_arn',
      `is in partition ${role[1]}, the ${input.type === 'aws_sqs' ? 'queue' : 'bus'} in ${target.partition}.`,
    );
  }
  return problems;
}

function checkRegion(
  field: string,
  target: { partition: string; region: string },
  at: (field: string, message: string) => void,
): void {
  if (!REGION.test(target.region)) at(field, `names no AWS region (${target.region}).`);
  else if (PARTITION_OF(target.region) !== target.partition)
    at(field, `region ${target.region} is not in partition ${target.partition}.`);
}

/** A checked input's destination (null: HTTP). Call destinationProblems first. */
export function destinationOf(input: DestinationInput, externalId: string): AwsDestination | null {
  if (input.type === 'aws_eventbridge')
    return { type: input.type, eventBusArn: input.event_bus_arn ?? '', roleArn: input.role_arn ?? '', externalId };
  if (input.type === 'aws_sqs')
    return { type: input.type, queueUrl: input.queue_url ?? '', roleArn: input.role_arn ?? '', externalId };
  return null;
}

/**
 * The `url` an AWS webhook is stored with: a scheme no release's HTTP sender accepts (`aws-eventbridge:` and
 * `aws-sqs:`). A release before destinations ignores `destination`, sends to `url`, and so fails every attempt
 * visibly (`URL must use https`, blocked_address) instead of sending the event anywhere else; `url` stays present
 * because that release requires it on every read of the tenant's webhooks.
 */
export function storedUrlOf(destination: AwsDestination): string {
  return destination.type === 'aws_eventbridge'
    ? `aws-eventbridge:${destination.eventBusArn}`
    : `aws-sqs:${destination.queueUrl}`;
}

/**
 * The destination a webhook delivers to: its AWS destination only while `url` is still that destination's stand-in.
 * A release before destinations may have changed `url` (PUT, during a rollback) while keeping the attribute it does
 * not know: the customer then asked for that URL, and HTTP it is.
 */
export function activeDestination(webhook: {
  readonly url: string;
  readonly destination?: AwsDestination;
}): AwsDestination | null {
  const { destination } = webhook;
  return destination && webhook.url === storedUrlOf(destination) ? destination : null;
}

/** Whether a stored url is an AWS stand-in (never a URL a client may give: they must be http or https). */
export const isAwsStoredUrl = (url: string): boolean => /^aws-(eventbridge|sqs):/.test(url);

/** The external id: `sfx_` and 32 random base32 characters (160 bits): not a secret, never guessable. */
export function generateExternalId(random: (size: number) => Uint8Array): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  const bytes = random(32);
  let id = '';
  for (const byte of bytes) id += alphabet[byte % 32];
  return `sfx_${id}`;
}

/** The AWS account Sendflow assumes roles from: its delivery function's role, named in the trust policy. */
export interface TrustPrincipal {
  /** ARN of the principal allowed in the customer's trust policy (the delivery role, or an account root). */
  readonly principalArn: string;
}

/**
 * The trust policy the customer attaches to their role: only Sendflow's principal, and only with their account's
 * external id (AWS's documented defence against the confused deputy: another Sendflow customer naming this role
 * cannot make Sendflow assume it, since their external id differs).
 */
export function trustPolicyOf(principal: TrustPrincipal, externalId: string): Record<string, unknown> {
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { AWS: principal.principalArn },
        Action: 'sts:AssumeRole',
        Condition: { StringEquals: { 'sts:ExternalId': externalId } },
      },
    ],
  };
}

/** The permission the role needs on the target (the customer attaches it to the role). */
export function rolePolicyOf(destination: AwsDestination): Record<string, unknown> {
  if (destination.type === 'aws_eventbridge') {
    return {
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Action: 'events:PutEvents', Resource: destination.eventBusArn }],
    };
  }
  const t = targetOf(destination);
  const arn = t ? `arn:${t.partition}:sqs:${t.region}:${t.account}:${t.name ?? ''}` : '*';
  return { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'sqs:SendMessage', Resource: arn }] };
}

/** Where a failure happened: assuming the role, or the call to the bus or queue. */
export type AwsStep = 'assume_role' | 'send';

/** Codes AWS uses for throttling (EventBridge, SQS, STS): shown as such in the log and the error text. */
const THROTTLED = new Set([
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'RequestThrottled',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'KMSThrottlingException',
]);

export const isThrottled = (code: string): boolean => THROTTLED.has(code);

/**
 * The failure class of an AWS error, in the taxonomy every destination shares (error-class.ts; its names are
 * stored, and the release before reads only those), by the status AWS answered, as for an HTTP endpoint: AWS's
 * 5xx (InternalFailure, ServiceUnavailable) is `http_5xx`; what the customer must fix or wait out (AccessDenied,
 * a role that cannot be assumed, a missing bus or queue, a KMS key, throttling, which is 429's meaning) is
 * `http_4xx`; no answer at all is `network_error`. The code itself is recorded beside the class (awsErrorCode),
 * so the log and the dashboard still tell AccessDenied from ThrottlingException.
 */
export function errorClassOfAws(code: string, httpStatus: number | undefined): ErrorClass {
  if (httpStatus !== undefined && httpStatus >= 500) return 'http_5xx';
  if (/^(InternalError|InternalFailure|InternalException|ServiceUnavailable)/.test(code)) return 'http_5xx';
  if (httpStatus !== undefined || isThrottled(code)) return 'http_4xx';
  return 'network_error';
}

/** The text a delivery log shows for an AWS failure. */
export function awsErrorText(step: AwsStep, code: string, message: string | undefined): string {
  const where =
    step === 'assume_role'
      ? 'assuming the role failed'
      : isThrottled(code)
        ? 'AWS throttled the event'
        : 'AWS refused the event';
  const said = message ? `: ${message.slice(0, 200)}` : '';
  return `${where} (${code})${said}`;
}

/** Whether an SQS queue URL is a FIFO queue's. */
export const isFifoQueue = (queueUrl: string): boolean => queueUrl.endsWith('.fifo');

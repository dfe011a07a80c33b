// The AWS destinations' sender (docs/webhooks.md, "AWS destinations"): assumes the customer's role with STS
// (their account's external id, a session named for Sendflow and the account, 15 minutes), keeps each session
// until shortly before it expires, and sends the delivery's body as one EventBridge PutEvents entry or one SQS
// message. Every failure is an outcome, never a throw: AWS's error code and request id in place of an HTTP status.
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import type { OutboundContext, OutboundRequest, WebhookSender } from '../../app/webhooks/ports';
import type { AttemptOutcome } from '../../domain/webhooks/delivery';
import {
  type AwsDestination,
  type AwsStep,
  awsErrorText,
  errorClassOfAws,
  isFifoQueue,
  targetOf,
} from '../../domain/webhooks/destination';
import { ATTEMPT_ERRORS } from '../../domain/webhooks/error-class';

/** EventBridge's `source` of every Sendflow event (rules match on it). */
export const EVENTBRIDGE_SOURCE = 'sendflow';
/** The shortest session STS grants; Sendflow renews it before it ends. */
export const SESSION_SECONDS = 900;
/** A cached session is renewed once less than this is left (an attempt never starts on a nearly expired one). */
export const SESSION_RENEW_MS = 120_000;
/** Sessions kept at most (oldest dropped first): one per (role, external id) in use. */
const MAX_SESSIONS = 1000;

export interface AwsSession {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken: string;
  /** Epoch ms. */
  readonly expiresAt: number;
}

export interface AwsDestinationSenderOptions {
  /** The attempt's deadline (the HTTP sender's too), for the STS call and the send together. */
  readonly timeoutMs: number;
  /** SF_AWS_ENDPOINT_URL: every AWS call goes there (a local stand-in, LocalStack); absent: AWS's own endpoints. */
  readonly endpoint?: string;
  /** The region of Sendflow's own STS calls (the regional endpoint; AWS_REGION on Lambda). */
  readonly region: string;
  readonly now?: () => number;
  /** Tests: the STS client (aws-sdk-client-mock acts on its prototype either way). */
  readonly sts?: STSClient;
}

/** Where an AWS failure came from: the step, AWS's code, its HTTP status and request id when it answered. */
interface AwsFailure {
  readonly step: AwsStep;
  readonly code: string;
  readonly message?: string;
  readonly httpStatus?: number;
  readonly requestId?: string;
}

export class AwsDestinationSender implements WebhookSender {
  private readonly sts: STSClient;
  private readonly sessions = new Map<string, Promise<AwsSession>>();
  private readonly eventBridge = new Map<string, EventBridgeClient>();
  private readonly sqs = new Map<string, SQSClient>();
  private readonly now: () => number;

  constructor(private readonly options: AwsDestinationSenderOptions) {
    this.now = options.now ?? Date.now;
    this.sts =
      options.sts ??
      new STSClient({
        region: options.region,
        maxAttempts: 1,
        ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      });
  }

  async send(request: OutboundRequest): Promise<AttemptOutcome> {
    const at = this.now();
    const started = performance.now();
    const { destination, context } = request;
    const done = (fields: Pick<AttemptOutcome, 'statusCode' | 'error' | 'errorClass' | 'response'> & Extra) => ({
      at,
      durationMs: Math.round(performance.now() - started),
      timings: { dnsMs: null, connectMs: null, tlsMs: null, ttfbMs: fields.sendMs ?? null },
      ...withoutSendMs(fields),
    });
    if (!destination || !context) {
      return done({
        statusCode: null,
        error: ATTEMPT_ERRORS.urlRefused('is no AWS destination'),
        errorClass: 'blocked_address',
        response: '',
      });
    }
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    let session: AwsSession;
    try {
      session = await this.session(destination, context.accountId, signal);
    } catch (caught) {
      return done(this.failed(failureOf(caught, 'assume_role'), signal));
    }
    const sendStarted = performance.now();
    try {
      const sent =
        destination.type === 'aws_eventbridge'
          ? await this.putEvent(destination, session, request.body, context, signal)
          : await this.sendMessage(destination, session, request.body, context, signal);
      const sendMs = Math.round(performance.now() - sendStarted);
      if ('failure' in sent) return done({ ...this.failed(sent.failure, signal), sendMs });
      return {
        ...done({ statusCode: sent.httpStatus, error: null, errorClass: null, response: sent.response, sendMs }),
        ...(sent.requestId ? { awsRequestId: sent.requestId } : {}),
      };
    } catch (caught) {
      const failure = failureOf(caught, 'send');
      // Credentials AWS no longer honours (revoked, or the role's session policy changed): assume again next time.
      if (failure.code === 'ExpiredTokenException' || failure.code === 'InvalidClientTokenId')
        this.sessions.delete(sessionKey(destination));
      return done({ ...this.failed(failure, signal), sendMs: Math.round(performance.now() - sendStarted) });
    }
  }

  async close(): Promise<void> {
    this.sts.destroy();
    for (const client of [...this.eventBridge.values(), ...this.sqs.values()]) client.destroy();
  }

  /**
   * The role's session: the cached one while more than SESSION_RENEW_MS is left, else a new AssumeRole (one at a
   * time per role and external id: concurrent attempts share the call). A failed call is not cached.
   */
  private session(destination: AwsDestination, accountId: string, signal: AbortSignal): Promise<AwsSession> {
    const key = sessionKey(destination);
    const cached = this.sessions.get(key);
    if (cached) {
      return cached.then(
        (session) =>
          session.expiresAt - this.now() > SESSION_RENEW_MS
            ? session
            : this.assume(key, destination, accountId, signal),
        () => this.assume(key, destination, accountId, signal),
      );
    }
    return this.assume(key, destination, accountId, signal);
  }

  private assume(
    key: string,
    destination: AwsDestination,
    accountId: string,
    signal: AbortSignal,
  ): Promise<AwsSession> {
    const pending = (async (): Promise<AwsSession> => {
      const { Credentials: c } = await this.sts.send(
        new AssumeRoleCommand({
          RoleArn: destination.roleArn,
          ExternalId: destination.externalId,
          RoleSessionName: roleSessionName(accountId),
          DurationSeconds: SESSION_SECONDS,
        }),
        { abortSignal: signal },
      );
      if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken) {
        throw Object.assign(new Error('STS answered without credentials'), { name: 'MissingCredentials' });
      }
      return {
        accessKeyId: c.AccessKeyId,
        secretAccessKey: c.SecretAccessKey,
        sessionToken: c.SessionToken,
        expiresAt: c.Expiration ? c.Expiration.getTime() : this.now() + SESSION_SECONDS * 1000,
      };
    })();
    this.sessions.delete(key);
    this.sessions.set(key, pending);
    if (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
    pending.catch(() => {
      if (this.sessions.get(key) === pending) this.sessions.delete(key);
    });
    return pending;
  }

  private async putEvent(
    destination: Extract<AwsDestination, { type: 'aws_eventbridge' }>,
    session: AwsSession,
    body: string,
    context: OutboundContext,
    signal: AbortSignal,
  ): Promise<Sent> {
    const region = targetOf(destination)?.region ?? this.options.region;
    const client = this.client(this.eventBridge, region, session, (config) => new EventBridgeClient(config));
    const answer = await client.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: destination.eventBusArn,
            Source: EVENTBRIDGE_SOURCE,
            DetailType: context.eventType,
            Detail: body,
            Resources: [],
          },
        ],
      }),
      { abortSignal: signal },
    );
    const requestId = answer.$metadata.requestId;
    const entry = answer.Entries?.[0];
    // PutEvents answers 200 even when its entry failed: the entry's ErrorCode is the outcome.
    if ((answer.FailedEntryCount ?? 0) > 0 || entry?.ErrorCode || !entry?.EventId) {
      return {
        failure: {
          step: 'send',
          code: entry?.ErrorCode ?? 'NoEventId',
          ...(entry?.ErrorMessage ? { message: entry.ErrorMessage } : {}),
          // The entry's failure is no HTTP error: classed by its code (InternalFailure is AWS's, the rest 4xx).
          httpStatus: entry?.ErrorCode === 'InternalFailure' ? 500 : 400,
          ...(requestId ? { requestId } : {}),
        },
      };
    }
    return {
      httpStatus: answer.$metadata.httpStatusCode ?? 200,
      response: JSON.stringify({ EventId: entry.EventId }),
      ...(requestId ? { requestId } : {}),
    };
  }

  private async sendMessage(
    destination: Extract<AwsDestination, { type: 'aws_sqs' }>,
    session: AwsSession,
    body: string,
    context: OutboundContext,
    signal: AbortSignal,
  ): Promise<Sent> {
    const region = targetOf(destination)?.region ?? this.options.region;
    const client = this.client(this.sqs, region, session, (config) => new SQSClient(config));
    const fifo = isFifoQueue(destination.queueUrl);
    const answer = await client.send(
      new SendMessageCommand({
        QueueUrl: destination.queueUrl,
        MessageBody: body,
        MessageAttributes: {
          'sendflow-event-type': { DataType: 'String', StringValue: context.eventType },
          'sendflow-event-id': { DataType: 'String', StringValue: context.eventId },
          'sendflow-delivery-id': { DataType: 'String', StringValue: context.deliveryId },
        },
        // FIFO: one email's events in order (its group), and every attempt of a delivery one message (dedup).
        ...(fifo ? { MessageGroupId: context.orderingKey, MessageDeduplicationId: context.deliveryId } : {}),
      }),
      { abortSignal: signal },
    );
    const requestId = answer.$metadata.requestId;
    return {
      httpStatus: answer.$metadata.httpStatusCode ?? 200,
      response: JSON.stringify({ MessageId: answer.MessageId ?? null }),
      ...(requestId ? { requestId } : {}),
    };
  }

  /** One client per region and session: a new session gets a new client (its credentials are fixed). */
  private client<C extends { destroy(): void }>(
    clients: Map<string, C>,
    region: string,
    session: AwsSession,
    make: (config: ClientConfig) => C,
  ): C {
    const key = `${region}\0${session.accessKeyId}`;
    let client = clients.get(key);
    if (!client) {
      client = make({
        region,
        maxAttempts: 1,
        credentials: {
          accessKeyId: session.accessKeyId,
          secretAccessKey: session.secretAccessKey,
          sessionToken: session.sessionToken,
          expiration: new Date(session.expiresAt),
        },
        ...(this.options.endpoint ? { endpoint: this.options.endpoint } : {}),
      });
      clients.set(key, client);
      // Clients of expired sessions are dropped as new ones arrive.
      if (clients.size > MAX_SESSIONS) {
        const [oldest, old] = clients.entries().next().value as [string, C];
        clients.delete(oldest);
        old.destroy();
      }
    }
    return client;
  }

  private failed(failure: AwsFailure, signal: AbortSignal) {
    if (signal.aborted) {
      return {
        statusCode: null,
        error: `${ATTEMPT_ERRORS.timedOut(this.options.timeoutMs)} (${failure.step === 'assume_role' ? 'assuming the role' : 'sending'})`,
        errorClass: 'timeout' as const,
        response: '',
      };
    }
    return {
      statusCode: null,
      error: awsErrorText(failure.step, failure.code, failure.message),
      errorClass: errorClassOfAws(failure.code, failure.httpStatus),
      response: '',
      awsErrorCode: failure.code,
      ...(failure.requestId ? { awsRequestId: failure.requestId } : {}),
    };
  }
}

type Extra = { readonly sendMs?: number; readonly awsErrorCode?: string; readonly awsRequestId?: string };
type Sent = { httpStatus: number; response: string; requestId?: string } | { failure: AwsFailure };
interface ClientConfig {
  region: string;
  maxAttempts: number;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken: string; expiration: Date };
  endpoint?: string;
}

function withoutSendMs<T extends { sendMs?: number }>(fields: T): Omit<T, 'sendMs'> {
  const { sendMs: _ms, ...rest } = fields;
  return rest;
}

const sessionKey = (destination: AwsDestination) => `${destination.roleArn}\0${destination.externalId}`;

/** `sendflow-<account id>` within STS's 64 characters of [\w+=,.@-]: the customer's CloudTrail names the caller. */
export function roleSessionName(accountId: string): string {
  return `sendflow-${accountId.replace(/[^\w+=,.@-]/g, '-')}`.slice(0, 64);
}

/** AWS's code, status and request id from an SDK error; a network failure has no status (network_error). */
function failureOf(caught: unknown, step: AwsStep): AwsFailure {
  const error = caught as {
    name?: string;
    code?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number; requestId?: string };
    $response?: { statusCode?: number };
  };
  const httpStatus = error.$metadata?.httpStatusCode ?? error.$response?.statusCode;
  const requestId = error.$metadata?.requestId;
  return {
    step,
    code: (httpStatus !== undefined ? error.name : (error.code ?? error.name)) || 'UnknownError',
    ...(error.message ? { message: error.message } : {}),
    ...(httpStatus !== undefined ? { httpStatus } : {}),
    ...(requestId ? { requestId } : {}),
  };
}

// The API Lambda: one middy chain for every /v1 route, dispatching to the route's handler by manifest id.

import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { ApiKeyDeps } from '../../app/api-keys';
import type { ApiRequestLog } from '../../app/api-requests/ports';
import type { AuthenticateDeps } from '../../app/authenticate';
import type { ContactDeps } from '../../app/contacts/contacts';
import type { SignInDeps } from '../../app/dashboard/sign-in';
import type { DomainDeps } from '../../app/domains/domains';
import type { EmailHistory } from '../../app/emails/ports';
import type { ReadEmailDeps } from '../../app/emails/read-email';
import type { SendEmailDeps } from '../../app/emails/send-emails';
import type { UnsubscribeDeps } from '../../app/emails/unsubscribe';
import type { FileStore } from '../../app/files/ports';
import type { IdempotencyStore } from '../../app/idempotency';
import type { ReadReceivedDeps } from '../../app/inbound/read-received';
import type { ListenDeps } from '../../app/listen/listen-sessions';
import type { RateLimitCounter } from '../../app/ports';
import type { MetricsDeps } from '../../app/reputation/metrics';
import type { SendingGateDeps } from '../../app/reputation/sending-gate';
import type { Telemetry } from '../../app/telemetry';
import type { TemplateDeps } from '../../app/templates/templates';
import type { AttemptDeps } from '../../app/webhooks/attempts';
import type { DeliveryFigureStore } from '../../app/webhooks/delivery-figures';
import type { ManageWebhookDeps } from '../../app/webhooks/manage-webhooks';
import type { RecoveryDeps } from '../../app/webhooks/recoveries';
import type { PublicRouteId, RouteId } from '../../manifest';
import type { ApiInvoke } from '../dashboard/api-client';
import { dashboardHandlers } from '../dashboard/dashboard';
import { apiRequestLog } from '../middleware/api-request-log';
import { resolveCaller } from '../middleware/caller';
import { errorMapper } from '../middleware/errors';
import { guard } from '../middleware/guard';
import { idempotency } from '../middleware/idempotency';
import { jsonBody } from '../middleware/json-body';
import { rateLimit } from '../middleware/rate-limit';
import { requestLog } from '../middleware/request-log';
import { traceRequest } from '../middleware/trace-request';
import { apiKeyHandlers } from './api-keys';
import { contactHandlers } from './contacts';
import type { ApiContext, ApiMiddleware, PublicRouteHandler, RouteHandler } from './context';
import { deliveryHandlers } from './deliveries';
import { domainHandlers } from './domains';
import { emailMetricsHandlers } from './email-metrics';
import { emailHandlers } from './emails';
import { eventTypeHandlers } from './event-types';
import { inboundHandlers } from './inbound';
import { listenHandlers } from './listen-sessions';
import { logHandlers } from './logs';
import { recoveryHandlers } from './recoveries';
import { referenceHandlers } from './reference';
import { json } from './response';
import { suppressionHandlers } from './suppressions';
import { templateHandlers } from './templates';
import { unsubscribeHandlers } from './unsubscribe';
import { usageHandlers } from './usage';
import { webhookEventHandlers } from './webhook-events';
import { webhookMetricsHandlers } from './webhook-metrics';
import { webhookHandlers } from './webhooks';

export interface ApiDeps
  extends AuthenticateDeps,
    ApiKeyDeps,
    ManageWebhookDeps,
    AttemptDeps,
    RecoveryDeps,
    SendEmailDeps,
    ReadEmailDeps,
    UnsubscribeDeps,
    DomainDeps,
    ContactDeps,
    SignInDeps,
    ListenDeps,
    ReadReceivedDeps,
    TemplateDeps {
  /** Reads histories, and the status index (a cancel notes its status; a status-filtered listing reads it). */
  readonly emailHistory: Pick<EmailHistory, 'latest' | 'idsByStatus' | 'noteStatus' | 'recorded'>;
  readonly counter: RateLimitCounter;
  /** Per-IP windows of requests without a valid key: in memory, never a DynamoDB write. */
  readonly anonymousCounter: RateLimitCounter;
  readonly idempotency: IdempotencyStore;
  readonly logger: Logger;
  /** Told of every request (a log line and metrics), on AWS and locally. */
  readonly telemetry: Telemetry;
  readonly maxBodyBytes: number;
  /** The send routes' limit (attachments): SF_MAX_SEND_BODY_BYTES. */
  readonly maxSendBodyBytes?: number;
  readonly ipRateLimit: number;
  /** Attachments' bytes: stored at accept, and their download links. */
  readonly files: FileStore;
  /** The accounts' recent API requests (GET /v1/logs). */
  readonly apiRequests: ApiRequestLog;
  /** Sending reputation: the send gate, and GET /v1/emails/metrics. */
  readonly reputation?: MetricsDeps & SendingGateDeps;
  /** The hourly delivery figures: GET /v1/webhooks/metrics and /v1/webhooks/:id/metrics. */
  readonly deliveryFigures?: DeliveryFigureStore;
}

/** Every manifest route id must have a handler: the compiler checks the tables are complete. */
export type RouteTable = Record<Exclude<RouteId, PublicRouteId>, RouteHandler>;
export type PublicRouteTable = Record<PublicRouteId, PublicRouteHandler>;

export function routeTable(deps: ApiDeps): RouteTable {
  const { confirmContactPage: _page, confirmContact: _confirm, ...contacts } = contactHandlers(deps);
  return {
    ...apiKeyHandlers(deps),
    ...webhookHandlers(deps),
    ...deliveryHandlers(deps),
    ...webhookEventHandlers(deps),
    ...recoveryHandlers(deps),
    ...emailHandlers(deps),
    ...emailMetricsHandlers(deps),
    ...webhookMetricsHandlers(deps),
    ...inboundHandlers(deps),
    ...domainHandlers(deps),
    ...contacts,
    ...templateHandlers(deps),
    ...usageHandlers(deps),
    ...logHandlers(deps),
    ...suppressionHandlers(deps),
    ...eventTypeHandlers(),
    ...listenHandlers(deps),
  };
}

/** `api`: the API handler itself, which the dashboard calls in-process (resolved when first needed). */
export function publicRouteTable(deps: ApiDeps, api: () => ApiInvoke): PublicRouteTable {
  const { confirmContactPage, confirmContact } = contactHandlers(deps);
  return {
    ...unsubscribeHandlers(deps),
    confirmContactPage,
    confirmContact,
    ...referenceHandlers(),
    ...dashboardHandlers(deps, api),
  };
}

export function createApiHandler(deps: ApiDeps, observability: ApiMiddleware[] = []) {
  const table = routeTable(deps);
  // The dashboard's pages call this very handler, as a key would through the gateway.
  const self: ApiInvoke = (event, context) => apiHandler(event, context as ApiContext);
  const publicTable = publicRouteTable(deps, () => self);
  const apiHandler = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext>()
    .use(observability)
    .use(traceRequest(deps.tracing))
    .use(requestLog(deps.telemetry))
    .use(apiRequestLog(deps))
    .use(requestIdHeader())
    .use(resolveCaller(deps))
    .use(
      rateLimit({
        counter: deps.counter,
        anonymousCounter: deps.anonymousCounter,
        clock: deps.clock,
        ipLimit: deps.ipRateLimit,
      }),
    )
    .use(errorMapper(deps.logger))
    .use(guard())
    .use(
      jsonBody({
        maxBytes: deps.maxBodyBytes,
        ...(deps.maxSendBodyBytes ? { largeMaxBytes: deps.maxSendBodyBytes } : {}),
      }),
    )
    .use(idempotency(deps))
    .handler(async (event, context) => {
      const { route, principal, body, replay } = context.sendflow;
      if (replay) return json(replay.statusCode, JSON.parse(replay.body), { 'Idempotent-Replayed': 'true' });
      if (!route) throw new Error(`guard let through ${event.httpMethod} ${event.resource}`);
      const request = {
        params: stringRecord(event.pathParameters),
        query: stringRecord(event.queryStringParameters),
        headers: stringRecord(event.headers),
        receivedAt: event.requestContext.requestTimeEpoch ?? deps.clock.now(),
        ...(context.span ? { span: context.span } : {}),
      };
      if (route.access === 'public') {
        const raw =
          event.body && event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
        return publicTable[route.id as PublicRouteId]({ ...request, rawBody: raw ?? null });
      }
      const handler = table[route.id as Exclude<RouteId, PublicRouteId>];
      if (!handler || !principal) throw new Error(`guard let through ${event.httpMethod} ${event.resource}`);
      return handler({ ...request, caller: principal, body });
    });
  return apiHandler;
}

/** X-Request-Id on every response, so a customer can quote it to support. */
function requestIdHeader(): ApiMiddleware {
  const stamp: NonNullable<ApiMiddleware['after']> = (request) => {
    if (!request.response) return;
    request.response.headers = { ...request.response.headers, 'X-Request-Id': request.event.requestContext.requestId };
  };
  return { after: stamp, onError: stamp };
}

function stringRecord(record: Record<string, string | undefined> | null): Record<string, string> {
  return Object.fromEntries(
    Object.entries(record ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

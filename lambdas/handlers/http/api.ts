// The API Lambda: one middy chain for every /v1 route, dispatching to the route's handler by manifest id.
import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { ApiKeyDeps } from '../../app/api-keys';
import type { AuthenticateDeps } from '../../app/authenticate';
import type { SendEmailDeps } from '../../app/emails/send-emails';
import type { IdempotencyStore } from '../../app/idempotency';
import type { RateLimitCounter } from '../../app/ports';
import type { AttemptDeps } from '../../app/webhooks/attempts';
import type { ManageWebhookDeps } from '../../app/webhooks/manage-webhooks';
import type { RouteId } from '../../manifest';
import { resolveCaller } from '../middleware/caller';
import { errorMapper } from '../middleware/errors';
import { guard } from '../middleware/guard';
import { idempotency } from '../middleware/idempotency';
import { jsonBody } from '../middleware/json-body';
import { rateLimit } from '../middleware/rate-limit';
import { apiKeyHandlers } from './api-keys';
import type { ApiContext, ApiMiddleware, RouteHandler } from './context';
import { deliveryHandlers } from './deliveries';
import { emailHandlers } from './emails';
import { json } from './response';
import { webhookHandlers } from './webhooks';

export interface ApiDeps extends AuthenticateDeps, ApiKeyDeps, ManageWebhookDeps, AttemptDeps, SendEmailDeps {
  readonly counter: RateLimitCounter;
  readonly idempotency: IdempotencyStore;
  readonly logger: Logger;
  readonly maxBodyBytes: number;
  readonly ipRateLimit: number;
}

/** Every manifest route id must have a handler: the compiler checks the table is complete. */
export type RouteTable = Record<RouteId, RouteHandler>;

export function routeTable(deps: ApiDeps): RouteTable {
  return { ...apiKeyHandlers(deps), ...webhookHandlers(deps), ...deliveryHandlers(deps), ...emailHandlers(deps) };
}

export function createApiHandler(deps: ApiDeps, observability: ApiMiddleware[] = []) {
  const table = routeTable(deps);
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext>()
    .use(observability)
    .use(requestIdHeader())
    .use(resolveCaller(deps))
    .use(rateLimit({ counter: deps.counter, clock: deps.clock, ipLimit: deps.ipRateLimit }))
    .use(errorMapper(deps.logger))
    .use(guard())
    .use(jsonBody({ maxBytes: deps.maxBodyBytes }))
    .use(idempotency(deps))
    .handler(async (event, context) => {
      const { route, principal, body, replay } = context.sendflow;
      if (replay) return json(replay.statusCode, JSON.parse(replay.body), { 'Idempotent-Replayed': 'true' });
      const handler = route && table[route.id as RouteId];
      if (!route || !handler || !principal) throw new Error(`guard let through ${event.httpMethod} ${event.resource}`);
      return handler({
        caller: principal,
        params: stringRecord(event.pathParameters),
        query: stringRecord(event.queryStringParameters),
        headers: stringRecord(event.headers),
        body,
      });
    });
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
